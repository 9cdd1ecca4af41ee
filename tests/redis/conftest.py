"""Fixtures for the Redis limiter tests: a real ``redis-server`` and a counting HTTP server.

Every test here is skipped, with the reason shown, when ``redis-server`` is not on PATH (install
Debian's: ``apt-get install -y redis-server``) or the ``redis`` package is not installed
(``pip install -e '.[redis]'``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.redis.redis_fixture import RedisServer, find_redis_server
from testsupport.fake_openai import FakeOpenAI


def _redis_client_missing() -> bool:
    # Look for redis.asyncio, not just "redis": tests/redis itself could pass for a namespace
    # package named redis if the real one is absent.
    try:
        return importlib.util.find_spec("redis.asyncio") is None
    except ImportError:
        return True


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    reason = None
    if find_redis_server() is None:
        reason = "redis-server is not on PATH (apt-get install -y redis-server)"
    elif _redis_client_missing():
        reason = "the redis package is not installed (pip install -e '.[redis]')"
    if reason is None:
        return
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.skip(reason=reason))


_FIGURES = pytest.StashKey[list[str]]()


@pytest.fixture
def report_figure(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Record a measured figure; all of them are shown at the end of the run."""
    lines = request.config.stash.setdefault(_FIGURES, [])

    def report(line: str) -> None:
        lines.append(f"{request.node.name}: {line}")

    return report


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    lines = config.stash.get(_FIGURES, [])
    if lines:
        terminalreporter.section("Redis limiter figures")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture
def anyio_backend() -> str:
    """redis.asyncio runs on asyncio only."""
    return "asyncio"


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh ``redis-server`` per test on a free loopback port, stopped afterwards."""
    executable = find_redis_server()
    if executable is None:
        pytest.skip("redis-server is not on PATH (apt-get install -y redis-server)")
    server = RedisServer(executable, tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def counting_server() -> Iterator[FakeOpenAI]:
    """The loopback test server, counting ``/hold`` requests in flight."""
    with FakeOpenAI() as server:
        yield server
