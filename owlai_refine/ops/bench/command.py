"""``refine bench ...``: its command line (see :func:`main`): the sweep, ``--copy-edit REPORT``
and ``--compare-tpot A.json B.json``."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from owlai_refine.errors import ConfigError, InputError
from owlai_refine.ops.console import Parser, api_key, err, out
from owlai_refine.ops.serverlog import read_server_log
from owlai_refine.shell.files import check_writable
from owlai_refine.shell.flags import Exclusive, Flag, add_flags

if TYPE_CHECKING:
    from owlai_refine.ops.bench.sweep import BenchOptions, BenchResult

__all__ = ["main"]


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


_FLAGS: tuple[Flag | Exclusive, ...] = (
    (("--base-url",), dict(required=True, help="e.g. http://127.0.0.1:8000/v1")),
    (("--model",), dict(required=True, help="served model name")),
    Exclusive(
        (
            (("--input-tokens",), dict(type=_int_list, help="prompt lengths, e.g. 1100,3000")),
            (("--ledger",), dict(nargs="+", metavar="LOG", help="take lengths from our log")),
            (
                ("--copy-edit",),
                dict(
                    metavar="REPORT",
                    help="instead of the sweep: refine REPORT --repeats times (--concurrency N "
                    "in flight, default 4) and measure TPOT, tokens, slot-seconds, outcomes and "
                    "draft acceptance (speculative decoding); compare two saved --json runs "
                    "with --compare-tpot A B",
                ),
            ),
        ),
        required=True,
    ),
    (
        ("--quantiles",),
        dict(
            type=_fraction_list,
            default=[0.5, 0.9],
            help="ledger quantiles as fractions (default 0.5,0.9)",
        ),
    ),
    (("--output-tokens",), dict(type=int, default=256, help="output length (default 256)")),
    (
        ("--concurrency",),
        dict(
            type=_int_list,
            default=[1, 2, 4, 8, 16],
            help="requests in flight per step (default 1,2,4,8,16)",
        ),
    ),
    (("--repeats",), dict(type=int, default=3, help="repeats per step (default 3)")),
    (
        ("--rounds",),
        dict(type=int, default=2, help="requests per in-flight slot per step (default 2)"),
    ),
    (
        ("--margin",),
        dict(
            type=float,
            default=0.05,
            help="knee: within this fraction of the best throughput (default 0.05)",
        ),
    ),
    (("--server-log",), dict(help="vLLM startup log (KV capacity if /metrics lacks it)")),
    (
        ("--temperature",),
        dict(
            type=float,
            help="--copy-edit: the refiner's sampling temperature (default: refine's own)",
        ),
    ),
    (
        ("--metrics-interval",),
        dict(
            type=float,
            default=1.0,
            help="seconds between /metrics scrapes during a step (default 1)",
        ),
    ),
    (("--timeout",), dict(type=float, default=600.0, help="seconds per request")),
    (
        ("--no-force-length",),
        dict(
            action="store_true",
            help="do not send min_tokens/ignore_eos (servers that reject them)",
        ),
    ),
    (("--json",), dict(action="store_true", help="print JSON instead of the table")),
    (("--plot",), dict(metavar="PNG", help="write throughput/TTFT plot (matplotlib)")),
    (
        ("--vllm-bench",),
        dict(
            metavar="VLLM",
            help="cross-check with `VLLM bench serve` (path of the vllm command)",
        ),
    ),
    (("--tokenizer",), dict(help="tokenizer path for vllm bench serve")),
    (
        ("--cross-check-concurrency",),
        dict(
            type=_int_list,
            default=[],
            help="concurrencies to cross-check (default: all swept)",
        ),
    ),
    (
        ("--cross-check-repeats",),
        dict(
            type=int,
            default=1,
            help="vllm bench serve runs per step, median taken (default 1)",
        ),
    ),
)
"""``refine bench``'s flags, in ``--help``'s order."""


def main(argv: list[str]) -> int:
    """``refine bench --base-url URL --model NAME ...``: client-side concurrency sweep (see
    :mod:`owlai_refine.ops.bench.sweep`), or ``--copy-edit`` / ``--compare-tpot`` (see
    :mod:`owlai_refine.ops.bench.copyedit`). Progress and warnings go to stderr; the table
    (or JSON) to stdout. Returns the exit code."""
    if "--compare-tpot" in argv:
        return _compare_tpot(argv)
    p = Parser(
        prog="refine bench",
        description="Client-side concurrency sweep against one "
        "running OpenAI-compatible server (vLLM for the server-side figures).",
    )
    add_flags(p, _FLAGS)
    args = p.parse_args(argv)
    _check(args)
    if args.copy_edit:
        return _copy_edit(args)
    return _sweep(args)


def _check(args: argparse.Namespace) -> None:
    """Raise :class:`ConfigError` for flags out of range, :class:`OutputError` for a ``--plot``
    file that cannot be written: before the sweep, which can take an hour."""
    for flag in ("output_tokens", "repeats", "rounds", "cross_check_repeats"):
        if getattr(args, flag) < 1:
            raise ConfigError(f"--{flag.replace('_', '-')} must be at least 1")
    if not 0 <= args.margin < 1:
        raise ConfigError("--margin must be a fraction in [0, 1)")
    if args.plot:
        if importlib.util.find_spec("matplotlib") is None:
            raise ConfigError("--plot needs matplotlib: pip install 'owlai-refine[bench]'")
        check_writable(args.plot)
    if args.copy_edit and args.temperature is not None and not 0 <= args.temperature <= 2:
        raise ConfigError("--temperature must be in [0, 2]")


def _sweep(args: argparse.Namespace) -> int:
    """The sweep (see :mod:`owlai_refine.ops.bench.sweep`): its table or JSON on stdout, then
    the ``--plot``."""
    import anyio

    from owlai_refine.ops.bench.plot import plot_points
    from owlai_refine.ops.bench.render import format_result
    from owlai_refine.ops.bench.sweep import run_bench_async

    opts = _options(args)

    async def go() -> BenchResult:
        return await run_bench_async(opts, lambda line: err("refine bench: " + line))

    result = anyio.run(go)
    out(result.model_dump_json(indent=2) if args.json else format_result(result))
    if args.plot:  # after the figures are out: a failed plot loses nothing
        plot_points(result.points, args.plot, f"refine bench: {result.model} @ {result.base_url}")
    return 0


def _options(args: argparse.Namespace) -> BenchOptions:
    """The sweep's settings from the flags (the server log read, the API key from
    ``$OPENAI_API_KEY``)."""
    from owlai_refine.ops.bench.sweep import BenchOptions

    return BenchOptions(
        base_url=args.base_url,
        model=args.model,
        api_key=api_key(),
        input_tokens=args.input_tokens or [],
        ledger=args.ledger or [],
        quantiles=args.quantiles,
        output_tokens=args.output_tokens,
        concurrency=sorted(set(args.concurrency)),
        repeats=args.repeats,
        rounds=args.rounds,
        margin=args.margin,
        server_log=read_server_log(args.server_log),
        metrics_interval_s=args.metrics_interval,
        timeout_s=args.timeout,
        force_length=not args.no_force_length,
        vllm_bench=args.vllm_bench,
        tokenizer=args.tokenizer,
        cross_check_concurrency=args.cross_check_concurrency,
        cross_check_repeats=args.cross_check_repeats,
    )


def _copy_edit(args: argparse.Namespace) -> int:
    """``refine bench --copy-edit REPORT``: see :mod:`owlai_refine.ops.bench.copyedit`."""
    import anyio

    from owlai_refine.ops.bench.copyedit import run_copy_edit
    from owlai_refine.shell.logs import configure_json_logging

    # the refiner's per-call lines would mix with the table or the JSON on stdout: warnings
    # (kept originals) go to stderr as JSON lines, as a refine run's do
    configure_json_logging(sys.stderr, level="warning")

    log = read_server_log(args.server_log)
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
            api_key=api_key(),
            speculative=spec,
            temperature=args.temperature,
        )
    )
    if args.json:
        out(result.model_dump_json(indent=2))
        return 0
    from owlai_refine.ops.bench.copyedit import format_copy_edit

    out(format_copy_edit(result))
    return 0


def _compare_tpot(argv: list[str]) -> int:
    """``refine bench --compare-tpot A.json B.json``: two ``--copy-edit --json`` results."""
    from pydantic import ValidationError

    from owlai_refine.ops.bench.copyedit import CopyEditResult, compare_tpot

    p = Parser(
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
    out(compare_tpot(results[0], results[1]))
    return 0
