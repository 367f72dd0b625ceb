"""The cheaper form hyperscan scans for a trigger whose scan form starts with a generic part (`prefilter`).

A scan form such as `(?:^|\\r|Z )[^\\s\\[]\\S*\\.java:\\d+: error: .` makes hyperscan follow every line's first word
(from each line start, each `\\r` and the runner's timestamp on): the unbounded `\\S*` before the first literal can
only be checked by running an automaton over nearly every byte. Measured on 50 MB of real CI logs, six such
patterns took 30 ms of the catalog's 75 ms scan. Their prefilter drops that generic lead and starts at the first
literal of three characters or more (`\\.java:\\d+: error: .`), which hyperscan finds with its literal matcher
and checks only where it occurs. It flags more lines (a `[WARNING] /a/B.java:[3,4] …` line for a trigger that
wants the path at the line start): the lines its matches fall on are scanned again with the exact scan forms
(ci/confirm.py), so what the scan answers is what the exact forms answer.

Only the syntax the scan forms use is read (FORMAT.md, Triggers); anything else leaves the form as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["prefilter"]

# A literal this long is rare enough for hyperscan's literal matcher to start from (two characters, such as `: `
# or `e:`, are everywhere in a log).
_MIN_LITERAL = 3
_ESCAPES = {"r": "\r", "n": "\n", "t": "\t", "f": "\f", "v": "\v"}


@dataclass(frozen=True, slots=True)
class _Atom:
    """One item of a concatenation: its source text (with its quantifier), what it is, and for a literal its
    characters (a group of literal alternatives: the shortest of them)."""

    text: str
    kind: str  # "lit", "alts" (literal alternatives), "class", "assert", "group"
    literal: str = ""
    quant: str = ""
    unbounded: bool = False  # a `*`, `+` or `{n,}` in it
    inner: tuple[_Atom, ...] | None = None  # a group of one alternative: its atoms

    def literal_length(self) -> int | None:
        """Characters it always matches literally, or None when it is not a fixed literal."""
        if self.quant or self.kind not in ("lit", "alts"):
            return None
        return len(self.literal)


class _Unsupported(ValueError):
    """Syntax this reader leaves alone."""


def _quantifier(s: str, i: int) -> tuple[str, int]:
    if i < len(s) and s[i] in "?*+":
        j = i + 1
    elif i < len(s) and s[i] == "{" and "}" in s[i:]:
        j = s.index("}", i) + 1
    else:
        return "", i
    if j < len(s) and s[j] in "?+":
        j += 1
    return s[i:j], j


def _is_unbounded(quant: str) -> bool:
    return quant[:1] in ("*", "+") or (quant.startswith("{") and quant.rstrip("?+").endswith(",}"))


def _escape(s: str, i: int) -> tuple[str, str, int]:
    """An escape at `s[i]` (a backslash): its kind, its literal character, the index after it."""
    if i + 1 >= len(s):
        raise _Unsupported(s)
    e = s[i + 1]
    if e == "x":
        return "lit", chr(int(s[i + 2:i + 4], 16)), i + 4
    if e in "dDsSwW":
        return "class", "", i + 2
    if e in "bB":
        return "assert", "", i + 2
    if e.isalnum():
        if e not in _ESCAPES:
            raise _Unsupported(s)
        return "lit", _ESCAPES[e], i + 2
    return "lit", e, i + 2


def _class_end(s: str, i: int) -> int:
    """The index after the `[...]` class that starts at `s[i]`."""
    j = i + 1
    if s[j:j + 1] == "^":
        j += 1
    if s[j:j + 1] == "]":
        j += 1
    while j < len(s) and s[j] != "]":
        j += 2 if s[j] == "\\" else 1
    if j >= len(s):
        raise _Unsupported(s)
    return j + 1


def _atom(s: str, i: int) -> tuple[_Atom, int]:
    """The atom at `s[i]`, without its quantifier, and the index after it."""
    c = s[i]
    if c == "\\":
        kind, lit, j = _escape(s, i)
        return _Atom(s[i:j], kind, lit), j
    if c == "[":
        j = _class_end(s, i)
        return _Atom(s[i:j], "class"), j
    if c == "(":
        if not s.startswith("(?:", i):
            raise _Unsupported(s)  # inline flags, lookarounds: left as they are
        alts, j = _alternatives(s, i + 3)
        if j >= len(s):
            raise _Unsupported(s)
        return _group(s[i:j + 1], alts), j + 1
    if c in "^$":
        return _Atom(c, "assert"), i + 1
    if c == ".":
        return _Atom(c, "class"), i + 1
    if c in "*+?{|)":
        raise _Unsupported(s)
    return _Atom(c, "lit", c), i + 1


def _group(text: str, alts: list[list[_Atom]]) -> _Atom:
    unbounded = any(a.unbounded for alt in alts for a in alt)
    if len(alts) == 1:
        return _Atom(text, "group", unbounded=unbounded, inner=tuple(alts[0]))
    literals = ["".join(a.literal for a in alt) for alt in alts
                if alt and all(a.kind == "lit" and not a.quant for a in alt)]
    if len(literals) == len(alts):
        return _Atom(text, "alts", min(literals, key=len), unbounded=unbounded)
    return _Atom(text, "group", unbounded=unbounded)


def _alternatives(s: str, i: int) -> tuple[list[list[_Atom]], int]:
    """The alternatives from `s[i]` to the `)` that closes them (or the end), and that index. A group of one
    alternative with no quantifier is spliced into its parent: `(?:x\\.go):` is the run `x.go:`."""
    alts: list[list[_Atom]] = [[]]
    while i < len(s) and s[i] != ")":
        if s[i] == "|":
            alts.append([])
            i += 1
            continue
        atom, i = _atom(s, i)
        quant, i = _quantifier(s, i)
        if quant:
            atom = _Atom(atom.text + quant, atom.kind, atom.literal, quant,
                         atom.unbounded or _is_unbounded(quant))  # a quantified group is never spliced
            alts[-1].append(atom)
        elif atom.inner is not None:
            alts[-1].extend(atom.inner)
        else:
            alts[-1].append(atom)
    return alts, i


def _first_literal(atoms: list[_Atom]) -> int | None:
    """Where the first run of literal atoms at least `_MIN_LITERAL` characters long starts."""
    start, length = 0, 0
    for k, atom in enumerate(atoms):
        n = atom.literal_length()
        if n is None:
            start, length = k + 1, 0
            continue
        length += n
        if length >= _MIN_LITERAL:
            return start
    return None


def prefilter(form: str, line_start: str) -> str | None:
    """The form hyperscan scans in place of scan form `form`, a superset of it that starts at its first literal,
    when what comes before that literal holds an unbounded repeat; else None (`form` is scanned as it is).
    `line_start`: what a leading `^` became in the scan form (catalog.SCAN_LINE_START)."""
    body = form[len(line_start):] if form.startswith(line_start) else form
    try:
        alts, end = _alternatives(body, 0)
    except (_Unsupported, ValueError, IndexError):
        return None
    if len(alts) != 1 or end != len(body):
        return None  # a top-level alternation (or a stray `)`): every branch would need its own literal
    atoms = alts[0]
    first = _first_literal(atoms)
    if not first or not any(a.unbounded for a in atoms[:first]):
        return None
    return "".join(a.text for a in atoms[first:])
