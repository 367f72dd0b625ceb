"""GitHub problem matchers (the runner's own JSON format) as catalog rules.

A matcher `{"problemMatcher": [{"owner", "severity"?, "pattern": [{"regexp", "file", "line", "column",
"severity", "message", "code", "loop"?}]}]}` gives group indices into its regexp; they become the named groups
the catalog uses. A single-pattern matcher is one trigger. A multi-line matcher (e.g. a file name line followed
by one line per problem) uses its last pattern as the trigger and grows the block up to the nearest line that
its first pattern matches; fields come from the trigger line, and those it lacks from that first line (the file
of ESLint-style output). Matchers whose `severity` is `warning` or
`notice` are skipped: a rule reports failures.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..core import ConfigError
from .catalog import CATEGORIES, BlockSpec, Example, FieldSource, Rule

__all__ = ["name_groups", "rules_from_problem_matcher"]

_FIELD_KEYS = ("file", "line", "column", "message", "code")


def name_groups(regexp: str, names: dict[int, str]) -> str:
    """`regexp` with capturing group k renamed `(?P<names[k]>` and the other capturing groups made plain."""
    out: list[str] = []
    i = 0
    group = 0
    in_class = False
    while i < len(regexp):
        c = regexp[i]
        if c == "\\":
            out.append(regexp[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            if regexp.startswith("(?<", i) and not regexp.startswith(("(?<=", "(?<!"), i):
                # JavaScript named group `(?<name>`: counts as a capturing group.
                end = regexp.index(">", i)
                group += 1
                name = names.get(group)
                out.append(f"(?P<{name}>" if name else "(?:")
                i = end + 1
                continue
            if not regexp.startswith("(?", i):
                group += 1
                name = names.get(group)
                out.append(f"(?P<{name}>" if name else "(?:")
                i += 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def rules_from_problem_matcher(source: str | dict[str, Any], *, category: str = "unknown", ecosystem: str = "ci",
                               tool: str | None = None, confidence: float = 0.7, hint: str | None = None,
                               origin: str = "problem-matcher") -> list[Rule]:
    """Rules from a problem-matcher document (JSON text or parsed). Raises ConfigError when it is malformed."""
    if category not in CATEGORIES:
        raise ConfigError(f"{origin}: category {category!r} is not one of {', '.join(CATEGORIES)}")
    try:
        doc = json.loads(source) if isinstance(source, str) else source
        matchers = doc["problemMatcher"]
        if isinstance(matchers, dict):
            matchers = [matchers]
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{origin}: not a problem-matcher document ({exc})") from None
    rules: list[Rule] = []
    for m in matchers:
        try:
            owner = str(m["owner"])
            patterns = m["pattern"]
            if isinstance(patterns, dict):
                patterns = [patterns]
            if str(m.get("severity", "error")).lower() in ("warning", "notice"):
                continue
            last = patterns[-1]
            if re.search(r"\(\?<?[=!]|\\[1-9]", str(last["regexp"])):
                raise ValueError("lookarounds and backreferences cannot be scanned")
            names = {int(last[k]): k for k in _FIELD_KEYS if isinstance(last.get(k), int)}
            trigger = re.compile(name_groups(str(last["regexp"]), names))
            block = BlockSpec()
            sources: tuple[FieldSource, ...] = ()
            if len(patterns) > 1:
                head = patterns[0]
                block = BlockSpec(up_until=re.compile(name_groups(str(head["regexp"]), {})), max_lines=200)
                head_names = {int(head[k]): k for k in _FIELD_KEYS if isinstance(head.get(k), int)}
                if head_names:
                    sources = (FieldSource(re.compile(name_groups(str(head["regexp"]), head_names)), "up"),)
        except (KeyError, TypeError, ValueError, IndexError, re.error) as exc:
            raise ConfigError(f"{origin}: matcher {m.get('owner', '?') if isinstance(m, dict) else '?'}: "
                              f"cannot import ({exc})") from None
        rid = "matcher." + re.sub(r"[^a-z0-9_.-]+", "-", owner.lower()).strip("-")
        rules.append(Rule(
            id=rid, category=category, ecosystem=ecosystem, tool=tool or owner, triggers=(trigger,),
            confidence=confidence, hint=hint or f"Reported by the `{owner}` problem matcher: fix the reported line.",
            source=origin, title=f"{owner} (problem matcher)", block=block, fields_from=sources,
            examples=(Example(text="", match=True),),
        ))
    return rules
