"""Start-up: what ``refine`` loads before it does anything, and Ctrl-C while it loads.

``refine --version`` and ``--help`` load no HTTP client, no pydantic model, no openai and none
of the guard's analysers; ``refine stats`` and ``refine plan`` none of the run's modules (so
that they start in <= 0.3 s: measured in benchmarks/README.md section 14, not asserted here). A
Ctrl-C while the modules load is one line and exit 130: each test holds one import open
with an import hook (a ``sitecustomize`` on ``PYTHONPATH``) and sends SIGINT during it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SMOLLM2 = REPO / "fixtures" / "vllm" / "smollm2-135m-config.json"

RUN_MODULES = ("openai", "httpx2", "anyio", "tenacity", "prometheus_client", "markdown_it")
ANALYSERS = ("lemminflect", "kiwipiepy", "fugashi", "jieba", "spellchecker")
OURS = ("owlai_refine.pipeline.refiner", "owlai_refine.guard", "owlai_refine.cli.run")

_LOADED = """
import json, sys
from owlai_refine.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _loaded(*argv: str) -> set[str]:
    """The top-level names (and our own modules) in ``sys.modules`` after ``refine ARGV``."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    names = json.loads(done.stderr.strip().splitlines()[-1])
    return {n.split(".")[0] for n in names} | {n for n in names if n.startswith("owlai_refine.")}


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help_load_nothing_heavy(argv: list[str]) -> None:
    loaded = _loaded(*argv)
    heavy = {
        *RUN_MODULES,
        *ANALYSERS,
        *OURS,
        "pydantic",
        "structlog",
        "rich",
        "owlai_refine.config",
    }
    assert loaded & heavy == set()


@pytest.mark.parametrize(
    "argv",
    [
        ["stats", str(REPO / "fixtures" / "vllm" / "models.json")],  # exit 3, after loading
        ["plan", "--config", str(SMOLLM2), "--kv-cache-gib", "1", "--max-model-len", "4096"],
    ],
)
def test_stats_and_plan_load_none_of_the_run(argv: list[str]) -> None:
    loaded = _loaded(*argv)
    assert loaded & {*RUN_MODULES, *ANALYSERS, *OURS} == set()
    assert "owlai_refine.ops.stats.figures" in loaded or "owlai_refine.ops.plan.command" in loaded


_HOOK = """
import os, sys, time

class _Slow:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["OWLAI_TEST_SLOW_IMPORT"]:
            open(os.environ["OWLAI_TEST_SLOW_MARK"], "w").close()
            time.sleep(60)
        return None

sys.meta_path.insert(0, _Slow())
"""


NOTHING_WRITTEN = "refine: interrupted; no output was written"


@pytest.mark.parametrize(
    ("module", "argv", "line"),
    [
        ("owlai_refine.cli", ["r.md"], NOTHING_WRITTEN),  # the CLI, loaded by the entry point
        ("openai", ["r.md", "--base-url", "http://127.0.0.1:9/v1"], NOTHING_WRITTEN),  # the run
        ("owlai_refine.ops", ["stats", "log.jsonl"], NOTHING_WRITTEN),  # the operator tools
        ("owlai_refine.ops.stats.figures", ["stats", "log.jsonl"], "refine stats: interrupted"),
    ],
    ids=["cli", "run", "ops", "ops.stats"],
)
def test_ctrl_c_while_loading_is_one_line_and_130(
    tmp_path: Path, module: str, argv: list[str], line: str
) -> None:
    (tmp_path / "sitecustomize.py").write_text(_HOOK, encoding="utf-8")
    (tmp_path / "r.md").write_text("# T\n\nA paragraph to refine.\n", encoding="utf-8")
    (tmp_path / "log.jsonl").write_text("{}\n", encoding="utf-8")
    mark = tmp_path / "loading"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
        "OWLAI_TEST_SLOW_IMPORT": module,
        "OWLAI_TEST_SLOW_MARK": str(mark),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "owlai_refine", *argv],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not mark.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"{module} was never imported"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    assert err.splitlines() == [line], err
    assert out == ""
