"""The README's commands and examples, checked so that they never rot."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import structlog

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
SHELL = re.findall(r"```sh\n(.*?)```", README, re.DOTALL)
PYTHON = re.findall(r"```python\n(.*?)```", README, re.DOTALL)


def test_the_two_setup_commands_exist_and_ci_runs_the_test_command() -> None:
    try_it, test = SHELL[0].strip(), SHELL[1].strip()
    assert try_it.startswith("python3 -m venv .venv && ") and ".venv/bin/refine fixtures/" in try_it
    report = re.search(r"refine (fixtures/\S+)", try_it)
    assert report and (REPO / report.group(1)).is_file()
    install, run = test.rsplit(" && ", 1)
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert install in ci and run in ci


@pytest.mark.live
@pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None, reason="needs owlai-refine[local]"
)
def test_the_library_example_runs_as_written(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first example, with ``OWLAI_REFINE_BASE_URL`` unset, uses the embedded model, so a
    newcomer can run it as it stands (tests/test_readme_examples.py runs every example against
    the loopback server)."""
    monkeypatch.delenv("OWLAI_REFINE_BASE_URL", raising=False)
    try:
        exec(compile(PYTHON[0], "README.md", "exec"), {})  # noqa: S102 - our own README's example
    finally:
        structlog.reset_defaults()
    out = capsys.readouterr().out
    counts = out.splitlines()[0]
    assert all(f"'{status}':" in counts for status in ("refined", "unchanged", "rejected"))
    assert out.splitlines()[1].startswith("0 (2, 3) ")  # the one block: lines [2, 3)
    assert out.splitlines()[2] == "# Notes"  # then the report itself, and no log line
    assert "refine.start" not in out and "event" not in out
