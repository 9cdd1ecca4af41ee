"""What a run changed, for a person to look at: a word diff of each block (:mod:`.worddiff`),
the self-contained review page (:mod:`.page`, ``refine --review``) and the same diff for a
terminal (:mod:`.terminal`, ``refine --diff``). Pure code: the CLI writes what these return."""

from __future__ import annotations

from owlai_refine.review.page import review_page
from owlai_refine.review.terminal import diff_text
from owlai_refine.review.worddiff import Chunk, word_diff

__all__ = ["Chunk", "diff_text", "review_page", "word_diff"]
