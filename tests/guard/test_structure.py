"""Structure: the reply must parse as one paragraph, like its block."""

from __future__ import annotations

import pytest

from owlai_refine.guard._md import parse_tokens
from owlai_refine.guard.structure import structure_problems

BLOCK = "Quantum computers threaten RSA [1]."


def _problems(reply: str, block: str = BLOCK) -> list[str]:
    return [str(r) for r in structure_problems(parse_tokens(block), parse_tokens(reply))]


@pytest.mark.parametrize(
    ("reply", "reasons"),
    [
        ("Quantum computers pose a threat\nto RSA [1].", []),
        ("Quantum computers threaten RSA [1].\n2. Later items do not interrupt.", []),
        ("# Quantum", ["structure: heading"]),
        ("Quantum computers\n---", ["structure: heading"]),
        ("- one\n- two", ["structure: list"]),
        ("Intro:\n1. one", ["structure: list"]),
        ("Text\n```\ncode\n```", ["structure: code block"]),
        ("    indented code", ["structure: code block"]),
        ("a | b\n--|--\n1 | 2", ["structure: table"]),
        ("Text\n\n***", ["structure: rule"]),
        ("> quoted", ["structure: quote"]),
        ("Text\n<div>\nblock\n</div>", ["structure: html block"]),
        ("Text\n\n$$\nx^2\n$$", ["structure: math block"]),
        ("---\ntitle: x\n---\nText", ["structure: front matter"]),
        ("Text [^1].\n\n[^1]: A note.", ["structure: footnote definition"]),
        ("[x]: https://example.org\nText", ["structure: link definition"]),
        ("One.\n\nTwo.", ["structure: blank line"]),
        ("One\\\nTwo.", ["structure: hard line break"]),
        ("[x]: https://example.org", ["structure: link definition"]),
        ("", ["structure: empty"]),
        ("## Summary\n\n- a\n- b", ["structure: heading", "structure: list"]),
    ],
)
def test_structure(reply: str, reasons: list[str]) -> None:
    assert _problems(reply) == reasons


def test_only_what_the_block_lacks_is_named() -> None:
    # a block with a hard break is never sent, but the check still names only what is new
    block = "First line\\\nsecond line."
    assert _problems("First line\\\nthe second line.", block) == []
