"""The Prometheus parser on recorded vLLM 0.32 ``/metrics`` text and on hand-made edge cases."""

from __future__ import annotations

import pytest

from owlai_refine.ops.bench.step import delta_of
from owlai_refine.serve.metrics import (
    KV_USAGE,
    PREEMPTIONS,
    PREFIX_HITS,
    PREFIX_QUERIES,
    MetricsParseError,
    parse_metrics,
)

from .conftest import fixture_text


def test_recorded_idle_scrape() -> None:
    m = parse_metrics(fixture_text("metrics-idle.txt"))
    assert m.total(PREEMPTIONS) == 0.0
    assert m.total(KV_USAGE) == 0.0
    assert m.total(PREFIX_QUERIES) == 64.0
    assert m.total(PREFIX_HITS) == 0.0
    info = m.info_labels()
    assert info is not None
    assert info["block_size"] == "128"
    assert info["kv_cache_max_concurrency"] == "5.6875"
    assert m.kv_capacity_tokens() == 23296  # the kv_cache_size_tokens label


def test_recorded_busy_scrape() -> None:
    m = parse_metrics(fixture_text("metrics-busy.txt"))
    assert m.total("vllm:num_requests_running") == 4.0
    assert m.peak(KV_USAGE) == pytest.approx(0.149171270718232)
    assert m.total(PREFIX_HITS) == 20608.0  # the recording re-sent a cached prompt


def test_absent_metric_is_none_not_zero() -> None:
    m = parse_metrics("a_total 1\n")
    assert m.total("b_total") is None
    assert m.peak("b") is None
    assert m.info_labels() is None
    assert m.kv_capacity_tokens() is None


def test_labels_filter_and_sum() -> None:
    text = 'x_total{engine="0",model_name="a"} 2\nx_total{engine="1",model_name="a"} 3.5\n'
    m = parse_metrics(text)
    assert m.total("x_total") == 5.5
    assert m.total("x_total", engine="1") == 3.5
    assert m.peak("x_total") == 3.5


def test_escapes_comments_timestamps_and_specials() -> None:
    text = (
        "# HELP x help text\n# TYPE x gauge\n"
        'x{path="C:\\\\dir",q="say \\"hi\\"",nl="a\\nb",} 1 1700000000000\n'
        "y +Inf\nz NaN\n"
    )
    m = parse_metrics(text)
    assert m.samples[0].labels == {"path": "C:\\dir", "q": 'say "hi"', "nl": "a\nb"}
    assert m.total("y") == float("inf")
    assert m.total("z") == 0  # NaN samples are ignored in sums


def test_capacity_from_blocks_when_no_token_label() -> None:
    m = parse_metrics('vllm:cache_config_info{block_size="16",num_gpu_blocks="1000"} 1.0\n')
    assert m.kv_capacity_tokens() == 16000


@pytest.mark.parametrize(
    ("text", "line_no"),
    [("ok 1\nnot a sample line\n", 2), ('x{a="1" 1\n', 1), ("x{a=1} 1\n", 1), ("x abc\n", 1)],
)
def test_bad_lines_raise_with_line_number(text: str, line_no: int) -> None:
    with pytest.raises(MetricsParseError) as info:
        parse_metrics(text)
    assert info.value.line_no == line_no


def test_counter_deltas_between_scrapes() -> None:
    before = parse_metrics(fixture_text("metrics-idle.txt"))
    after = parse_metrics(
        fixture_text("metrics-idle.txt").replace(
            'vllm:num_preemptions_total{engine="0",model_name="smollm2"} 0.0',
            'vllm:num_preemptions_total{engine="0",model_name="smollm2"} 3.0',
        )
    )
    assert delta_of(before, after, PREEMPTIONS) == 3.0
    assert delta_of(before, after, PREFIX_HITS) == 0.0
    assert delta_of(None, after, PREEMPTIONS) is None
    assert delta_of(before, after, "vllm:no_such_total") is None
