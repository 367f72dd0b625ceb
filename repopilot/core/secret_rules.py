"""The shapes of credentials: gitleaks' default rules (vendored as `secret_rules.json`, MIT, see
`secret_rules.LICENSE`; regenerate with `scripts/vendor_secret_rules.py`) plus the few forms it does not cover.

Each rule names keywords; a rule's regex runs only on text that holds one of them (lower-cased substring search,
as gitleaks does), so clean text costs a few hundred substring searches and no regex. A match is redacted only
in its secret group, so `api_key = [REDACTED]` still says what was there, and only when the secret passes the
rule's entropy floor and no allowlist (placeholders like `${{ secrets.X }}`, `true`, repeated letters) frees it.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

__all__ = ["SecretRule", "SecretRules", "default_rules", "shannon_entropy"]


def _load() -> Callable[[str, tuple[tuple[str, ...], ...]], set[str]] | None:
    try:  # the keyword pass in C (core/_keywords.c), when it was built; the regex detector finds the same set
        from ._keywords import present
    except ImportError:
        return None
    return present


_present = _load()

_DATA = "secret_rules.json"
# gitleaks' generic rule spends most of its time on a lazy `[\w.-]{0,50}?` that only widens the match to the
# variable name; searching from the keyword is equivalent for the secret group, and the allowlists that look at
# the whole match are given the text before it (`_CONTEXT` characters).
_LEADING_NAME = "(?i)[\\w.-]{0,50}?"
_CONTEXT = 50
# A found credential shorter than this is not searched for elsewhere (it could be an ordinary word).
_MIN_FOUND = 8
# A text shorter than this is not searched: no credential the rules know is this short.
_SHORTEST = 8
# What `SecretRules.redact` remembers: texts up to _MEMO_TEXT characters, at most _MEMO_CHARS of them in all (oldest
# out first). A diagnosis quotes the same log lines in its failures, error lines and excerpt, and the report is
# redacted again when the trace records it: at 50 MB about 2,500 strings pass, 355 of them different.
_MEMO_TEXT = 16 * 1024
_MEMO_CHARS = 4 * 1024 * 1024


def shannon_entropy(text: str) -> float:
    n = len(text)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


@dataclass(frozen=True)
class _Allow:
    """What frees a match of a secret rule: patterns or stopwords looked for in the secret, the match or the line."""

    target: str  # "secret", "match" or "line"
    sources: tuple[str, ...] = ()
    words: tuple[str, ...] = ()

    @cached_property
    def regexes(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(r) for r in self.sources)

    @cached_property
    def stopwords(self) -> re.Pattern[str] | None:
        # One trie regex: generic-api-key has about 1,500 stopwords.
        return re.compile(_trie(self.words)) if self.words else None

    def frees(self, secret: str, match: str, line: str) -> bool:
        subject = {"secret": secret, "match": match, "line": line}.get(self.target, secret)
        if any(r.search(subject) for r in self.regexes):
            return True
        return self.stopwords is not None and self.stopwords.search(secret.lower()) is not None


@dataclass(frozen=True)
class SecretRule:
    """One kind of secret: its pattern, the keywords it needs and what frees a match."""

    id: str
    regex: str
    keywords: tuple[str, ...] = ()
    group: int = 0
    entropy: float | None = None
    allow: tuple[_Allow, ...] = ()
    # Widen the match backwards by this many characters for allowlists that look at the match (see above).
    context: int = 0
    # The pattern begins with one of its keywords (case-insensitively), so it only needs trying where one starts.
    anchored: bool = False
    # gitleaks' global allowlist (placeholders, the alphabet as a stopword) is for gitleaks' rules; RepoPilot's
    # own rules keep the stricter behaviour they always had.
    global_allow: bool = True
    # Tried only on one-line texts up to this long (0: on any text), e.g. a log line quoted by itself.
    single_line_max: int = 0

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        # Compiled on first use: most rules never see their keyword, and compiling all of them would add about
        # half a second to every command that redacts anything.
        return re.compile(self.regex)

    def _matches(self, text: str, low: str) -> Iterator[re.Match[str]]:
        if not self.anchored:
            yield from self.pattern.finditer(text)
            return
        # The pattern starts with its keyword: try it only where a keyword starts.
        starts = set()
        for keyword in self.keywords:
            at = low.find(keyword)
            while at >= 0:
                starts.add(at)
                at = low.find(keyword, at + 1)
        for at in sorted(starts):
            m = self.pattern.match(text, at)
            if m is not None:
                yield m

    def spans(self, text: str, low: str, free: _Allow) -> Iterable[tuple[int, int]]:
        for m in self._matches(text, low):
            group = self.group or next((i for i in range(1, (m.re.groups or 0) + 1) if m.group(i)), 0)
            secret = m.group(group)
            if not secret:
                continue
            if self.entropy is not None and shannon_entropy(secret) < self.entropy:
                continue
            start = m.start()
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", m.end())
            line = text[line_start: len(text) if line_end < 0 else line_end]
            whole = text[max(line_start, start - self.context): m.end()]
            if self.global_allow and free.frees(secret, whole, line):
                continue
            if any(a.frees(secret, whole, line) for a in self.allow):
                continue
            yield m.span(group)


@dataclass
class SecretRules:
    """The secret rules, indexed by their keywords."""

    rules: Sequence[SecretRule]
    free: _Allow = field(default_factory=lambda: _Allow("secret"))
    source: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_keyword: dict[str, list[int]] = {}
        for index, rule in enumerate(self.rules):
            # A rule without keywords runs on every text: give it the empty keyword, found everywhere.
            for keyword in rule.keywords or ("",):
                self._by_keyword.setdefault(keyword, []).append(index)
        keywords = sorted(k for k in self._by_keyword if k)
        self._keywords = keywords
        # Root keyword -> the keywords that contain it, filled as roots are found: all pairs up front cost more
        # than the rest of a `repopilot diagnose` start-up's redaction set-up.
        self._longer: dict[str, list[str]] = {}
        # The keywords by their first character, for the pass in C; None: the regex detector looks for them.
        self._index = _by_first(keywords) if _present is not None else None
        self._always = "" in self._by_keyword
        # (mask, text) -> what `redact` returned: it depends on nothing else (the rules are fixed, their caches
        # only save work), so a text seen again is answered without a search and exactly as before.
        self._memo: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}
        self._memo_chars = 0

    def find(self, text: str) -> list[tuple[int, int]]:
        """The spans of `text` that hold a credential, sorted and merged."""
        spans = sorted(span for _, span in self.hits(text))
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

    def hits(self, text: str) -> Iterator[tuple[str, tuple[int, int]]]:
        """Each rule that fired on `text`, with the span of the credential it found (for measuring)."""
        if len(text) < _SHORTEST:
            return
        low = text.lower()
        present = self._keywords_in(low)
        if self._always:
            present.add("")
        done: set[int] = set()
        for keyword in present:
            for index in self._by_keyword.get(keyword, ()):
                if index in done:
                    continue
                done.add(index)
                rule = self.rules[index]
                if rule.single_line_max and (len(text) > rule.single_line_max or "\n" in text):
                    continue
                for span in rule.spans(text, low, self.free):
                    yield rule.id, span

    @cached_property
    def _detector(self) -> re.Pattern[str]:
        # Compiled on first use: with the pass in C, only the tests (and a wheel's build) use it.
        return re.compile("(?=(" + _trie(self._keywords) + "))") if self._keywords else re.compile("(?!)")

    def compile_all(self) -> int:
        """Compile every rule's regex and allowlist now; returns how many. A run compiles only what its texts
        need; a wheel's build calls this so that its precompiled patterns (cli/precompiled.py) hold them all."""
        allows = [a for rule in self.rules for a in rule.allow] + [self.free]
        patterns = [rule.pattern for rule in self.rules] + [self._detector]
        patterns += [p for a in allows for p in (*a.regexes, a.stopwords) if p is not None]
        return len(patterns)

    def _keywords_in(self, low: str) -> set[str]:
        """The keywords that occur in `low` (a lower-cased text)."""
        if self._index is not None and _present is not None:
            # At each character, the keywords that begin with it (about 30 times faster than the regex: a 50 MB
            # log's report has 30,000 characters of distinct text to look through).
            return _present(low, self._index)
        return self._keywords_matched(low)

    def _keywords_matched(self, low: str) -> set[str]:
        # One pass finds the shortest keyword at each position; keywords that extend a found one are then
        # confirmed by substring search (few: `sk` is found, `sk_live` is checked).
        roots = set(self._detector.findall(low))
        found = set(roots)
        for root in roots:
            found.update(k for k in self._containing(root) if k in low)
        return found

    def _containing(self, root: str) -> list[str]:
        longer = self._longer.get(root)
        if longer is None:
            longer = self._longer[root] = [k for k in self._keywords if k != root and root in k]
        return longer

    def redact(self, text: str, mask: str) -> tuple[str, list[str]]:
        """`text` with every credential replaced by `mask`, and the credentials found. A value found once is
        replaced wherever else it occurs in the text too (`echo TOKEN | docker login … # password: TOKEN`)."""
        if len(text) < _SHORTEST:
            return text, []  # what `hits` finds in it: nothing
        if len(text) > _MEMO_TEXT:
            return self._redact(text, mask)
        key = (mask, text)
        known = self._memo.get(key)
        if known is None:
            out, found = self._redact(text, mask)
            known = self._memo[key] = (out, tuple(found))
            self._memo_chars += len(text)
            while self._memo_chars > _MEMO_CHARS and self._memo:
                oldest = next(iter(self._memo))
                if self._memo.pop(oldest, None) is not None:  # None: another thread took it out
                    self._memo_chars -= len(oldest[1])
        return known[0], list(known[1])

    def _redact(self, text: str, mask: str) -> tuple[str, list[str]]:
        spans = self.find(text)
        if not spans:
            return text, []
        found = sorted({text[a:b] for a, b in spans if b - a >= _MIN_FOUND}, key=len, reverse=True)
        parts, at = [], 0
        for start, end in spans:
            parts.append(text[at:start])
            parts.append(mask)
            at = end
        parts.append(text[at:])
        out = "".join(parts)
        for value in found:
            if value in out:
                out = out.replace(value, mask)
        return out, found


