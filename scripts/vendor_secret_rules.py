"""Convert gitleaks' default rule set (config/gitleaks.toml, MIT) into repopilot/core/secret_rules.json.

    python scripts/vendor_secret_rules.py path/to/gitleaks.toml --version v8.30.0-27-gb58d3f10 --commit SHA

What changes on the way: Go RE2 syntax that Python's `re` reads differently (`\\z`, a `(?i)` in the middle of a
pattern, which RE2 applies to the rest of its group, a `[` inside a character class), rules that only look at file
paths are dropped (RepoPilot redacts text, not files), and allowlists tied to paths are dropped with them. Every
converted pattern is compiled here, so a rule Python cannot read fails the conversion, not a run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "repopilot" / "core" / "secret_rules.json"


def _group_end(pattern: str, start: int) -> int:
    """Index of the `)` closing the group that is open at `start` (len(pattern) at top level)."""
    depth, i, in_class = 0, start, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1: i + 2] == "^":
                i += 1
            if pattern[i + 1: i + 2] == "]":
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return len(pattern)


def _scope_inline_flags(pattern: str) -> str:
    """RE2 applies a `(?i)` inside a pattern to the rest of its group; Python wants it scoped: `(?i:…)`."""
    while True:
        at = pattern.find("(?i)", 1)
        if at < 0:
            return pattern
        end = _group_end(pattern, at + 4)
        pattern = pattern[:at] + "(?i:" + pattern[at + 4: end] + ")" + pattern[end:]


_POSIX = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "lower": "a-z", "upper": "A-Z",
          "xdigit": "0-9a-fA-F", "space": "\\s", "word": "\\w"}


def _escape_brackets_in_classes(pattern: str) -> str:
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i: i + 2])
            i += 2
            continue
        posix = re.match(r"\[:(\w+):\]", pattern[i:]) if in_class else None
        if posix:
            out.append(_POSIX[posix.group(1)])
            i += posix.end()
            continue
        if in_class and c == "[":
            out.append("\\[")
        else:
            if not in_class and c == "[":
                in_class = True
                out.append(c)
                for extra in ("^", "]"):
                    if pattern[i + 1: i + 2] == extra:
                        out.append(extra)
                        i += 1
                i += 1
                continue
            if in_class and c == "]":
                in_class = False
            out.append(c)
        i += 1
    return "".join(out)


def convert_regex(pattern: str) -> str:
    converted = pattern.replace("\\z", "\\Z")
    converted = _escape_brackets_in_classes(converted)
    converted = _scope_inline_flags(converted)
    re.compile(converted)
    return converted


def _allow(rule: dict[str, Any]) -> list[dict[str, Any]]:
    kept = []
    for allow in rule.get("allowlists", []):
        if allow.get("paths"):
            continue  # RepoPilot sees text without a file path: a path condition can never hold
        kept.append({"target": allow.get("regexTarget", "secret"),
                     "regexes": [convert_regex(r) for r in allow.get("regexes", [])],
                     "stopwords": [s.lower() for s in allow.get("stopwords", [])]})
    return kept


_LEADING_NAME = "(?i)[\\w.-]{0,50}?"


# Checked by reading, where the test below is too simple: generic-api-key's `passw(?:or)?d` is `passwd` or
# `password`, both keywords; snyk's and sonar's patterns open with their keyword followed by optional parts.
_ANCHORED_BY_READING = {"generic-api-key", "snyk-api-token", "sonar-api-token"}


def _anchored(rule_id: str, regex: str, keywords: list[str]) -> bool:
    """Whether every match starts with one of the rule's keywords (after zero-width `\\b` and the lazy name part
    of `(?i)[\\w.-]{0,50}?(?:a|b…)…` rules): RepoPilot then tries the pattern only where a keyword starts."""
    if rule_id in _ANCHORED_BY_READING:
        return True
    rest = regex[len(_LEADING_NAME):] if regex.startswith(_LEADING_NAME) else regex
    while True:
        if rest.startswith("(?i)"):
            rest = rest[4:]
        elif rest.startswith("\\b"):
            rest = rest[2:]
        elif rest.startswith("(") and not rest.startswith("(?"):
            rest = rest[1:]
        else:
            break
    if rest.startswith("(?:"):
        group = rest[3:_group_end(rest, 3)]
    else:
        literal = re.match(r"(?:[A-Za-z0-9_~-]|\\\.)+", rest)
        if literal is None:
            return False
        group = literal.group(0)
    group = re.sub(r"\(\?-?i:|\(\?:|\(|\)", "", group).replace("\\.", ".")
    group = re.sub(r"\[([A-Z])([a-z])\]", lambda m: m.group(2), group).lower()
    for alternative in group.split("|"):
        forms = {alternative.replace("[_-]?", sep) for sep in ("", "_", "-")}
        if not all(any(form.startswith(k) for k in keywords) for form in forms):
            return False
    return True


def convert(config: dict[str, Any], version: str, commit: str) -> dict[str, Any]:
    rules = []
    for rule in config["rules"]:
        if "regex" not in rule or rule.get("path"):
            continue
        rules.append({"id": rule["id"], "regex": convert_regex(rule["regex"]),
                      "keywords": sorted({k.lower() for k in rule.get("keywords", [])}),
                      "group": rule.get("secretGroup", 0), "entropy": rule.get("entropy"),
                      "anchored": _anchored(rule["id"], rule["regex"], [k.lower() for k in rule.get("keywords", [])]),
                      "allow": _allow(rule)})
    glob = config.get("allowlist", {})
    return {
        "source": {"project": "gitleaks", "url": "https://github.com/gitleaks/gitleaks",
                   "file": "config/gitleaks.toml", "version": version, "commit": commit, "license": "MIT",
                   "licence_file": "secret_rules.LICENSE"},
        "allow": {"regexes": [convert_regex(r) for r in glob.get("regexes", [])],
                  "stopwords": [s.lower() for s in glob.get("stopwords", [])]},
        "rules": rules,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("toml", type=Path)
    parser.add_argument("--version", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    data = convert(tomllib.loads(args.toml.read_text()), args.version, args.commit)
    args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(data['rules'])} rules written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
