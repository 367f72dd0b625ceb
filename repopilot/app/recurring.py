"""Reading and forgetting the failure history on request: `repopilot history` (the recurring failures) and
`history prune`. Apart from memory.py, which records diagnoses, so that listing imports no diagnosis model:
`repopilot history` must answer in well under 200 ms (bench/history_bench.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from ..ci import HistoryStore, Recurring
from ..core import UsageError
from .history_backend import FailureHistory
from .settings import Settings

__all__ = ["HistoryListing", "history_held", "history_store", "list_recurring", "prune_history"]


def history_store(settings: Settings) -> FailureHistory | None:
    """The store the use cases record to: the one the client provides (the service's PostgreSQL), else the file."""
    if settings.history_backend is not None:
        return settings.history_backend
    path = settings.history_path()
    return HistoryStore(path) if path is not None else None


@contextmanager
def history_held(settings: Settings) -> Iterator[Settings]:
    """The settings with the history file's store held open (`HistoryStore.held`) while the use cases inside
    read and record; a client's own store, or no history, as they are."""
    path = None if settings.history_backend is not None else settings.history_path()
    if path is None:
        yield settings
        return
    store = HistoryStore(path)
    with store.held():
        yield replace(settings, history_backend=store)


@dataclass(frozen=True)
class HistoryListing:
    """The failure history's file, how many diagnoses it holds and its recurring failures."""

    path: Path
    diagnoses: int
    recurring: list[Recurring]


def list_recurring(settings: Settings, limit: int = 20) -> HistoryListing:
    store = _required(settings)
    return HistoryListing(path=store.path, diagnoses=store.count(), recurring=store.recurring(limit=limit))


def prune_history(settings: Settings, days: int | None = None) -> int:
    """Forget diagnoses older than `days` (default: the `history_days` setting); returns how many."""
    if days is not None and days < 0:
        raise UsageError("--days must be 0 or more")
    return _required(settings).prune(settings.history_days if days is None else days)


def _required(settings: Settings) -> HistoryStore:
    """The history file `repopilot history` lists and prunes (the service prunes its own while recording)."""
    path = settings.history_path()
    if path is None:
        raise UsageError("the failure history is turned off (history = \"off\"); set REPOPILOT_HISTORY to a file")
    return HistoryStore(path)
