"""The rule catalog: data files (`rules/*.toml`, described in `rules/FORMAT.md`) loaded into typed rules.

Loading validates everything a rule author can get wrong (unknown keys, bad regexes, missing examples) and says
which file and rule; the scanner then trusts the catalog.
"""

from __future__ import annotations

import pickle
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, get_args

from .. import __version__
from ..core import ConfigError
from .cache import cache_key, read_bundled, read_entry, write_entry
from .prefilter import prefilter
from .report import Category

# The package's own data files, read from the installed package (a wheel or a checkout: both are files on disk;
# importlib.resources and what it imports cost about 2 ms of every `diagnose`).
_HERE = Path(__file__).parent

__all__ = [
    "CATEGORIES",
    "FORMAT_VERSION",
    "SCAN_LINE_START",
    "BlockSpec",
    "Catalog",
    "Example",
    "FieldSource",
    "LazyPattern",
    "Pattern",
    "Rule",
    "load_catalog",
    "load_rule_files",
    "scan_pattern",
]

FORMAT_VERSION = 1
CATEGORIES: tuple[str, ...] = get_args(Category)  # the one list lives in the report type
FIELDS = ("file", "line", "column", "test", "package", "message", "code")

_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_RULE_KEYS = {
    "id", "category", "subcategory", "ecosystem", "tool", "trigger", "ignore_case", "exclude", "confidence",
    "hint", "message", "block", "example", "title", "fields_from", "next_line",
}
_BLOCK_KEYS = {"before", "after", "up_while", "up_until", "down_while", "down_until", "max_lines", "down_gap"}
_MAX_GAP = 10
_EXAMPLE_KEYS = {"text", "match", "lines", "fields", "note"}
_FIELDS_FROM_KEYS = {"pattern", "search"}
SEARCHES = ("down", "up", "from_end")
# What a leading `^` means in the raw scan: the start of a line, after the runner's timestamp if any, or the
# start of a `\r` segment. Kept in sync with lines.TIMESTAMP.
# What a leading `^` means in the raw scan: the start of a line, the end of the runner's timestamp prefix
# (`...Z `, also after `gh run view --log`'s JOB<TAB>STEP<TAB>), or the start of a `\r` segment. Looser than
# the Python check that follows (which strips the real prefix), and much faster for hyperscan than spelling
# the timestamp out.
SCAN_LINE_START = r"(?:^|\r|Z )"
_PROTOCOL = 5  # the pickle protocol of cached catalogs: every supported Python reads it
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")
_GROUP_NAME = re.compile(r"\(\?P<([A-Za-z_][A-Za-z0-9_]*)>")


class LazyPattern:
    """A rule's regex, compiled the first time it is used: a log fires a handful of the catalog's ~370 regexes,
    and compiling them all took longer than diagnosing an ordinary log. Pickled as its source (the catalog
    cache); equal to another with the same source and flags."""

    __slots__ = ("_rx", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0, compiled: re.Pattern[str] | None = None) -> None:
        self.pattern = pattern
        self.flags = flags
        self._rx = compiled

    def compiled(self) -> re.Pattern[str]:
        rx = self._rx
        if rx is None:
            rx = self._rx = re.compile(self.pattern, self.flags)
        return rx

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    @property
    def groupindex(self) -> Mapping[str, int]:
        return self.compiled().groupindex

    def group_names(self) -> set[str]:
        """The named groups: the compiled pattern's, or read from the source when it is not compiled (the
        bundled rules, whose regexes the test suite compiles; tests/ci/test_catalog_loader.py)."""
        if self._rx is not None:
            return set(self._rx.groupindex)
        return set(_GROUP_NAME.findall(self.pattern))

    def __getstate__(self) -> tuple[str, int]:
        return self.pattern, self.flags

    def __setstate__(self, state: tuple[str, int]) -> None:
        self.pattern, self.flags = state
        self._rx = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyPattern) and (self.pattern, self.flags) == (other.pattern, other.flags)

    def __hash__(self) -> int:
        return hash((self.pattern, self.flags))

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags})"


Pattern = re.Pattern[str] | LazyPattern  # rules made in code (problem matchers) may hold compiled ones


