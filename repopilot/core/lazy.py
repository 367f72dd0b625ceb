"""Package exports imported on first use (PEP 562), so `from repopilot.core import InputError` costs one small
module, not every model and the loop: each command imports only what it runs (`repopilot diagnose FILE` starts in
a fraction of the time)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, modules: dict[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports `name` from its submodule (`modules`: submodule ->
    the names it exports) the first time it is asked for, and keeps it. A relative name (`"..ci"`) is a lower
    layer's package whose names this face passes on: asked for from there, from its own face, when first used."""
    where = {name: mod for mod, names in modules.items() for name in names}
    clash = set(where) & set(modules)
    if clash:  # importing the submodule would rebind the name to the module: export such names eagerly
        raise ValueError(f"{package}: lazy names that are also submodules: {sorted(clash)}")

    def __getattr__(name: str) -> Any:
        mod = where.get(name)
        if mod is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(mod, package) if mod.startswith(".") else \
            importlib.import_module(f"{package}.{mod}")
        value = getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
