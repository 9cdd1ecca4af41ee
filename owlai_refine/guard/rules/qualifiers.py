"""The qualifier rule: a Chinese attribute (the words before 的) dropped from a noun the reply
keeps.

Pure code, over the pair's edits (``guard.edits``). In Chinese an attribute says which of a
kind the noun after 的 is (``包含中断的数据集``: the data set with disruptions; ``从零开始的图构建
过程``: the graph built from scratch). An edit that removes the attribute with its 的, puts at
most a number or a measure word in its place (``一个``) and whose words the reply writes nowhere
else has narrowed the claim to any noun of the kind: ``lost qualifier "包含中断的"``. A
rewording that keeps the attribute's meaning in other words replaces it with words of its own,
and is not judged here.
"""

from __future__ import annotations

from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason

__all__ = ["qualifier_reasons"]

_DE = "\u7684"  # 的


def qualifier_reasons(pair: Pair) -> list[Reason]:
    """``lost qualifier "..."`` for the first Chinese attribute dropped whole (see the module
    docstring); empty if none was, and for other languages."""
    if pair.old.language != "zh":
        return []
    for edit in pair.edits:
        if not edit.old or edit.old[-1].lemma != _DE or _DE in (t.lemma for t in edit.new):
            continue
        attribute = [t for t in edit.old[:-1] if t.content]
        if not attribute or any(t.content and t.pos != "NUM" for t in edit.new):
            continue
        if any(t.lemma in pair.reply_prose for t in attribute):
            continue  # said elsewhere in the reply: moved, not dropped
        shown = "".join(t.text for t in edit.old)
        return [Reason("lost qualifier", f'"{shown}"')]
    return []
