"""A worker process for the Redis limiter tests: many blocks, each sent under one slot.

Run as ``python limiter_worker.py --url redis://... --endpoint KEY --name w1 --blocks 30
--counter http://127.0.0.1:PORT``. Every block is a task that takes a slot of one shared
:class:`RedisLimiter` and, while holding it, makes ``--requests-per-slot`` ``/hold`` calls of
``--hold-ms`` ms to the counting server (the stand-in for a model request). All blocks start at
once, as the refiner dispatches them.

Exit status: 0 when every block went through (one JSON line on stdout), 3 on ``LimiterError``
(one line ``LimiterError: ...`` on stderr). Warnings are JSON lines on stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time

import anyio
import anyio.to_thread
import structlog

from owlai_refine.errors import LimiterError
from owlai_refine.limits.redis import RedisLimiter
from testsupport.fake_openai import hold

EXIT_LIMITER_ERROR = 3


async def run(args: argparse.Namespace) -> int:
    limiter = RedisLimiter(args.url, args.endpoint, args.slots, lease_s=args.lease)
    started = time.monotonic()

    async def block() -> None:
        async with limiter:
            for _ in range(args.requests_per_slot):
                await anyio.to_thread.run_sync(hold, args.counter, args.hold_ms, args.name)

    failure: BaseException | None = None
    try:
        async with anyio.create_task_group() as tg:
            for _ in range(args.blocks):
                tg.start_soon(block)
    except* LimiterError as group:
        failure = group.exceptions[0]
    finally:
        await limiter.aclose()
    if failure is not None:
        sys.stderr.write(f"LimiterError: {failure}\n")
        return EXIT_LIMITER_ERROR
    summary = {"name": args.name, "blocks": args.blocks, "elapsed_s": time.monotonic() - started}
    sys.stdout.write(json.dumps(summary) + "\n")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--counter", required=True)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--lease", type=float, default=2.0)
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--hold-ms", type=int, default=50)
    parser.add_argument("--requests-per-slot", type=int, default=1)
    args = parser.parse_args()
    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
    )
    sys.exit(anyio.run(run, args))


if __name__ == "__main__":
    main()
