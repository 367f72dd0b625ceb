"""The words a pattern needs: lower-case literals, one of which every match of the pattern holds (on an ASCII line,
lower-cased). Derived from the parsed pattern; ci/verdict.py carries the result for its cues (`_CUE_WORDS`) and
tests/ci/test_verdict_words.py checks it is what this derives from the patterns as they are now."""

from __future__ import annotations

import re
from typing import Any

_MIN = 3  # a shorter literal is in too many lines to be worth looking for


def needed_words(pattern: str, flags: int = 0) -> tuple[str, ...] | None:
    """Words one of which every match holds, fewest and longest first; None when no such set is found."""
    from re import _parser  # type: ignore[attr-defined]

    found = _sequence(list(_parser.parse(pattern, flags)))
    if found is None:
        return None
    # A word that holds another is found wherever the other is: only the other is needed.
    return tuple(sorted(w for w in set(found) if not any(v != w and v in w for v in found)))


def _better(a: list[str] | None, b: list[str] | None) -> list[str] | None:
    """The cheaper of two word sets: fewer words, then the shortest word longer."""
    if a is None or b is None:
        return a if b is None else b
    return min(a, b, key=lambda w: (len(w), -min(map(len, w))))


def _sequence(items: list[tuple[Any, Any]]) -> list[str] | None:
    from re import _constants as c  # type: ignore[attr-defined]

    best: list[str] | None = None
    run = ""
    for op, av in [*items, (None, None)]:
        if op is c.LITERAL and av < 128:
            run += chr(av).lower()
            continue
        if op is c.AT:  # zero-width: the literals either side are next to each other
            continue
        if len(run) >= _MIN:
            best = _better(best, [run])
        run = ""
        if op is c.SUBPATTERN:
            best = _better(best, _sequence(list(av[-1])))
        elif op is c.BRANCH:
            alternatives = [_sequence(list(alt)) for alt in av[1]]
            if all(a is not None for a in alternatives):
                best = _better(best, [w for a in alternatives if a is not None for w in a])
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1:
            best = _better(best, _sequence(list(av[2])))
    return best


def holds_word(pattern: re.Pattern[str], words: tuple[str, ...], text: str) -> bool:
    """Whether `text` gets the same answer with the words' gate as without it (for tests)."""
    low = text.lower() if text.isascii() else None
    gated = (low is None or any(w in low for w in words)) and pattern.search(text) is not None
    return gated == (pattern.search(text) is not None)
