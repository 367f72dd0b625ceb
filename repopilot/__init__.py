"""RepoPilot: diagnose failing CI runs and propose fixes a human approves."""

import sys
import types

__version__ = "0.1.0"
__all__ = ["__version__"]


def _dataclasses_without_inspect() -> None:
    """Import `dataclasses` with `inspect` deferred until it is used.

    `dataclasses` imports `inspect` (and with it ast, dis, tokenize: about a tenth of a `repopilot diagnose`'s
    start-up) only to name a class that has no docstring: its `__doc__` becomes its signature. Every dataclass a
    diagnose makes has a docstring (tests/cli/test_startup_imports.py), so `dataclasses` is given a stand-in that
    imports the real module the first time anything is asked of it; later `import inspect`s get the real one."""
    if "dataclasses" in sys.modules or "inspect" in sys.modules:
        return
    stand_in = types.ModuleType("inspect")

    def on_demand(name: str) -> object:
        import importlib

        return getattr(importlib.import_module("inspect"), name)

    setattr(stand_in, "__getattr__", on_demand)  # noqa: B010  (a module's __getattr__, PEP 562)
    sys.modules["inspect"] = stand_in
    try:
        import dataclasses  # noqa: F401
    finally:
        if sys.modules.get("inspect") is stand_in:
            del sys.modules["inspect"]


_dataclasses_without_inspect()