@dataclass(frozen=True)
class BlockSpec:
    """How a trigger line grows into the error block around it (see FORMAT.md, "block")."""

    before: int = 0
    after: int = 0
    up_while: Pattern | None = None
    up_until: Pattern | None = None
    down_while: Pattern | None = None
    down_until: Pattern | None = None
    max_lines: int = 40
    down_gap: int = 0  # lines `down_while` may skip when a matching line follows them


@dataclass(frozen=True)
class FieldSource:
    """A line of the block that fields come from (see FORMAT.md, "fields_from"): the nearest line below the
    trigger (`down`), above it (`up`), or the block's last line (`from_end`) that `pattern` matches."""

    pattern: Pattern
    search: str = "down"


@dataclass(frozen=True)
class Example:
    """A rule's own test: a text it must (or must not) match, with the lines and fields it must find."""

    text: str
    match: bool
    lines: tuple[int, ...] | None = None
    fields: dict[str, str] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class Rule:
    """One failure the catalog knows: its triggers, what it is (category, tool, ecosystem) and its hint."""

    id: str
    category: str
    ecosystem: str
    tool: str
    triggers: tuple[Pattern, ...]
    confidence: float
    hint: str
    source: str  # the file it came from
    title: str = ""
    subcategory: str | None = None
    ignore_case: bool = False
    exclude: Pattern | None = None
    message: str | None = None  # a template over the named groups, e.g. "{test} failed"
    block: BlockSpec = field(default_factory=BlockSpec)
    examples: tuple[Example, ...] = ()
    fields_from: tuple[FieldSource, ...] = ()
    next_line: Pattern | None = None  # the line after the trigger must match this for the rule to fire

    @property
    def scan_patterns(self) -> tuple[str, ...]:
        return tuple(scan_pattern(t.pattern) for t in self.triggers)


