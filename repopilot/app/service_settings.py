"""The service's settings (`repopilot serve` / `repopilot worker`), read once at the edge like `Settings`: the
database, the webhook secret, the GitHub App's id and private key, and the bounds on model calls. Secrets come
from the environment only and are never shown."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..core import ConfigError
from .settings import Settings

__all__ = ["ServiceSettings", "load_service_settings"]

DEFAULT_API_URL = "https://api.github.com"


@dataclass(frozen=True)
class ServiceSettings:
    base: Settings
    database_url: str
    webhook_secret: str = field(repr=False)
    app_id: str | None = None
    private_key: str | None = field(default=None, repr=False)
    api_url: str = DEFAULT_API_URL
    # Model calls in flight at once across every worker, and the spend one installation may make a day (USD).
    model_concurrency: int = 2
    installation_budget_usd: float = 5.0
    # GitHub API calls of an installation's hourly limit kept in reserve: at this many left, jobs wait for the reset.
    github_reserve: int = 50
    # Where workers clone repositories for fix runs and approvals.
    workdir: Path = Path(".repopilot-service")
    check_name: str = "RepoPilot"


def _number(environ: Mapping[str, str], name: str, kind: type[int] | type[float], default: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name} = {raw[:40]!r} is not a number") from None
    if value <= 0:
        raise ConfigError(f"{name} must be positive")
    return value


def _private_key(environ: Mapping[str, str]) -> str | None:
    inline = environ.get("REPOPILOT_APP_PRIVATE_KEY", "").strip()
    if inline:
        return inline
    path = environ.get("REPOPILOT_APP_PRIVATE_KEY_FILE", "").strip()
    if not path:
        return None
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read REPOPILOT_APP_PRIVATE_KEY_FILE {path}: {exc.strerror}") from None


def load_service_settings(environ: Mapping[str, str], base: Settings, *, need_secret: bool = True,
                          need_app: bool = True) -> ServiceSettings:
    """The service's settings from the environment; a missing database URL, secret or App key is a ConfigError
    naming the variable (the receiver needs the secret, the worker the App's id and key)."""
    database_url = environ.get("REPOPILOT_DATABASE_URL", "").strip()
    if not database_url:
        raise ConfigError("REPOPILOT_DATABASE_URL is not set (a PostgreSQL URL: postgresql://user@host/db)")
    secret = environ.get("REPOPILOT_WEBHOOK_SECRET", "")
    if need_secret and not secret:
        raise ConfigError("REPOPILOT_WEBHOOK_SECRET is not set (the GitHub App's webhook secret)")
    app_id = environ.get("REPOPILOT_APP_ID", "").strip() or None
    key = _private_key(environ)
    if need_app and (app_id is None or key is None):
        raise ConfigError("REPOPILOT_APP_ID and REPOPILOT_APP_PRIVATE_KEY_FILE (or REPOPILOT_APP_PRIVATE_KEY) must "
                          "be set: the worker acts as the GitHub App")
    return ServiceSettings(
        base=base, database_url=database_url, webhook_secret=secret, app_id=app_id, private_key=key,
        api_url=(base.github_api_url or DEFAULT_API_URL).rstrip("/"),
        model_concurrency=int(_number(environ, "REPOPILOT_MODEL_CONCURRENCY", int, 2)),
        installation_budget_usd=_number(environ, "REPOPILOT_INSTALLATION_BUDGET_USD", float, 5.0),
        github_reserve=int(_number(environ, "REPOPILOT_GITHUB_RESERVE", int, 50)),
        workdir=Path(environ.get("REPOPILOT_WORKDIR", "").strip() or ".repopilot-service").expanduser(),
    )
