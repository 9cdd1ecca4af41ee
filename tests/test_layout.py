"""The package's layout: no import cycle, and no module named like the function it exports.

The import graph is read from the source (every ``import`` statement, those inside functions
included, since a lazy import is still a dependency), module by module: ``a -> b`` when module
``a`` imports ``b`` or a name from ``b``. Parent packages are not edges (importing
``owlai_refine.cli.files`` does run ``owlai_refine/cli/__init__.py`` first, but that is
Python's order of loading, not a dependency of the importer on the CLI).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import owlai_refine

PACKAGE = Path(owlai_refine.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """The package's modules that module ``name`` imports."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            # ``from pkg import mod`` imports the module pkg.mod; ``from mod import name`` mod
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycle() -> list[str] | None:
    """One import cycle as ``[a, b, ..., a]``, or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for target in sorted(GRAPH[node]):
            found = visit(target, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(GRAPH):
        found = visit(start, [])
        if found:
            return found
    return None


def test_the_graph_sees_lazy_and_relative_imports() -> None:
    assert "owlai_refine.ops" in GRAPH["owlai_refine.cli"]  # imported inside a function
    assert "owlai_refine.exit_codes" in GRAPH["owlai_refine.ops"]


def test_no_import_cycle() -> None:
    cycle = _cycle()
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# Known exceptions, each with its reason; the list only shrinks.
SHADOWED_OK: dict[str, str] = {}


def test_no_module_is_shadowed_by_a_name_it_exports() -> None:
    """``owlai_refine.X`` (and ``owlai_refine.sub.X``) is the module X, never a function of it
    re-exported by the package: ``owlai_refine.orchestrate.refine_document`` must resolve."""
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
