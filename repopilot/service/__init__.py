"""RepoPilot as a service: a GitHub App's webhook receiver (`repopilot serve`) and workers (`repopilot worker`)
on Procrastinate and PostgreSQL. A client of the application layer, like the CLI (docs/deploy.md).

Needs the `service` extra (starlette, uvicorn, procrastinate, psycopg, PyJWT); nothing else imports it."""

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .database import prepare_database
    from .events import ApproveCommand, DiagnoseRun, FixCommand, Work, route
    from .failure_history import PostgresHistory
    from .history import service_run, service_runs
    from .queue import QUEUES
    from .runner import serve, work
    from .signature import sign, verify
    from .store import Store

__getattr__ = lazy_exports(__name__, {
    "database": ("prepare_database",),
    "queue": ("QUEUES",),
    "events": ("ApproveCommand", "DiagnoseRun", "FixCommand", "Work", "route"),
    "failure_history": ("PostgresHistory",),
    "history": ("service_run", "service_runs"),
    "runner": ("serve", "work"),
    "signature": ("sign", "verify"),
    "store": ("Store",),
})

__all__ = ["QUEUES", "ApproveCommand", "DiagnoseRun", "FixCommand", "PostgresHistory", "Store", "Work",
           "prepare_database", "route", "serve", "service_run", "service_runs", "sign", "verify", "work"]
