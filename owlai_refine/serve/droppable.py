"""A request field an endpoint may refuse: sent until a 400 names it, then dropped there.

``priority`` (:mod:`owlai_refine.serve.priority`) and ``prediction``
(:mod:`owlai_refine.serve.prediction`) are optional: a server that does not take one answers HTTP
400 naming it. :class:`DroppableField` is that shared mechanism: it adds the field to a request's
extra body unless the caller set it already or the endpoint refused it, and on a refusal marks the
endpoint (a WARNING once per endpoint and run) and tells the caller to send the same request again
at once without it; no block fails over it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from owlai_refine.config import redact_url
from owlai_refine.errors import FatalCallError

__all__ = ["DroppableField"]

_log = structlog.get_logger("owlai_refine")


class DroppableField:
    """One optional request field ``name``, sent while ``active`` to every endpoint that has not
    refused it. ``keyword``: the lower-case word a 400's message must contain to name it;
    ``event`` and ``note``: the WARNING logged the first time an endpoint refuses it."""

    name: str
    keyword: str
    event: str
    note: str

    def __init__(self, active: bool) -> None:
        self.active = active
        self._refusing: set[str] = set()  # base URLs whose server refused the field

    def refuses(self, error: FatalCallError) -> bool:
        """True when ``error`` is an HTTP 400 whose message names this field."""
        return error.status == 400 and self.keyword in str(error).lower()

    def add(self, base_url: str, extra_body: Mapping[str, Any], value: Any) -> dict[str, Any]:
        """``extra_body`` plus this field set to ``value``, when it is sent to ``base_url``
        (``extra_body`` setting it already wins)."""
        if not self.active or self.name in extra_body or base_url in self._refusing:
            return dict(extra_body)
        return {**extra_body, self.name: value}

    def refused(self, base_url: str, body: Mapping[str, Any], error: FatalCallError) -> bool:
        """Note a refusal of the field we sent in ``body``; True if the request should be sent
        again without it."""
        if self.name not in body or not self.refuses(error):
            return False
        if base_url not in self._refusing:
            self._refusing.add(base_url)
            _log.warning(
                self.event,
                base_url=redact_url(base_url),
                **self.detail(body),
                error=str(error),
                note=self.note,
            )
        return True

    def detail(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Extra fields for the refusal's WARNING (none by default)."""
        return {}
