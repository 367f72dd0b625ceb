"""One PostgreSQL for everything: Procrastinate's queue schema and the service's tables (the failure history too),
created on first start (serve and worker both call this; an advisory lock keeps two starting at once from racing)."""

from __future__ import annotations

import psycopg

from ..core import ConfigError
from .failure_history import HISTORY_SCHEMA
from .queue import make_queue
from .store import SCHEMA

__all__ = ["prepare_database"]

_LOCK = 0x7265706F  # "repo": any constant, shared by every process of the service


def prepare_database(url: str) -> None:
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise ConfigError(f"cannot reach the database at REPOPILOT_DATABASE_URL: {str(exc).strip()[:200]}") from None
    with conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK,))
        try:
            row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if row is None or row[0] is None:
                conn.execute(make_queue(url).schema_manager.get_schema().encode())
            conn.execute(SCHEMA.encode())
            conn.execute(HISTORY_SCHEMA.encode())
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK,))
