"""One report refined from the command line: settings, servers, the run, the write, the exit code.

:mod:`owlai_refine.cli` parses the flags and hands them to :func:`run_report`; this module holds
everything heavy (the refiner, the openai client, pydantic settings, the log and the display), so
that ``refine --help``, ``--version`` and the operator tools never load it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TextIO

import anyio
import httpx2
import pydantic
import structlog

from owlai_refine.blocks import Document
from owlai_refine.cli.dryrun import print_plan
from owlai_refine.cli.progress import summary
from owlai_refine.cli.session import Session
from owlai_refine.config import RefineConfig
from owlai_refine.errors import CassetteError, ConfigError, OutputError, RefineError
from owlai_refine.events import log_event
from owlai_refine.exit_codes import Exit
from owlai_refine.pipeline.parse import parse
from owlai_refine.pipeline.refiner import refine
from owlai_refine.results import RefineResult
from owlai_refine.review import diff_text, review_page
from owlai_refine.scrub import scrubbed_stream, url_secrets
from owlai_refine.serve.cassette import RecordingTransport, ReplayTransport
from owlai_refine.shell.files import (
    Backup,
    Terminated,
    check_writable,
    kept_backup,
    read_report,
    same_file,
    write_atomic,
    write_stdout,
)
from owlai_refine.shell.logs import configure_json_logging

__all__ = ["run_report"]

_log = structlog.get_logger("owlai_refine")


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
        "predicted_outputs": None if args.prediction is None else args.prediction == "on",
        "unchanged_marker": not args.no_marker,
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


def _review_path(args: argparse.Namespace, output: str | None) -> str | None:
    """Where ``--review`` writes its page (``None``: no page), checked before the report is
    read: not with ``--dry-run``, never the report itself nor the refined report's file."""
    review: str | None = args.review
    if args.dry_run and (review or args.diff):
        raise ConfigError("--review and --diff show a run's edits: --dry-run sends nothing")
    if review is None:
        return None
    for other, what in ((args.report, "the input"), (output, "the refined report's file")):
        if other and other != "-" and (other == review or same_file(other, review)):
            raise OutputError(f"{review}: is {what}; give the review page a file of its own")
    return review


def _show_diff(doc: Document, result: RefineResult, stream: TextIO) -> None:
    """Print ``--diff`` to ``stream``: coloured at a terminal unless ``NO_COLOR`` is set."""
    color = stream.isatty() and not os.environ.get("NO_COLOR")
    shown = diff_text(doc, result, color=color)
    if isinstance(shown, str):
        stream.write(shown)
        stream.flush()
        return
    from rich.console import Console  # noqa: PLC0415 - only for a coloured diff

    Console(file=stream, force_terminal=True, highlight=False, soft_wrap=True).print(shown, end="")


def _refine_report(args: argparse.Namespace, run: Session) -> Exit:
    config = _config(args)
    output = _output(args)
    review = _review_path(args, output)
    source = read_report(args.report, args.max_bytes)
    if output and not args.dry_run:  # a dry run writes nothing
        check_writable(output)
    if review:
        check_writable(review)
    doc = parse(source, reference_headings=config.reference_headings)  # once, for all below
    if args.dry_run:
        print_plan(doc, config, sys.stdout)
        return Exit.OK
    transport = _transport(args)
    with kept_backup(output if args.in_place else None) as backup:  # before any request
        report_id = Path(args.report).stem[:40] if args.report != "-" else "stdin"
        with structlog.contextvars.bound_contextvars(report_id=report_id), run.live(args.report):
            result, caught = anyio.run(
                _with_signals,
                lambda: refine(  # its Refiner checks the servers first (ConfigError: exit 2)
                    doc,
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
        return _finish(args, run, result, output, backup, doc=doc, same=result.text == source)


def _write_report(
    args: argparse.Namespace,
    result: RefineResult,
    output: str | None,
    backup: Backup,
    *,
    same: bool,
) -> tuple[Path | None, str]:
    """Write the refined report to ``output`` (atomically) or stdout; with ``--in-place`` and
    ``same`` (nothing changed) leave the file as it is and keep no backup. Returns the backup
    kept (or ``None``) and what was written, for the summary."""
    if args.in_place and same:  # nothing to replace: no rewrite, and no backup is kept
        return None, f"nothing ({output} is unchanged; no backup kept)"
    if output:
        write_atomic(output, result.text)
        backup.written = True
    else:
        write_stdout(result.text)
    return backup.path, output or "stdout"


def _finish(
    args: argparse.Namespace,
    run: Session,
    result: RefineResult,
    output: str | None,
    backup: Backup,
    *,
    doc: Document | None = None,
    same: bool = False,
) -> Exit:
    """Write the review page (``--review``) and the refined report (unless no request reached
    a server), print ``--diff``, then tell the person. ``doc``: the parsed report, for the
    page and the diff.

    ``same``: the refined text is the input's, byte for byte. With ``--in-place`` the file is
    then left as it is (not rewritten) and the backup made before the run is removed, so that
    a second ``--in-place`` that changes nothing leaves no backup behind."""
    err, tracker = run.err, run.tracker
    if tracker.requests and not tracker.reached and not args.replay:
        raise ConfigError(
            f"no request reached {tracker.base_url} ({tracker.last_error}); nothing was written"
        )
    if args.review and doc is not None:  # first: a page that cannot be written stops it all
        name = "stdin" if args.report == "-" else Path(args.report).name
        write_atomic(args.review, review_page(doc, result, name=name))
    kept, wrote = _write_report(args, result, output, backup, same=same)
    if args.diff and doc is not None:
        _show_diff(doc, result, sys.stdout if output else err)
    if run.console is not None:
        for line in summary(
            result, tracker, wrote=wrote, ledger=run.ledger, backup=str(kept or "")
        ):
            run.console.print(line, highlight=False, soft_wrap=True)
    else:
        if args.log_file:
            counts = ", ".join(f"{v} {k}" for k, v in result.counts.items() if v)
            err.write(f"refine: {counts or 'no blocks'} in {result.elapsed_s:.1f} s\n")
        if kept:
            err.write(f"refine: the replaced text is kept as {kept}\n")
        elif args.in_place and same:
            err.write(f"refine: nothing changed; {output} was left as it was, with no backup\n")
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


def run_report(args: argparse.Namespace) -> int:
    """Refine the report ``args`` name (``refine``'s parsed flags) and return the exit code;
    every error is one line on stderr (scrubbed of the API key and URL passwords)."""
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
