"""Line endings through blocks rewritten onto more or fewer lines: CRLF, CR and mixed documents,
the splice (``splicer``) and the safety net after it (``verify``), each checked against the
expected bytes written out by hand, and the test oracle (``testsupport/checks.py``) itself."""

from __future__ import annotations

import pytest

from owlai_refine.pipeline.parse import parse
from owlai_refine.pipeline.splice import splice
from owlai_refine.pipeline.verify import changed_outside_blocks, misended_blocks, splice_faults
from testsupport.checks import lines_with_endings, skeleton_changes

CRLF = "# Title\r\n\r\nOne line.\r\n\r\n- item one\r\n- item two\r\n\r\nEnd.\r\n"


@pytest.mark.parametrize(
    ("source", "block", "new", "expected"),
    [
        # A one-line block rewritten onto two and three lines in a CRLF document: CRLF inside.
        (CRLF, 0, "First.\nSecond.", CRLF.replace("One line.\r\n", "First.\r\nSecond.\r\n")),
        (
            CRLF,
            1,
            "item\r\none\rwrapped",
            CRLF.replace("- item one\r\n", "- item\r\n  one\r\n  wrapped\r\n"),
        ),
        # A CR (old Mac) document.
        (
            "# T\r\rOne line.\r\rEnd.\r",
            0,
            "A.\nB.",
            "# T\r\rA.\rB.\r\rEnd.\r",
        ),
        # Mixed, mostly LF: a one-line CRLF block gets the document's LF inside and keeps its
        # own CRLF at the end.
        ("# T\n\nOne line.\r\n\nEnd.\n", 0, "A.\nB.", "# T\n\nA.\nB.\r\n\nEnd.\n"),
        # Mixed, mostly CRLF: a one-line LF block gets CRLF inside, keeps its LF.
        ("# T\r\n\r\nOne line.\n\r\nEnd.\r\n", 0, "A.\nB.", "# T\r\n\r\nA.\r\nB.\n\r\nEnd.\r\n"),
        # A two-line block keeps its own first ending inside, whatever the document's.
        ("# T\n\nOne\r\ntwo.\n\nEnd.\n", 0, "A\nB\nC.", "# T\n\nA\r\nB\r\nC.\n\nEnd.\n"),
        # Fewer lines than before: the last ending is the block's last.
        ("# T\r\n\r\nOne\r\ntwo.\n", 0, "Both.", "# T\r\n\r\nBoth.\n"),
        # The last block of a file without a final newline stays without one.
        ("# T\r\n\r\nLast line.", 0, "A.\nB.", "# T\r\n\r\nA.\r\nB."),
        # A document with no line ending at all: LF inside.
        ("Only line.", 0, "A.\nB.", "A.\nB."),
    ],
)
def test_endings_of_a_rewritten_block(source: str, block: int, new: str, expected: str) -> None:
    doc = parse(source)
    block_id = doc.sendable[block].id
    out = splice(doc, {block_id: new})
    assert out == expected
    assert splice_faults(doc, {block_id: new}, out) == []
    assert skeleton_changes(source, out) == []


def test_a_bom_and_crlf_survive_a_multi_line_rewrite() -> None:
    source = "\ufeff" + CRLF
    doc = parse(source)
    out = splice(doc, {doc.sendable[-1].id: "The\nend."})
    assert out == "\ufeff" + CRLF.replace("End.\r\n", "The\r\nend.\r\n")


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (lambda s: s.replace("# Title\r\n", "# Title\n"), 0),  # an ending only
        (lambda s: s.replace("\r\n\r\n- item", "\r\n\n- item"), 3),
        (lambda s: s.replace("End.\r\n", "End.\n"), 7),
        (lambda s: s.replace("End.\r\n", "End."), 7),  # the final newline lost
        (lambda s: s + "\r\n", 8),  # a line more at the end
        (lambda s: s.replace("# Title", "# Titel"), 0),
    ],
)
def test_verify_sees_a_changed_ending_or_line_outside_the_blocks(change: object, line: int) -> None:
    assert callable(change)
    doc = parse(CRLF)
    first = doc.sendable[0].id
    out = change(splice(doc, {first: "Two\nlines."}))
    assert changed_outside_blocks(doc, {first: "Two\nlines."}, out) == [line]
    assert skeleton_changes(CRLF, out) != []  # the independent oracle sees it too


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (lambda s: s.replace("Two\r\n", "Two\n"), 2),  # LF inside a CRLF block
        (lambda s: s.replace("Two\r\n", "Two\r"), 2),
        (lambda s: s.replace("lines.\r\n", "lines.\n"), 2),  # the block's last ending
        (lambda s: s.replace("\r\n", "\n"), 2),  # the whole report (lines outside too)
    ],
)
def test_verify_sees_a_changed_ending_inside_a_replaced_block(change: object, line: int) -> None:
    assert callable(change)
    doc = parse(CRLF)
    new = {doc.sendable[0].id: "Two\nlines."}
    out = change(splice(doc, new))
    assert misended_blocks(doc, new, out) == [line]
    assert line in splice_faults(doc, new, out)


def test_a_block_rewritten_onto_more_lines_keeps_its_own_endings() -> None:
    source = "# T\n\nOne\r\ntwo.\n\nEnd.\n"  # a two-line block: CRLF inside, LF last
    doc = parse(source)
    new = {doc.sendable[0].id: "A\nB\nC."}
    good = splice(doc, new)
    assert misended_blocks(doc, new, good) == []
    # LF inside is the document's ending but not the block's own: the splicer never writes it.
    assert misended_blocks(doc, new, good.replace("A\r\n", "A\n")) == [2]


def test_verify_counts_the_new_lines_of_a_rewritten_block() -> None:
    doc = parse(CRLF)
    ids = [b.id for b in doc.sendable]
    new = {ids[0]: "A\nB\nC.", ids[1]: "x"}
    out = splice(doc, new)
    assert changed_outside_blocks(doc, new, out) == []
    # Told the wrong text, it loses its place and names the lines it then sees as changed.
    assert changed_outside_blocks(doc, {ids[0]: "A.", ids[1]: "x"}, out) != []


def test_the_oracle_splits_only_on_cr_lf_and_crlf() -> None:
    assert lines_with_endings("a\r\nb\rc\nd\u2028e\x0bf") == [
        "a\r\n",
        "b\r",
        "c\n",
        "d\u2028e\x0bf",
    ]
    assert lines_with_endings("") == []
    assert lines_with_endings("\n\n") == ["\n", "\n"]


def test_the_oracle_ignores_paragraphs_and_sees_the_rest() -> None:
    source = "# T\n\nPara\ngraph.\n\n- item\n\n```\ncode\n```\n"
    assert skeleton_changes(source, source.replace("Para\ngraph.", "One line.")) == []
    assert skeleton_changes(source, source.replace("item", "thing")) == []
    assert skeleton_changes(source, source.replace("code", "edoc")) == [8]
    assert skeleton_changes(source, source.replace("```\n", "```\r\n", 1)) == [7]
