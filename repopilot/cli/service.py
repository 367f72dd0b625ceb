"""`repopilot serve` and `repopilot worker`: RepoPilot as a GitHub App for many repositories (docs/deploy.md).
They need the `service` extra: `pip install 'repopilot[service]'`."""

from __future__ import annotations

import socket

import typer

from ..core import ConfigError
from .console import err
from .context import service_settings_from

__all__ = ["register"]


def _need_extra() -> None:
    """A clear message instead of a traceback when the `service` extra is not installed."""
    try:
        import procrastinate  # noqa: F401
        import starlette  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"the service needs its extra: pip install 'repopilot[service]' ({exc.name} is missing)") \
            from None


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (0.0.0.0 in a container)."),
    port: int = typer.Option(8080, "--port", help="Port to listen on."),
) -> None:
    """Receive the GitHub App's webhooks: verify, record, queue; answer at once. Needs REPOPILOT_DATABASE_URL
    and REPOPILOT_WEBHOOK_SECRET."""
    _need_extra()
    from ..service import serve as run_serve

    settings = service_settings_from(need_secret=True, need_app=False)
    err.print(f"repopilot serve: listening on http://{host}:{port} (POST /webhook, /healthz, /metrics)",
              markup=False)
    run_serve(settings, host=host, port=port)


def worker(
    name: str = typer.Option("", "--name", help="This worker's name in logs and metrics (default: host name)."),
    concurrency: int = typer.Option(1, "--concurrency", min=1, max=64, help="Jobs this process runs at once."),
    queue: list[str] = typer.Option([], "--queue", help="Only these queues (github, model); default both."),
    stalled_after: float = typer.Option(30.0, "--stalled-after", min=2.0,
                                        help="Seconds without a worker's heartbeat before its jobs run elsewhere."),
) -> None:
    """Run queued jobs as the GitHub App: diagnose failed runs, fix and approve on command. Needs
    REPOPILOT_DATABASE_URL, REPOPILOT_APP_ID and REPOPILOT_APP_PRIVATE_KEY_FILE."""
    _need_extra()
    from ..service import QUEUES
    from ..service import work as run_work

    unknown = set(queue) - set(QUEUES)
    if unknown:
        raise ConfigError(f"unknown queue(s) {sorted(unknown)}; known: {', '.join(QUEUES)}")
    settings = service_settings_from(need_secret=False, need_app=True)
    run_work(settings, name=name or socket.gethostname(), concurrency=concurrency,
             queues=tuple(queue) or QUEUES, heartbeat=max(1.0, stalled_after / 6), stalled_after=stalled_after)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("worker")(worker)
