"""The package's layout: no module named like the function it exports, and the README's try-it
output ignored by git. The layers and the import graph: ``tests/test_layers.py``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import owlai_refine
from tests.test_layers import MODULES

# Known exceptions, each with its reason; the list only shrinks.
SHADOWED_OK: dict[str, str] = {}


def test_no_module_is_shadowed_by_a_name_it_exports() -> None:
    """``owlai_refine.X`` (and ``owlai_refine.sub.X``) is the module X, never a function of it
    re-exported by the package: ``owlai_refine.pipeline.orchestrate.refine_document`` must
    resolve."""
    for name in MODULES:
        if "." not in name or name.endswith("__main__") or name in SHADOWED_OK:
            continue
        parent, _, leaf = name.rpartition(".")
        module = importlib.import_module(name)
        assert getattr(importlib.import_module(parent), leaf) is module, name


def test_what_the_readme_try_it_writes_is_ignored_by_git() -> None:
    """``refine fixtures/reports/inference-market.md -o refined.md`` in a clone leaves
    ``git status`` clean."""
    import shutil  # noqa: PLC0415 - this test only
    import subprocess  # noqa: PLC0415 - this test only

    root = Path(owlai_refine.__file__).resolve().parents[1]
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(
        [git, "check-ignore", "--no-index", "refined.md"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.strip() == "refined.md"
