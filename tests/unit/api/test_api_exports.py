"""The public surface of flarechat.api: a checked, sorted __all__ of real, documented names."""

from __future__ import annotations

import importlib
import pkgutil

import flarechat.api as api


def test_all_names_exist_and_are_unique() -> None:
    assert len(set(api.__all__)) == len(api.__all__)
    for name in api.__all__:
        assert hasattr(api, name), name


def test_all_is_sorted_constants_then_classes_then_functions() -> None:
    assert api.__all__ == sorted(api.__all__, key=lambda n: (not n.isupper(), n[0].islower(), n))


def test_every_public_name_is_exported() -> None:
    public = {n for n in vars(api) if not n.startswith("_")}
    modules = {m.name for m in pkgutil.iter_modules(api.__path__)}
    assert public - modules - {"annotations"} <= set(api.__all__)


def test_every_module_has_a_docstring_and_a_checked_all() -> None:
    for info in pkgutil.iter_modules(api.__path__):
        module = importlib.import_module(f"flarechat.api.{info.name}")
        assert (module.__doc__ or "").strip(), info.name
        exported = getattr(module, "__all__", [])
        for name in exported:
            assert hasattr(module, name), f"{info.name}.{name}"
