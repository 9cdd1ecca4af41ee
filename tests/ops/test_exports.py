"""Every ops module's ``__all__`` names only what exists, and every public function or class
defined in the module (the rest is private by its leading underscore)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import owlai_refine.ops

MODULES = [owlai_refine.ops] + [
    importlib.import_module(f"owlai_refine.ops.{m.name}")
    for m in pkgutil.iter_modules(owlai_refine.ops.__path__)
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_all_matches_public_definitions(module: ModuleType) -> None:
    declared = list(module.__all__)
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


def test_entry_points() -> None:
    for name in ("run_stats", "run_doctor", "run_bench"):
        assert callable(getattr(owlai_refine.ops, name))
