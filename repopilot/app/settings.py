"""Settings: everything configurable, read ONCE at the edge and passed down. No module below this layer reads
the environment or a config file.

Where a value comes from, strongest first: a command-line flag, an environment variable, the project's config
(`repopilot.toml`, else `[tool.repopilot]` in `pyproject.toml`, in the working directory), the user's config
(`$XDG_CONFIG_HOME/repopilot/config.toml`, default `~/.config/repopilot/config.toml`), the default. Each value
remembers which (`Settings.origins`; `repopilot config` shows them). Secrets (API keys, the GitHub token) are
read from the environment only: a config file is something people commit.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ci import DEFAULT_LOG_CACHE_MB, DEFAULT_TOKEN_BUDGET, MAX_STDIN_BYTES
from ..core import (
    DEFAULT_MAX_STEPS,
    MAX_TOOL_CALLS_PER_TURN,
    ConfigError,
    Redactor,
    active_redactor,
    install_redactor,
    use_runs_dir,
)
from ..providers import provider_variables

if TYPE_CHECKING:  # the history's types are imported by the use cases that record, not by every command
    from ..core import Model
    from .history_backend import FailureHistory

__all__ = ["CONFIG_KEYS", "Settings", "apply_settings", "default_runs_dir", "load_settings", "user_config_path"]

# Runs are the user's state, not the project's files: never in a work tree's `git status`, and found by
# `approve`, `resume` and `runs` from any directory. One directory for every repository (each trace names its
# repository); REPOPILOT_RUNS_DIR or `runs_dir` in a config file move it.
_DEFAULT_STATE_HOME = "~/.local/state"
DEFAULT_GITHUB_SERVER = "https://github.com"
# less: quit at once when it fits (-F), keep colours (-R), leave the text on the screen (-X).
DEFAULT_PAGER = "less -FRX"
DEFAULT_HISTORY_DAYS = 90
_OFF = ("off", "none", "no", "false", "0")
# Environment variables that are not settings of their own but are passed to the layer that declares them.
_OTEL_PREFIX = "OTEL_"


@dataclass(frozen=True)
class _Key:
    """How one setting is set: its environment variable, its type, whether a config file may set it."""

    env: str | None  # the environment variable, if any
    kind: type  # str, int, Path, bool or list (of paths)
    in_files: bool = True  # may be set in a config file


# The settings a person can set, with their variable. Anything else in a config file is an error.
_KEYS: dict[str, _Key] = {
    "model": _Key("REPOPILOT_MODEL", str),
    "runs_dir": _Key("REPOPILOT_RUNS_DIR", Path),
    "rules": _Key("REPOPILOT_RULES", list),
    "cache_dir": _Key("REPOPILOT_CACHE_DIR", Path),
    "log_cache": _Key("REPOPILOT_LOG_CACHE", Path),
    # How many MB of job logs the log cache keeps (the least recently used go first).
    "log_cache_mb": _Key("REPOPILOT_LOG_CACHE_MB", int),
    "token_budget": _Key(None, int),
    "max_steps": _Key(None, int),
    "github_api_url": _Key("GITHUB_API_URL", str),
    "github_server_url": _Key("GITHUB_SERVER_URL", str),
    "debug": _Key("REPOPILOT_DEBUG", bool, in_files=False),
    # Bounds on what one tool call, one model turn and piped input may cost (docs/security.md).
    "tool_seconds": _Key("REPOPILOT_TOOL_SECONDS", float),
    "max_tool_result_bytes": _Key("REPOPILOT_MAX_TOOL_RESULT_BYTES", int),
    "max_line_bytes": _Key("REPOPILOT_MAX_LINE_BYTES", int),
    "max_tool_calls_per_turn": _Key("REPOPILOT_MAX_TOOL_CALLS_PER_TURN", int),
    "max_stdin_bytes": _Key("REPOPILOT_MAX_STDIN_BYTES", int),
    # Processes a big log file is scanned in at once: 0 or 1 (the default) one pass in this process, memory flat
    # in the log's size; N > 1 up to N forked workers (one per CPU is the most that pays), faster on a big file,
    # but each adds its own memory (README, "Scanning a big log").
    "scan_workers": _Key("REPOPILOT_SCAN_WORKERS", int),
    # A log file of 4 MB or more is scanned by a helper process ahead of this process's work on its lines
    # (ci/ahead.py): on two CPUs most of the per-byte work runs beside the per-line work, for a few MB more memory
    # whatever the log's size; the same results. Off: everything in this process.
    "scan_ahead": _Key("REPOPILOT_SCAN_AHEAD", bool),
    # The scanner's per-byte passes in C when the optional extension was built (ci/native.py); off (`0`) to
    # compare with the pure-Python forms or if a platform's build misbehaves. Same results either way.
    "native": _Key("REPOPILOT_NATIVE", bool),
    # Verification of proposals (the `[verify]` table of a config file: cmd, setup, timeout, network, enabled).
    "verify": _Key("REPOPILOT_VERIFY", bool),
    "verify_cmd": _Key("REPOPILOT_VERIFY_CMD", str),
    "verify_setup": _Key("REPOPILOT_VERIFY_SETUP", str),
    "verify_timeout": _Key("REPOPILOT_VERIFY_TIMEOUT", float),
    "verify_network": _Key("REPOPILOT_VERIFY_NETWORK", bool),
    "verify_setup_cache": _Key("REPOPILOT_VERIFY_SETUP_CACHE", bool),
    "verify_setup_cache_mb": _Key("REPOPILOT_VERIFY_SETUP_CACHE_MB", int),
    "allow_weakening": _Key(None, bool, in_files=False),
    # Long output on a terminal goes through it (REPOPILOT_PAGER, else the usual PAGER; `cat` turns it off).
    "pager": _Key("REPOPILOT_PAGER", str),
    # The failure history (a SQLite file; `off` records nothing) and how many days its rows are kept.
    "history": _Key("REPOPILOT_HISTORY", Path),
    "history_days": _Key("REPOPILOT_HISTORY_DAYS", int),
    # `github report` keeps one issue per failure of the default branch (app/failure_issues.py); off by default.
    "failure_issues": _Key("REPOPILOT_FAILURE_ISSUES", bool),
}
# The `[verify]` table's keys and the settings they set.
_VERIFY_TABLE = {"enabled": "verify", "cmd": "verify_cmd", "setup": "verify_setup", "timeout": "verify_timeout",
                 "network": "verify_network", "setup_cache": "verify_setup_cache",
                 "setup_cache_mb": "verify_setup_cache_mb"}
DEFAULT_VERIFY_TIMEOUT_S = 600.0
DEFAULT_SETUP_CACHE_MB = 2048
# The variables a verification command is given (toolchains, locale, home): anything else of RepoPilot's
# environment, API keys and tokens above all, stays out. Names that look secret are dropped even from this list.
_VERIFY_ENV = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM",
    "TMPDIR", "SHELL", "JAVA_HOME", "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN",
    "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "MAVEN_HOME", "M2_HOME", "MAVEN_OPTS", "NODE_PATH", "NVM_DIR",
    "PYENV_ROOT", "VIRTUAL_ENV", "CONDA_PREFIX", "PERL5LIB", "GEM_HOME", "GEM_PATH", "RUBYLIB", "CC", "CXX",
    "CFLAGS", "CXXFLAGS", "LDFLAGS", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH"})
_SECRET_NAME = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION")
CONFIG_KEYS = tuple(k for k, v in _KEYS.items() if v.in_files)


@dataclass(frozen=True)
class Settings:
    """Every setting, read once at the edge from the defaults, the config files and the environment."""

    model: str | None = None
    runs_dir: Path = field(default_factory=lambda: default_runs_dir({}))
    rules: tuple[Path, ...] = ()
    cache_dir: Path | None = None  # None: the user's cache directory (see `scanner_cache_dir`)
    log_cache: Path | None = None
    log_cache_mb: int = DEFAULT_LOG_CACHE_MB
    token_budget: int = DEFAULT_TOKEN_BUDGET
    max_steps: int = DEFAULT_MAX_STEPS
    github_api_url: str | None = None
    github_server_url: str = DEFAULT_GITHUB_SERVER
    debug: bool = False
    # None: the repository tools' own defaults (repo/tools.py), so reading settings never imports that layer.
    tool_seconds: float | None = None
    max_tool_result_bytes: int | None = None
    max_line_bytes: int | None = None
    max_tool_calls_per_turn: int = MAX_TOOL_CALLS_PER_TURN
    max_stdin_bytes: int = MAX_STDIN_BYTES
    scan_workers: int = 0
    scan_ahead: bool = True
    native: bool = True
    verify: bool = True
    verify_cmd: str | None = None
    verify_setup: str | None = None
    verify_timeout: float = DEFAULT_VERIFY_TIMEOUT_S
    verify_network: bool = False
    # The set-up step's cache in the state directory (`setup_cache_dir`), and its size limit in MB.
    verify_setup_cache: bool = True
    verify_setup_cache_mb: int = DEFAULT_SETUP_CACHE_MB
    allow_weakening: bool = False
    # What a verification command is given of the environment (see _VERIFY_ENV), never shown.
    verify_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    pager: str = DEFAULT_PAGER
    history: Path | None = None  # None: the user's state directory (see `history_path`)
    history_days: int = DEFAULT_HISTORY_DAYS
    failure_issues: bool = False
    # Read from the environment only, never shown by `repopilot config`.
    github_token: str | None = field(default=None, repr=False)
    # The GitHub Actions context of `github report` (GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_EVENT_PATH, ...).
    actions: Mapping[str, str] = field(default_factory=dict)
    # The variables the model providers declare (keys, base URLs, retries, timeouts), passed to them as is.
    provider_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    # OpenTelemetry's own variables (endpoint, headers, service name), passed to the telemetry layer.
    otel_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    # Where each setting came from: "default", "flag --x", "env VAR", "config PATH".
    origins: Mapping[str, str] = field(default_factory=dict)
    xdg_cache_home: str | None = None
    xdg_state_home: str | None = None
    # The secrets every output must hide (the secret-looking variables' values), for the core's redaction.
    redactor: Redactor | None = field(default=None, repr=False, compare=False)
    # The failure history when a client of the application layer keeps it elsewhere (the service: PostgreSQL);
    # None: the SQLite file at `history_path()`. Never read from files or the environment.
    history_backend: FailureHistory | None = field(default=None, repr=False, compare=False)
    # Wraps every model the use cases build, when a client bounds and budgets model calls (the service: a slot
    # across all workers and the installation's daily budget per call). Never read from files or the environment.
    model_gate: Callable[[Model], Model] | None = field(default=None, repr=False, compare=False)

    def with_flags(self, **flags: Any) -> Settings:
        """These settings with command-line flags applied (None means the flag was not given)."""
        given = {k: v for k, v in flags.items() if v is not None}
        unknown = set(given) - {f.name for f in fields(self)}
        if unknown:
            raise ValueError(f"unknown settings {sorted(unknown)}")
        origins = {**self.origins, **{k: f"flag --{k.replace('_', '-')}" for k in given}}
        return replace(self, **given, origins=origins)

    def scanner_cache_dir(self) -> Path:
        """Where the compiled rule database is cached."""
        if self.cache_dir is not None:
            return self.cache_dir
        return Path(self.xdg_cache_home or "~/.cache").expanduser() / "repopilot"

    def history_path(self) -> Path | None:
        """The failure history file, or None when it is turned off (`history = "off"`)."""
        if self.history is not None:
            return None if str(self.history).lower() in _OFF else self.history
        return Path(self.xdg_state_home or "~/.local/state").expanduser() / "repopilot" / "history.sqlite3"

    def setup_cache_dir(self) -> Path:
        """Where verification's set-up step is cached: the user's state, beside the runs."""
        return Path(self.xdg_state_home or _DEFAULT_STATE_HOME).expanduser() / "repopilot" / "setup-cache"

    def capture_content(self) -> bool:
        """Whether spans may carry message content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)."""
        from ..telemetry import capture_content_from_env  # the spans: only for a run that sends them

        return capture_content_from_env(self.otel_env)

    def shown(self) -> list[tuple[str, str, str]]:
        """(setting, value, origin) for `repopilot config`; secrets only say whether they are set."""
        computed = {"cache_dir": self.scanner_cache_dir(), "history": self.history_path() or "off"}
        rows = [(name, _show(computed[name] if name in computed else getattr(self, name)),
                 self.origins.get(name, "default")) for name in _KEYS]
        rows.append(("github_token", "set" if self.github_token else "not set",
                     "env GITHUB_TOKEN" if self.github_token else "-"))
        return rows


def _show(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, tuple):
        return os.pathsep.join(str(v) for v in value) or "-"
    return str(value)


def default_runs_dir(environ: Mapping[str, str]) -> Path:
    """`$XDG_STATE_HOME/repopilot/runs` (default `~/.local/state/repopilot/runs`)."""
    return Path(environ.get("XDG_STATE_HOME") or _DEFAULT_STATE_HOME).expanduser() / "repopilot" / "runs"


def user_config_path(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CONFIG_HOME") or str(Path("~/.config").expanduser())
    return Path(base) / "repopilot" / "config.toml"


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when a config file exists: most runs have none, and its import is a start-up cost

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read the config file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def _may_configure_repopilot(pyproject: Path) -> bool:
    """Whether the project's pyproject.toml can hold a `[tool.repopilot]` table: the word, or an escape that could
    spell it in a quoted key. Most projects have a pyproject.toml and no such table; theirs is not parsed
    (importing and running TOML's parser costs a few milliseconds of every start), nor refused when it is broken:
    it is not RepoPilot's file."""
    try:
        data = pyproject.read_bytes()
    except OSError:
        return True  # _read_toml says what is wrong
    return b"repopilot" in data or b"\\u" in data or b"\\U" in data


def _project_config(cwd: Path) -> tuple[dict[str, Any], str] | None:
    own = cwd / "repopilot.toml"
    if own.is_file():
        return _read_toml(own), f"config {own}"
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file() and _may_configure_repopilot(pyproject):
        section = _read_toml(pyproject).get("tool", {}).get("repopilot")
        if section is not None:
            if not isinstance(section, dict):
                raise ConfigError(f"{pyproject}: [tool.repopilot] must be a table")
            return section, f"config {pyproject} [tool.repopilot]"
    return None


def _convert(name: str, raw: Any, where: str) -> Any:
    kind = _KEYS[name].kind
    try:
        if kind is bool:
            if isinstance(raw, bool):
                return raw
            return str(raw).strip().lower() not in ("", "0", "false", "no")
        if kind is int or kind is float:
            if isinstance(raw, bool):
                raise ValueError
            number = kind(raw)
            if not number > 0 or number == float("inf"):
                raise ValueError
            return number
        if kind is list:
            items = raw if isinstance(raw, list) else [p for p in str(raw).split(os.pathsep) if p]
            return tuple(Path(str(p)).expanduser() for p in items)
        if kind is Path:
            return Path(str(raw)).expanduser() if str(raw).strip() else None
        text = str(raw)  # as given: a stray space in REPOPILOT_MODEL is reported, not silently trimmed
        return text or None
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: {name} = {str(raw)[:60]!r} is not a valid {kind.__name__}") from None


def _from_file(data: dict[str, Any], where: str) -> dict[str, tuple[Any, str]]:
    out = {}
    for name, raw in _flatten_verify(data, where).items():
        if name not in CONFIG_KEYS:
            raise ConfigError(f"{where.removeprefix('config ')}: unknown setting {name!r}; known: "
                              f"{', '.join(CONFIG_KEYS)}")
        out[name] = (_convert(name, raw, where.removeprefix("config ")), where)
    return out


def _flatten_verify(data: dict[str, Any], where: str) -> dict[str, Any]:
    """The `[verify]` table's keys as the settings they set (`cmd` is `verify_cmd`)."""
    table = data.get("verify")
    if table is None or not isinstance(table, dict):
        return data
    out = {k: v for k, v in data.items() if k != "verify"}
    for key, raw in table.items():
        if key not in _VERIFY_TABLE:
            raise ConfigError(f"{where.removeprefix('config ')}: unknown key {key!r} in [verify]; known: "
                              f"{', '.join(_VERIFY_TABLE)}")
        out[_VERIFY_TABLE[key]] = raw
    return out


def verify_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables a verification command runs with: toolchain and locale ones, never a secret-looking one."""
    kept = {k: v for k, v in environ.items()
            if k in _VERIFY_ENV and not any(word in k.upper() for word in _SECRET_NAME)}
    return {**kept, "CI": "true"}


def load_settings(environ: Mapping[str, str], cwd: Path | None = None, **flags: Any) -> Settings:
    """Settings from the config files, the environment and the flags (None: not given), in that order."""
    layers: dict[str, tuple[Any, str]] = {}
    user = user_config_path(environ)
    if user.is_file():
        layers.update(_from_file(_read_toml(user), f"config {user}"))
    project = _project_config(cwd or Path.cwd())
    if project is not None:
        layers.update(_from_file(*project))
    for name, key in _KEYS.items():
        if key.env and environ.get(key.env, ""):
            layers[name] = (_convert(name, environ[key.env], f"env {key.env}"), f"env {key.env}")
    layers = {k: (v, o) for k, (v, o) in layers.items() if v is not None}  # blank: as if not set
    values = {k: v for k, (v, _) in layers.items()}
    origins = {k: o for k, (_, o) in layers.items()}
    values.setdefault("runs_dir", default_runs_dir(environ))
    if "pager" not in values and environ.get("PAGER", "").strip():
        values["pager"], origins["pager"] = environ["PAGER"], "env PAGER"
    settings = Settings(
        **values,
        github_token=environ.get("GITHUB_TOKEN") or None,
        actions={k: v for k, v in environ.items() if k.startswith("GITHUB_") and k != "GITHUB_TOKEN"},
        provider_env={k: environ[k] for k in provider_variables() if k in environ},
        otel_env={k: v for k, v in environ.items() if k.startswith(_OTEL_PREFIX)},
        origins=origins,
        xdg_cache_home=environ.get("XDG_CACHE_HOME") or None,
        verify_env=verify_environment(environ),
        xdg_state_home=environ.get("XDG_STATE_HOME") or None,
        redactor=Redactor.from_environ(environ, rules=active_redactor().rules),
    )
    return settings.with_flags(**flags)


def apply_settings(settings: Settings) -> None:
    """Process-wide settings the layers below use as their defaults: where runs are recorded, and the secrets
    that redaction hides."""
    use_runs_dir(settings.runs_dir)
    if settings.redactor is not None:
        install_redactor(settings.redactor)
