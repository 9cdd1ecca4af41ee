"""``refine stats [LOG...] [--json]``: its command line (see :func:`main`)."""

from __future__ import annotations

from owlai_refine.errors import InputError
from owlai_refine.ops.console import Parser, out
from owlai_refine.ops.ledger import read_ledgers
from owlai_refine.ops.stats.figures import format_stats, ledger_stats
from owlai_refine.shell.files import default_ledger_path, home

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """``refine stats [LOG...] [--json]``: figures from usage-ledger files (see
    :mod:`owlai_refine.ops.stats.figures`); with no ``LOG``, the default ledger every run at a
    terminal appends to (:func:`~owlai_refine.shell.files.default_ledger_path`). Returns the
    exit code; raises :class:`InputError` when a file cannot be read, the default ledger does
    not exist, or no file holds a single ``refine.call`` line (not a usage ledger)."""
    p = Parser(
        prog="refine stats",
        description="Input/output token figures per model "
        "and backend from our JSON call log (the usage ledger).",
    )
    ledger = default_ledger_path()
    p.add_argument(
        "logs",
        nargs="*",
        metavar="LOG",
        help=f"JSON log file(s) (refine's --log-file); default: the ledger every run at a "
        f"terminal appends to, {home(ledger)} ($XDG_STATE_HOME/owlai-refine/ledger.jsonl)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = p.parse_args(argv)
    if not args.logs:
        if not ledger.is_file():
            raise InputError(
                f"no ledger at {ledger}: a refine run at a terminal writes it; "
                "or name LOG files (a run's --log-file)"
            )
        args.logs = [str(ledger)]
    read = read_ledgers(args.logs)
    if not read.calls:
        raise InputError(
            f"no refine.call lines in {', '.join(args.logs)} ({read.other_events} other "
            f"event(s), {read.skipped_lines} non-JSON line(s)): pass the --log-file of a "
            "refine run"
        )
    stats = ledger_stats(read, files=len(args.logs))
    out(stats.model_dump_json(indent=2) if args.json else format_stats(stats))
    return 0
