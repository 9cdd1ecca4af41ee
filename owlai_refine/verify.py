"""Check a refined report against its source: the promises of the splice, verified after the
fact. Pure code, no IO.

The refiner runs :func:`changed_outside_blocks` on every result as a safety net (a failure would
be a splicer bug: the source is then returned unchanged, see ``refine``); the benchmarks and
tests also use :func:`token_drift` on whole reports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from owlai_refine.blocks import Document
from owlai_refine.guard.tokens import protected_tokens
from owlai_refine.parser import split_lines, text_lines

__all__ = ["changed_outside_blocks", "token_drift"]


def changed_outside_blocks(
    doc: Document, replacements: Mapping[int, str], output: str
) -> list[int]:
    """Source line numbers (0-based) outside the replaced blocks whose bytes differ in
    ``output``; ``[]`` when the splice touched nothing else (BOM and line endings included).

    ``replacements`` maps block ids to the new text spliced in (as given to ``splice``). A
    trailing mismatch in line count is reported as ``len(doc.lines)``.
    """
    if not output.startswith(doc.bom):
        return [0]
    out_lines = split_lines(output[len(doc.bom) :])
    by_start = {
        doc.blocks[bid].start: (doc.blocks[bid], text) for bid, text in replacements.items()
    }
    bad: list[int] = []
    i = j = 0
    while i < len(doc.lines):
        hit = by_start.get(i)
        if hit is not None:
            block, text = hit
            j += len(text_lines(text))
            i = block.end
            continue
        if j >= len(out_lines) or out_lines[j] != doc.lines[i]:
            bad.append(i)
        i += 1
        j += 1
    if j != len(out_lines):
        bad.append(len(doc.lines))
    return bad


def token_drift(
    source: str, output: str, kinds: Iterable[str] = ("citation", "url", "code")
) -> dict[str, tuple[Counter[str], Counter[str]]]:
    """For each protected-token ``kind`` (see ``owlai_refine.guard.tokens``), the tokens lost
    and added between ``source`` and ``output``, as ``{kind: (lost, added)}``; only kinds that
    drifted are listed, so ``{}`` means the multisets are equal."""
    before, after = protected_tokens(source).counts, protected_tokens(output).counts
    drift: dict[str, tuple[Counter[str], Counter[str]]] = {}
    for kind in kinds:
        b = Counter({key: n for (k, key), n in before.items() if k == kind})
        a = Counter({key: n for (k, key), n in after.items() if k == kind})
        if a != b:
            drift[kind] = (b - a, a - b)
    return drift
