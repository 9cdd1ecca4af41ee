"""The ``refine`` command: files, flags, environment, logging and exit codes.

    refine REPORT.md [-o OUT.md] [--base-url URL] [--model NAME] [--backend cloud|self-hosted]
    refine stats|bench|doctor|plan ... operator tools (see ``refine stats --help``)
    refine -- stats                    refine a report named like a command (or ./stats)

Errors are one line on stderr and an exit code (:class:`Exit`), never a traceback; Ctrl-C at
any moment, start-up included, is one line and exit 130. This module loads only the flags: the
run itself (:mod:`owlai_refine.cli.run`) and the operator tools are imported once the command
line is read, so ``refine --version`` and ``--help`` load neither openai nor pydantic.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from owlai_refine._version import __version__
from owlai_refine.defaults import DEFAULT_TEMPERATURE, Backend
from owlai_refine.exit_codes import Exit
from owlai_refine.shell.files import DEFAULT_MAX_BYTES, default_ledger_path, home
from owlai_refine.shell.flags import Exclusive, Flag, add_flags

__all__ = ["COMMANDS", "Exit", "main", "split_command"]

COMMANDS: dict[str, str] = {
    "stats": "usage-ledger figures (input-token quantiles) from refine's JSON logs",
    "doctor": "check a vLLM server's settings, startup log and /metrics",
    "bench": "sweep client-side concurrency against one running server",
    "plan": "KV cache size and full windows a vLLM server will have, before starting it",
}
"""The operator subcommands: name -> one-line help. Each is ``run_<name>(argv)`` in
:mod:`owlai_refine.ops`, loaded only when asked for."""


def _command_parser() -> argparse.ArgumentParser:
    """``refine COMMAND ARGS...``: the command word, then everything after it for its own parser."""
    p = argparse.ArgumentParser(prog="refine", add_help=False)
    p.add_argument("command", choices=sorted(COMMANDS))
    p.add_argument("args", nargs=argparse.REMAINDER)
    return p


def split_command(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """``(command, its arguments)``, or ``(None, refine's arguments)`` to refine a report.

    A command is recognised only as the first argument, spelled exactly (``stats``, ``bench``,
    ``doctor``). A report that has such a name is given as a path (``refine ./stats``) or after
    ``--`` (``refine -- stats``), as git does: a leading ``--`` ends the command position and
    stays, so argparse also reads what follows as the report, not as options.
    """
    if argv and argv[0] in COMMANDS:
        ns = _command_parser().parse_args(argv)
        return ns.command, list(ns.args)
    return None, list(argv)


def _parser() -> argparse.ArgumentParser:
    """``refine REPORT [flags]``'s parser; the flags' defaults read from the environment now."""
    p = argparse.ArgumentParser(
        prog="refine",
        description="Polish a Markdown report block by block with a chat model; everything "
        "that is not a refined paragraph or list item comes out byte-identical.",
        epilog="Commands (each has --help): "
        + "; ".join(f"refine {name} ...: {text}" for name, text in COMMANDS.items())
        + ". A report named like a command: refine ./stats, or refine -- stats. "
        "Exit codes: 0 ok, 1 bug, 2 config, 3 input, 4 output, 5 partial "
        "(some blocks failed), 6 cassette, 7 limiter, 130/143 interrupted.",
    )
    env = os.environ.get
    add_flags(
        p,
        (
            *_FILES,
            *_server_flags(env),
            *_cap_flags(env),
            *_REQUESTS,
            *_output_flags(),
            *_TAPE,
            *_LIMITS,
        ),
    )
    return p


def _penalty(text: str) -> float | str:
    """A ``--*-penalty`` value: a number, or ``server`` (send none)."""
    if text == "server":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a number nor 'server'") from None


# Each help text is the README's "Use it" table row for the flag, word for word, then its
# environment variable (tests/test_cli_help.py holds the two to each other). The tables are in
# --help's order.

_FILES: tuple[Flag, ...] = (
    (("report",), dict(metavar="REPORT", help="the Markdown report to refine ('-' reads stdin)")),
    (
        ("-o", "--output"),
        dict(
            metavar="OUT",
            help="write here atomically (temporary file, fsync, rename); default stdout",
        ),
    ),
    (
        ("--in-place",),
        dict(
            action="store_true",
            help="replace REPORT, keeping what it replaced as a numbered backup REPORT.~N~ "
            "(never overwritten)",
        ),
    ),
)


def _server_flags(env: Callable[..., str | None]) -> tuple[Flag, ...]:
    """Where the requests go (servers, shared limiter, model); defaults from ``env``."""
    return (
        (
            ("--base-url",),
            dict(
                default=env("OWLAI_REFINE_BASE_URL"),
                metavar="URL",
                help="OpenAI-compatible endpoint, e.g. http://gpu1:8000/v1, or several "
                "separated by commas (one server per GPU group); unset: the embedded SmolLM2 "
                "model (needs owlai-refine[local]) [$OWLAI_REFINE_BASE_URL]",
            ),
        ),
        (
            ("--limiter",),
            dict(
                default=env("OWLAI_REFINE_LIMITER"),
                metavar="URL",
                help="redis://HOST:PORT/DB: share each endpoint's cap with every worker using "
                "it (needs owlai-refine[redis]); default: this process only "
                "[$OWLAI_REFINE_LIMITER]",
            ),
        ),
        (
            ("--model",),
            dict(
                default=env("OWLAI_REFINE_MODEL"),
                metavar="NAME",
                help="model name, checked against the server's /v1/models before the first "
                "block; unset: the server's only model (embedded: smollm2) [$OWLAI_REFINE_MODEL]",
            ),
        ),
    )


def _cap_flags(env: Callable[..., str | None]) -> tuple[Flag, ...]:
    """How many requests are in flight and how urgent; defaults from ``env``."""
    return (
        (
            ("--backend",),
            dict(
                choices=[b.value for b in Backend],
                default=env("OWLAI_REFINE_BACKEND", Backend.SELF_HOSTED.value),
                help="sets the default cap: cloud 12, self-hosted 4; default self-hosted "
                "[$OWLAI_REFINE_BACKEND]",
            ),
        ),
        (
            ("--concurrency",),
            dict(
                type=int,
                default=env("OWLAI_REFINE_CONCURRENCY"),
                metavar="N",
                help="requests in flight; for vLLM use its max_num_seqs (default: 4 "
                "self-hosted, 12 cloud) [$OWLAI_REFINE_CONCURRENCY]",
            ),
        ),
        (
            ("--priority",),
            dict(
                type=int,
                default=env("OWLAI_REFINE_PRIORITY", "10"),
                metavar="N",
                help="vLLM request priority on self-hosted servers started with "
                "--scheduling-policy priority (lower goes first; chat turns use 0; default "
                "10; 0: not sent) [$OWLAI_REFINE_PRIORITY]",
            ),
        ),
    )


_PENALTY_HELP = (
    "sent on every request (default 0: a copy edit reuses the block's words; a server default "
    "such as 1.5 would punish that); 'server' sends none and leaves the server's default"
)

_REQUESTS: tuple[Flag, ...] = (
    (
        ("--prediction",),
        dict(
            choices=["on", "off"],
            default=None,
            help="send each block as the OpenAI predicted output (prediction); default: on for "
            "--backend cloud, off for self-hosted",
        ),
    ),
    (
        ("--no-marker",),
        dict(
            action="store_true",
            help="do not offer the <unchanged/> reply for a block that needs no change (the "
            "model then repeats such a block in full)",
        ),
    ),
    (
        ("--adaptive",),
        dict(
            action="store_true",
            help="self-hosted: follow the server's /metrics about once a second, leaving a slot "
            "free while others' requests run (down to 1), back up to --concurrency when alone",
        ),
    ),
    (
        ("--limiter-lease",),
        dict(
            type=float,
            default=30.0,
            metavar="SECONDS",
            help="Redis limiter: a dead worker's slots come back within 4/3 of SECONDS "
            "(default 30)",
        ),
    ),
    (
        ("--temperature",),
        dict(
            type=float,
            default=None,
            metavar="T",
            help=f"sampling temperature (default {DEFAULT_TEMPERATURE})",
        ),
    ),
    *(
        (
            (f"--{name}-penalty",),
            dict(type=_penalty, default=None, metavar="X|server", help=_PENALTY_HELP),
        )
        for name in ("presence", "frequency")
    ),
    (
        ("--max-output-tokens",),
        dict(
            type=int,
            default=None,
            metavar="N",
            help="cap on each block's max_tokens (default 4096; each block asks for about "
            "twice its own length plus 64)",
        ),
    ),
    (
        ("--no-stream",),
        dict(
            action="store_true",
            help="ask for whole replies (default: streamed, for TTFT and early stop)",
        ),
    ),
)


def _output_flags() -> tuple[Flag, ...]:
    """What the run writes besides the report (the ledger's default place read now)."""
    return (
        (
            ("--log-file",),
            dict(
                metavar="PATH",
                help="append the JSON log (the usage ledger) here; default: stderr, or at a "
                f"terminal {home(default_ledger_path())}, with a progress display on stderr",
            ),
        ),
        (
            ("--log-level",),
            dict(
                choices=["debug", "info", "warning", "error"],
                default="info",
                help="debug adds each block's text and reply to the log (default info)",
            ),
        ),
        (
            ("--dry-run",),
            dict(
                action="store_true",
                help="list every block: sent (with its max_tokens) or skipped (with the reason), "
                "and its opening words; no calls, nothing written",
            ),
        ),
        (
            ("--review",),
            dict(
                metavar="PATH",
                help="also write a review page here: one self-contained HTML file with the counts, "
                "each block's word diff, and the replies refused with their reasons (written "
                "atomically, even when the run stops early)",
            ),
        ),
        (
            ("--diff",),
            dict(
                action="store_true",
                help="print the word diff of each refined block ([-old-]{+new+}, red and green "
                "at a terminal unless NO_COLOR is set): on stdout when the report goes to a "
                "file, else on stderr",
            ),
        ),
    )


_TAPE: tuple[Flag | Exclusive, ...] = (
    Exclusive(
        (
            (
                ("--record",),
                dict(
                    metavar="CASSETTE",
                    help="append every exchange to CASSETTE (JSON lines, flushed as each "
                    "completes)",
                ),
            ),
            (
                ("--replay",),
                dict(
                    metavar="CASSETTE",
                    help="answer every request from CASSETTE; no network, no server",
                ),
            ),
        )
    ),
    (
        ("--resume",),
        dict(
            action="store_true",
            help="with --record: reuse replies already in the cassette, send only the rest",
        ),
    ),
)

_LIMITS: tuple[Flag, ...] = (
    (
        ("--max-bytes",),
        dict(
            type=int,
            default=DEFAULT_MAX_BYTES,
            metavar="N",
            help=f"refuse reports larger than N bytes (default {DEFAULT_MAX_BYTES // 2**20} "
            "MiB) before any model call",
        ),
    ),
    (
        ("--version",),
        dict(
            action="version",
            version=f"refine (owlai-refine) {__version__}",
            help="print the version and exit",
        ),
    ),
)


def _run_subcommand(name: str, argv: list[str]) -> int:
    """Run ``refine NAME ARGV...`` (``run_<name>`` of the operator tools) for its exit code."""
    from owlai_refine import ops

    runner: Callable[[list[str]], int] = getattr(ops, f"run_{name}")
    return runner(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``refine`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code.

    A KeyboardInterrupt (Ctrl-C) before the run has its own handler, while the modules load,
    is one line on stderr and exit 130, as during the run."""
    try:
        command, args_list = split_command(list(sys.argv[1:] if argv is None else argv))
        if command is not None:
            return _run_subcommand(command, args_list)
        args = _parser().parse_args(args_list)
        from owlai_refine.cli.run import run_report

        return run_report(args)
    except KeyboardInterrupt:
        sys.stderr.write("refine: interrupted; no output was written\n")
        return int(Exit.INTERRUPTED)
