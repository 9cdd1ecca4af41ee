"""Replay the recorded real-model cassettes: offline, deterministic, whatever the finish order.

The cassettes in fixtures/cassettes were recorded from the real llama.cpp server (SmolLM2, 4
slots) by ``python -m tests.record_cassettes``, which also wrote the expected outputs.
"""

from __future__ import annotations

import random
from pathlib import Path

import anyio
import httpx2
import pytest

from owlai_refine import Backend, parse, refine
from owlai_refine.results import RefineResult
from owlai_refine.serve.cassette import ReplayTransport
from tests.record_cassettes import CASSETTES, FIXTURES, replay_config
from testsupport.checks import changed_outside_blocks
from testsupport.reviewed import REVIEWED

pytestmark = pytest.mark.anyio
NAMES = sorted(CASSETTES)


class ShuffledReplay(ReplayTransport):
    """Replay with a random delay per request, so blocks finish in a different order each run."""

    def __init__(self, path: Path, seed: int) -> None:
        super().__init__(path)
        self._rng = random.Random(seed)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await anyio.sleep(self._rng.random() * 0.01)
        return await super().handle_async_request(request)


async def replay(name: str, transport: ReplayTransport, **more: object) -> RefineResult:
    source = (FIXTURES / "reports" / f"{name}.md").read_bytes().decode("utf-8")
    config = replay_config().model_copy(update=more)
    return await refine(source, config, transport=transport, report_id=name)


@pytest.mark.parametrize("name", NAMES)
async def test_replay_reproduces_the_recorded_run(name: str) -> None:
    tape = FIXTURES / "cassettes" / f"{name}.jsonl"
    result = await replay(name, ReplayTransport(tape))
    expected = (FIXTURES / "expected" / f"{name}.md").read_bytes()
    assert result.text.encode("utf-8") == expected
    source = (FIXTURES / "reports" / f"{name}.md").read_bytes().decode("utf-8")
    assert changed_outside_blocks(parse(source), result) == []
    assert result.counts["failed"] == 0 and result.tokens.requests == len(parse(source).sendable)


@pytest.mark.parametrize("name", NAMES)
async def test_finish_order_does_not_matter(name: str) -> None:
    tape = FIXTURES / "cassettes" / f"{name}.jsonl"
    expected = (FIXTURES / "expected" / f"{name}.md").read_bytes()
    for seed, backend in [(1, Backend.CLOUD), (2, Backend.SELF_HOSTED)]:
        result = await replay(name, ShuffledReplay(tape, seed), backend=backend)
        assert result.text.encode("utf-8") == expected


def test_the_fixtures_cover_crlf_a_non_english_report_and_nested_lists() -> None:
    reports = {n: (FIXTURES / "reports" / f"{n}.md").read_bytes() for n in NAMES}
    assert any(b"\r\n" in r and b"\n" not in r.replace(b"\r\n", b"") for r in reports.values())
    assert any(sum(0xAC00 <= ord(c) <= 0xD7A3 for c in r.decode()) > 1000 for r in reports.values())
    nested = [parse(r.decode()) for r in reports.values()]
    assert any(any(b.prefixes[0].startswith("  ") for b in d.blocks) for d in nested)
    for name in NAMES:
        assert (FIXTURES / "cassettes" / f"{name}.jsonl").stat().st_size > 0


@pytest.mark.parametrize("name", NAMES)
async def test_every_changed_block_was_read_by_a_person(name: str) -> None:
    """The oracle the product did not write (testsupport/reviewed.py): each block the replay
    changes is one a person read and listed; an ``ok`` one comes out exactly as listed, and a
    ``wrong`` one (a known guard miss) as listed or unchanged, never otherwise."""
    tape = FIXTURES / "cassettes" / f"{name}.jsonl"
    result = await replay(name, ReplayTransport(tape))
    source = parse((FIXTURES / "reports" / f"{name}.md").read_bytes().decode("utf-8"))
    refined = parse(result.text)
    assert len(refined.blocks) == len(source.blocks)
    changed = {
        b.id: a.text for a, b in zip(refined.blocks, source.blocks, strict=True) if a.text != b.text
    }
    listed = {bid: r for (report, bid), r in REVIEWED.items() if report == name}
    assert set(changed) <= set(listed), "a change no person has read: review it in reviewed.py"
    for bid, review in listed.items():
        if review.verdict == "ok":
            assert changed.get(bid) == review.text, (bid, review.why)
        else:
            assert changed.get(bid, review.text) == review.text, (bid, review.why)
