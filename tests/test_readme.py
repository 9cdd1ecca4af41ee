"""The README's commands and examples, checked so that they never rot."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from owlai_refine.limiter import reset_limiters
from tests.support.fake_openai import FakeOpenAI

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


def test_every_flag_in_the_readme_exists() -> None:
    help_text = subprocess.run(
        [sys.executable, "-m", "owlai_refine", "--help"],
        capture_output=True, text=True, check=True, cwd=REPO,
    ).stdout  # fmt: skip
    flags = set(re.findall(r"^\| `(--[a-z-]+)", README, re.MULTILINE))  # the flags table
    assert flags and {f for f in flags if f not in help_text} == set()


def test_the_library_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    reset_limiters()
    with FakeOpenAI(reply=lambda text: text.replace("was", "were")) as server:
        code = PYTHON[0].replace("http://localhost:8000/v1", server.base_url)
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our own README's example
    out = capsys.readouterr().out
    assert "'refined': 1" in out
