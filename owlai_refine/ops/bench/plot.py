"""The PNG of ``refine bench``: throughput and TTFT against concurrency, one line per input
length. Needs matplotlib (the ``bench`` extra); everything else in ``refine bench`` works
without it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from owlai_refine.errors import ConfigError, OutputError
from owlai_refine.ops.bench.report import Point

__all__ = ["plot_points"]


def plot_points(pts: Sequence[Point], path: str | Path, title: str) -> None:
    """Write a two-panel PNG to ``path``: median output tokens/s (error bars: min..max over
    repeats) and median TTFT p50 (seconds) against concurrency, one line per input length.

    Raises ``ConfigError`` when matplotlib is not installed, ``OutputError`` when the file
    cannot be written.
    """
    try:
        import matplotlib as mpl  # noqa: PLC0415 - optional dependency, imported on use

        mpl.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise ConfigError("--plot needs matplotlib: pip install 'owlai-refine[bench]'") from exc
    fig, (ax_tps, ax_ttft) = plt.subplots(1, 2, figsize=(11, 4.2))
    for inp in sorted({p.input_tokens for p in pts}):
        line = [p for p in pts if p.input_tokens == inp]
        xs = [p.concurrency for p in line]
        for ax, name in ((ax_tps, "output_tokens_per_s"), (ax_ttft, "ttft_p50_s")):
            spreads = [p.figures.get(name) for p in line]
            ok = [(x, s) for x, s in zip(xs, spreads, strict=True) if s is not None]
            if not ok:
                continue
            ax.errorbar(
                [x for x, _ in ok],
                [s.median for _, s in ok],
                yerr=[[s.median - s.min for _, s in ok], [s.max - s.median for _, s in ok]],
                marker="o",
                capsize=3,
                label=f"{inp:,} input tokens",
            )
    ticks = sorted({p.concurrency for p in pts})
    for ax, label in ((ax_tps, "output tokens/s (median)"), (ax_ttft, "TTFT p50, s (median)")):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.set_xlabel("requests in flight (client concurrency)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    except OSError as exc:
        raise OutputError(f"cannot write plot {path}: {exc}") from exc
    finally:
        plt.close(fig)
