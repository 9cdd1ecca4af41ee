"""The review page: one self-contained HTML file that shows what a run changed, and why not.

Pure code: :func:`review_page` takes the parsed report and the run's result and returns the
page as text (the CLI writes it, :mod:`owlai_refine.cli.run`). The page loads nothing: its CSS
and a few lines of JavaScript are inline (``page.css`` and ``page.js`` beside this module), and
a Content-Security-Policy allows only those two, by a nonce, so even a report that smuggled
markup past the escaping could neither run a script nor fetch anything.

Layout: the counts per status at the top (each a filter link), the reason groups of the
rejected blocks, then every block in document order: its id, its 1-based source lines, its
heading path and status, and

- ``refined``: the word diff of the original against the accepted text (``<del>``/``<ins>``);
- ``rejected`` and ``truncated``: the reasons, and the word diff of the original against the
  reply that was not used (marked as not applied);
- ``unchanged``: the text; ``failed``: the error and the text; ``skipped``: why, the text folded.

Filters: ``review.html#rejected`` (or ``#rejected,truncated``) shows only those statuses; the
inline script applies the fragment on load and on every change, setting ``hidden`` on the other
blocks (so ``chromium --headless --dump-dom`` of such a URL shows the filtered page). Without
JavaScript every block is shown.

Everything from the report or the model is escaped; bidirectional and other invisible control
characters are shown as visible ``<U+202E>`` marks (a Trojan-source reply is seen, not obeyed);
text keeps its line breaks and long lines wrap.
"""

from __future__ import annotations

import html
import secrets
from collections import Counter
from functools import cache
from importlib import resources

from owlai_refine.blocks import Block, Document
from owlai_refine.results import BlockOutcome, OutcomeStatus, RefineResult
from owlai_refine.review.worddiff import CONTROL, Chunk, word_diff

__all__ = ["review_page"]

_STATUSES = tuple(s.value for s in OutcomeStatus)


@cache
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _esc(text: str) -> str:
    """``text`` as HTML text: escaped, control characters shown as ``<U+XXXX>`` marks."""
    return CONTROL.sub(
        lambda m: f'<span class="ctl">&lt;U+{ord(m.group()):04X}&gt;</span>',
        html.escape(text, quote=True),
    )


def _diff_html(chunks: list[Chunk]) -> str:
    """Chunks as HTML: ``<del>`` and ``<ins>``, a deletion's leading space drawn outside it."""
    out = []
    for c in chunks:
        if c.op == "equal":
            out.append(_esc(c.text))
            continue
        body = c.text.lstrip() if c.op == "delete" else c.text
        tag = "del" if c.op == "delete" else "ins"
        out.append(f"{_esc(c.text[: len(c.text) - len(body)])}<{tag}>{_esc(body)}</{tag}>")
    return "".join(out)


def _lines(block: Block) -> str:
    first, last = block.start + 1, block.end
    return f"line {first}" if first == last else f"lines {first}\u2013{last}"


def _detail_of(reason: str, group: str) -> str:
    """A reason's text without its group's name in front (the page shows the group beside it):
    ``lost citation [2]`` in group ``lost citation`` -> ``[2]``."""
    if group and reason.startswith(group):
        return reason[len(group) :].lstrip(": ") or reason
    return reason


def _reasons(o: BlockOutcome) -> str:
    """Why a rejected or truncated block kept its text, as a list."""
    if o.status is OutcomeStatus.TRUNCATED:
        items = (
            f'<li><span class="group">cut</span> {o.completion_tokens} tokens written of '
            f"max_tokens {o.max_tokens} (finish_reason {_esc(str(o.finish_reason))})</li>"
        )
    else:
        groups = o.reason_groups if len(o.reason_groups) == len(o.reasons) else ("",) * 99
        items = (
            "".join(
                f'<li><span class="group">{_esc(g)}</span> {_esc(_detail_of(r, g))}</li>'
                if g
                else f"<li>{_esc(r)}</li>"
                for g, r in zip(groups, o.reasons, strict=False)
            )
            or f"<li>{_esc(o.reason or 'no reason given')}</li>"
        )
    return f'<ul class="reasons">{items}</ul>'


