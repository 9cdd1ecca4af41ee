"""The guard on the real sample reports: no false rejections, and real damage caught.

Every sendable block of every sample report (``testsupport.reports``: ``fixtures/reports``,
and the shared set beside the checkout when it is there) is fed back as its own reply (it
must be ``unchanged``, and every check must pass it even when the ``unchanged`` shortcut is
skipped), to a watchdog as a stream (it must never fire on real prose), and mutated the way a
model damages text (a citation dropped, a URL changed, ...), which must be rejected with the
right reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from owlai_refine.blocks import Block, BlockKind
from owlai_refine.config import GuardConfig
from owlai_refine.guard import check_reply, problems, watchdog_for
from owlai_refine.pipeline.parse import parse
from testsupport.reports import sample_reports, shared_reports

REPORTS = sample_reports()
CONFIG = GuardConfig()


def _blocks(report: Path) -> tuple[Block, ...]:
    return parse(report.read_text("utf-8")).sendable


@pytest.fixture(scope="module")
def all_blocks() -> list[tuple[str, Block]]:
    return [(report.name, block) for report in REPORTS for block in _blocks(report)]


def test_the_sample_reports_are_all_there(all_blocks: list[tuple[str, Block]]) -> None:
    if not shared_reports():
        pytest.skip("../shared/reports is not beside this checkout: the fixture reports only")
    assert len(shared_reports()) == 15
    assert len(all_blocks) > 1000


@pytest.mark.parametrize("report", REPORTS, ids=[r.stem for r in REPORTS])
def test_every_block_as_its_own_reply_is_unchanged(report: Path) -> None:
    for block in _blocks(report):
        verdict = check_reply(block, block.text, CONFIG)
        assert verdict.unchanged, (block.id, verdict)
        assert problems(block.text, block.text, CONFIG) == [], block.id
        if block.kind is BlockKind.LIST_ITEM:
            assert check_reply(block, f"- {block.text}", CONFIG).unchanged, block.id


def test_watchdog_never_fires_on_real_prose(all_blocks: list[tuple[str, Block]]) -> None:
    """Each block streamed in 4-character chunks to a watchdog made for an unrelated block (so
    that the block's own phrases give it no allowance), then to its own."""
    unrelated = parse("Short unrelated text.").blocks[0]
    fired = []
    for name, block in all_blocks:
        for owner in (unrelated, block):
            watchdog = watchdog_for(owner, CONFIG)
            text = block.text
            for end in range(4, len(text) + 4, 4):
                if reason := watchdog(text[:end]):
                    fired.append((name, block.id, reason))
                    break
    assert fired == []


_CITATION = r"(?<!\$D)\[\d+(?:, \d+)*\]"  # "$D[0] ... D[n-1]$" is math, not a citation
_MUTATIONS: dict[str, tuple[re.Pattern[str], str, str]] = {
    # name: (what to find, what to put instead, the reason group expected)
    "drop a citation": (re.compile(rf"\s?{_CITATION}"), "", "lost citation"),
    "escape a citation": (re.compile(r"(?<!\$D)\[(\d+)\]"), r"\\[\1\\]", "escaped citation"),
    "change a URL": (re.compile(r"(\]\(https?://[^)\s]+?)(\w)\)"), r"\1\2x)", "changed url"),
    "drop a link": (re.compile(r"\[([^\]]+)\]\((?:https?://)[^)\s]+\)"), r"\1", "lost url"),
    "unquote a code span": (re.compile(r"`([^`\n]+)`"), r"\1", "lost code"),
    "change a number": (re.compile(r"(?<![\d.,$])(\d+)%"), r"1\1%", "changed number"),
    "drop math": (re.compile(r"(?<!\S)\$([A-Za-z\\][^$\n]*)\$"), r"\1", "lost math"),
}


@pytest.mark.parametrize("mutation", sorted(_MUTATIONS))
def test_mutated_blocks_are_rejected_with_the_reason(
    mutation: str, all_blocks: list[tuple[str, Block]]
) -> None:
    pattern, replacement, group = _MUTATIONS[mutation]
    tried = 0
    for _name, block in all_blocks:
        mutated = pattern.sub(replacement, block.text, count=1)
        if mutated == block.text:
            continue
        tried += 1
        verdict = check_reply(block, mutated, CONFIG)
        assert verdict.text is None, (block.text, mutated)
        assert any(r.group.startswith(group) for r in verdict.reasons), (mutated, verdict.reasons)
    assert tried >= 10
