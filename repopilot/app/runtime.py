"""What the use cases build from `Settings`: the model, the scanner, GitHub access, live telemetry. One place,
so every use case configures the layers below the same way (the process-wide defaults are `apply_settings`'s, in
app/settings.py: reading the settings must not import the diagnosis)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from ..ci import GitHubAccess, Scanner, default_scanner, use_native
from ..core import TraceRecorder
from .settings import Settings

if TYPE_CHECKING:  # the messages' models: built only when a model is asked for (`diagnose FILE` needs none)
    from ..core import Model

__all__ = ["Observer", "compile_patterns", "github_access", "model_for", "observed", "scanner_for", "tool_bounds"]

# A client's view of a traced run while it goes (the CLI prints the run summary after it): given the recorder
# and the model, returns a context manager around the run.
Observer = Callable[[TraceRecorder, "Model | None"], AbstractContextManager[None]]


def model_for(settings: Settings, *, required: bool = True) -> Model | None:
    """The configured model; None when none is configured and none is required."""
    if not settings.model and not required:
        return None
    from ..providers import resolve_model  # the HTTP client and the adapters: only when a model is asked for

    model = resolve_model(settings.model, settings.provider_env)
    return settings.model_gate(model) if settings.model_gate is not None else model


def scanner_for(settings: Settings, *, size: int | None = None) -> Scanner:
    """The scanner for logs of up to `size` bytes (None: unknown), its per-byte passes in C or not as set."""
    use_native(settings.native)
    return default_scanner(None, settings.rules, settings.scanner_cache_dir(), size=size)


def compile_patterns() -> int:
    """Compile every regex a diagnose may meet: the rule catalog's, the verdict's tables and the secret rules';
    returns how many. For a wheel's build (cli/precompiled.py records them); a run compiles what it needs."""
    from ..ci import compile_patterns as catalog_patterns
    from ..core import active_redactor

    return catalog_patterns() + active_redactor().rules.compile_all()


def tool_bounds(settings: Settings) -> dict[str, Any]:
    """The bounds of the repository tools that are set (`repo_tools`/`fix_tools` keywords): time per call, bytes
    per result and per line; the tools' defaults apply to the others."""
    bounds = {"tool_seconds": settings.tool_seconds, "max_result_bytes": settings.max_tool_result_bytes,
              "max_line_bytes": settings.max_line_bytes}
    return {k: v for k, v in bounds.items() if v is not None}


def github_access(settings: Settings) -> GitHubAccess:
    # The API's answers are kept beside the rule database: revalidating one costs no rate limit (ci/api_cache.py).
    return GitHubAccess(token=settings.github_token, api_url=settings.github_api_url, log_cache=settings.log_cache,
                        log_cache_mb=settings.log_cache_mb, api_cache=settings.scanner_cache_dir() / "github-api")


def _no_observer(rec: TraceRecorder, model: Model | None) -> AbstractContextManager[None]:
    return nullcontext()


@contextmanager
def observed(rec: TraceRecorder, model: Model | None, settings: Settings,
             observer: Observer | None) -> Iterator[None]:
    """Live OTLP export when configured, and the client's observer, around a traced run."""
    if model is not None or settings.otel_env:  # the span exporters are imported only when there is one to feed
        from ..telemetry import attach_live_exporters

        attach_live_exporters(rec, model, settings.otel_env)
    with (observer or _no_observer)(rec, model):
        yield
