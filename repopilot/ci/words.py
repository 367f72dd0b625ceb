"""A pattern tried only on a line that can match it: the words one of which every match of the pattern holds.

On a line of ASCII text (nearly every line of a log) `str.lower()` gives exactly what a case-insensitive pattern
compares, so a line holding none of the pattern's words cannot match and the pattern is not run: the same answers
for a fraction of the cost (a pattern tries every position of a line; an `in` test is a fast scan). The locator's
shapes, the verdict's cues and the fingerprint's masks carry such words; their tests derive the words from each
pattern, so a pattern edited without its words fails there."""

from __future__ import annotations

__all__ = ["ascii_lower", "may_hold"]


def ascii_lower(text: str) -> str | None:
    """`text` lower-cased when it is ASCII (then the words can tell), else None (then every pattern is tried)."""
    return text.lower() if text.isascii() else None


def may_hold(words: tuple[str, ...] | None, low: str | None) -> bool:
    """False only when `low` (an ASCII line, lower-cased) holds none of `words` (None: no words are known)."""
    if low is None or words is None:
        return True
    for word in words:  # a loop, not any() over a generator: half the cost, on every line
        if word in low:
            break
    else:
        return False
    return True
