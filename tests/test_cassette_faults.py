"""Cassettes that used to lose text: an exchange recorded
incomplete is sent again on ``--resume``, and text holding U+2028, U+2029 or U+0085 replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from owlai_refine import OutcomeStatus, refine
from owlai_refine.serve.cassette import RecordingTransport, ReplayTransport, load_cassette
from tests.test_refine import config, polish
from testsupport.fake_openai import FakeOpenAI

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"], ids=["LS", "PS", "NEL"])
async def test_a_cassette_with_unicode_line_separators_replays(tmp_path: Path, char: str) -> None:
    text = f"The team says{char}the plan works.\n\nAnother block says{char}more.\n"
    cassette = tmp_path / "c.jsonl"
    with FakeOpenAI(reply=polish) as server:
        recorded = await refine(text, config(server), transport=RecordingTransport(cassette))
        replayed = await refine(text, config(server), transport=ReplayTransport(cassette))
    exchanges = load_cassette(cassette).values()
    assert sorted(e["path"] for e in exchanges) == ["/v1/chat/completions"] * 2 + ["/v1/models"]
    assert replayed.text == recorded.text
    assert [o.status for o in replayed.outcomes] == [o.status for o in recorded.outcomes]


async def test_resume_sends_an_incomplete_exchange_again(tmp_path: Path) -> None:
    text = "The team says the plan works well.\n"
    cassette = tmp_path / "c.jsonl"
    with FakeOpenAI(reply=polish) as server:
        await refine(text, config(server), transport=RecordingTransport(cassette))
        listing, entry = [json.loads(line) for line in cassette.read_text().splitlines()]
        assert listing["path"] == "/v1/models"  # the pre-flight, recorded as it went
        body = entry["response"]["body"]
        entry["response"]["body"] = body[: body.index("plan")]  # a run stopped mid-stream
        entry["complete"] = False
        cassette.write_text(json.dumps(listing) + "\n" + json.dumps(entry) + "\n")
        before, lists = len(server.seen), server.model_lists
        result = await refine(
            text, config(server), transport=RecordingTransport(cassette, replay_first=True)
        )
        assert len(server.seen) == before + 1  # sent again
        assert server.model_lists == lists + 1  # the pre-flight asks the server, not the tape
    assert result.outcomes[0].status is OutcomeStatus.REFINED
    assert result.text == polish(text)
