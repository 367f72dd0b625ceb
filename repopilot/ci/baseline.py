"""`--baseline PASS_LOG`: lines of the failing log that the passing log of the same job also has are not
candidates. Lines are compared after masking what changes between runs: timestamps, durations, hashes,
temporary paths and numbers."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .lines import clean_text
from .sources import LogInput

__all__ = ["normalize", "seen_in_baseline"]

_MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<TS>"),
    (re.compile(r"\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b"), "<TIME>"),
    (re.compile(r"(?:/tmp|/var/folders|/private/var|[A-Za-z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp)[/\\]\S*"),
     "<TMP>"),
    (re.compile(r"\b[0-9a-f]{7,64}\b"), "<HEX>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds|m|min|minutes|h)\b"), "<DUR>"),
    (re.compile(r"\d+"), "#"),
    (re.compile(r"\s+"), " "),
]


def normalize(text: str) -> str:
    for rx, repl in _MASKS:
        text = rx.sub(repl, text)
    return text.strip()


def seen_in_baseline(baseline: LogInput, candidates: dict[int, str]) -> set[int]:
    """The candidate line numbers whose normalized text occurs in the baseline log. Memory holds only the
    candidates' normalized texts; the baseline is streamed."""
    wanted: dict[str, list[int]] = {}
    for n, text in candidates.items():
        key = normalize(text)
        if key:
            wanted.setdefault(key, []).append(n)
    if not wanted:
        return set()
    lengths = {len(k) for k in wanted}
    lo, hi = min(lengths) // 2, max(lengths) * 3 + 64
    found: set[int] = set()
    with baseline.open() as fh:
        for raw in _lines(fh):
            if not lo <= len(raw) <= hi:
                continue
            for seg in clean_text(raw).split("\r"):
                key = normalize(seg)
                hit = wanted.pop(key, None)
                if hit is not None:
                    found.update(hit)
            if not wanted:
                break
    return found


def _lines(fh: Iterable[bytes]) -> Iterable[bytes]:
    for raw in fh:
        yield raw[:8192]
