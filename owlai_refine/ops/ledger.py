"""Read the usage ledger: our JSON log lines, one object per line, written by the core.

Only ``"event": "refine.call"`` lines are call records; every other event (``refine.start``,
``refine.done``, ``refine.block_truncated`` ...) is counted and ignored, and lines that are not a
JSON object are counted as skipped. A failed attempt's call line carries ``error`` and null token
fields. Fields read: those of :class:`~owlai_refine.usage.Usage` (token counts from the server's
``usage``, times in seconds measured by our client; the prediction counts absent or null
without predicted outputs), ``max_tokens`` (tokens we asked for), ``model``, ``backend``
(``"cloud"`` | ``"self-hosted"``) and ``error``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from owlai_refine.errors import InputError
from owlai_refine.usage import NO_USAGE, USAGE_FIELDS, Usage, UsageFields

__all__ = ["CALL_EVENT", "CallRecord", "LedgerRead", "parse_ledger_lines", "read_ledgers"]

CALL_EVENT = "refine.call"


@dataclass(frozen=True, slots=True)
class CallRecord(UsageFields):
    """One model call attempt from the ledger.

    ``usage``'s fields (read flat too: ``record.prompt_tokens``) are ``None`` when the line
    lacks them (a failed attempt, or a server that sent no ``usage``). ``error`` is the error
    text of a failed attempt, else ``None``.
    """

    model: str
    backend: str
    usage: Usage = NO_USAGE
    max_tokens: int | None = None
    error: str | None = None


@dataclass(slots=True)
class LedgerRead:
    """What reading ledger files gave: the call records and the counts of what was not one.

    ``skipped_lines``: non-empty lines that are not a JSON object. ``other_events``: JSON lines
    whose ``event`` is not ``refine.call``.
    """

    calls: list[CallRecord] = field(default_factory=list)
    skipped_lines: int = 0
    other_events: int = 0


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _float_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _record(obj: dict[str, Any]) -> CallRecord:
    counts = {
        name: _int_or_none(obj.get(name)) for name in USAGE_FIELDS if name.endswith("_tokens")
    }
    return CallRecord(
        model=str(obj.get("model") or "?"),
        backend=str(obj.get("backend") or "?"),
        usage=Usage(
            **counts,
            finish_reason=_str_or_none(obj.get("finish_reason")),
            latency_s=_float_or_none(obj.get("latency_s")),
            ttft_s=_float_or_none(obj.get("ttft_s")),
        ),
        max_tokens=_int_or_none(obj.get("max_tokens")),
        error=_str_or_none(obj.get("error")),
    )


def parse_ledger_lines(lines: Iterable[str], into: LedgerRead | None = None) -> LedgerRead:
    """Parse ledger lines (with or without line ends) into ``into`` (a new one by default)."""
    out = into if into is not None else LedgerRead()
    for line in lines:
        text = line.strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except ValueError:
            out.skipped_lines += 1
            continue
        if not isinstance(obj, dict):
            out.skipped_lines += 1
        elif obj.get("event") == CALL_EVENT:
            out.calls.append(_record(obj))
        else:
            out.other_events += 1
    return out


def read_ledgers(paths: Iterable[str | Path]) -> LedgerRead:
    """Read every ledger file in ``paths`` (``-`` is not special) into one ``LedgerRead``.

    Raises ``InputError`` naming the file if one cannot be opened or is not UTF-8.
    """
    out = LedgerRead()
    for path in paths:
        try:
            with Path(path).open(encoding="utf-8") as fh:
                parse_ledger_lines(fh, out)
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise InputError(f"cannot read ledger {path}: {reason}") from exc
    return out
