"""One server is one endpoint to the limiter however its URL is spelled:
the key of its cap is the normalised URL (scheme, address resolved, port, path), and a server
listed twice is refused before anything is sent."""

from __future__ import annotations

import pytest

from owlai_refine import ConfigError, refine
from owlai_refine.serve.endpoints import canonical_url, endpoint_key
from tests.test_refine import config
from testsupport.fake_openai import FakeOpenAI

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "other",
    [
        "http://localhost:{port}/v1",
        "HTTP://LocalHost:{port}/v1/",
        "http://127.0.0.1:{port}/v1/",
        "http://user:pw@127.0.0.1:{port}/v1?x=1",
    ],
)
def test_one_server_spelled_two_ways_is_one_limiter_key(other: str) -> None:
    port = 18123
    base = f"http://127.0.0.1:{port}/v1"
    assert endpoint_key(other.format(port=port), "m") == endpoint_key(base, "m")


def test_different_servers_have_different_keys() -> None:
    assert canonical_url("http://127.0.0.1:1/v1") != canonical_url("http://127.0.0.1:2/v1")
    assert canonical_url("http://127.0.0.1:1/v1") != canonical_url("http://127.0.0.1:1/v2")
    assert canonical_url("http://example.invalid/v1") == "http://example.invalid:80/v1"
    assert canonical_url("https://example.invalid/v1") == "https://example.invalid:443/v1"


async def test_a_server_listed_twice_is_refused_before_anything_is_sent() -> None:
    with FakeOpenAI() as server:
        twice = (server.base_url, server.base_url.replace("127.0.0.1", "localhost"))
        with pytest.raises(ConfigError, match="twice"):
            await refine("A block says hi.\n", config(server, base_url=twice), sinks=[])
        assert not server.seen
