"""Lua scripts behind :class:`owlai_refine.limits.redis.RedisLimiter`.

Each script runs atomically on the Redis server, so expiry cleanup, queueing and admission can
never interleave between workers. Time comes from the server (``TIME``), never from a worker's
clock, so hosts with skewed clocks agree on when a lease expires. Times are in milliseconds.

Keys, all under one endpoint (``{h}`` is a hash of the endpoint key, a Redis Cluster hash tag):

    owlai_refine:limiter:{h}:holders    ZSET  lease id  -> lease expiry (ms, server time)
    owlai_refine:limiter:{h}:queue      ZSET  ticket id -> ticket number (FIFO order)
    owlai_refine:limiter:{h}:waiters    ZSET  ticket id -> waiter expiry (ms): dead waiters drop out
    owlai_refine:limiter:{h}:seq        STR   last ticket number handed out
    owlai_refine:limiter:{h}:instances  ZSET  holder id -> registration expiry (ms)
    owlai_refine:limiter:{h}:caps       HASH  holder id -> the slot count that holder asked for

A lease id doubles as its ticket id (one acquisition = one id). Pub/sub channel
``owlai_refine:limiter:{h}:released`` gets a message whenever a slot or a ticket goes away.
Every key gets a TTL at least as long as the longest lease written into it, so an endpoint whose
workers all died leaves nothing behind once their leases have expired.
"""

from __future__ import annotations

__all__ = ["ACQUIRE", "KEY_SUFFIXES", "RELEASE", "RENEW", "SNAPSHOT"]

# The order of KEYS in every script.
KEY_SUFFIXES = ("holders", "queue", "waiters", "seq", "instances", "caps")

# Shared prelude. ARGV[1] is always the pub/sub channel.
_PRELUDE = """
local holders, queue, waiters, seq = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local instances, caps = KEYS[5], KEYS[6]
local channel = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- Make a key live at least `ms` more milliseconds; never shorten (leases may differ by worker).
local function keep(key, ms)
  local pttl = redis.call('PTTL', key)
  if pttl == -1 or (pttl >= 0 and pttl < ms) then redis.call('PEXPIRE', key, ms) end
end

-- Drop expired leases, expired waiters (and their tickets) and expired instance registrations.
-- Returns how many slots or tickets went away, so that the caller can wake the waiters.
local function sweep()
  local freed = redis.call('ZREMRANGEBYSCORE', holders, '-inf', now)
  local dead = redis.call('ZRANGEBYSCORE', waiters, '-inf', now)
  for i = 1, #dead do redis.call('ZREM', queue, dead[i]) end
  if #dead > 0 then redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now) end
  local gone = redis.call('ZRANGEBYSCORE', instances, '-inf', now)
  for i = 1, #gone do redis.call('HDEL', caps, gone[i]) end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', instances, '-inf', now) end
  return freed + #dead
end

-- Register `holder` (asking for `slots`) for `ttl` ms; return the cap in force: the smallest
-- slot count any live holder asked for (a cap only ever protects the server).
local function register(holder, slots, ttl)
  redis.call('ZADD', instances, now + ttl, holder)
  redis.call('HSET', caps, holder, slots)
  keep(instances, ttl)
  keep(caps, ttl)
  local cap = slots
  local all = redis.call('HVALS', caps)
  for i = 1, #all do
    local v = tonumber(all[i])
    if v < cap then cap = v end
  end
  return cap
end
"""

# ARGV: channel, id, holder, slots, lease_ms, had_ticket ('1' if this id queued before).
# Returns {admitted (0/1), rank in queue (-1 if admitted), cap, slots held, ticket_lost (0/1)}.
# Admission rule: the waiter at queue rank r is admitted when r < cap - held, so the first
# (cap - held) tickets are admissible and a later ticket is never admitted while an earlier one
# is not. Idempotent per id: a retried call after a lost reply finds its lease and keeps it.
ACQUIRE = (
    _PRELUDE
    + """
local id, holder = ARGV[2], ARGV[3]
local slots, lease_ms = tonumber(ARGV[4]), tonumber(ARGV[5])
local freed = sweep()
local cap = register(holder, slots, lease_ms)
local admitted, rank, ticket_lost = 0, -1, 0
if redis.call('ZSCORE', holders, id) then
  redis.call('ZADD', holders, now + lease_ms, id)
  admitted = 1
else
  local r = redis.call('ZRANK', queue, id)
  if not r then
    if ARGV[6] == '1' then ticket_lost = 1 end
    redis.call('ZADD', queue, redis.call('INCR', seq), id)
    keep(seq, 86400000)
    r = redis.call('ZRANK', queue, id)
  end
  if r < cap - redis.call('ZCARD', holders) then
    redis.call('ZREM', queue, id)
    redis.call('ZREM', waiters, id)
    redis.call('ZADD', holders, now + lease_ms, id)
    admitted = 1
  else
    redis.call('ZADD', waiters, now + lease_ms, id)
    rank = r
  end
end
keep(holders, lease_ms)
keep(queue, lease_ms)
keep(waiters, lease_ms)
if freed > 0 then redis.call('PUBLISH', channel, 'freed') end
return {admitted, rank, cap, redis.call('ZCARD', holders), ticket_lost}
"""
)

# ARGV: channel, holder, slots, lease_ms, lease id...  Extends every listed lease that still
# exists by lease_ms from now. Returns the ids that no longer exist (expired and swept, or lost
# with the Redis data): those slots may already have been given to someone else.
RENEW = (
    _PRELUDE
    + """
local holder, slots, lease_ms = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local freed = sweep()
register(holder, slots, lease_ms)
local lost = {}
for i = 5, #ARGV do
  if redis.call('ZSCORE', holders, ARGV[i]) then
    redis.call('ZADD', holders, now + lease_ms, ARGV[i])
  else
    lost[#lost + 1] = ARGV[i]
  end
end
keep(holders, lease_ms)
if freed > 0 then redis.call('PUBLISH', channel, 'freed') end
return lost
"""
)

# ARGV: channel, id.  Gives back a lease or withdraws a ticket (idempotent).
# Returns 1 if something was removed, else 0.
RELEASE = (
    _PRELUDE
    + """
local id = ARGV[2]
local n = redis.call('ZREM', holders, id) + redis.call('ZREM', queue, id)
redis.call('ZREM', waiters, id)
if n > 0 then redis.call('PUBLISH', channel, 'released') end
if n > 0 then return 1 end
return 0
"""
)

# ARGV: channel.  Sweeps, then returns {slots held, tickets queued, cap in force or -1}.
SNAPSHOT = (
    _PRELUDE
    + """
local freed = sweep()
if freed > 0 then redis.call('PUBLISH', channel, 'freed') end
local cap = -1
local all = redis.call('HVALS', caps)
for i = 1, #all do
  local v = tonumber(all[i])
  if cap < 0 or v < cap then cap = v end
end
return {redis.call('ZCARD', holders), redis.call('ZCARD', queue), cap}
"""
)
