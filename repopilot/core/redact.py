"""Keep secrets out of traces, logs, terminals, pages and provider requests.

Two nets. The known secrets: values the edge of the program hands in (the secret-looking environment variables,
read once per process by whoever builds the `Redactor`, never here) and the forms they travel in (base64 at any
alignment, URL-encoded). And the shapes of credentials: the vendored rule set of a maintained detector (see
`secret_rules.py`) plus the forms it lacks (passwords in URLs, credentials in query strings), which catch tokens
that leak through other tools' output (a CI log that echoes a token, a model that repeats one).

A `Redactor` is built once and reused: the secret variants are computed at construction and each rule is tried
only on text holding one of its keywords, so redacting a string costs a few substring searches when it is clean.
"""

from __future__ import annotations

import base64
import dataclasses
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar, cast
from urllib.parse import quote

from .secret_rules import SecretRules, default_rules

__all__ = [
    "REDACTED",
    "Redactor",
    "active_redactor",
    "install_redactor",
    "redact",
    "redact_record",
    "redact_text",
    "secret_env_values",
    "using_redactor",
]

REDACTED = "[REDACTED]"

R = TypeVar("R")
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)
# Values this short or this common would redact ordinary words; real credentials are longer.
_MIN_SECRET_LEN = 8
_NOT_SECRETS = frozenset({"true", "false", "none", "null", "1", "0", "yes", "no"})
# A base64 fragment shorter than this could occur by chance in ordinary base64 data.
_MIN_ENCODED_LEN = 12
# Outputs at least this long are remembered (the last _REMEMBERED of them); shorter ones are cheap to scan.
_REMEMBER_FROM = 256
_REMEMBERED = 64
# Texts found clean lately (nothing in them to redact): at most this many characters of them.
_CLEAN_CHARS = 4 * 1024 * 1024


def secret_env_values(environ: Mapping[str, str]) -> list[str]:
    """Values of environment variables whose names look like they hold a secret, longest first."""
    values = {
        value
        for name, value in environ.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET_LEN and value.lower() not in _NOT_SECRETS
    }
    # Longest first so a secret that contains another is replaced whole.
    return sorted(values, key=len, reverse=True)


