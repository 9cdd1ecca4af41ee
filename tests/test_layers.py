"""The package's layers, read from its source: no import cycle, no module importing from a layer
above its own, and each server endpoint asked for in one module.

The import graph is read with ``ast`` (every ``import`` statement, those inside functions
included, since a lazy import is still a dependency), module by module: ``a -> b`` when module
``a`` imports ``b`` or a name from ``b``. Parent packages are not edges (importing
``owlai_refine.shell.files`` does run ``owlai_refine/shell/__init__.py`` first, but that is
Python's order of loading, not a dependency of the importer on the shell). An import under
``if TYPE_CHECKING:`` is never run: it counts for the layers, not for cycles.
"""

from __future__ import annotations

import ast
from pathlib import Path

import owlai_refine

PACKAGE = Path(owlai_refine.__file__).parent

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "values",
        tuple(
            f"owlai_refine.{m}"
            for m in (
                "_version",
                "blocks",
                "config",
                "defaults",
                "errors",
                "events",
                "exit_codes",
                "markdown",
                "markers",
                "results",
                "scripts",
                "scrub",
                "truncation",
                "usage",
            )
        ),
    ),
    ("limits", ("owlai_refine.limits",)),
    ("serve", ("owlai_refine.serve",)),
    ("guard", ("owlai_refine.guard",)),
    ("pipeline", ("owlai_refine.pipeline",)),
    ("review", ("owlai_refine.review",)),
    ("facade", ("owlai_refine",)),
    ("shell", ("owlai_refine.shell",)),
    ("ops", ("owlai_refine.ops",)),
    ("cli", ("owlai_refine.cli", "owlai_refine.__main__")),
]
"""Bottom up: a module may import from its own layer and those below it, never from one above.
Each entry names modules or packages (a package holds every module under it); the facade is
``owlai_refine/__init__.py`` alone. ``values`` are the flat modules: the data types, settings,
errors and events every layer shares, and the pure helpers several layers use (the Markdown
parser's configuration, the marker patterns, the scrubbing of secrets)."""

SERVER = "owlai_refine.serve.server"
"""The one module that asks a server for anything but chat."""
ENDPOINTS = ("/v1/models", "/metrics", "/tokenize")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ``id`` of every import statement under ``if TYPE_CHECKING:``."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            for inner in node.body:
                found.update(
                    id(n) for n in ast.walk(inner) if isinstance(n, ast.Import | ast.ImportFrom)
                )
    return found


def _imports(name: str, *, runtime_only: bool) -> set[str]:
    """The package's modules that module ``name`` imports (with ``runtime_only``, leaving out
    the imports under ``if TYPE_CHECKING:``)."""
    tree = TREES[name]
    skipped = _type_checking_only(tree) if runtime_only else set()
    found: set[str] = set()
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
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


GRAPH = {name: _imports(name, runtime_only=False) for name in MODULES}
RUNTIME_GRAPH = {name: _imports(name, runtime_only=True) for name in MODULES}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as ``[a, b, ..., a]``, or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for target in sorted(graph[node]):
            found = visit(target, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [])
        if found:
            return found
    return None


def _within(name: str, prefix: str) -> bool:
    return name == prefix or (prefix != "owlai_refine" and name.startswith(prefix + "."))


def _layer(name: str) -> int | None:
    """The index in :data:`LAYERS` of module ``name``, or None if no layer holds it."""
    for index, (_, members) in enumerate(LAYERS):
        if any(_within(name, member) for member in members):
            return index
    return None


def test_the_graph_sees_lazy_and_relative_imports() -> None:
    assert "owlai_refine.ops" in GRAPH["owlai_refine.cli"]  # imported inside a function
    assert "owlai_refine.exit_codes" in GRAPH["owlai_refine.ops"]
    assert "owlai_refine.serve.endpoints" in GRAPH["owlai_refine.serve.routing"]  # TYPE_CHECKING
    assert "owlai_refine.serve.endpoints" not in RUNTIME_GRAPH["owlai_refine.serve.routing"]