# What gitleaks does not look for, or looks for only next to a keyword RepoPilot's traces rarely hold.
_REPOPILOT_RULES: list[dict[str, Any]] = [
    # scheme://user:password@host: the password only, so the URL stays readable.
    {"id": "url-password", "keywords": ["://"], "anchored": True,
     "regex": r"://[^\s/?#@:\"'<>]{0,256}:([^\s/?#@\"'<>]{3,256})@"},
    # ?token=…&api_key=… in URLs (also in an endpoint variable such as OPENAI_BASE_URL).
    {"id": "url-query-credential", "keywords": ["?", "&"], "anchored": True,
     "regex": r"(?i)[?&](?:[a-z0-9_.-]*(?:api[_-]?key|apikey|token|secret|password|passwd|pwd|auth|signature"
              r"|sig|credential|client[_-]?secret|access[_-]?key|session|key))=([^&#\s\"'<>]{4,})"},
    {"id": "openai-anthropic-key", "keywords": ["sk-"], "anchored": True,
     "regex": r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"},
    {"id": "github-token", "keywords": ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"], "anchored": True,
     "regex": r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"},
    {"id": "aws-access-key-id", "keywords": ["akia", "asia"], "anchored": True,
     "regex": r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"},
    {"id": "google-api-key", "keywords": ["aiza"], "anchored": True, "regex": r"\bAIza[0-9A-Za-z_\-]{30,}"},
    {"id": "slack-token", "keywords": ["xox"], "anchored": True, "regex": r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"},
    {"id": "bearer", "keywords": ["bearer"], "anchored": True,
     "regex": r"(?i)\bbearer\s+([A-Za-z0-9._~+/=\-]{8,})"},
    {"id": "basic-auth", "keywords": ["authorization"], "anchored": True,
     "regex": r"(?i)authorization[\"']?\s*[:=]\s*[\"']?basic\s+([A-Za-z0-9+/=]{8,})"},
    # key=value and JSON's "api_key": "…", whatever the value looks like (gitleaks wants entropy here).
    {"id": "labelled-secret", "anchored": True,
     "keywords": ["x-api-key", "x-goog-api-key", "api", "access", "client", "password", "secret", "auth"],
     "regex": r"(?i)(?:x-api-key|x-goog-api-key|api[_-]?key|access[_-]?token|client[_-]?secret|password|"
              r"secret[_-]?access[_-]?key|auth[_-]?token)[\"']?\s*[:=]\s*[\"']?([^\s\"',;&]{8,})"},
    # A PEM block cut at a line boundary (a log quoted line by line, a result cut short) is still a key.
    # One line of a PEM body quoted by itself (a diagnosis quotes log lines one by one): 64 base64 characters
    # with the entropy of random bytes (hex digests and words do not reach it).
    {"id": "private-key-body-line", "keywords": [], "entropy": 4.6, "single_line_max": 300,
     "regex": r"(?<![A-Za-z0-9+/=])([A-Za-z0-9+/]{64})(?![A-Za-z0-9+/=])"},
    {"id": "private-key-open", "keywords": ["-----begin"], "anchored": True,
     "regex": r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:\s*[A-Za-z0-9+/=:,\s-]{16,})?"},
]


def _allow(data: dict[str, Any]) -> _Allow:
    return _Allow(data.get("target", "secret"), tuple(data.get("regexes", [])), tuple(data.get("stopwords", [])))


def _rule(data: dict[str, Any], *, ours: bool = False) -> SecretRule:
    regex: str = data["regex"]
    context, anchored = 0, bool(data.get("anchored"))
    if regex.startswith(_LEADING_NAME):
        regex, context = "(?i)" + regex[len(_LEADING_NAME):], _CONTEXT
    return SecretRule(id=data["id"], regex=regex, keywords=tuple(data.get("keywords", [])),
                      group=int(data.get("group") or 0), entropy=data.get("entropy"),
                      allow=tuple(_allow(a) for a in data.get("allow", [])), context=context, anchored=anchored,
                      global_allow=not ours)


_FIRSTS = 128  # the C pass indexes keywords by their first character, ASCII only


def _by_first(keywords: Sequence[str]) -> tuple[tuple[str, ...], ...] | None:
    """The keywords in 128 tuples, by the code of their first character; None when one is not ASCII (gitleaks'
    keywords all are) or is empty: the regex then looks for all of them."""
    if not all(k and k.isascii() for k in keywords):
        return None
    buckets: list[list[str]] = [[] for _ in range(_FIRSTS)]
    for k in keywords:
        buckets[ord(k[0])].append(k)
    return tuple(tuple(b) for b in buckets)


def _trie(words: Iterable[str]) -> str:
    """A regex matching the shortest of `words` at a position, factored as a trie so `re` tries one branch per
    character instead of every word (several times faster than a flat alternation)."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        # A run of nodes with one child each is one literal: walked down at once, not a call per character (this
        # is made at every start; most of a keyword is such a run).
        run = []
        while len(node) == 1 and "" not in node:
            (char, node), = node.items()
            run.append(char)
        head = re.escape("".join(run))
        if "" in node:
            return head
        return head + "(?:" + "|".join(re.escape(c) + emit(sub) for c, sub in sorted(node.items())) + ")"

    return emit(root)


@lru_cache(maxsize=1)
def default_rules() -> SecretRules:
    """gitleaks' rules and RepoPilot's own, compiled once per process."""
    data = json.loads(Path(__file__).with_name(_DATA).read_text(encoding="utf-8"))
    rules = [_rule(r, ours=True) for r in _REPOPILOT_RULES] + [_rule(r) for r in data["rules"]]
    glob = data.get("allow", {})
    return SecretRules(rules, _allow({"regexes": glob.get("regexes", []), "stopwords": glob.get("stopwords", [])}),
                       data.get("source", {}))