def _detail(block: Block, o: BlockOutcome) -> str:
    """The body of one block's section."""
    text = f'<div class="text">{_esc(block.text)}</div>'
    status = o.status
    if status is OutcomeStatus.REFINED and o.text is not None:
        return f'<div class="diff">{_diff_html(word_diff(block.text, o.text))}</div>'
    if status in (OutcomeStatus.REJECTED, OutcomeStatus.TRUNCATED):
        if o.reply is None:
            return _reasons(o) + text
        what = "the reply it refused" if status is OutcomeStatus.REJECTED else "the cut reply"
        return (
            f'{_reasons(o)}<p class="label">The original, and {what} (not applied):</p>'
            f'<div class="diff refused">{_diff_html(word_diff(block.text, o.reply))}</div>'
        )
    if status is OutcomeStatus.FAILED:
        return f'<ul class="reasons"><li>{_esc(o.reason or "failed")}</li></ul>{text}'
    if status is OutcomeStatus.SKIPPED:
        return (
            f"<details><summary>not sent: {_esc(o.reason or 'skipped')}</summary>{text}</details>"
        )
    return text  # unchanged


def _section(block: Block, o: BlockOutcome, title: str | None) -> str:
    headings = block.heading_path
    if headings and headings[0] == title:  # the report's title is above every block
        headings = headings[1:]
    path = " \u203a ".join(headings)
    return (
        f'<section class="block" id="block-{block.id}" data-status="{o.status.value}">'
        f'<div class="head"><a class="id" href="#block-{block.id}">block {block.id}</a>'
        f'<span class="lines">{_lines(block)}</span><span class="kind">{_esc(o.kind)}</span>'
        f'<span class="path">{_esc(path)}</span>'
        f'<span class="status s-{o.status.value}">{o.status.value}</span></div>'
        f"{_detail(block, o)}</section>"
    )


def _header(name: str, doc: Document, result: RefineResult) -> str:
    counts = result.counts
    links = "".join(
        f'<a class="count s-{s}" data-status="{s}" href="#{s}">{s} <b>{counts[s]}</b></a>'
        for s in _STATUSES
    )
    groups = Counter(g for o in result.outcomes for g in o.groups)  # blocks per group
    why = ", ".join(f"{_esc(g)} {n}" for g, n in groups.most_common())
    tokens = result.tokens
    meta = (
        f"{len(result.outcomes)} blocks, {sum(counts.values()) - counts['skipped']} sent, "
        f"{tokens.requests} requests ({tokens.prompt_tokens:,} prompt and "
        f"{tokens.completion_tokens:,} completion tokens), {result.elapsed_s:.1f} s"
    )
    stopped = (
        f'<p class="stopped">The run stopped early: {_esc(result.stop_reason)}; the blocks '
        "not sent kept their text.</p>"
        if result.stop_reason
        else ""
    )
    title = f'<p class="title">{_esc(doc.title)}</p>' if doc.title else ""
    per = "Blocks per reason (a block may have several)"
    groups_line = f'<p class="groups">{per}: {why}</p>' if why else ""
    return (
        f"<header><h1>Review of <bdi>{_esc(name)}</bdi></h1>{title}"
        f'<p class="meta">{meta}</p>{stopped}{groups_line}</header>'
        f'<nav class="counts"><a class="count" data-status="all" href="#all">all '
        f"<b>{len(result.outcomes)}</b></a>{links}"
        '<span class="shown" id="shown"></span></nav>'
    )


def review_page(doc: Document, result: RefineResult, *, name: str) -> str:
    """The review page of ``result`` (a run over ``doc``, the report parsed as it was refined),
    as one self-contained HTML document; ``name`` is what the page calls the report (its file
    name). Every block of ``result.outcomes`` is shown, in document order.

    Raises ``ValueError`` if an outcome names a block that ``doc`` does not have (the result is
    of another report)."""
    blocks = {b.id: b for b in doc.blocks}
    missing = [o.block_id for o in result.outcomes if o.block_id not in blocks]
    if missing:
        raise ValueError(f"outcomes for blocks {missing[:5]} that the report does not have")
    nonce = secrets.token_urlsafe(16)
    csp = f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'"
    sections = "\n".join(_section(blocks[o.block_id], o, doc.title) for o in result.outcomes)
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Review: {_esc(name)}</title>"
        f'<style nonce="{nonce}">{_asset("page.css")}</style></head>\n'
        f'<body data-filter="all">{_header(name, doc, result)}\n<main>\n{sections}\n</main>\n'
        f'<script nonce="{nonce}">{_asset("page.js")}</script></body></html>\n'
    )
