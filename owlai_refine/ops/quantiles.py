"""Quantiles with one stated definition, shared by ``refine stats`` and ``refine bench``.

The definition is the "inclusive" linear interpolation between order statistics: Hyndman and
Fan's type 7, the default of R, NumPy (``method="linear"``) and Excel's ``PERCENTILE.INC``, and
the same cut points as ``statistics.quantiles(data, n=100, method="inclusive")`` for whole
percentiles. For sorted data ``x[0..n-1]`` and ``0 <= p <= 1``::

    h = (n - 1) * p;  q(p) = x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)])

so ``q(0)`` is the minimum, ``q(1)`` the maximum, and a single value is every quantile of itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["quantile", "quantiles"]


def quantile(values: Iterable[float], p: float) -> float:
    """Return the type-7 (inclusive, linear) ``p``-quantile of ``values``.

    ``p`` is a fraction in ``[0, 1]`` (0.9 for p90). The result is in the unit of ``values``.
    Raises ``ValueError`` if ``values`` is empty or ``p`` is outside ``[0, 1]``.
    """
    return quantiles(values, [p])[0]


def quantiles(values: Iterable[float], ps: Sequence[float]) -> list[float]:
    """Return the type-7 quantile of ``values`` for each fraction in ``ps``, in order.

    Sorts once. Raises ``ValueError`` if ``values`` is empty or any ``p`` is outside ``[0, 1]``.
    """
    data = sorted(values)
    if not data:
        raise ValueError("no data points")
    out: list[float] = []
    for p in ps:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"quantile fraction must be in [0, 1], got {p}")
        h = (len(data) - 1) * p
        lo = math.floor(h)
        hi = min(lo + 1, len(data) - 1)
        out.append(data[lo] + (h - lo) * (data[hi] - data[lo]))
    return out
