"""No function over 60 lines outside tests: a long function is cut into a few named steps.

Every ``.py`` file under ``owlai_refine/``, ``benchmarks/``, ``testsupport/`` (when it is there)
and ``.ci/`` is parsed (``ast``, nothing imported). A function's length runs from its ``def``
line to its last line, docstring and comments included, decorators not. A nested function
counts on its own and as part of the function around it; a method is named ``Class.method``.
``tests/`` is exempt (a test's table of cases may be long and is read as data).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("owlai_refine", "benchmarks", "testsupport", ".ci")
LIMIT = 60

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, _Function]]:
    """Every function and method in ``tree``, nested ones included, with its dotted name."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, _Function):
            yield prefix + node.name, node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def _length(node: _Function) -> int:
    """Lines from the ``def`` (``lineno``; decorators sit above it) to the last line."""
    assert node.end_lineno is not None
    return node.end_lineno - node.lineno + 1


def _files() -> list[Path]:
    return sorted(p for d in CHECKED if (ROOT / d).is_dir() for p in (ROOT / d).rglob("*.py"))


def _too_long(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    where = path.relative_to(ROOT).as_posix()
    return [
        f"{where}:{node.lineno} {name} ({_length(node)} lines)"
        for name, node in _functions(tree)
        if _length(node) > LIMIT
    ]


def test_the_checked_trees_are_found() -> None:
    files = {p.relative_to(ROOT).parts[0] for p in _files()}
    assert {"owlai_refine", "benchmarks", ".ci"} <= files
    assert ROOT / "owlai_refine" / "__init__.py" in _files()


def test_lengths_count_from_the_def_and_include_nested_functions() -> None:
    source = (
        "@decorator\n"  # not counted
        "@other(1)\n"
        "def outer():\n"  # 1
        "    def inner():\n"  # 2
        "        return 1\n"  # 3
        "    return inner\n"  # 4
        "class C:\n"
        "    async def method(self):\n"  # 1
        "        '''doc'''\n"  # 2
    )
    found = {name: _length(node) for name, node in _functions(ast.parse(source))}
    assert found == {"outer": 4, "outer.inner": 2, "C.method": 2}


def test_no_function_over_60_lines_outside_tests() -> None:
    offenders = [line for path in _files() for line in _too_long(path)]
    assert not offenders, f"{len(offenders)} function(s) over {LIMIT} lines:\n" + "\n".join(
        offenders
    )
