"""From a flagged line to a rule hit: the trigger re-checked with Python `re` (capture groups), then the block
grown around it as the rule's `block` table says. Works on any line accessor, so the streaming scanner and the
in-memory example check share it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .catalog import LazyPattern, Pattern, Rule, scan_pattern
from .lines import clean_text, segments, strip_ansi_bytes

__all__ = ["Hit", "LineGetter", "block_fields", "extend_block", "fires", "match_line", "match_text",
           "next_line_ok"]

# 1-based line number -> cleaned text, or None past either end of what is available.
LineGetter = Callable[[int], "str | None"]


@dataclass
class Hit:
    """A rule that fired: its trigger line, the block it claims and the fields it read there."""

    rule: Rule
    line: int  # the trigger line
    first: int  # the block, inclusive
    last: int
    fields: dict[str, str] = field(default_factory=dict)
    message: str = ""
    late: bool = False  # grown at the scan's end, one of its rule's latest (ci/late.py), not one of its first


def _any_segment(pattern: Pattern, clean: str) -> bool:
    if "\r" not in clean:  # one segment, the line (almost every line: no list, no generator per line)
        return pattern.search(clean) is not None
    return any(pattern.search(seg) for seg in segments(clean))


def _compiled(pattern: Pattern) -> re.Pattern[str]:
    return pattern.compiled() if isinstance(pattern, LazyPattern) else pattern


def _first_match(rule: Rule, clean: str) -> tuple[re.Match[str], str] | None:
    """The trigger's first match on a `\\r` segment of the line the rule does not exclude, and that segment."""
    for seg in ((clean,) if "\r" not in clean else segments(clean)):
        if rule.exclude is not None and rule.exclude.search(seg):
            continue
        for trig in rule.triggers:
            m = trig.search(seg)
            if m is not None:
                return m, seg
    return None


def match_line(rule: Rule, clean: str) -> tuple[dict[str, str], str] | None:
    """The trigger's named groups and the message when `rule` fires on this cleaned line, else None."""
    got = _first_match(rule, clean)
    if got is None:
        return None
    m, seg = got
    groups = {k: v.strip() for k, v in m.groupdict().items() if v is not None and v.strip()}
    return groups, _message(rule, groups, seg)


def fires(rule: Rule, clean: str) -> bool:
    """Whether `match_line` finds the rule on this line, without reading its fields (a late candidate is
    checked this way; the few grown into blocks read them then)."""
    return _first_match(rule, clean) is not None


def _message(rule: Rule, groups: dict[str, str], default: str) -> str:
    if rule.message:
        try:
            message = rule.message.format_map(_Default(groups))
        except (ValueError, IndexError):
            message = rule.message
    else:
        message = groups.get("message") or default.strip()
    return message.strip()[:500]


def next_line_ok(rule: Rule, get: LineGetter, n: int) -> bool:
    """The rule's `next_line` condition on the line after trigger `n` (true when the rule has none)."""
    if rule.next_line is None:
        return True
    text = get(n + 1)
    return text is not None and _any_segment(rule.next_line, text)


def block_fields(rule: Rule, get: LineGetter, n: int, first: int, last: int, fields: dict[str, str],
                 message: str) -> tuple[dict[str, str], str]:
    """Fields and message completed from the block `first..last` of trigger `n` as the rule's `fields_from`
    says: the trigger's own groups win; a `message` group found in the block replaces the default message (the
    trigger line), and a `message` template is applied again over all the fields."""
    if not rule.fields_from:
        return fields, message
    found = dict(fields)
    for spec in rule.fields_from:
        if spec.search == "down":
            order = range(n + 1, last + 1)
        elif spec.search == "up":
            order = range(n - 1, first - 1, -1)
        else:
            order = range(last, first - 1, -1)
        for k in order:
            text = get(k)
            m = None if text is None else next((m for seg in segments(text) if (m := spec.pattern.search(seg))), None)
            if m is None:
                continue
            for key, value in m.groupdict().items():
                if value is not None and value.strip():
                    found.setdefault(key, value.strip())
            break
    if found == fields:
        return fields, message
    default = message if "message" in fields or rule.message else ""
    return found, _message(rule, found, default) or message


