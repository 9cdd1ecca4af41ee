"""Guard quality: good edits accepted and bad edits caught, on the labelled replies.

    python -m benchmarks.guard_quality [--files fixtures/edits/*.jsonl] [--show bad|good|all]

Each row of ``fixtures/edits/*.jsonl`` is a block of a sample report and a reply written by hand
(as a careful frontier model would answer our prompt, or as a model that slipped would), labelled
``good`` or ``bad`` with its class (``reword``, ``negation``, ``number_swap``, ...). Every reply
goes through :func:`owlai_refine.guard.check_reply` as the refiner calls it. Printed: the share
of good replies accepted per language and per class, the share of bad replies caught per class
and language, and the guard's CPU time per reply (median and p90, over ``--repeats`` runs).
``--show`` lists the rows the guard got wrong (a good reply rejected with its reasons, a bad
reply accepted), for reading.

Every class counts, role swaps included. Also printed: the reasons of every good reply refused
(the list to read first), the guard's CPU time per reply (median, p90, p99) and each language
analyser's load time in this process.

The held-out files (``heldout*``) were each written blind to the guard and its fixtures and
measured once before the changes they judge: their first looks are in ``docs/guard.md``; here
they are regression floors like the rest.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from benchmarks._common import print_table
from owlai_refine.config import GuardConfig
from owlai_refine.guard import Verdict, check_reply, forget_texts
from owlai_refine.guard.analysis import load_time
from testsupport.edits import Row, accepted, load_rows


def _share(hits: int, total: int) -> str:
    return f"{100 * hits / total:5.1f}% ({hits}/{total})" if total else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.guard_quality")
    parser.add_argument("--files", nargs="*", type=Path)
    parser.add_argument("--show", choices=("bad", "good", "all"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rows = load_rows(args.files)
    verdicts, times = _check_all(rows, args.repeats)
    good, bad = _score(rows, verdicts, show=args.show)
    languages = sorted({row.language for row in rows})
    _print_share_table("Good replies accepted", good, languages)
    _print_share_table("Bad replies caught", bad, languages)
    _print_costs_and_refusals(rows, verdicts, times, show=bool(args.show))
    return 0


def _check_all(rows: list[Row], repeats: int) -> tuple[dict[str, Verdict], dict[str, float]]:
    """Every row's verdict and its best CPU time (seconds) over ``repeats`` runs, by row id."""
    config = GuardConfig()
    verdicts: dict[str, Verdict] = {}
    times: dict[str, float] = {}
    for _ in range(repeats):
        for row in rows:
            forget_texts()  # each reply timed as the first time its texts are seen
            started = time.process_time()
            verdicts[row.id] = check_reply(row.block, row.reply, config)
            spent = time.process_time() - started
            times[row.id] = min(times.get(row.id, spent), spent)
    return verdicts, times


_Shares = dict[tuple[str, str], list[bool]]


def _score(
    rows: list[Row], verdicts: dict[str, Verdict], *, show: str | None
) -> tuple[_Shares, _Shares]:
    """Per ``(language, class)``: the good replies accepted and the bad replies caught (one bool
    per row). With ``show``, the rows the guard got wrong of that label are printed on the way."""
    good: _Shares = defaultdict(list)
    bad: _Shares = defaultdict(list)
    for row in rows:
        ok = accepted(verdicts[row.id])
        (good if row.label == "good" else bad)[(row.language, row.cls)].append(
            ok if row.label == "good" else not ok
        )
        wrong = ok != (row.label == "good")
        if show and wrong and show in ("all", row.label):
            print(
                f"[{row.label} {row.cls}] {row.id}: {'; '.join(map(str, verdicts[row.id].reasons))}"
            )
            print(f"   block: {' '.join(row.block.text.split())[:300]}")
            print(f"   reply: {' '.join(row.reply.split())[:300]}")
    return good, bad


def _print_share_table(title: str, data: _Shares, languages: list[str]) -> None:
    """One row per class and a last ``all`` row, one column per language and a last ``all``."""
    classes = sorted({cls for _, cls in data})
    out = []
    for cls in classes:
        cells = [cls]
        every: list[bool] = []
        for lang in languages:
            got = data.get((lang, cls), [])
            every += got
            cells.append(_share(sum(got), len(got)))
        cells.append(_share(sum(every), len(every)))
        out.append(cells)
    totals = ["all"]
    every_all: list[bool] = []
    for lang in languages:
        got = [x for (lg, _), xs in data.items() if lg == lang for x in xs]
        every_all += got
        totals.append(_share(sum(got), len(got)))
    totals.append(_share(sum(every_all), len(every_all)))
    out.append(totals)
    print(f"\n{title}")
    print_table(["class", *languages, "all"], out)


def _print_costs_and_refusals(
    rows: list[Row], verdicts: dict[str, Verdict], times: dict[str, float], *, show: bool
) -> None:
    """The guard's CPU time per reply, the analysers' load times and the good replies refused."""
    per_block = sorted(times.values())

    def pct(q: float) -> float:
        return 1000 * per_block[int(q * (len(per_block) - 1))]

    print(
        f"\nguard CPU time per reply: median {1000 * statistics.median(per_block):.2f} ms, "
        f"p90 {pct(0.9):.2f} ms, p99 {pct(0.99):.2f} ms over {len(rows)} replies"
    )
    loaded = {lang: load_time(lang) for lang in ("en", "ko", "ja", "zh")}
    print(
        "analysers loaded in: "
        + ", ".join(f"{lang} {took:.2f} s" for lang, took in loaded.items() if took is not None)
    )
    refused = [row for row in rows if row.label == "good" and not accepted(verdicts[row.id])]
    if refused and not show:
        print(f"\ngood replies refused ({len(refused)}):")
        for row in refused:
            print(f"  {row.id} [{row.cls}]: " + "; ".join(map(str, verdicts[row.id].reasons)))


if __name__ == "__main__":
    sys.exit(main())
