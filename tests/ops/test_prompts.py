"""Prompt sizing: unique prefixes, deterministic bodies, and the fitting loop."""

from __future__ import annotations

import anyio
import pytest

from owlai_refine.ops.bench.prompts import Messages, fit_body, make_body, make_messages, new_prefix


def test_prefix_is_unique_and_fixed_length() -> None:
    prefixes = {new_prefix() for _ in range(100)}
    assert len(prefixes) == 100
    assert {len(p) for p in prefixes} == {41}


def test_prefix_comes_first() -> None:
    msgs = make_messages("[bench x] ", "body")
    assert msgs[0]["role"] == "system"
    assert str(msgs[0]["content"]).startswith("[bench x] ")
    assert msgs[1] == {"role": "user", "content": "body"}


def test_body_is_deterministic() -> None:
    assert make_body(50, seed=3) == make_body(50, seed=3)
    assert len(make_body(50).split()) == 50
    with pytest.raises(ValueError, match="at least one word"):
        make_body(0)


def _counter(per_word: float, template: int) -> tuple[list[int], object]:
    calls: list[int] = []

    async def count(messages: Messages) -> int:
        words = sum(len(str(m.get("content", "")).split()) for m in messages)
        calls.append(words)
        return template + round(words * per_word)

    return calls, count


@pytest.mark.parametrize(("target", "per_word"), [(500, 1.3), (3000, 1.7), (200, 1.0)])
def test_fit_reaches_target_within_tolerance(target: int, per_word: float) -> None:
    calls, count = _counter(per_word, template=25)
    fit = anyio.run(fit_body, count, target)  # type: ignore[arg-type]
    assert abs(fit.measured - target) <= max(2, target // 100)
    assert len(calls) <= 8


def test_fit_rejects_target_below_the_template() -> None:
    _, count = _counter(1.0, template=60)
    with pytest.raises(ValueError, match="below the minimal prompt"):
        anyio.run(fit_body, count, 30)  # type: ignore[arg-type]