@dataclass(frozen=True)
class Catalog:
    """The rules of one catalog version, in order."""

    version: str
    rules: tuple[Rule, ...]
    # Each rule's triggers in their scan form (`scan_pattern`), in rule order: worked out once when a catalog is
    # made and kept with it in the cache (a pickle restores it without running __post_init__), not by every start
    # of the scanner (a few hundred patterns read character by character).
    scan_forms: tuple[tuple[str, ...], ...] = field(init=False, compare=False, repr=False)
    # Beside each scan form, the cheaper superset hyperscan scans in its place (ci/prefilter.py), or None: the scan
    # form itself. Kept in the cache with the scan forms.
    prefilters: tuple[tuple[str | None, ...], ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scan_forms", tuple(rule.scan_patterns for rule in self.rules))
        object.__setattr__(self, "prefilters", tuple(tuple(prefilter(f, SCAN_LINE_START) for f in forms)
                                                     for forms in self.scan_forms))

    def by_id(self, rule_id: str) -> Rule:
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        raise KeyError(rule_id)


def scan_pattern(trigger: str) -> str:
    """The form of a trigger used for the one raw scan (hyperscan or `re` over whole chunks). It may match more
    lines than the trigger, never fewer: the flagged lines are re-checked in Python. Named groups become plain,
    a leading `^` also accepts the runner's timestamp prefix and a `\\r`, and the pattern is cut at its first
    top-level `.*`/`.+` (which would make the scanner report every character of a line, or slow it down)."""
    pat = _NAMED_GROUP.sub("(?:", trigger)
    anchored_start = pat.startswith("^")
    if anchored_start:
        pat = pat[1:]
    tail_anchor = pat.endswith("$") and not _escaped(pat, len(pat) - 1)
    if tail_anchor:
        pat = pat[:-1]
    if pat.startswith("\\b"):
        pat = pat[2:]  # a looser start lets Python's `re` (the fallback engine) search for the literal that follows
    cut = _first_wildcard(pat)
    if cut is not None:
        at, _, plus = cut
        pat = pat[:at] + ("." if plus else "")
    elif tail_anchor:
        pat += r"(?:\r|$)"
    if anchored_start:
        pat = SCAN_LINE_START + "(?:" + pat + ")"
    return pat or "."


def _first_wildcard(pat: str) -> tuple[int, int, bool] | None:
    """Where the first `.*`, `.+`, `(?:.*)` or `(?:.+)` at the top level of `pat` starts, its length and whether
    it needs a character; None when there is none or the pattern has a top-level alternation."""
    depth = 0
    i = 0
    in_class = False
    found: tuple[int, int, bool] | None = None
    while i < len(pat):
        c = pat[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pat[i + 1:i + 2] == "]":
                i += 1
        elif c == "(":
            if depth == 0 and found is None:
                for body in ("(?:.*)", "(?:.+)"):
                    if pat.startswith(body, i) and pat[i + len(body):i + len(body) + 1] not in ("?", "*", "+", "{"):
                        found = (i, len(body), body[4] == "+")
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            return None
        elif c == "." and depth == 0 and found is None and pat[i + 1:i + 2] in ("*", "+") \
                and pat[i + 2:i + 3] not in ("?", "+"):
            found = (i, 2, pat[i + 1] == "+")
        i += 1
    return found


def _escaped(pat: str, index: int) -> bool:
    n = 0
    i = index - 1
    while i >= 0 and pat[i] == "\\":
        n += 1
        i -= 1
    return n % 2 == 1


def _package_rule_files(exclude: Iterable[str] = ()) -> list[tuple[str, bytes]]:
    root = _HERE / "rules"
    skip = {f"{stem}.toml" for stem in exclude}
    out = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml") and entry.name not in skip:
            out.append((f"rules/{entry.name}", entry.read_bytes()))
    return out


def load_catalog(extra_dirs: Iterable[Path] = (), *, exclude: Iterable[str] = (),
                 cache_dir: Path | None = None) -> Catalog:
    """The bundled catalog, plus a user's own rules: the `*.toml` rule files and `*.json` GitHub problem
    matchers of `extra_dirs`. `exclude` names bundled rule files by stem (`python`) to leave out, as the
    leave-one-ecosystem-out benchmark does. With `cache_dir`, the validated catalog is kept there, once per
    catalog version."""
    files = _package_rule_files(exclude)
    tested = len(files)  # the bundled files come first: the test suite compiles their regexes (see load_rule_files)
    matchers: list[Rule] = []
    for directory in extra_dirs:
        if not directory.is_dir():
            raise ConfigError(f"rules directory not found: {directory}")
        files.extend((str(p), p.read_bytes()) for p in sorted(directory.glob("*.toml")))
        from .matchers import rules_from_problem_matcher

        for p in sorted(directory.glob("*.json")):
            matchers.extend(rules_from_problem_matcher(p.read_text(encoding="utf-8"), origin=str(p)))
    catalog = (load_rule_files(files, tested=tested) if cache_dir is None
               else _cached_rule_files(files, cache_dir, tested=tested))
    if not matchers:
        return catalog
    taken = {r.id for r in catalog.rules}
    clash = [r.id for r in matchers if r.id in taken]
    if clash:
        raise ConfigError(f"problem matcher rule ids clash with the catalog: {', '.join(clash)}")
    return Catalog(version=catalog.version, rules=catalog.rules + tuple(matchers))


def _cached_rule_files(files: list[tuple[str, bytes]], cache_dir: Path, *, tested: int = 0) -> Catalog:
    """`load_rule_files(files)`, validated once per catalog version: the result is kept in the user's cache (or
    comes with the wheel, ci/prebuild.py), named by a hash of the rule files, this module's source, RepoPilot's
    version and the pickle protocol (a cache left by another version is never read; one that does not load is
    rebuilt). The Python version is not in the name: the pickle holds only this module's classes and builtins,
    so a wheel built with one Python serves another."""
    source = Path(__file__).read_bytes()
    key = cache_key(__version__, str(_PROTOCOL), source, *(part for name, data in files for part in (name, data)))
    name = f"catalog-{key}.pickle"
    data = read_entry(cache_dir, name) or read_bundled(name)
    if data is not None:
        try:
            cached = pickle.loads(data)  # noqa: S301 - our own file, written by this user only (see read_entry)
        except Exception:  # anything unreadable is rebuilt
            cached = None
        if isinstance(cached, Catalog):
            return cached
    catalog = load_rule_files(files, tested=tested)
    write_entry(cache_dir, name, pickle.dumps(catalog, protocol=_PROTOCOL))
    return catalog


def load_rule_files(files: Iterable[tuple[str, bytes]], *, tested: int = 0) -> Catalog:
    """The rules of `files` (name, TOML bytes), validated. The regexes of the first `tested` files (the bundled
    catalog, whose every regex tests/ci/test_catalog_loader.py compiles) are compiled on first use, not here:
    compiling them all took more than half of a first run's catalog load on a fresh machine."""
    import tomllib  # on a cache miss only: a cached catalog is read without parsing any TOML

    version = "0"
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for index, (name, data) in enumerate(files):
        try:
            doc = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{name}: not valid TOML: {exc}") from None
        if Path(name).name == "_catalog.toml":
            version = str(doc.get("version", version))
            continue
        fmt = doc.get("format")
        if fmt != FORMAT_VERSION:
            raise ConfigError(f"{name}: `format = {FORMAT_VERSION}` expected, found {fmt!r}")
        unknown = set(doc) - {"format", "ecosystem", "tool", "rule"}
        if unknown:
            raise ConfigError(f"{name}: unknown top-level keys {sorted(unknown)}")
        defaults: dict[str, Any] = {k: doc[k] for k in ("ecosystem", "tool") if k in doc}
        for raw in doc.get("rule", []):
            rule = _rule(name, {**defaults, **raw}, compile_now=index >= tested)
            if rule.id in seen:
                raise ConfigError(f"{name}: rule id {rule.id!r} already defined in {seen[rule.id]}")
            seen[rule.id] = name
            rules.append(rule)
    return Catalog(version=version, rules=tuple(rules))


def _regex(where: str, pattern: Any, flags: int = 0, *, compile_now: bool = True) -> LazyPattern:
    if not isinstance(pattern, str) or not pattern:
        raise ConfigError(f"{where}: a non-empty regex string expected")
    if not compile_now:
        return LazyPattern(pattern, flags)
    try:
        return LazyPattern(pattern, flags, re.compile(pattern, flags))
    except re.error as exc:
        raise ConfigError(f"{where}: bad regex {pattern!r}: {exc}") from None


def _rule(name: str, raw: dict[str, Any], *, compile_now: bool = True) -> Rule:
    rid = raw.get("id")
    if not isinstance(rid, str) or not _ID.match(rid):
        raise ConfigError(f"{name}: rule without a valid `id` (lowercase letters, digits, . _ -): {rid!r}")
    where = f"{name}: rule {rid}"
    unknown = set(raw) - _RULE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}")
    for key in ("category", "ecosystem", "tool", "hint"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ConfigError(f"{where}: `{key}` (a string) is required")
    if raw["category"] not in CATEGORIES:
        raise ConfigError(f"{where}: category {raw['category']!r} is not one of {', '.join(CATEGORIES)}")
    conf = raw.get("confidence")
    if not isinstance(conf, int | float) or not 0 < conf <= 1:
        raise ConfigError(f"{where}: `confidence` must be a number in (0, 1]")
    ignore_case = bool(raw.get("ignore_case", False))
    flags = re.IGNORECASE if ignore_case else 0
    trig = raw.get("trigger")
    trig_list = [trig] if isinstance(trig, str) else trig
    if not isinstance(trig_list, list) or not trig_list:
        raise ConfigError(f"{where}: `trigger` (a regex or a list of regexes) is required")
    triggers = tuple(_regex(f"{where}: trigger", t, flags, compile_now=compile_now) for t in trig_list)
    for t in triggers:
        bad = t.group_names() - set(FIELDS)
        if bad:
            raise ConfigError(f"{where}: unknown named groups {sorted(bad)} (allowed: {', '.join(FIELDS)})")
        if re.search(r"\(\?<?[=!]|\\[1-9]", t.pattern):
            raise ConfigError(f"{where}: lookarounds and backreferences cannot be scanned; use `exclude`")
    rx = partial(_regex, compile_now=compile_now)
    exclude = rx(f"{where}: exclude", raw["exclude"], flags) if "exclude" in raw else None
    block = _block(where, raw.get("block", {}), compile_now=compile_now)
    fields_from = _fields_from(where, raw.get("fields_from", []), flags, compile_now=compile_now)
    next_line = rx(f"{where}: next_line", raw["next_line"], flags) if "next_line" in raw else None
    examples = tuple(_example(f"{where}: example {i + 1}", ex) for i, ex in enumerate(raw.get("example", [])))
    if not any(e.match for e in examples) or all(e.match for e in examples):
        raise ConfigError(f"{where}: at least one positive (match = true) and one near-miss negative "
                          "(match = false) example required")
    message = raw.get("message")
    if message is not None and not isinstance(message, str):
        raise ConfigError(f"{where}: `message` must be a string template")
    return Rule(
        id=rid, category=raw["category"], ecosystem=raw["ecosystem"], tool=raw["tool"], triggers=triggers,
        confidence=float(conf), hint=raw["hint"], source=name, title=str(raw.get("title", "")),
        subcategory=raw.get("subcategory"), ignore_case=ignore_case, exclude=exclude, message=message,
        block=block, examples=examples, fields_from=fields_from, next_line=next_line,
    )


def _fields_from(where: str, raw: Any, flags: int, *, compile_now: bool = True) -> tuple[FieldSource, ...]:
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise ConfigError(f"{where}: `fields_from` must be an array of tables ({{ pattern = '...', search = ... }})")
    out: list[FieldSource] = []
    for i, spec in enumerate(raw):
        at = f"{where}: fields_from {i + 1}"
        unknown = set(spec) - _FIELDS_FROM_KEYS
        if unknown:
            raise ConfigError(f"{at}: unknown keys {sorted(unknown)}")
        pattern = _regex(at, spec.get("pattern"), flags, compile_now=compile_now)
        names = pattern.group_names()
        bad = names - set(FIELDS)
        if bad or not names:
            raise ConfigError(f"{at}: needs named groups among {', '.join(FIELDS)}"
                              + (f"; unknown {sorted(bad)}" if bad else ""))
        search = spec.get("search", "down")
        if search not in SEARCHES:
            raise ConfigError(f"{at}: `search` must be one of {', '.join(SEARCHES)}")
        out.append(FieldSource(pattern=pattern, search=search))
    return tuple(out)


def _block(where: str, raw: Any, *, compile_now: bool = True) -> BlockSpec:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: `block` must be a table")
    unknown = set(raw) - _BLOCK_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown block keys {sorted(unknown)}")
    for a, b in (("up_while", "up_until"), ("down_while", "down_until")):
        if a in raw and b in raw:
            raise ConfigError(f"{where}: block takes `{a}` or `{b}`, not both")
    ints: dict[str, int] = {}
    for key, default in (("before", 0), ("after", 0), ("max_lines", 40)):
        value = raw.get(key, default)
        if not isinstance(value, int) or value < 0 or (key == "max_lines" and not 1 <= value <= 2000):
            raise ConfigError(f"{where}: block.{key} must be a non-negative integer (max_lines 1..2000)")
        ints[key] = value
    gap = raw.get("down_gap", 0)
    if not isinstance(gap, int) or not 0 <= gap <= _MAX_GAP or (gap and "down_while" not in raw):
        raise ConfigError(f"{where}: block.down_gap must be an integer 0..{_MAX_GAP}, used with down_while")
    pats = {k: _regex(f"{where}: block.{k}", raw[k], compile_now=compile_now)
            for k in ("up_while", "up_until", "down_while", "down_until") if k in raw}
    return BlockSpec(before=ints["before"], after=ints["after"], max_lines=ints["max_lines"], down_gap=gap,
                     up_while=pats.get("up_while"), up_until=pats.get("up_until"),
                     down_while=pats.get("down_while"), down_until=pats.get("down_until"))


def _example(where: str, raw: Any) -> Example:
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str) or not isinstance(raw.get("match"), bool):
        raise ConfigError(f"{where}: needs `text` (string) and `match` (true/false)")
    unknown = set(raw) - _EXAMPLE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}")
    lines = raw.get("lines")
    if lines is not None and (not isinstance(lines, list) or not all(isinstance(n, int) and n > 0 for n in lines)):
        raise ConfigError(f"{where}: `lines` must be a list of 1-based line numbers")
    fields = raw.get("fields", {})
    if not isinstance(fields, dict) or set(fields) - set(FIELDS):
        raise ConfigError(f"{where}: `fields` must be a table of {', '.join(FIELDS)}")
    return Example(text=raw["text"], match=raw["match"], lines=tuple(lines) if lines else None,
                   fields={k: str(v) for k, v in fields.items()}, note=str(raw.get("note", "")))
