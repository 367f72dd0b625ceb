"""The newline count a late hit's window is numbered by (ci/late.py `_newlines`): the C form (`_native.newlines`,
eight bytes at a time, on a slice of a buffer) against `bytes.count`, and a kept hit's window the same with and
without the extension."""

from __future__ import annotations

import random

import pytest

from repopilot.ci import late, native
from repopilot.ci.late import LateHit

needs_c = pytest.mark.skipif(not native.available(), reason="the C extension was not built")


@needs_c
def test_newlines_in_c_count_what_bytes_count_counts_on_any_slice() -> None:
    rng = random.Random(7)
    for _ in range(300):
        # Around the 255 words (2,040 bytes) whose newlines the C form sums per byte before adding them up.
        size = rng.choice([0, 1, 7, 8, 9, 63, 64, 65, 1000, 2039, 2040, 2041, 2048, 4087, 4088, 4089, 40000])
        data = bytes(rng.choice(b"\n\n\nab\x0a\x8a\x00\xff") for _ in range(size))
        start = rng.randint(0, size)
        end = rng.randint(start, size)
        assert late._newlines(data, start, end) == data.count(b"\n", start, end)


@needs_c
def test_newlines_in_c_count_a_run_of_nothing_but_newlines() -> None:
    data = b"\n" * 10000  # every byte of every word a newline: the most each byte's sum holds
    for start, end in [(0, 10000), (3, 9999), (0, 2040), (1, 2041), (8, 4096), (5, 5)]:
        assert late._newlines(data, start, end) == end - start


def test_newlines_without_the_extension_count_as_bytes_count(python_forms: None) -> None:
    data = b"a\nbb\n\nccc\n"
    assert [late._newlines(data, 0, k) for k in range(len(data) + 1)] == [data.count(b"\n", 0, k)
                                                                        for k in range(len(data) + 1)]


def _kept(data: bytes, line: int, at: int) -> LateHit:
    item = LateHit(line, (0,), ("r",), None)
    item.data, item.lo, item.hi, item.at, item.size = data, 0, len(data), at, len(data)
    return item


def _seen(item: LateHit) -> list[str | None]:
    window = item.window()
    return [window.get(k) for k in range(item.line - 5, item.line + 6)]


def test_a_kept_hits_window_is_numbered_the_same_with_and_without_the_extension() -> None:
    data = b"".join(b"line %d\n" % k for k in range(1, 9)) + b"tail"
    at = data.index(b"line 4")
    with_c = _seen(_kept(data, 104, at))
    was = native.use(False)
    try:
        without = _seen(_kept(data, 104, at))
    finally:
        native.use(was)
    assert with_c == without
    assert with_c[1:] == [None, "line 1", "line 2", "line 3", "line 4", "line 5", "line 6", "line 7", "line 8", "tail"]
