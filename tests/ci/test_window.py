"""The window's line getters give each line's `clean_text`, however they reach it: `Window.get` (cached, by the
chunk's anchors and cursor), and `Window.near`'s getter (a run around the flagged line, read further when a block
grows down past it, the window's other chunks the usual way), with the C forms on and off, over chunk ends, long lines
that a run cannot hold, blank lines and a last line without a newline."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from repopilot.ci import native
from repopilot.ci.lines import clean_text
from repopilot.ci.window import Chunk, Window

_TS = b"2024-05-06T07:08:09.1234567Z "
_LINES = [b"", b"x", _TS + b"[ERROR] boom", _TS, b"\tat a.B(C.java:1)", b"build\tstep\t" + _TS + b"hi", b"\xff bad",
          b"\xef\xbb\xbfbom", b"a\rb\r", b"1234 ok", b"\x1b[31mred", b"y" * 700, _TS + b"z" * 5000, b"w" * 4100]


@pytest.fixture(params=[True, False], ids=["c", "python"])
def forms(request: pytest.FixtureRequest) -> Iterator[None]:
    was = native.use(request.param)
    try:
        yield
    finally:
        native.use(was)


def _log(rnd: random.Random, count: int) -> list[bytes]:
    # Mostly short lines (runs read many at once), a long one now and then (a run stops short of it).
    weights = [5, 5, 20, 2, 5, 3, 1, 1, 2, 1, 1, 2, 1, 1]
    return rnd.choices(_LINES, weights, k=count)


def _window(rnd: random.Random, lines: list[bytes], pieces: int) -> Window:
    """`lines` (line 1 first) cut into `pieces` chunks of whole lines; the last one maybe without a final newline."""
    cuts = sorted(rnd.sample(range(1, len(lines)), pieces - 1))
    window = Window()
    for lo, hi in zip([0, *cuts], [*cuts, len(lines)], strict=True):
        data = b"\n".join(lines[lo:hi]) + (b"\n" if hi < len(lines) or rnd.random() < 0.5 else b"")
        window.push(Chunk(data, lo + 1, data.count(b"\n")))
    return window


@pytest.mark.parametrize("seed", range(12))
def test_getters_give_each_lines_clean_text(forms: None, seed: int) -> None:
    rnd = random.Random(seed)
    lines = [*_log(rnd, 599), b"end"]  # a last line, so that no final newline is not an empty last line
    window = _window(rnd, lines, 3)
    want = {k: clean_text(line) for k, line in enumerate(lines, 1)}
    for k in rnd.sample(range(1, len(lines) + 1), 200):
        assert window.get(k) == want[k], k
    for _ in range(40):
        n = rnd.randint(1, len(lines))
        get = window.near(n, 8, 32)
        # What growing a block reads: a few lines above, then down line by line far past the run; then jumps.
        order = [*range(n - 3, n), *range(n, min(n + rnd.randint(0, 250), len(lines) + 3))]
        order += [rnd.randint(-2, len(lines) + 3) for _ in range(20)]
        for k in order:
            assert get(k) == want.get(k), (n, k)
