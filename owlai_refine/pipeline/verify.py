"""Check a refined report against its source: the promises of the splice, verified after the
fact. Pure code, no IO.

The refiner runs :func:`splice_faults` on every result as a safety net (a failure would be a
splicer bug: the source is then returned unchanged, see ``refine``): every line outside the
replaced blocks is the source's, byte for byte (:func:`changed_outside_blocks`), and the lines of
each replaced block end as the source's do (:func:`misended_blocks`). The benchmarks and tests
also use :func:`token_drift` on whole reports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

from owlai_refine.blocks import Block, Document
from owlai_refine.guard.tokens import protected_tokens
from owlai_refine.pipeline.parse import split_lines, text_lines

__all__ = ["changed_outside_blocks", "misended_blocks", "splice_faults", "token_drift"]


def _aligned(
    doc: Document, replacements: Mapping[int, str]
) -> Iterator[tuple[int, int, Block | None, int]]:
    """Source and output walked together: ``(source line, output line, block, output lines)``
    for each source line outside the replaced blocks (``block`` ``None``, one line) and each
    replaced block (the lines its new text occupies once spliced)."""
    by_start = {
        doc.blocks[bid].start: (doc.blocks[bid], text) for bid, text in replacements.items()
    }
    i = j = 0
    while i < len(doc.lines):
        hit = by_start.get(i)
        if hit is None:
            yield i, j, None, 1
            i, j = i + 1, j + 1
        else:
            block, text = hit
            count = len(text_lines(text))
            yield i, j, block, count
            i, j = block.end, j + count


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
    bad: list[int] = []
    end = 0  # output lines the source's lines map to
    for i, j, block, count in _aligned(doc, replacements):
        if block is None and (j >= len(out_lines) or out_lines[j] != doc.lines[i]):
            bad.append(i)
        end = j + count
    if end != len(out_lines):
        bad.append(len(doc.lines))
    return bad


def _inner_endings(doc: Document, block: Block) -> set[str]:
    """The endings a replaced block's lines but its last may have: those of the block's own
    source lines, or for a one-line block the document's (``\n`` in a file without any)."""
    lines = doc.lines[block.start : block.end - 1] if block.end - block.start > 1 else doc.lines
    return {line.ending for line in lines if line.ending} or {"\n"}


def misended_blocks(doc: Document, replacements: Mapping[int, str], output: str) -> list[int]:
    """The first source line (0-based) of each replaced block whose lines in ``output`` end
    otherwise than its source does: the last line with the block's own last ending (``""`` at
    the end of a file without a final newline), the others with an ending the block's source
    lines use (a one-line block's: one the document uses). A CRLF block given LF inside is one.

    ``replacements`` as for :func:`changed_outside_blocks`; a block past the end of ``output``
    is left to that function (it reports the line count).
    """
    out_lines = split_lines(output[len(doc.bom) :] if output.startswith(doc.bom) else output)
    bad: list[int] = []
    for i, j, block, count in _aligned(doc, replacements):
        if block is None or j + count > len(out_lines):
            continue
        new = out_lines[j : j + count]
        inner = _inner_endings(doc, block)
        if new[-1].ending != doc.lines[block.end - 1].ending or any(
            line.ending not in inner for line in new[:-1]
        ):
            bad.append(i)
    return bad


def splice_faults(doc: Document, replacements: Mapping[int, str], output: str) -> list[int]:
    """Every source line (0-based, sorted) at which ``output`` breaks the splice's promise:
    :func:`changed_outside_blocks` and :func:`misended_blocks` together; ``[]`` when none."""
    return sorted(
        {
            *changed_outside_blocks(doc, replacements, output),
            *misended_blocks(doc, replacements, output),
        }
    )


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
