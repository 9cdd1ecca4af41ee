"""RedisLimiter in one process, against a real redis-server: cap, leases, fairness, failures.

Lease times are short (0.5-2 s) to keep the suite fast; timing bounds are generous on purpose
(the CI machine has two shared cores). The cap is checked by counters outside Redis.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, MutableMapping
from typing import Any

import pytest

# Skip (with the reason shown) rather than fail collection when the optional extra is missing.
pytest.importorskip("redis.asyncio", reason="the redis package is not installed: .[redis]")

import anyio
import redis
from structlog.testing import capture_logs

from owlai_refine.errors import ConfigError, LimiterError
from owlai_refine.limits.limiter import SlotLimiter
from owlai_refine.limits.redis import RedisLimiter, key_prefix_for
from tests.redis.redis_fixture import RedisServer, free_port

pytestmark = pytest.mark.anyio

ENDPOINT = "http://127.0.0.1:8000/v1|SmolLM2-135M-Instruct"


@contextlib.asynccontextmanager
async def limiters(
    url: str, count: int, *, slots: int = 4, lease_s: float = 1.0, **kwargs: Any
) -> AsyncIterator[list[RedisLimiter]]:
    """``count`` independent limiter instances (as if in ``count`` workers), closed after."""
    made = [
        RedisLimiter(url, ENDPOINT, slots, lease_s=lease_s, holder_id=f"w{i}", **kwargs)
        for i in range(count)
    ]
    try:
        yield made
    finally:
        for limiter in made:
            await limiter.aclose()


class InFlight:
    """Counts bodies running at once, in Python, independently of Redis."""

    def __init__(self) -> None:
        self.now = 0
        self.max = 0
        self.done = 0

    async def run(self, limiter: RedisLimiter, hold_s: float) -> None:
        async with limiter:
            self.now += 1
            self.max = max(self.max, self.now)
            await anyio.sleep(hold_s)
            self.now -= 1
            self.done += 1


Report = Callable[[str], None]


def _events(logs: list[MutableMapping[str, Any]], name: str) -> list[MutableMapping[str, Any]]:
    return [entry for entry in logs if entry["event"] == name]


async def test_satisfies_slot_limiter_and_hides_secrets() -> None:
    limiter = RedisLimiter("redis://:s3cret@127.0.0.1:1/0", ENDPOINT, 4, lease_s=2)
    assert isinstance(limiter, SlotLimiter)
    assert limiter.total_tokens == 4.0
    assert limiter.lease_s == 2
    assert "s3cret" not in repr(limiter)
    assert limiter.key_prefix == key_prefix_for(ENDPOINT)
    assert "127.0.0.1:8000" not in limiter.key_prefix  # the endpoint is hashed
    assert key_prefix_for(ENDPOINT + "x") != limiter.key_prefix
    await limiter.aclose()


@pytest.mark.parametrize(
    ("url", "slots", "lease_s"),
    [
        ("http://127.0.0.1:6379/0", 4, 30.0),
        ("redis://127.0.0.1/0", 0, 30.0),
        ("redis://127.0.0.1/0", 4, 0.0),
    ],
)
async def test_bad_settings_raise_config_error(url: str, slots: int, lease_s: float) -> None:
    with pytest.raises(ConfigError):
        RedisLimiter(url, ENDPOINT, slots, lease_s=lease_s)


async def test_many_tasks_never_exceed_the_cap(
    redis_server: RedisServer, report_figure: Report
) -> None:
    counter = InFlight()
    async with limiters(redis_server.url, 3) as made:
        async with anyio.create_task_group() as tg:
            for i in range(60):
                tg.start_soon(counter.run, made[i % 3], 0.02)
        snapshot = await made[0].snapshot()
    report_figure(f"60 tasks over 3 limiter instances, 4 slots: max in flight {counter.max}")
    assert counter.done == 60
    assert counter.max == 4
    assert (snapshot.held, snapshot.queued, snapshot.cap) == (0, 0, 4)


async def test_renewal_keeps_a_slot_past_its_lease(redis_server: RedisServer) -> None:
    order: list[str] = []
    async with limiters(redis_server.url, 2, slots=1, lease_s=0.5) as (a, b):

        async def long_holder() -> None:
            async with a:
                order.append("a in")
                await anyio.sleep(2.0)  # four leases long: only renewal keeps it
                order.append("a out")

        async def latecomer() -> None:
            await anyio.sleep(0.2)
            async with b:
                order.append("b in")

        with capture_logs() as logs:
            async with anyio.create_task_group() as tg:
                tg.start_soon(long_holder)
                tg.start_soon(latecomer)
    assert order == ["a in", "a out", "b in"]
    assert not _events(logs, "limiter.lease_lost")


async def test_a_slot_taken_after_the_renewer_went_idle_is_renewed(
    redis_server: RedisServer,
) -> None:
    """The renewer stops when no slot is held; the next slot starts it again (a
    renewer that never restarted let that slot expire and go to a waiting worker)."""
    order: list[str] = []
    async with limiters(redis_server.url, 2, slots=1, lease_s=0.5) as (a, b):
        async with a:
            await anyio.sleep(0.3)  # the renewer runs once
        await anyio.sleep(0.4)  # it wakes to find no slot held, and stops
        assert a._renewer is not None and a._renewer.done()

        async def second_slot() -> None:
            async with a:
                order.append("a in")
                await anyio.sleep(2.0)  # four leases long: only renewal keeps it
                order.append("a out")

        async def waiter() -> None:
            await anyio.sleep(0.2)
            async with b:
                order.append("b in")

        with capture_logs() as logs:
            async with anyio.create_task_group() as tg:
                tg.start_soon(second_slot)
                tg.start_soon(waiter)
    assert order == ["a in", "a out", "b in"]
    assert not _events(logs, "limiter.lease_lost")


async def test_lost_lease_is_logged_and_the_request_goes_on(redis_server: RedisServer) -> None:
    async with limiters(redis_server.url, 1, lease_s=0.6) as (limiter,):
        with capture_logs() as logs:
            async with limiter:
                with redis.Redis.from_url(redis_server.url) as client:
                    client.flushdb()  # as if Redis restarted without its data
                await anyio.sleep(0.6)  # at least one renewal
                finished = True
    assert finished
    lost = _events(logs, "limiter.lease_lost")
    assert len(lost) == 1
    assert lost[0]["log_level"] == "warning"
    assert "Redis no longer holds it" in lost[0]["reason"]


async def test_cancelled_waiter_withdraws_its_ticket(redis_server: RedisServer) -> None:
    async with limiters(redis_server.url, 2, slots=1) as (a, b), a:
        with anyio.move_on_after(0.3) as scope:
            async with b:
                pytest.fail("b got a slot that a holds")
        assert scope.cancelled_caught
        snapshot = await a.snapshot()
        assert (snapshot.held, snapshot.queued) == (1, 0)


async def test_dead_waiter_blocks_at_most_its_lease(
    redis_server: RedisServer, report_figure: Report
) -> None:
    lease_s = 1.0
    async with limiters(redis_server.url, 1, slots=1, lease_s=lease_s) as (limiter,):
        prefix = limiter.key_prefix
        with redis.Redis.from_url(redis_server.url) as client:
            seconds, micros = client.time()
            now_ms = seconds * 1000 + micros // 1000
            # A waiter that took ticket 0 and died: it heads the queue until its entry expires.
            client.zadd(prefix + "queue", {"ghost": 0})
            client.zadd(prefix + "waiters", {"ghost": now_ms + lease_s * 1000})
        started = anyio.current_time()
        async with limiter:
            waited = anyio.current_time() - started
        snapshot = await limiter.snapshot()
    report_figure(f"waited behind a dead waiter's ticket {waited:.2f} s (lease {lease_s} s)")
    assert waited < lease_s + 3.0
    assert snapshot.queued == 0


async def test_disagreeing_slot_counts_use_the_smallest(redis_server: RedisServer) -> None:
    counter = InFlight()
    small = RedisLimiter(redis_server.url, ENDPOINT, 2, lease_s=1.0)
    large = RedisLimiter(redis_server.url, ENDPOINT, 4, lease_s=1.0)
    try:
        with capture_logs() as logs:
            async with small:  # registers the 2-slot holder first
                pass
            async with anyio.create_task_group() as tg:
                for i in range(30):
                    tg.start_soon(counter.run, (small, large)[i % 2], 0.02)
    finally:
        await small.aclose()
        await large.aclose()
    assert counter.max == 2
    conflicts = _events(logs, "limiter.slots_conflict")
    assert conflicts
    assert conflicts[0]["slots_in_force"] == 2


async def test_fairness_small_report_is_not_starved(
    redis_server: RedisServer, report_figure: Report
) -> None:
    """One instance floods 200 blocks; another arrives later with 20 and finishes long before."""
    admissions: list[str] = []
    flood_under_way = anyio.Event()
    small_arrived = -1  # admissions so far when the first small block reached its limiter
    async with limiters(redis_server.url, 2, slots=4) as (big, small):

        async def block(limiter: RedisLimiter, name: str) -> None:
            nonlocal small_arrived
            if name == "small" and small_arrived < 0:
                small_arrived = len(admissions)
            async with limiter:
                admissions.append(name)
                if len(admissions) >= 20:
                    flood_under_way.set()
                await anyio.sleep(0.01)

        async with anyio.create_task_group() as tg:
            for _ in range(200):
                tg.start_soon(block, big, "big")
            await flood_under_way.wait()
            for _ in range(20):
                tg.start_soon(block, small, "small")

    small_at = [i for i, name in enumerate(admissions) if name == "small"]
    big_before_first_small = small_at[0] - small_arrived
    big_while_small_ran = admissions[small_at[0] : small_at[-1]].count("big")
    big_left = admissions[small_at[-1] :].count("big")
    report_figure(
        f"in-process fairness (4 slots): small (20 blocks) arrived after {small_arrived} of "
        f"big's 200; big admissions before small's first: {big_before_first_small}, while "
        f"small's 20 ran: {big_while_small_ran}, after small finished: {big_left}"
    )
    assert len(small_at) == 20
    assert big_before_first_small <= 4 + 2  # big's one ticket ahead, and slack for scheduling
    assert big_while_small_ran <= 2 * 20  # round-robin: about one big per small
    assert big_left >= 100  # small finished long before the flood did


async def test_no_redis_means_no_slot(report_figure: Report) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    entered = False
    async with limiters(url, 1, timeout_s=1.0) as (limiter,):
        with pytest.raises(LimiterError) as caught:
            async with limiter:
                entered = True
    message = str(caught.value)
    report_figure(f"no Redis: LimiterError: {message}")
    assert not entered
    assert "\n" not in message
    assert message.startswith(f"Redis slot limiter at {url}: cannot take a slot:")


async def test_redis_stopping_mid_run_fails_closed(
    redis_server: RedisServer, report_figure: Report
) -> None:
    """Holders finish their requests; every waiter gets LimiterError; no body starts after."""
    counter = InFlight()
    stopped_at: float | None = None
    late_entries = 0
    errors: list[LimiterError] = []
    twenty_done = anyio.Event()

    async def block(limiter: RedisLimiter) -> None:
        nonlocal late_entries
        try:
            async with limiter:
                if stopped_at is not None and anyio.current_time() > stopped_at + 0.5:
                    late_entries += 1
                counter.now += 1
                counter.max = max(counter.max, counter.now)
                await anyio.sleep(0.05)
                counter.now -= 1
                counter.done += 1
                if counter.done >= 20:
                    twenty_done.set()
        except LimiterError as exc:
            errors.append(exc)

    async with limiters(redis_server.url, 2, lease_s=1.0, timeout_s=1.0) as made:
        with capture_logs() as logs:
            async with anyio.create_task_group() as tg:
                for i in range(300):
                    tg.start_soon(block, made[i % 2])
                await twenty_done.wait()
                await anyio.to_thread.run_sync(redis_server.stop)
                stopped_at = anyio.current_time()
    assert late_entries == 0
    assert counter.max <= 4
    assert errors
    assert counter.done + len(errors) == 300
    assert all(str(exc).startswith("Redis slot limiter at redis://") for exc in errors)
    assert all("\n" not in str(exc) for exc in errors)
    report_figure(
        f"Redis stopped mid-run: {counter.done} blocks went through, {len(errors)} got "
        f"LimiterError, max in flight {counter.max}; first: LimiterError: {errors[0]}"
    )
    assert _events(logs, "limiter.redis_failed")


async def test_renewal_failure_is_logged_and_release_does_not_raise(
    redis_server: RedisServer,
) -> None:
    async with limiters(redis_server.url, 1, lease_s=0.6, timeout_s=0.5) as (limiter,):
        with capture_logs() as logs:
            async with limiter:
                await anyio.to_thread.run_sync(redis_server.stop)
                await anyio.sleep(1.5)  # past the lease: renewals fail
            # leaving the block did not raise, though Redis is gone
    names = [entry["event"] for entry in logs]
    assert "limiter.renew_failed" in names
    assert "limiter.lease_lost" in names
    assert "limiter.release_failed" in names
    assert all(
        entry["log_level"] == "warning"
        for entry in logs
        if entry["event"] in {"limiter.renew_failed", "limiter.lease_lost"}
    )


async def test_set_slots_shrinks_the_shared_cap_for_every_worker(redis_server: RedisServer) -> None:
    """The adaptive cap lowers one worker's count; the smallest count in force binds all."""
    counter = InFlight()
    async with limiters(redis_server.url, 2) as (a, b):
        a.set_slots(1)
        async with a:  # registers a's count of 1 before any b takes a slot
            pass
        with capture_logs() as logs:
            async with anyio.create_task_group() as tg:
                for i in range(12):
                    tg.start_soon(counter.run, (a, b)[i % 2], 0.02)
        snapshot = await b.snapshot()
        with pytest.raises(ValueError, match="at least 1"):
            a.set_slots(0)
    assert counter.done == 12
    assert counter.max == 1
    assert snapshot.cap == 1
    assert not _events(logs, "limiter.slots_conflict") or all(
        e["slots"] == 4 for e in _events(logs, "limiter.slots_conflict")
    )  # only the worker that did not shrink may say so
