"""Shared test set-up: Hypothesis without deadlines; structlog renders to nowhere (tests assert
on events with capture_logs), and is put back that way after any test that runs the CLI (which
configures JSON logging)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog
from hypothesis import settings

# No per-example deadline: on a shared 2-core machine one example can take 600 ms for no fault
# of the code (tests make no timed assertions; speed is measured in benchmarks/).
settings.register_profile("shared-machine", deadline=None)
settings.load_profile("shared-machine")


def _quiet_structlog() -> None:
    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.JSONRenderer()],
        logger_factory=structlog.ReturnLoggerFactory(),
        wrapper_class=structlog.BoundLogger,
    )


_quiet_structlog()


@pytest.fixture(autouse=True)
def _restore_structlog() -> Iterator[None]:
    yield
    _quiet_structlog()
