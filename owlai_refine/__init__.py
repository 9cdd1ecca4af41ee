"""owlai-refine: polish a Markdown report block by block with a chat model.

The pipeline, one module per stage::

    pipeline/parse      report text -> Document of blocks (paragraphs, list items) with spans
    pipeline/skips      which blocks are never sent
    pipeline/prompt     block -> chat messages (stable prefix first) and its max_tokens
    serve/call          one request to the OpenAI-compatible server -> Reply
    guard/              Reply -> cleaned text, or the reasons it may not replace the block
    pipeline/splice     Document + new block texts -> report text, byte-exact outside blocks
    pipeline/orchestrate  one report: plan, dispatch (longest first, behind the slot
                        limiters), assemble
    events              what a run reports (calls, block outcomes, its end) to sinks; the JSON
                        log is one
    pipeline/refiner    Refiner: clients, endpoints, limiters, model, embedded server, for many
                        reports

Beside them: ``limits/`` (the slot limiters), ``serve/`` (endpoints, routing, retries, the
server's models and metrics), ``review/``, ``cli/`` and ``ops/``; the values (config, errors,
blocks, results, events) flat. The layers: ``docs/development.md``.

Library use::

    from owlai_refine import Backend, RefineConfig, Refiner, refine_sync
    config = RefineConfig(base_url="http://gpu1:8000/v1", backend=Backend.SELF_HOSTED)
    async with Refiner(config) as refiner:          # many reports, one cap
        result = await refiner.refine(text)
    result = refine_sync(text, config)              # one report, blocking
    result.text, result.counts

Every name below is loaded on first use (module ``__getattr__``), so that importing the package,
or one of its modules such as the CLI, costs only what is used: ``refine --version`` never loads
the openai package, pydantic or the guard's analysers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from owlai_refine._version import __version__

if TYPE_CHECKING:
    from owlai_refine.blocks import Block, BlockKind, Document, SkipReason
    from owlai_refine.config import Backend, GuardConfig, OutputBudget, RefineConfig, RetryPolicy
    from owlai_refine.errors import (
        AuthError,
        CassetteError,
        CassetteMissError,
        ConfigError,
        InputError,
        LimiterError,
        LocalModelError,
        OutputError,
        RefineError,
    )
    from owlai_refine.pipeline.parse import parse
    from owlai_refine.pipeline.refiner import Refiner, SyncRefiner, refine, refine_sync
    from owlai_refine.pipeline.splice import splice
    from owlai_refine.results import BlockOutcome, OutcomeStatus, RefineResult, TokenTotals
    from owlai_refine.usage import Usage

_HOMES: dict[str, tuple[str, ...]] = {
    "blocks": ("Block", "BlockKind", "Document", "SkipReason"),
    "config": ("Backend", "GuardConfig", "OutputBudget", "RefineConfig", "RetryPolicy"),
    "errors": (
        "AuthError",
        "CassetteError",
        "CassetteMissError",
        "ConfigError",
        "InputError",
        "LimiterError",
        "LocalModelError",
        "OutputError",
        "RefineError",
    ),
    "pipeline.parse": ("parse",),
    "pipeline.refiner": ("Refiner", "SyncRefiner", "refine", "refine_sync"),
    "pipeline.splice": ("splice",),
    "results": ("BlockOutcome", "OutcomeStatus", "RefineResult", "TokenTotals"),
    "usage": ("Usage",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}
"""Where each exported name is defined: ``owlai_refine.<module>``."""


def __getattr__(name: str) -> Any:
    """An exported name, imported from its module on first use (then kept in the package)."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'owlai_refine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"owlai_refine.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME_OF})


__all__ = [
    "AuthError",
    "Backend",
    "Block",
    "BlockKind",
    "BlockOutcome",
    "CassetteError",
    "CassetteMissError",
    "ConfigError",
    "Document",
    "GuardConfig",
    "InputError",
    "LimiterError",
    "LocalModelError",
    "OutcomeStatus",
    "OutputBudget",
    "OutputError",
    "RefineConfig",
    "RefineError",
    "RefineResult",
    "Refiner",
    "RetryPolicy",
    "SkipReason",
    "SyncRefiner",
    "TokenTotals",
    "Usage",
    "__version__",
    "parse",
    "refine",
    "refine_sync",
    "splice",
]