def _base64_cores(secret: bytes) -> Iterator[str]:
    """The part of the base64 text of `secret` that does not depend on its neighbours, at each of the three
    byte alignments it can have inside a longer encoded string (e.g. `user:KEY` in a Basic auth header)."""
    n = len(secret)
    for k in range(3):
        encoded = base64.b64encode(b"\0" * k + secret).decode()
        core = encoded[(8 * k + 5) // 6: (8 * (k + n)) // 6]
        if len(core) >= _MIN_ENCODED_LEN:
            yield core
            yield core.replace("+", "-").replace("/", "_")


def _variants(secrets: Iterable[str]) -> list[str]:
    found: set[str] = set()
    for secret in secrets:
        if len(secret) < _MIN_SECRET_LEN or secret.lower() in _NOT_SECRETS:
            continue
        found.add(secret)
        found.add(quote(secret, safe=""))
        found.update(_base64_cores(secret.encode("utf-8", "surrogatepass")))
    return sorted(found, key=len, reverse=True)


class Redactor:
    """Replaces known secret values and credential-shaped strings with `[REDACTED]`.

    `secrets` are literal values (e.g. API keys); build one from an environment mapping with `from_environ`.
    """

    def __init__(self, secrets: Iterable[str] = (), *, rules: SecretRules | None = None) -> None:
        self.secrets = _variants(secrets)
        self.rules = default_rules() if rules is None else rules
        # Long outputs seen lately: a tool result is redacted before it enters the conversation and reaches the
        # trace twice more (its step and its message); recognising our own output saves scanning it again.
        self._done: dict[str, None] = {}
        # Credentials the rules found lately: redacted from then on wherever they appear, even without the
        # context that made them recognisable (the token alone, echoed later in a log).
        self._learned: dict[str, None] = {}
        # Texts that had nothing to redact: the same again, while nothing new is learned (a report quotes its log
        # lines many times, and the trace redacts the report again: about 5,000 strings at 50 MB, 300 different).
        # Each is kept with the learning it was found clean under (`_learning`, a new number each time a credential
        # is learned): one found clean by a thread while another learned a credential is never answered from here.
        self._clean: dict[str, int] = {}
        self._clean_chars = 0
        self._numbers = itertools.count(1)
        self._learning = 0

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], *, rules: SecretRules | None = None) -> Redactor:
        return cls(secret_env_values(environ), rules=rules)

    def with_secrets(self, more: Iterable[str]) -> Redactor:
        """A redactor that also knows `more` (e.g. a value typed on the command line)."""
        extra = [s for s in more if s]
        if not extra:
            return self
        combined = Redactor((), rules=self.rules)  # a new memory: the old one's outputs may hold the new values
        combined.secrets = sorted(set(self.secrets) | set(_variants(extra)), key=len, reverse=True)
        return combined

    def text(self, text: str) -> str:
        if len(text) >= _REMEMBER_FROM and text in self._done:
            return text
        learning = self._learning
        if self._clean.get(text) == learning:
            self._remember(text)
            return text
        given = text
        for value in self.secrets:
            if value in text:
                text = text.replace(value, REDACTED)
        for value in self._learned:
            if value in text:
                text = text.replace(value, REDACTED)
        text, found = self.rules.redact(text, REDACTED)
        for value in found:
            self._learned[value] = None
            if len(self._learned) > _REMEMBERED:
                del self._learned[next(iter(self._learned))]
        if found:
            # A credential learned now may be in a text that was clean before it was known: a new learning (taken
            # after the credential is in `_learned`, each number once), and the texts found clean before it go.
            self._learning = next(self._numbers)
            self._clean.clear()
            self._clean_chars = 0
        elif text == given:
            self._note_clean(text, learning)
        self._remember(text)
        return text

    def _remember(self, text: str) -> None:
        if len(text) >= _REMEMBER_FROM:
            self._done[text] = None
            if len(self._done) > _REMEMBERED:
                del self._done[next(iter(self._done))]

    def _note_clean(self, text: str, learning: int) -> None:
        self._clean[text] = learning
        self._clean_chars += len(text)
        while self._clean_chars > _CLEAN_CHARS and self._clean:
            oldest = next(iter(self._clean))
            if self._clean.pop(oldest, None) is not None:  # None: another thread took it out
                self._clean_chars -= len(oldest)

    def value(self, value: Any) -> Any:
        """Redact strings anywhere inside JSON-like data (dicts, lists, tuples) and dataclass records (copied, as
        their type); other values pass through."""
        # The exact types first, as a report and a trace record are made of: one test each instead of the chain
        # below (a 50 MB log's report holds about 6,000 values), and the items of a dict, a list or a record that
        # are numbers, booleans or None passed on without a call each (what the call would return).
        kind = type(value)
        if kind is str:
            return self.text(value)
        if kind is dict:
            return {k: v if type(v) in _PLAIN else self.value(v) for k, v in value.items()}
        if kind is list:
            return [v if type(v) in _PLAIN else self.value(v) for v in value]
        if kind in _PLAIN:
            return value
        fields = _INIT_FIELDS.get(kind)  # a record class met before: the chain below led it to its last branch
        if fields is not None:
            return self._record_copy(value, kind, fields)
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.value(v) for v in value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self._record_copy(value, kind, _init_fields(kind))
        return value

    def _record_copy(self, value: Any, kind: type, fields: tuple[tuple[str, ...], bool]) -> Any:
        names, direct = fields
        redacted = {name: v if type(v) in _PLAIN else self.value(v) for name in names for v in (getattr(value, name),)}
        # Every field `__init__` takes is given: the class called with them is what `dataclasses.replace`
        # returns, without its checks of each field (a report holds hundreds of records).
        return kind(**redacted) if direct else dataclasses.replace(value, **redacted)

    def record(self, record: R) -> R:
        """A copy of `record` (a dataclass, such as a diagnosis report) with every string inside it redacted."""
        return cast(R, self.value(record))


_PLAIN = frozenset({int, float, bool, type(None)})
_INIT_FIELDS: dict[type, tuple[tuple[str, ...], bool]] = {}


def _init_fields(kind: type) -> tuple[tuple[str, ...], bool]:
    """The names of a dataclass's fields set by its `__init__`, and whether calling the class with them is what
    `dataclasses.replace` does: not when the class has pseudo-fields (an `InitVar` replace() insists on, a
    `ClassVar`), which `dataclasses.fields` does not list. Worked out once per class."""
    known = _INIT_FIELDS.get(kind)
    if known is None:
        fields = dataclasses.fields(kind)
        direct = len(fields) == len(getattr(kind, "__dataclass_fields__", ()))
        known = _INIT_FIELDS[kind] = (tuple(f.name for f in fields if f.init), direct)
    return known


# The process-wide redactor: shapes only until the program's edge installs one that knows the secrets.
_active: Redactor | None = None


def active_redactor() -> Redactor:
    global _active  # noqa: PLW0603 - one per process, replaced only by the edge
    if _active is None:
        _active = Redactor()
    return _active


def install_redactor(redactor: Redactor) -> Redactor:
    """Make `redactor` the one every `redact_text` call and new trace uses; returns the previous one."""
    global _active  # noqa: PLW0603
    previous = active_redactor()
    _active = redactor
    return previous


@contextmanager
def using_redactor(redactor: Redactor) -> Iterator[Redactor]:
    previous = install_redactor(redactor)
    try:
        yield redactor
    finally:
        install_redactor(previous)


def redact_text(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every known secret value and every credential-shaped string replaced."""
    if environ is not None:
        return Redactor.from_environ(environ, rules=active_redactor().rules).text(text)
    return active_redactor().text(text)


def redact_record(record: R) -> R:
    """A copy of `record` (a dataclass) with every string inside it redacted by the active redactor."""
    return active_redactor().record(record)


def redact(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """Redact strings anywhere inside JSON-like data (dicts, lists, tuples); other values pass through."""
    if environ is not None:
        return Redactor.from_environ(environ, rules=active_redactor().rules).value(value)
    return active_redactor().value(value)
