"""Operator tools: ``refine stats``, ``refine doctor``, ``refine bench``, ``refine plan``.

Each command has an entry function taking its arguments (without the command words) and
returning the exit code; the core CLI dispatches ``refine stats ...`` to :func:`run_stats` etc.
Output goes to stdout; errors are one line on stderr, never a traceback. Everything printed,
stdout and stderr, is scrubbed of ``$OPENAI_API_KEY`` and of passwords in URL arguments
(a server's error body may echo the ``Authorization`` header). Exit codes:

====  ==============================================================================
0     done (``doctor``: no check failed; warnings allowed)
1     a bug in owlai-refine (the line says so)
2     usage or configuration error (bad flag, model not served, matplotlib missing)
3     unreadable input: a ledger or server log that cannot be read, a server that cannot
      be reached or answers garbage
4     ``doctor``: at least one check failed; ``bench``: its ``--plot`` file cannot be written
      (checked before the sweep)
====  ==============================================================================
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from owlai_refine.errors import ConfigError, InputError, RefineError
from owlai_refine.exit_codes import Exit
from owlai_refine.scrub import scrubbed_stream, url_secrets
from owlai_refine.shell.files import check_writable

if TYPE_CHECKING:
    from owlai_refine.ops.bench.sweep import BenchResult
    from owlai_refine.ops.doctor.checks import Check
    from owlai_refine.ops.plan.modelarch import ModelArch
    from owlai_refine.ops.serverlog import ServerLog

# Each command imports what it runs on inside its entry function, so that ``refine
# stats`` and ``refine plan`` start without the HTTP client, anyio or prometheus_client.

__all__ = ["EXIT_CHECK_FAILED", "run_bench", "run_doctor", "run_plan", "run_stats"]

EXIT_CHECK_FAILED = 4


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting on a bad command line."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(message)


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _guard(prog: str, argv: list[str], body: Callable[[], int]) -> int:
    """``body()``'s exit code, every error one line on stderr; stdout and stderr scrubbed of
    the API key and of passwords in the URLs among ``argv`` meanwhile."""
    secrets = [os.environ.get("OPENAI_API_KEY", ""), *url_secrets(argv)]
    with (
        contextlib.redirect_stdout(scrubbed_stream(sys.stdout, secrets)),
        contextlib.redirect_stderr(scrubbed_stream(sys.stderr, secrets)),
    ):
        return _guarded(prog, body)


def _guarded(prog: str, body: Callable[[], int]) -> int:
    try:
        return body()
    except SystemExit as exc:  # --help / --version from argparse
        return exc.code if isinstance(exc.code, int) else 0
    except RefineError as exc:  # the same codes as refine itself (cli.Exit)
        _err(f"{prog}: error: {exc}")
        return Exit.for_error(exc)
    except KeyboardInterrupt:
        _err(f"{prog}: interrupted")
        return Exit.INTERRUPTED
    except Exception as exc:  # the last line of defence: one line, exit 1
        _err(f"{prog}: internal error (a bug, please report): {type(exc).__name__}: {exc}")
        return Exit.BUG


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of integers: {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"need positive integers: {text!r}")
    return values


def _fraction_list(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of numbers: {text!r}"
        ) from None
    if not values or not all(0 <= v <= 1 for v in values):
        raise argparse.ArgumentTypeError(f"quantiles are fractions in [0, 1]: {text!r}")
    return values


def _read_log(path: str | None) -> ServerLog | None:
    if path is None:
        return None
    from owlai_refine.ops.serverlog import parse_server_log

    try:
        return parse_server_log(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        raise InputError(f"cannot read server log {path}: {exc.strerror or exc}") from exc


def _served_arch(config: str | None, log: ServerLog | None) -> ModelArch | None:
    """The model architecture for doctor's kv-plan check: ``--config``, else the log's
    ``model`` when it is a local folder holding a config.json, else ``None``."""
    from owlai_refine.ops.plan.command import load_model

    if config is not None:
        return load_model(config)[0]
    path = (log.args or {}).get("model") if log is not None else None
    if isinstance(path, str) and (Path(path) / "config.json").is_file():
        try:
            return load_model(path)[0]
        except InputError:
            return None
    return None


def _api_key() -> str:
    """``$OPENAI_API_KEY``, else a placeholder; never a flag (flags show in ``ps``)."""
    return os.environ.get("OPENAI_API_KEY") or "EMPTY"


# ---------------------------------------------------------------------------------- stats
def run_stats(argv: list[str]) -> int:
    """``refine stats [LOG...] [--json]``: figures from usage-ledger files (see
    :mod:`owlai_refine.ops.stats.figures`); with no ``LOG``, the default ledger every run at a
    terminal appends to (:func:`~owlai_refine.shell.files.default_ledger_path`). Returns the
    exit code: 3 when a file cannot be read, the default ledger does not exist, or no file
    holds a single ``refine.call`` line (not a usage ledger)."""

    def body() -> int:
        from owlai_refine.ops.ledger import read_ledgers
        from owlai_refine.ops.stats.figures import format_stats, ledger_stats
        from owlai_refine.shell.files import default_ledger_path, home

        p = _Parser(
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
        _out(stats.model_dump_json(indent=2) if args.json else format_stats(stats))
        return 0

    return _guard("refine stats", argv, body)


# --------------------------------------------------------------------------------- doctor
def run_doctor(argv: list[str]) -> int:
    """``refine doctor [--base-url URL] [--server-log FILE] [--concurrency N]``: one
    pass/warn/fail line per check (see :mod:`owlai_refine.ops.doctor.checks`). ``--base-url``,
    ``--model`` and ``--concurrency`` default to ``$OWLAI_REFINE_BASE_URL``,
    ``$OWLAI_REFINE_MODEL`` and ``$OWLAI_REFINE_CONCURRENCY``, as for ``refine`` itself. Exit 0
    when no check fails, 4 when one does, 2 when no server is named."""

    def body() -> int:
        import anyio
        import httpx2

        from owlai_refine.ops.doctor.checks import (
            DoctorInput,
            checks_json,
            format_checks,
            run_checks,
        )
        from owlai_refine.ops.http import server_urls

        p = _Parser(
            prog="refine doctor",
            description="Check a self-hosted vLLM server "
            "against the settings owlai-refine depends on.",
        )
        env = os.environ.get
        p.add_argument(
            "--base-url",
            default=env("OWLAI_REFINE_BASE_URL"),
            help="the server to check, e.g. http://127.0.0.1:8000/v1 [$OWLAI_REFINE_BASE_URL]",
        )
        p.add_argument("--server-log", help="the vLLM server's startup log")
        p.add_argument(
            "--concurrency",
            type=int,
            default=env("OWLAI_REFINE_CONCURRENCY", "4"),
            help="our self-hosted concurrency (default 4) [$OWLAI_REFINE_CONCURRENCY]",
        )
        p.add_argument(
            "--model",
            default=env("OWLAI_REFINE_MODEL"),
            help="model to check (default: the first one served) [$OWLAI_REFINE_MODEL]",
        )
        p.add_argument(
            "--timeout", type=float, default=60.0, help="seconds for the live request (default 60)"
        )
        p.add_argument(
            "--config",
            help="the served model's config.json or folder, for the kv-plan check "
            "(default: the log's model path when it is a local folder)",
        )
        p.add_argument("--json", action="store_true", help="print JSON instead of lines")
        args = p.parse_args(argv)
        if not args.base_url:
            raise ConfigError(
                "which server? give --base-url URL or set OWLAI_REFINE_BASE_URL "
                "(as for refine itself)"
            )
        urls = [u.strip() for u in args.base_url.split(",") if u.strip()]
        if len(urls) != 1:
            raise ConfigError(
                f"refine doctor checks one server; {args.base_url!r} names {len(urls)}: "
                "give one with --base-url"
            )
        if args.concurrency < 1:
            raise ConfigError("--concurrency must be at least 1")
        log = _read_log(args.server_log)
        inp = DoctorInput(
            endpoint=server_urls(urls[0]),
            log=log,
            concurrency=args.concurrency,
            model=args.model,
            api_key=_api_key(),
            timeout_s=args.timeout,
            arch=_served_arch(args.config, log),
        )

        async def go() -> list[Check]:
            async with httpx2.AsyncClient(timeout=args.timeout) as http:
                return await run_checks(inp, http)

        checks = anyio.run(go)
        _out(json.dumps(checks_json(checks), indent=2) if args.json else format_checks(checks))
        return EXIT_CHECK_FAILED if any(c.status == "fail" for c in checks) else 0

    return _guard("refine doctor", argv, body)


# ---------------------------------------------------------------------------------- bench
def run_bench(argv: list[str]) -> int:
    """``refine bench --base-url URL --model NAME ...``: client-side concurrency sweep (see
    :mod:`owlai_refine.ops.bench.sweep`). Progress and warnings go to stderr; the table (or JSON)
    to stdout."""
    return _guard("refine bench", argv, lambda: _bench(argv))


def _bench(argv: list[str]) -> int:
    if "--compare-tpot" in argv:
        return _compare_tpot(argv)
    import anyio

    from owlai_refine.ops.bench.plot import plot_points
    from owlai_refine.ops.bench.render import format_result
    from owlai_refine.ops.bench.sweep import BenchOptions, run_bench_async

    p = _Parser(
        prog="refine bench",
        description="Client-side concurrency sweep against one "
        "running OpenAI-compatible server (vLLM for the server-side figures).",
    )
    p.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model", required=True, help="served model name")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--input-tokens", type=_int_list, help="prompt lengths, e.g. 1100,3000")
    src.add_argument("--ledger", nargs="+", metavar="LOG", help="take lengths from our log")
    src.add_argument(
        "--copy-edit",
        metavar="REPORT",
        help="instead of the sweep: refine REPORT --repeats times (--concurrency N in flight, "
        "default 4) and measure TPOT, tokens, slot-seconds, outcomes and draft acceptance "
        "(speculative decoding); compare two saved --json runs with --compare-tpot A B",
    )
    p.add_argument(
        "--quantiles",
        type=_fraction_list,
        default=[0.5, 0.9],
        help="ledger quantiles as fractions (default 0.5,0.9)",
    )
    p.add_argument("--output-tokens", type=int, default=256, help="output length (default 256)")
    p.add_argument(
        "--concurrency",
        type=_int_list,
        default=[1, 2, 4, 8, 16],
        help="requests in flight per step (default 1,2,4,8,16)",
    )
    p.add_argument("--repeats", type=int, default=3, help="repeats per step (default 3)")
    p.add_argument(
        "--rounds", type=int, default=2, help="requests per in-flight slot per step (default 2)"
    )
    p.add_argument(
        "--margin",
        type=float,
        default=0.05,
        help="knee: within this fraction of the best throughput (default 0.05)",
    )
    p.add_argument("--server-log", help="vLLM startup log (KV capacity if /metrics lacks it)")
    p.add_argument(
        "--temperature",
        type=float,
        help="--copy-edit: the refiner's sampling temperature (default: refine's own)",
    )
    p.add_argument(
        "--metrics-interval",
        type=float,
        default=1.0,
        help="seconds between /metrics scrapes during a step (default 1)",
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per request")
    p.add_argument(
        "--no-force-length",
        action="store_true",
        help="do not send min_tokens/ignore_eos (servers that reject them)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--plot", metavar="PNG", help="write throughput/TTFT plot (matplotlib)")
    p.add_argument(
        "--vllm-bench",
        metavar="VLLM",
        help="cross-check with `VLLM bench serve` (path of the vllm command)",
    )
    p.add_argument("--tokenizer", help="tokenizer path for vllm bench serve")
    p.add_argument(
        "--cross-check-concurrency",
        type=_int_list,
        default=[],
        help="concurrencies to cross-check (default: all swept)",
    )
    p.add_argument(
        "--cross-check-repeats",
        type=int,
        default=1,
        help="vllm bench serve runs per step, median taken (default 1)",
    )
    args = p.parse_args(argv)
    for flag in ("output_tokens", "repeats", "rounds", "cross_check_repeats"):
        if getattr(args, flag) < 1:
            raise ConfigError(f"--{flag.replace('_', '-')} must be at least 1")
    if not 0 <= args.margin < 1:
        raise ConfigError("--margin must be a fraction in [0, 1)")
    if args.plot:  # before the sweep, which can take an hour
        if importlib.util.find_spec("matplotlib") is None:
            raise ConfigError("--plot needs matplotlib: pip install 'owlai-refine[bench]'")
        check_writable(args.plot)
    if args.copy_edit:
        if args.temperature is not None and not 0 <= args.temperature <= 2:
            raise ConfigError("--temperature must be in [0, 2]")
        return _copy_edit(args)
    opts = BenchOptions(
        base_url=args.base_url,
        model=args.model,
        api_key=_api_key(),
        input_tokens=args.input_tokens or [],
        ledger=args.ledger or [],
        quantiles=args.quantiles,
        output_tokens=args.output_tokens,
        concurrency=sorted(set(args.concurrency)),
        repeats=args.repeats,
        rounds=args.rounds,
        margin=args.margin,
        server_log=_read_log(args.server_log),
        metrics_interval_s=args.metrics_interval,
        timeout_s=args.timeout,
        force_length=not args.no_force_length,
        vllm_bench=args.vllm_bench,
        tokenizer=args.tokenizer,
        cross_check_concurrency=args.cross_check_concurrency,
        cross_check_repeats=args.cross_check_repeats,
    )

    async def go() -> BenchResult:
        return await run_bench_async(opts, lambda line: _err("refine bench: " + line))

    result = anyio.run(go)
    _out(result.model_dump_json(indent=2) if args.json else format_result(result))
    if args.plot:  # after the figures are out: a failed plot loses nothing
        plot_points(result.points, args.plot, f"refine bench: {result.model} @ {result.base_url}")
    return 0


def _copy_edit(args: argparse.Namespace) -> int:
    """``refine bench --copy-edit REPORT``: see :mod:`owlai_refine.ops.bench.copyedit`."""
    import anyio

    from owlai_refine.ops.bench.copyedit import run_copy_edit
    from owlai_refine.shell.logs import configure_json_logging

    # the refiner's per-call lines would mix with the table or the JSON on stdout: warnings
    # (kept originals) go to stderr as JSON lines, as a refine run's do
    configure_json_logging(sys.stderr, level="warning")

    log = _read_log(args.server_log)
    spec = None
    if log is not None and log.speculative_enabled is not None:
        spec = (log.speculative_method or "on") if log.speculative_enabled else "off"
    concurrency = args.concurrency[0] if len(args.concurrency) == 1 else 4
    path = Path(args.copy_edit)
    try:
        source = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the report: {exc}") from exc
    result = anyio.run(
        partial(
            run_copy_edit,
            base_url=args.base_url,
            model=args.model,
            source=source,
            report=path.name,
            repeats=args.repeats,
            concurrency=concurrency,
            api_key=_api_key(),
            speculative=spec,
            temperature=args.temperature,
        )
    )
    if args.json:
        _out(result.model_dump_json(indent=2))
        return 0
    from owlai_refine.ops.bench.copyedit import format_copy_edit

    _out(format_copy_edit(result))
    return 0


def _compare_tpot(argv: list[str]) -> int:
    """``refine bench --compare-tpot A.json B.json``: two ``--copy-edit --json`` results."""
    from pydantic import ValidationError

    from owlai_refine.ops.bench.copyedit import CopyEditResult, compare_tpot

    p = _Parser(
        prog="refine bench --compare-tpot",
        description="Compare two `refine bench --copy-edit ... --json` results (B / A).",
    )
    p.add_argument("--compare-tpot", nargs=2, required=True, metavar=("A_JSON", "B_JSON"))
    args = p.parse_args(argv)
    results = []
    for name in args.compare_tpot:
        try:
            results.append(CopyEditResult.model_validate_json(Path(name).read_bytes()))
        except (OSError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise InputError(
                f"{name}: not a `refine bench --copy-edit --json` result: {first}"
            ) from exc
    _out(compare_tpot(results[0], results[1]))
    return 0


# ----------------------------------------------------------------------------------- plan
def run_plan(argv: list[str]) -> int:
    """``refine plan --config PATH ...``: KV cache size and maximum concurrency before a vLLM
    start (see :mod:`owlai_refine.ops.plan.kvcache`). Exit 0 with a plan (whatever its
    verdict), 2 for flags that make no setup, 3 for an unreadable config or ledger."""

    def body() -> int:
        from owlai_refine.ops.ledger import read_ledgers
        from owlai_refine.ops.plan.command import (
            EXAMPLES,
            add_plan_arguments,
            format_plans,
            plan_json,
            plans,
        )
        from owlai_refine.ops.quantiles import quantile

        p = _Parser(
            prog="refine plan",
            description="The KV cache a vLLM server will have (tokens, full windows) for a "
            "model,\ncards and flags; variants side by side.",
            epilog=EXAMPLES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_plan_arguments(p)
        args = p.parse_args(argv)
        typical = args.typical_tokens
        if typical is None and args.ledger:
            prompts = [c.prompt_tokens for c in read_ledgers(args.ledger).calls if c.prompt_tokens]
            if not prompts:
                raise InputError(f"no prompt_tokens in {', '.join(args.ledger)}")
            typical = int(quantile(prompts, 0.9)) + args.output_tokens
        ps = plans(args, typical)
        _out(json.dumps(plan_json(ps), indent=2) if args.json else format_plans(ps))
        return 0

    return _guard("refine plan", argv, body)
