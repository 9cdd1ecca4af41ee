"""How many requests may be in flight: the slot-limiter protocol and the in-process limiter
(``limiter``), and the one shared by many workers through Redis (``redis``, its Lua scripts in
``_redis_scripts``). Nothing is imported here: each module loads on first use.
"""
