"""The CLI's edge: the one place the environment and the config files become `Settings`, once per invocation
(in the root callback), and a command's flags are laid over them."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..app import Settings, apply_settings, load_settings

if TYPE_CHECKING:
    from ..app import ServiceSettings

__all__ = ["forget_settings", "load_root_settings", "service_settings_from", "settings_from"]

_ROOT: list[Settings | None] = [None]  # this invocation's settings, read by the root callback


def forget_settings() -> None:
    """A new invocation (`main()` is called many times in one process by tests) reads them again."""
    _ROOT[0] = None


def load_root_settings(**flags: Any) -> Settings:
    """Read the config files and the environment (the root options given as flags); install them."""
    settings = load_settings(os.environ, **flags)
    apply_settings(settings)
    _ROOT[0] = settings
    return settings


def settings_from(**flags: Any) -> Settings:
    """This invocation's settings with the command's flags applied (None: the flag was not given)."""
    base = _ROOT[0] or load_root_settings()
    settings = base.with_flags(**flags)
    apply_settings(settings)
    return settings


def service_settings_from(*, need_secret: bool, need_app: bool) -> ServiceSettings:
    """The service's settings (database, webhook secret, GitHub App) over this invocation's settings."""
    from ..app import load_service_settings  # only `serve` and `worker` read them

    return load_service_settings(os.environ, settings_from(), need_secret=need_secret, need_app=need_app)
