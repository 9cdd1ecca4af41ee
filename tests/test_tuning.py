"""The benchmarks' private seam, ``Refiner(config, _tuning=_Tuning(...))``: the dispatch order and
the prompt layout reach the run, and the defaults are what every user gets (longest first, the
stable prefix first). Neither is a setting of :class:`~owlai_refine.RefineConfig`."""

from __future__ import annotations

import pytest

from owlai_refine import RefineConfig, Refiner, RetryPolicy, parse
from owlai_refine.pipeline.plan import _Tuning
from testsupport.fake_openai import FakeOpenAI, block_text

pytestmark = pytest.mark.anyio

REPORT = (
    "# T\n\nShort one.\n\nA much longer paragraph than the first one is.\n\nMid-size one here.\n"
)


async def _sent(tuning: _Tuning | None) -> list[list[dict[str, str]]]:
    """The messages of each request, in the order the server saw them (one slot)."""
    with FakeOpenAI() as server:
        config = RefineConfig(
            base_url=server.base_url,
            model="fake-model",
            concurrency=1,
            retry=RetryPolicy(wait_scale=0),
        )
        async with Refiner(config, sinks=[], _tuning=tuning) as refiner:
            await refiner.refine(REPORT)
    return [s.body["messages"] for s in sorted(server.seen, key=lambda s: s.number)]


@pytest.mark.parametrize(
    ("tuning", "order"),
    [
        (None, [1, 2, 0]),
        (_Tuning(dispatch="longest-first"), [1, 2, 0]),
        (_Tuning(dispatch="document"), [0, 1, 2]),
    ],
)
async def test_the_dispatch_order(tuning: _Tuning | None, order: list[int]) -> None:
    texts = [b.text for b in parse(REPORT).sendable]
    sent = [block_text({"messages": m}) for m in await _sent(tuning)]
    assert sent == [texts[i] for i in order]


async def test_the_prompt_layout() -> None:
    prefix_first = await _sent(None)
    block_first = await _sent(_Tuning(prompt_layout="block-first"))
    assert all(m[0]["content"] == prefix_first[0][0]["content"] for m in prefix_first)
    assert all(len(m) == 2 and "<block>" in m[0]["content"] for m in block_first)


def test_neither_is_a_user_setting() -> None:
    assert not {"dispatch", "prompt_layout"} & set(RefineConfig.model_fields)
    with pytest.raises(ValueError, match="dispatch"):
        RefineConfig.model_validate({"dispatch": "document"})