def test_no_import_cycle() -> None:
    cycle = _cycle(RUNTIME_GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_every_module_is_in_a_layer() -> None:
    homeless = sorted(name for name in MODULES if _layer(name) is None)
    assert not homeless, (
        f"{', '.join(homeless)}: in no layer; add each (or its package) to LAYERS in "
        "tests/test_layers.py, where it belongs by what it imports and who imports it"
    )


def _upward(graph: dict[str, set[str]]) -> list[str]:
    """Every edge of ``graph`` from a module to one in a layer above its own, as a line."""
    upward = []
    for name, targets in sorted(graph.items()):
        low = _layer(name)
        for target in sorted(targets):
            high = _layer(target)
            if low is None or high is None or high <= low:
                continue
            upward.append(f"{name} ({LAYERS[low][0]}) imports {target} ({LAYERS[high][0]})")
    return upward


def test_an_upward_import_is_seen() -> None:
    """The check itself: a value importing the CLI, ops importing the CLI and the guard
    importing the pipeline are flagged; the reverse edges are not."""
    graph = {
        "owlai_refine.blocks": {"owlai_refine.cli.run"},
        "owlai_refine.ops.bench.sweep": {"owlai_refine.cli.progress"},
        "owlai_refine.guard.meaning": {"owlai_refine.pipeline.prompt"},
        "owlai_refine.cli.run": {"owlai_refine.blocks", "owlai_refine.ops.ledger"},
    }
    assert [line.split(" ")[0] for line in _upward(graph)] == [
        "owlai_refine.blocks",
        "owlai_refine.guard.meaning",
        "owlai_refine.ops.bench.sweep",
    ]


def test_no_module_imports_from_a_layer_above() -> None:
    """No exceptions: every module imports only from its own layer and those below."""
    upward = _upward(GRAPH)
    assert not upward, "imports from a layer above:\n" + "\n".join(upward)


def _requested(tree: ast.Module) -> set[str]:
    """The endpoints of :data:`ENDPOINTS` a module sends requests to: a URL built as
    ``base + "/metrics"`` or ``f"{base}/metrics"``, a literal ``http://...`` URL, or the openai
    client's ``.models.list()`` (``/v1/models``). A path named in a message, a docstring or a
    match on a recorded request is no request."""
    found: set[str] = set()

    def path_of(text: str) -> str | None:
        for endpoint in ENDPOINTS:
            short = endpoint.removeprefix("/v1")
            if text in (endpoint, short) or text.startswith((endpoint + "?", short + "?")):
                return endpoint
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "list":
            if isinstance(node.value, ast.Attribute) and node.value.attr == "models":
                found.add("/v1/models")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            if isinstance(node.right, ast.Constant) and isinstance(node.right.value, str):
                endpoint = path_of(node.right.value)
                if endpoint:
                    found.add(endpoint)
        elif isinstance(node, ast.JoinedStr):
            for before, part in zip(node.values, node.values[1:], strict=False):
                if (
                    isinstance(before, ast.FormattedValue)
                    and isinstance(part, ast.Constant)
                    and isinstance(part.value, str)
                ):
                    endpoint = path_of(part.value)  # all of it: "{where}/models is..." is a message
                    if endpoint:
                        found.add(endpoint)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith(("http://", "https://"))
        ):
            for endpoint in ENDPOINTS:
                if endpoint.removeprefix("/v1") in node.value:
                    found.add(endpoint)
    return found


REQUESTED = {name: _requested(tree) for name, tree in TREES.items()}


def test_the_server_module_is_seen_asking_for_each_endpoint() -> None:
    assert REQUESTED[SERVER] == set(ENDPOINTS)


def test_each_server_endpoint_is_requested_in_one_module() -> None:
    """``/v1/models``, ``/metrics`` and ``/tokenize`` are asked for in
    ``owlai_refine/serve/server.py`` only: the pre-flight, the routing's probe, the adaptive cap
    and the operator tools go through it."""
    elsewhere = {
        name: sorted(found) for name, found in REQUESTED.items() if found and name != SERVER
    }
    assert not elsewhere, f"server endpoints requested outside {SERVER}: {elsewhere}"


def _top_imports(path: Path) -> set[str]:
    """The top-level packages ``path`` imports (``tests``, ``benchmarks``, ``testsupport`` ...)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.partition(".")[0])
    return found


def test_tests_and_benchmarks_share_testsupport_and_import_not_each_other() -> None:
    """What both use lives in ``testsupport/``; it imports neither of them."""
    repo = PACKAGE.parent
    refused = {
        "tests": {"benchmarks"},
        "benchmarks": {"tests"},
        "testsupport": {"tests", "benchmarks"},
    }
    found = [
        f"{path.relative_to(repo)} imports {sorted(_top_imports(path) & others)}"
        for folder, others in refused.items()
        for path in sorted((repo / folder).rglob("*.py"))
        if _top_imports(path) & others
    ]
    assert not found, "\n".join(found)