class _Default(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def extend_block(rule: Rule, get: LineGetter, n: int) -> tuple[int, int]:
    """The inclusive line range of the error block around trigger line `n`."""
    spec = rule.block
    limit = spec.max_lines
    first = last = n
    if spec.up_while is not None:
        while n - first + 1 < limit:
            text = get(first - 1)
            if text is None or not _any_segment(spec.up_while, text):
                break
            first -= 1
    elif spec.up_until is not None:
        for k in range(n - 1, n - limit, -1):
            text = get(k)
            if text is None:
                break
            if _any_segment(spec.up_until, text):
                first = k
                break
    if spec.down_while is not None:
        # The down_while loop reads most of a block's lines (a stack trace): its pattern is searched directly on a
        # line without `\r` (nearly all), as `_any_segment` would, without a call per line.
        search = _compiled(spec.down_while).search
        while last - first + 1 < limit:
            text = get(last + 1)
            if text is not None and (search(text) is not None if "\r" not in text
                                     else _any_segment(spec.down_while, text)):
                last += 1
                continue
            # A few lines that do not match (a multi-line exception message) are taken when a matching line
            # follows them within `down_gap`, unless one of them starts a block of this rule (the next
            # exception is its own failure, so repeats stay countable).
            if text is None or not spec.down_gap:
                break
            resume = None
            for k in range(last + 1, min(last + 2 + spec.down_gap, first + limit)):
                t = get(k)
                if t is None or match_line(rule, t) is not None:
                    break
                if k > last + 1 and _any_segment(spec.down_while, t):
                    resume = k
                    break
            if resume is None:
                break
            last = resume
    elif spec.down_until is not None:
        for k in range(n + 1, first + limit):
            text = get(k)
            if text is None:
                break
            if _any_segment(spec.down_until, text):
                last = k
                break
    # A `*_while` that admits blank lines must not leave them dangling at the block's end.
    while last > n:
        text = get(last)
        if text is None or text.strip():
            break
        last -= 1
    for _ in range(spec.before):
        if first - 1 < 1 or get(first - 1) is None:
            break
        first -= 1
    for _ in range(spec.after):
        if get(last + 1) is None:
            break
        last += 1
    if last - first + 1 > limit:
        # Keep the trigger and what follows it: the message usually comes after the location.
        first = max(first, min(n, last - limit + 1))
        last = min(last, first + limit - 1)
    return first, last


def match_text(rule: Rule, text: str | bytes) -> list[Hit]:
    """Every hit of one rule on a small in-memory log, through the same prefilter form the scanner uses.
    For examples and tests; the scanner handles real logs."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    data = strip_ansi_bytes(data)
    flags = re.MULTILINE | (re.IGNORECASE if rule.ignore_case else 0)
    prefilters = [re.compile(scan_pattern(t.pattern).encode("utf-8"), flags) for t in rule.triggers]
    raw_lines = data.split(b"\n")
    starts = [0]
    for ln in raw_lines[:-1]:
        starts.append(starts[-1] + len(ln) + 1)
    flagged: set[int] = set()
    for pre in prefilters:
        for m in pre.finditer(data):
            flagged.add(data.count(b"\n", 0, max(m.end() - 1, m.start())) + 1)
    cleaned = [clean_text(ln) for ln in raw_lines]

    def get(n: int) -> str | None:
        return cleaned[n - 1] if 1 <= n <= len(cleaned) else None

    hits: list[Hit] = []
    for n in sorted(flagged):
        if hits and hits[-1].first <= n <= hits[-1].last:
            continue  # inside the block of the previous hit, as the scanner does
        found = match_line(rule, cleaned[n - 1])
        if found is None or not next_line_ok(rule, get, n):
            continue
        first, last = extend_block(rule, get, n)
        fields, message = block_fields(rule, get, n, first, last, *found)
        hits.append(Hit(rule=rule, line=n, first=first, last=last, fields=fields, message=message))
    return hits

