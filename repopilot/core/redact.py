"""Keep secrets out of traces, logs and error messages.

Two nets: the values of secret-looking environment variables (read when redacting, so a key set after start-up
is still caught), and the shapes of common credentials, which catch tokens that leak through other tools'
output (a CI log that echoes a token, a model that repeats one).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "redact", "redact_text", "secret_env_values"]

REDACTED = "[REDACTED]"

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)
# Values this short or this common would redact ordinary words; real credentials are longer.
_MIN_SECRET_LEN = 8
_NOT_SECRETS = frozenset({"true", "false", "none", "null", "1", "0", "yes", "no"})

_SHAPES = re.compile(
    r"""
      sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}           # OpenAI / Anthropic keys
    | gh[pousr]_[A-Za-z0-9]{20,}                      # GitHub tokens
    | github_pat_[A-Za-z0-9_]{20,}                    # GitHub fine-grained tokens
    | (?:AKIA|ASIA)[A-Z0-9]{16}                       # AWS access key ids
    | AIza[0-9A-Za-z_\-]{30,}                         # Google API keys
    | xox[abposr]-[A-Za-z0-9\-]{10,}                  # Slack tokens
    | (?i:bearer)\s+[A-Za-z0-9._~+/=\-]{8,}           # Authorization: Bearer …
    | (?P<label>(?i:x-api-key|x-goog-api-key|api[_-]?key|access[_-]?token|client[_-]?secret|password)
        ["']?\s*[:=]\s*["']?)
      [^\s"',;&]{8,}                                  # key=value and JSON-ish "api_key": "…"
    """,
    re.VERBOSE,
)


def secret_env_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look like they hold a secret, longest first."""
    env = os.environ if environ is None else environ
    values = {
        value
        for name, value in env.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET_LEN and value.lower() not in _NOT_SECRETS
    }
    # Longest first so a secret that contains another is replaced whole.
    return sorted(values, key=len, reverse=True)


def _mask_shape(match: re.Match[str]) -> str:
    # Keep the label of key=value and "Bearer" forms so the trace still says what was there.
    if match.group("label"):
        return match.group("label") + REDACTED
    text = match.group(0)
    if text[:6].lower() == "bearer":
        return f"{text[:6]} {REDACTED}"
    return REDACTED


def redact_text(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every known secret value and every credential-shaped string replaced."""
    for value in secret_env_values(environ):
        if value in text:
            text = text.replace(value, REDACTED)
    return _SHAPES.sub(_mask_shape, text)


def redact(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """Redact strings anywhere inside JSON-like data (dicts, lists, tuples); other values pass through."""
    if isinstance(value, str):
        return redact_text(value, environ)
    if isinstance(value, dict):
        return {k: redact(v, environ) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, environ) for v in value]
    return value
