"""The service's runs as `repopilot runs` reads them: the traces the workers keep in PostgreSQL."""

from __future__ import annotations

import psycopg

from ..core import ConfigError, InputError, RunTrace
from .store import Store

__all__ = ["service_run", "service_runs"]


def _unreachable(exc: psycopg.Error) -> ConfigError:
    return ConfigError(f"cannot read the service's database: {str(exc).strip().splitlines()[0][:200]}")


def service_runs(url: str, limit: int) -> list[RunTrace]:
    """The newest `limit` runs the service recorded."""
    try:
        return Store(url).list_traces(limit)
    except psycopg.Error as exc:
        raise _unreachable(exc) from None


def service_run(url: str, run_id: str) -> RunTrace:
    """One run (`latest`: the newest) the service recorded."""
    try:
        store = Store(url)
        trace = next(iter(store.list_traces(1)), None) if run_id == "latest" else store.load_trace(run_id)
    except psycopg.Error as exc:
        raise _unreachable(exc) from None
    if trace is None:
        raise InputError(f"no run {run_id!r} in the service's database")
    return trace
