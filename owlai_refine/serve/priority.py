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

from owlai_refine.config import Backend, RefineConfig
from owlai_refine.serve.droppable import DroppableField

__all__ = ["PriorityPolicy"]


class PriorityPolicy(DroppableField):
    """Which requests carry ``priority``: every request to a self-hosted endpoint when
    ``config.priority`` is not 0, unless ``extra_body`` sets it already (that wins) or the
    endpoint refused it."""

    name = keyword = "priority"
    event = "refine.priority_refused"
    note = "the server schedules first come, first served; priority no longer sent"

    def __init__(self, config: RefineConfig) -> None:
        super().__init__(config.backend is Backend.SELF_HOSTED and config.priority != 0)
        self.priority = config.priority

    def body(self, base_url: str, extra_body: Mapping[str, Any]) -> dict[str, Any]:
        """The request's extra body fields for ``base_url``: ``extra_body`` plus ``priority``
        when it is sent there."""
        return self.add(base_url, extra_body, self.priority)

    def detail(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return {"priority": body["priority"]}
