"""The scanner's per-byte passes in C, when the optional extension (ci/_native.c) was built: ANSI stripping, the
line numbers of a chunk's matches, and hyperscan's matches kept without a Python object each. On real logs they
are most of a big log's time in pure Python (cleaning alone was a third of it at 500 MB).

Every caller has a pure-Python form that gives the same result (tests/ci/test_native.py compares them on random
and adversarial bytes and whole diagnoses), used when the extension is missing (an install without a compiler) or
when the application turns them off (the `native` setting, REPOPILOT_NATIVE=0: to compare them, and in case a
platform's build misbehaves). Tests switch with `use()`."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from ._native import Matches

__all__ = ["NATIVE", "Found", "available", "pairs", "use", "use_native"]

# An engine's matches in a piece, (end offset, pattern id) each: a list (Python `re`, or hyperscan without the
# extension) or the extension's `Matches` (hyperscan's callback with it).
Found: TypeAlias = "list[tuple[int, int]] | Matches"


def _load() -> ModuleType | None:
    try:
        from . import _native
    except ImportError:
        return None
    return _native


_BUILT = _load()
# What the scanner calls now (None: the pure-Python forms). Read at each call: `use()` takes effect at once.
NATIVE: ModuleType | None = _BUILT


def available() -> bool:
    """Whether the extension was built and can be loaded."""
    return _BUILT is not None


def use(on: bool) -> bool:
    """Turn the C forms on (when built) or off; returns whether they were on."""
    global NATIVE  # noqa: PLW0603 - one switch per process, for tests and the bench
    was = NATIVE is not None
    NATIVE = _BUILT if on else None
    return was


def pairs(found: Found) -> list[tuple[int, int]]:
    """The matches as a list of (end offset, pattern id)."""
    return found if isinstance(found, list) else found.pairs()


# The name the package face gives `use` (the application layer turns the C forms on or off by its settings).
use_native = use
