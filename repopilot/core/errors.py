"""Every way RepoPilot can fail, in two families the CLI maps to exit codes in one place.

`UserError` is something the person can fix (usage, input, configuration): exit 2.
`RunError` is something that went wrong while running (a provider, the GitHub API): exit 4.
Messages must never contain secrets; callers pass already-redacted text, and `__str__` redacts again.
"""

from __future__ import annotations

from typing import Any

from .redact import redact_text

__all__ = [
    "ApprovalError",
    "ConfigError",
    "DeadlineExceeded",
    "GitHubAPIError",
    "InputError",
    "ProviderError",
    "RepoPilotError",
    "RunError",
    "SandboxError",
    "UsageError",
    "UserError",
]


class RepoPilotError(Exception):
    """Base of every error RepoPilot raises on purpose."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return redact_text(self.message)


class UserError(RepoPilotError):
    """Bad usage, input or configuration; the message says what to change."""


class UsageError(UserError):
    """Wrong arguments or options."""


class InputError(UserError):
    """Input that cannot be used: empty, binary, missing, unreadable."""


class ConfigError(UserError):
    """Missing or invalid configuration, e.g. an API key variable that is not set."""


class SandboxError(UserError):
    """A path or argument that would leave the repository sandbox."""


class ApprovalError(UserError):
    """An approval that cannot be honoured: missing, altered or mismatched proposal."""


class RunError(RepoPilotError):
    """Something failed while running, after retries."""


class ProviderError(RunError):
    """A model provider failed; carries the status, provider and a short body."""

    def __init__(self, message: str, *, provider: str, status: int | None = None, body: str = "") -> None:
        short = redact_text(body.strip())[:300]
        full = f"{provider}: {message}" + (f" (HTTP {status})" if status is not None else "")
        if short:
            full += f": {short}"
        super().__init__(full, provider=provider, status=status, body=short)
        self.provider = provider
        self.status = status
        self.body = short


class DeadlineExceeded(ProviderError):
    """The run's seconds budget ran out while waiting for a model's reply; the read was abandoned. The loop ends
    the run as `budget_exhausted:seconds`."""


class GitHubAPIError(RunError):
    """The GitHub API failed after retries (or refused: 401/403/404)."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message + (f" (HTTP {status})" if status is not None else ""), status=status)
        self.status = status
        # Seconds until the call may succeed, when GitHub said (a rate limit's reset): a queue can wait that long.
        self.retry_after = retry_after
