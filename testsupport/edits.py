"""The labelled replies of ``fixtures/edits/*.jsonl``, read for the guard's tests
(``tests/guard/test_edits_corpus.py``) and its benchmark (``python -m benchmarks.guard_quality``).

Each line is a block of a sample report and a reply written by hand, labelled ``good`` or
``bad`` with its class (``reword``, ``negation``, ``number_swap``, ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from owlai_refine.blocks import Block, BlockKind
from owlai_refine.guard import Verdict

EDITS = Path(__file__).resolve().parents[1] / "fixtures" / "edits"


@dataclass(frozen=True)
class Row:
    """One labelled reply (the fields of a ``fixtures/edits`` line)."""

    id: str
    report: str
    language: str
    label: str
    cls: str
    block: Block
    reply: str


def load_rows(files: list[Path] | None = None) -> list[Row]:
    """Every labelled reply of ``files`` (default: every ``fixtures/edits/*.jsonl``), in file
    order. Raises ``ValueError`` naming the file and line of a malformed row."""
    rows: list[Row] = []
    for path in files or sorted(EDITS.glob("*.jsonl")):
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                raw: dict[str, Any] = json.loads(line)
                block = Block(
                    id=int(raw["block"]),
                    kind=BlockKind(raw.get("kind", "paragraph")),
                    start=0,
                    end=raw["block_text"].count("\n") + 1,
                    prefixes=("",) * (raw["block_text"].count("\n") + 1),
                    continuation_prefix="",
                    text=raw["block_text"],
                    heading_path=tuple(raw.get("heading_path", ())),
                )
                rows.append(
                    Row(
                        raw["id"],
                        raw["report"],
                        raw["language"],
                        raw["label"],
                        raw["class"],
                        block,
                        raw["reply"],
                    )
                )
            except (KeyError, ValueError, TypeError) as exc:
                raise ValueError(f"{path}:{n}: {exc}") from exc
    return rows


def accepted(verdict: Verdict) -> bool:
    """True if the reply would be spliced in (refined) or counted unchanged."""
    return verdict.text is not None
