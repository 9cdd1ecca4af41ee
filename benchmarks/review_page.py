"""The review page's cost: CPU to build ``refine --review``'s page for every real report, and
the word diff of one long block.

    python -m benchmarks.review_page [--rounds 3]

Each report is parsed and given a made-up result in which every sendable block is ``refined``
with every seventh word changed (the page then diffs every block: the most work it can have),
and :func:`owlai_refine.review.review_page` is timed with ``time.process_time`` (CPU: the
machine is shared), the minimum of ``--rounds``. Then one block of 4,000 words against a reply
with 10% of its words changed, and against an unrelated reply of the same words shuffled (the
worst case for the aligner). Prints Markdown tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from functools import partial

from benchmarks._common import print_table, read_report, report_paths
from owlai_refine import parse
from owlai_refine.results import BlockOutcome, OutcomeStatus, RefineResult, TokenTotals
from owlai_refine.review import review_page, word_diff


def _edited(text: str) -> str:
    words = text.split(" ")
    return " ".join(w + "x" if i % 7 == 3 else w for i, w in enumerate(words))


def _cpu(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        fn()
        best = min(best, time.process_time() - started)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.review_page")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    rows = []
    for path in report_paths():
        doc = parse(read_report(path))
        outcomes = tuple(
            BlockOutcome(
                block_id=b.id,
                kind=b.kind.value,
                line_span=b.line_span,
                status=OutcomeStatus.REFINED if b.sendable else OutcomeStatus.SKIPPED,
                text=_edited(b.text) if b.sendable else None,
            )
            for b in doc.blocks
        )
        result = RefineResult(
            report_id=path.stem, text=doc.source, outcomes=outcomes, tokens=TokenTotals(),
            elapsed_s=0.0,
        )  # fmt: skip
        page = review_page(doc, result, name=path.name)  # also loads the analysers once
        cpu = _cpu(partial(review_page, doc, result, name=path.name), args.rounds)
        sent = sum(b.sendable for b in doc.blocks)
        rows.append([path.name[:40], len(doc.source), sent, len(page), cpu, 1000 * cpu / sent])
    print_table(["report", "bytes", "blocks diffed", "page bytes", "CPU s", "ms per block"], rows)
    print()
    rng = random.Random(1)
    words = [f"w{rng.randint(0, 300)}" for _ in range(4000)]
    old = " ".join(words)
    changed = list(words)
    for i in rng.sample(range(len(words)), 400):
        changed[i] += "x"
    cases = {
        "10% of words changed": " ".join(changed),
        "unrelated": " ".join(rng.sample(words, 4000)),
    }
    diffs = [
        [name, _cpu(partial(word_diff, old, new, "latin"), args.rounds)]
        for name, new in cases.items()
    ]
    print_table(["4,000-word block against", "CPU s"], diffs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
