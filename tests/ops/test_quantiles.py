"""Type-7 quantiles on hand-computed data, and agreement with ``statistics.quantiles``."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from owlai_refine.ops.quantiles import quantile, quantiles


def test_hand_computed_five_values() -> None:
    # sorted [1000, 2000, 3000, 9000, 40000]; h = 4p
    data = [9000, 1000, 40000, 3000, 2000]
    assert quantiles(data, [0.1, 0.5, 0.9, 0.99, 1.0]) == pytest.approx(
        [1400.0, 3000.0, 27600.0, 38760.0, 40000.0]
    )


def test_hand_computed_even_count_median_interpolates() -> None:
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
    assert quantile([1, 2, 3, 4], 0.25) == 1.75  # h = 0.75


def test_single_value_is_every_quantile() -> None:
    assert quantiles([7], [0.0, 0.1, 0.99, 1.0]) == [7, 7, 7, 7]


def test_bounds_are_min_and_max() -> None:
    assert quantiles([5, -1, 3], [0.0, 1.0]) == [-1, 5]


@pytest.mark.parametrize("bad", [-0.01, 1.01])
def test_fraction_out_of_range(bad: float) -> None:
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        quantile([1, 2], bad)


def test_empty_raises() -> None:
    with pytest.raises(ValueError, match="no data"):
        quantile([], 0.5)


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=2, max_size=60))
def test_matches_statistics_inclusive_percentiles(data: list[int]) -> None:
    cuts = statistics.quantiles(data, n=100, method="inclusive")
    for pct in (10, 50, 90, 99):
        assert quantile(data, pct / 100) == pytest.approx(cuts[pct - 1], rel=1e-9, abs=1e-6)
