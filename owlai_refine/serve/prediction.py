"""Predicted outputs: the block sent as the reply the OpenAI API should expect.

A copy edit's reply is mostly its block. The OpenAI API's ``prediction`` field (``{"type":
"content", "content": <block>}``) lets it skip generating the spans of the reply that match, so a
cloud block call takes about the time of its changes. It is sent on every block call when
:attr:`RefineConfig.sends_prediction <owlai_refine.config.RefineConfig.sends_prediction>` (on by
default for ``--backend cloud``; never beside a parameter the API refuses with it). A model or
endpoint that does not take it answers HTTP 400 naming the field: that endpoint is then marked
as refusing it (WARNING ``refine.prediction_refused``, once per endpoint and run) and the same
request is sent again at once without it, as :mod:`owlai_refine.serve.priority` does for
``priority``; no block fails over it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from owlai_refine.config import RefineConfig
from owlai_refine.serve.droppable import DroppableField

__all__ = ["PredictionPolicy"]


class PredictionPolicy(DroppableField):
    """Which requests carry ``prediction``: every block call when ``config.sends_prediction``,
    unless ``extra_body`` sets it already (that wins) or the endpoint refused it."""

    name = "prediction"
    keyword = "predict"
    event = "refine.prediction_refused"
    note = "the endpoint does not take predicted outputs; prediction no longer sent"

    def __init__(self, config: RefineConfig) -> None:
        super().__init__(config.sends_prediction)

    def body(self, base_url: str, block_text: str, extra_body: Mapping[str, Any]) -> dict[str, Any]:
        """The request's extra body fields for a block of ``block_text`` sent to ``base_url``:
        ``extra_body`` plus ``prediction`` when it is sent there."""
        return self.add(base_url, extra_body, {"type": "content", "content": block_text})
