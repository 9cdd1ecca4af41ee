"""The request ``priority`` a self-hosted vLLM server schedules by, and endpoints that refuse it.

vLLM started with ``--scheduling-policy priority`` serves lower ``priority`` values first
(people's chat turns send none: 0). The refine sends :attr:`RefineConfig.priority` (10) to
self-hosted endpoints so that it waits behind them. On first-come-first-served scheduling, older
vLLM servers answer a non-zero priority with HTTP 400 ("Priority scheduling is not enabled");
vLLM 0.32 (V1 engine) accepts the field and ignores it, although its API docs say it raises.
So the policy is learnt from the answer: a 400 naming ``priority`` marks the endpoint as
refusing it (WARNING ``refine.priority_refused``, once per endpoint and run), and the same
request is sent again at once without the field; no block fails over it. ``refine doctor``
reads the policy from the server's startup log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from owlai_refine.config import Backend, RefineConfig, redact_url
from owlai_refine.errors import FatalCallError

__all__ = ["PriorityPolicy", "refuses_priority"]

_log = structlog.get_logger("owlai_refine")


def refuses_priority(error: FatalCallError) -> bool:
    """True when ``error`` is an HTTP 400 whose message names the priority field."""
    return error.status == 400 and "priority" in str(error).lower()


class PriorityPolicy:
    """Which requests carry ``priority``: every request to a self-hosted endpoint when
    ``config.priority`` is not 0, unless ``extra_body`` sets it already (that wins) or the
    endpoint refused it."""

    def __init__(self, config: RefineConfig) -> None:
        self.priority = config.priority
        self.active = config.backend is Backend.SELF_HOSTED and config.priority != 0
        self._refusing: set[str] = set()  # base URLs whose server refused the field

    def body(self, base_url: str, extra_body: Mapping[str, Any]) -> dict[str, Any]:
        """The request's extra body fields for ``base_url``: ``extra_body`` plus ``priority``
        when it is sent there."""
        if not self.active or "priority" in extra_body or base_url in self._refusing:
            return dict(extra_body)
        return {**extra_body, "priority": self.priority}

    def refused(self, base_url: str, body: Mapping[str, Any], error: FatalCallError) -> bool:
        """Note a refusal of the field we sent in ``body``; True if the request should be sent
        again without it."""
        if "priority" not in body or not refuses_priority(error):
            return False
        if base_url not in self._refusing:
            self._refusing.add(base_url)
            _log.warning(
                "refine.priority_refused",
                base_url=redact_url(base_url),
                priority=body["priority"],
                error=str(error),
                note="the server schedules first come, first served; priority no longer sent",
            )
        return True
