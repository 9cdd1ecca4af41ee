"""Predicted outputs: the block sent as the reply the OpenAI API should expect.

A copy edit's reply is mostly its block. The OpenAI API's ``prediction`` field (``{"type":
"content", "content": <block>}``) lets it skip generating the spans of the reply that match, so a
cloud block call takes about the time of its changes. It is sent on every block call when
:attr:`RefineConfig.sends_prediction <owlai_refine.config.RefineConfig.sends_prediction>` (on by
default for ``--backend cloud``; never beside a parameter the API refuses with it). A model or
endpoint that does not take it answers HTTP 400 naming the field: that endpoint is then marked
as refusing it (WARNING ``refine.prediction_refused``, once per endpoint and run) and the same
request is sent again at once without it, as :mod:`owlai_refine.priority` does for
``priority``; no block fails over it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from owlai_refine.config import RefineConfig, redact_url
from owlai_refine.errors import FatalCallError

__all__ = ["PredictionPolicy", "refuses_prediction"]

_log = structlog.get_logger("owlai_refine")


def refuses_prediction(error: FatalCallError) -> bool:
    """True when ``error`` is an HTTP 400 whose message names the prediction field
    (``'prediction'``, "Predicted Outputs")."""
    return error.status == 400 and "predict" in str(error).lower()


class PredictionPolicy:
    """Which requests carry ``prediction``: every block call when ``config.sends_prediction``,
    unless ``extra_body`` sets it already (that wins) or the endpoint refused it."""

    def __init__(self, config: RefineConfig) -> None:
        self.active = config.sends_prediction
        self._refusing: set[str] = set()  # base URLs whose server refused the field

    def body(self, base_url: str, block_text: str, extra_body: Mapping[str, Any]) -> dict[str, Any]:
        """The request's extra body fields for a block of ``block_text`` sent to ``base_url``:
        ``extra_body`` plus ``prediction`` when it is sent there."""
        if not self.active or "prediction" in extra_body or base_url in self._refusing:
            return dict(extra_body)
        return {**extra_body, "prediction": {"type": "content", "content": block_text}}

    def refused(self, base_url: str, body: Mapping[str, Any], error: FatalCallError) -> bool:
        """Note a refusal of the field we sent in ``body``; True if the request should be sent
        again without it."""
        if "prediction" not in body or not refuses_prediction(error):
            return False
        if base_url not in self._refusing:
            self._refusing.add(base_url)
            _log.warning(
                "refine.prediction_refused",
                base_url=redact_url(base_url),
                error=str(error),
                note="the endpoint does not take predicted outputs; prediction no longer sent",
            )
        return True
