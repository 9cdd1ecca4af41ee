"""Every module's ``__all__`` names only what exists and every public function or class the
module defines (the rest is private by its leading underscore); the package's is sorted."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import owlai_refine

OPTIONAL = {"owlai_refine.serve.local.child", "owlai_refine.__main__"}  # scripts, not libraries
MODULES = [owlai_refine] + [
    importlib.import_module(m.name)
    for m in pkgutil.walk_packages(owlai_refine.__path__, "owlai_refine.")
    if m.name not in OPTIONAL
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_all_matches_public_definitions(module: ModuleType) -> None:
    declared = list(getattr(module, "__all__", []))
    assert len(declared) == len(set(declared))
    assert all(hasattr(module, name) for name in declared)
    defined_here = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == module.__name__
    }
    assert defined_here <= set(declared)


def test_the_package_exports_a_sorted_public_api() -> None:
    assert owlai_refine.__all__ == sorted(owlai_refine.__all__)
    for name in ("refine", "refine_sync", "RefineConfig", "RefineResult", "parse", "splice"):
        assert name in owlai_refine.__all__


def test_operator_tool_entry_points() -> None:
    import owlai_refine.ops  # noqa: PLC0415

    for name in ("run_stats", "run_doctor", "run_bench"):
        assert callable(getattr(owlai_refine.ops, name))
