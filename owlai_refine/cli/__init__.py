"""The ``refine`` command: files, flags, environment, logging and exit codes.

    refine REPORT.md [-o OUT.md] [--base-url URL] [--model NAME] [--backend cloud|self-hosted]
    refine stats|bench|doctor ...      operator tools (see ``refine stats --help``)
    refine -- stats                    refine a report named like a command (or ./stats)

Errors are one line on stderr and an exit code (:class:`Exit`), never a traceback.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TextIO

import anyio
import httpx2
import pydantic
import structlog

from owlai_refine._version import __version__
from owlai_refine.cassette import RecordingTransport, ReplayTransport
from owlai_refine.cli.dryrun import print_plan
from owlai_refine.cli.files import (
    DEFAULT_MAX_BYTES,
    check_writable,
    read_report,
    same_file,
    write_atomic,
)
from owlai_refine.cli.logs import configure_json_logging
from owlai_refine.config import Backend, RefineConfig
from owlai_refine.errors import CassetteError, ConfigError, OutputError, RefineError
from owlai_refine.exit_codes import Exit
from owlai_refine.parser import parse
from owlai_refine.refiner import refine
from owlai_refine.results import RefineResult

__all__ = ["COMMANDS", "Exit", "main", "split_command"]

_log = structlog.get_logger("owlai_refine")


COMMANDS: dict[str, str] = {
    "stats": "usage-ledger figures (input-token quantiles) from refine's JSON logs",
    "doctor": "check a vLLM server's settings, startup log and /metrics",
    "bench": "sweep client-side concurrency against one running server",
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
    env = os.environ.get
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
    p.add_argument("report", help="the Markdown report to refine ('-' reads stdin)")
    p.add_argument("-o", "--output", metavar="OUT", help="write here (atomically); default stdout")
    p.add_argument("--in-place", action="store_true", help="replace REPORT, keeping REPORT.bak")
    p.add_argument(
        "--base-url",
        default=env("OWLAI_REFINE_BASE_URL"),
        help="OpenAI-compatible endpoint, e.g. http://gpu1:8000/v1, or several separated by "
        "commas (one server per GPU group) [$OWLAI_REFINE_BASE_URL]; unset: the embedded "
        "SmolLM2 model (needs owlai-refine[local])",
    )
    p.add_argument(
        "--limiter",
        default=env("OWLAI_REFINE_LIMITER"),
        metavar="URL",
        help="redis://HOST:PORT/DB shares each endpoint's cap with every worker using it "
        "(needs owlai-refine[redis]) [$OWLAI_REFINE_LIMITER]; default: this process only",
    )
    p.add_argument(
        "--model",
        default=env("OWLAI_REFINE_MODEL"),
        help="model name [$OWLAI_REFINE_MODEL]; unset: the server's only model",
    )
    p.add_argument(
        "--backend",
        choices=[b.value for b in Backend],
        default=env("OWLAI_REFINE_BACKEND", Backend.SELF_HOSTED.value),
        help="sets the default cap: cloud 12, self-hosted 4 (default self-hosted) "
        "[$OWLAI_REFINE_BACKEND]",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=env("OWLAI_REFINE_CONCURRENCY"),
        metavar="N",
        help="requests in flight; for vLLM use its max_num_seqs [$OWLAI_REFINE_CONCURRENCY]",
    )
    p.add_argument(
        "--limiter-lease",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="Redis limiter: a dead worker's slots come back within this time (default 30)",
    )
    p.add_argument("--temperature", type=float, default=None, help="sampling temperature")
    p.add_argument(
        "--max-output-tokens",
        type=int,
        default=None,
        metavar="N",
        help="cap on each block's max_tokens (default 4096; each block asks for about twice its "
        "own length plus 64)",
    )
    p.add_argument("--no-stream", action="store_true", help="ask for whole replies, not streams")
    p.add_argument("--log-file", metavar="PATH", help="append the JSON log here, not to stderr")
    p.add_argument(
        "--log-level", choices=["debug", "info", "warning", "error"], default="info",
        help="debug adds each block's text and reply",
    )  # fmt: skip
    p.add_argument("--dry-run", action="store_true", help="list what would be sent; no calls")
    tape = p.add_mutually_exclusive_group()
    tape.add_argument("--record", metavar="CASSETTE", help="append every exchange to CASSETTE")
    tape.add_argument("--replay", metavar="CASSETTE", help="answer from CASSETTE; no network")
    p.add_argument(
        "--resume", action="store_true", help="with --record: reuse replies already recorded"
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"refuse reports larger than N bytes (default {DEFAULT_MAX_BYTES:,})",
    )
    p.add_argument("--version", action="version", version=f"refine (owlai-refine) {__version__}")
    return p


def _config(args: argparse.Namespace) -> RefineConfig:
    urls = [u.strip() for u in (args.base_url or "").split(",") if u.strip()]
    fields: dict[str, object] = {
        "base_url": urls or None,
        "limiter": args.limiter or None,
        "limiter_lease_s": args.limiter_lease,
        "model": args.model or None,
        "backend": args.backend,
        "concurrency": args.concurrency,
        "stream": not args.no_stream,
        "log_text": args.log_level == "debug",
    }
    if args.temperature is not None:
        fields["temperature"] = args.temperature
    if args.max_output_tokens is not None:
        fields["output"] = {"max_tokens": args.max_output_tokens}
    if key := os.environ.get("OPENAI_API_KEY"):
        fields["api_key"] = key
    try:
        return RefineConfig.model_validate(fields)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "settings"
        raise ConfigError(f"{where}: {first['msg']}") from None


def _transport(args: argparse.Namespace) -> httpx2.AsyncBaseTransport | None:
    if args.resume and not args.record:
        raise ConfigError("--resume needs --record CASSETTE (the cassette to resume from)")
    if args.replay:
        if not Path(args.replay).is_file():
            raise CassetteError(f"{args.replay}: no such cassette")
        return ReplayTransport(Path(args.replay))
    if args.record:
        return RecordingTransport(Path(args.record), replay_first=args.resume)
    return None


async def _with_signals(
    work: Callable[[], Awaitable[RefineResult]],
) -> tuple[RefineResult | None, int | None]:
    """Run ``work``; on SIGINT or SIGTERM cancel it (in-flight requests are dropped, the
    embedded server is stopped) and return the signal instead of a result."""
    result: RefineResult | None = None
    caught: int | None = None
    try:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                nonlocal caught
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for signum in signals:
                        caught = signum
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(watch)
            try:
                result = await work()
            finally:
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:  # only the work itself raises: hand its error on
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    return (None, caught) if caught is not None else (result, None)


def _refine_report(args: argparse.Namespace, err: TextIO) -> Exit:
    config = _config(args)
    source = read_report(args.report, args.max_bytes)
    output = args.output
    if args.in_place:
        if args.report == "-" or output:
            raise ConfigError("--in-place replaces REPORT itself: give a file and no -o")
        output = args.report
    elif output and args.report != "-" and same_file(args.report, output):
        raise OutputError(f"{output}: is the input; use --in-place to replace it (keeps a .bak)")
    if output:
        check_writable(output)
    if args.dry_run:
        print_plan(parse(source, reference_headings=config.reference_headings), config, sys.stdout)
        return Exit.OK
    transport = _transport(args)
    report_id = Path(args.report).stem[:40] if args.report != "-" else "stdin"
    with structlog.contextvars.bound_contextvars(report_id=report_id):
        result, caught = anyio.run(
            _with_signals, lambda: refine(source, config, transport=transport, report_id=report_id)
        )
        if result is None:
            _log.warning("refine.interrupted", signal=signal.Signals(caught or 2).name)
            err.write("refine: interrupted; no output was written\n")
            return Exit.TERMINATED if caught == signal.SIGTERM else Exit.INTERRUPTED
    if output:
        write_atomic(output, result.text, backup=args.in_place)
    else:
        sys.stdout.buffer.write(result.text.encode("utf-8"))
        sys.stdout.flush()
    if args.log_file:
        counts = ", ".join(f"{v} {k}" for k, v in result.counts.items() if v)
        err.write(f"refine: {counts or 'no blocks'} in {result.elapsed_s:.1f} s\n")
    code = Exit.for_result(result)
    if code is Exit.LIMITER:
        err.write(f"refine: {result.stop_reason}; unsent blocks kept their text\n")
    elif code is Exit.PARTIAL:
        err.write(
            f"refine: {len(result.failed)} blocks failed and kept their text"
            f"{f' ({result.stop_reason})' if result.stop_reason else ''}\n"
        )
    return code


def _run_subcommand(name: str, argv: list[str]) -> int:
    """Run ``refine NAME ARGV...`` (``run_<name>`` of the operator tools) for its exit code."""
    from owlai_refine import ops  # noqa: PLC0415 - the operator tools load only when asked for

    runner: Callable[[list[str]], int] = getattr(ops, f"run_{name}")
    return runner(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``refine`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    command, args_list = split_command(list(sys.argv[1:] if argv is None else argv))
    if command is not None:
        return _run_subcommand(command, args_list)
    args = _parser().parse_args(args_list)
    err = sys.stderr
    log_stream: TextIO = err
    try:
        if args.log_file:
            try:
                log_stream = Path(args.log_file).open("a", encoding="utf-8", buffering=1)  # noqa: SIM115 - open for the whole run
            except OSError as exc:
                raise OutputError(
                    f"{args.log_file}: cannot open log file ({exc.strerror})"
                ) from exc
        secrets = [os.environ.get("OPENAI_API_KEY", "")]
        configure_json_logging(log_stream, args.log_level, secrets)
        return int(_refine_report(args, err))
    except RefineError as exc:
        code = Exit.for_error(exc)
        if log_stream is not err:  # on stderr the one human line below says it all
            _log.error("refine.error", error=str(exc), kind=type(exc).__name__, exit=int(code))
        err.write(f"refine: {exc}\n")
        return int(code)
    except BrokenPipeError:  # stdout closed early (``refine x.md | head``): nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return int(Exit.OUTPUT)
    except KeyboardInterrupt:
        err.write("refine: interrupted; no output was written\n")
        return int(Exit.INTERRUPTED)
    except Exception as exc:
        if log_stream is not err:
            _log.exception("refine.internal_error")
        err.write(f"refine: internal error: {type(exc).__name__}: {exc} (please report this)\n")
        return int(Exit.BUG)
    finally:
        if log_stream is not err:
            log_stream.close()
