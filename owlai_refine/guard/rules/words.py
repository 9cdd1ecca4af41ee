"""The word rule: a content word replaced by its opposite.

Pure code, over the pair's edits (``guard.edits``): an edit that replaced one content word by
one its language's resource calls an antonym (WordNet for English: ``complexity`` ->
``simplicity``, ``began`` -> ``finished``) is a flipped claim: ``changed word "complexity" ->
"simplicity" (antonym)``. The word tables' opposites (``meaning``) cover the other languages.
"""

from __future__ import annotations

from owlai_refine.guard.edits import EditClass
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason

__all__ = ["antonym_reasons"]


def antonym_reasons(pair: Pair) -> list[Reason]:
    """One reason per edit classed ``antonym``."""
    return [
        Reason("changed word", f'"{e.old_content[0].text}" -> "{e.new_content[0].text}" (antonym)')
        for e in pair.edits
        if e.cls is EditClass.ANTONYM
    ]
