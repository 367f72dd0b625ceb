"""`_native.clean_line` (a line's cleaned text read in place, ci/_native.c) gives what the pure-Python `clean_text`
gives on the line's bytes, or None (the caller asks `clean_text`): on the edges of the runner's timestamp, `gh run
view --log` prefixes, BOMs, tabs, escape codes, invalid UTF-8, digits of other scripts, the 4000-character cut, and
on random mixes of them and every line of the bundled logs. Lines it answers for must be the common ones: it is None
only where the bytes cannot settle the text. `_native.clean_start` gives the Python form's answer on the same lines."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from repopilot.ci import native
from repopilot.ci.lines import clean_start, clean_text

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")
needs_clean_line = pytest.mark.skipif(not native.available() or not hasattr(native.NATIVE, "clean_line"),
                                      reason="the C extension was not built, or from an older source")

_TS = b"2024-05-06T07:08:09.1234567Z"
# Heads a line may start with: the runner's prefix and its near misses, other timestamps TIMESTAMP takes, BOMs,
# `JOB<TAB>STEP<TAB>` prefixes, digits of other scripts (`str.isdigit` and `\d` take them), escape codes.
_HEADS = [
    b"", _TS, _TS + b" ", _TS + b"  ", _TS[:-1], _TS[:-2], _TS[:27], b"2024-05-06T07:08:09Z ", b"2024-05-06T07:08:09Z",
    b"2024-05-06T07:08:09.Z ", b"2024-05-06T07:08:09.1Z", b"2024-05-06T07:08:09.12x", b"2024-05-06 07:08:09.1234567Z ",
    b"2024-05-06T07:08:09.1234567X ", b"2024/05/06T07:08:09.1234567Z ", b"20245-06-07T07:08:09.1234567Z ",
    b"2024-05-06T07:08:09.123\xd9\xa4Z ", b"2024-05-0\xd9\xa4T07:08:09Z ", b"2024-05-06T07:08:09.1234567\xc3\xa9 ",
    b"\xef\xbb\xbf", b"\xef\xbb\xbf" + _TS + b" ", b"\xef\xbb\xbf2024-05-06T07:08:09Z ", b"\xef\xbb",
    b"build\tRun tests\t" + _TS + b" ", b"build\tRun tests\t\xef\xbb\xbf" + _TS + b" ", b"build\tRun tests\t",
    b"build\tRun tests\t\xef\xbb\xbfx", b"b\xc3\xa9\tst\xff\t" + _TS + b" ", b"\t\t" + _TS, b"\t" + _TS + b" ",
    b"a\tb\tc\t" + _TS + b" ", b"build\tstep\t2024-05-06T07:08:09Z", b"\tat org.x.Y.z(Y.java:12)",
    b"1", b"12", b"123", b"1234", b"1234 ", b"12a4", b"1 test failed", b"0\t", b"9999-99-99T99:99:99Z ",
    "\u0662\u0660\u0662\u0664-05-06T07:08:09Z ".encode(), "\u0661".encode(), "\u00b2\u00b3".encode(),
    b"1\xc2\xb2", b"12\xd9\xa4",
    b"\xd9\xa2\xd9\xa0\xd9\xa2\xd9\xa4", b"\xff", b"\xc3", b"\x80abc", b"\xe2\x82",
    b"\x1b[31m", b"\x1b", _TS + b" \x1b[0m", b"[INFO] ", b"##[group]Run x", b"##[error]", b" ", b"\r", b"x",
]
# What follows the head.
_TAILS = [
    b"", b"hello", b"\r", b"\r\n", b"a\rb\r", b"\t", b"x\ty", b"\tat a.B(C.java:1)", b"\xff\xfe bad", b"caf\xc3\xa9",
    b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98\x80 smile", b"\x1b[0m", b"\x00", b" \t " + _TS, b"\n", b"\nmore",
    b"\xef\xbb\xbf", "日本語".encode(),
]


def _lines() -> Iterator[bytes]:
    for head, tail in itertools.product(_HEADS, _TAILS):
        yield head + tail
    for pad in (0, 1, 2, 3, 297, 298, 299, 300, 301, 3970, 3971, 3972, 3999, 4000, 4001, 5000):
        for fill in (b"a", b"\xc3\xa9", b"\xff"):
            body = fill * pad
            yield body + b"\tb\t" + _TS + b" x"  # a tab about the 300th character
            yield body + b"\t" + _TS
            yield _TS + b" " + body + b"end"  # about the cut
            yield b"1234" + body + b"\tj\ts\t" + _TS


def _in_python(form: Callable[[bytes], T], raw: bytes) -> T:
    """What the pure-Python form gives (`clean_text` and `clean_start` call the C forms when they are on)."""
    was = native.use(False)
    try:
        return form(raw)
    finally:
        native.use(was)


def _check(line: bytes, data: bytes | None = None, start: int = 0) -> str | None:
    assert native.NATIVE is not None
    got: str | None = native.NATIVE.clean_line(line if data is None else data, start)
    head = line.split(b"\n", 1)[0]
    if got is not None:
        assert got == _in_python(clean_text, head), line
    assert clean_text(head) == _in_python(clean_text, head), line  # through clean_text, C or not
    return got


@needs_clean_line
def test_clean_line_gives_clean_texts_result_or_asks_for_it_on_tricky_lines() -> None:
    lines = list(_lines())
    assert len(lines) > 1300
    told = sum(_check(line) is not None for line in lines)
    assert told > len(lines) // 2


@needs_clean_line
@pytest.mark.parametrize(("line", "told"), [
    (_TS + b" hello", True), (_TS + b"hello", True), (_TS, True), (b"", True), (b"plain", True), (b"a\rb\r", True),
    (b"\tat a.B(C.java:1)", True), (b"build\tRun\t" + _TS + b" x", True), (b"1234 passed", True),
    (b"caf\xc3\xa9 \xff", True), (b"2024-05-06T07:08:09Z x", True), (b"a" * 4000, True),
    (b"a" * 4001, False),  # maybe cut at 4000 characters
    (b"\x1b[0mx", False), (b"x\x1b", False),  # an escape code the chunk's cleaning left
    (b"\xef\xbb\xbf" + _TS + b" x", False), (b"\xc3\xa9", False),  # not ASCII at the start: a BOM maybe
    # Digits of another script: `\d` and `str.isdigit` may take them.
    ("\u0661\u0662\u0663\u0664".encode(), False), (b"12\xd9\xa4", False),
    (b"\xc3\xa9" * 200 + b"\tb\t" + _TS, False),  # a tab maybe among the first 300 characters
])
def test_what_clean_line_answers_for(line: bytes, told: bool) -> None:
    assert (_check(line) is not None) is told


@needs_clean_line
def test_clean_line_reads_the_line_at_start_up_to_the_newline() -> None:
    assert native.NATIVE is not None
    lines = [_TS + b" one", b"two\t" + _TS, b"", b"\xff three", _TS + b" \x1b[0mfour", b"five"]
    data = b"\n".join(lines)
    start = 0
    for line in lines:
        _check(line, data, start)
        start += len(line) + 1
    assert native.NATIVE.clean_line(data + b"\n", len(data) + 1) == ""  # the empty line after the last newline
    for bad in (-1, len(data) + 1):
        with pytest.raises(IndexError):
            native.NATIVE.clean_line(data, bad)
    with pytest.raises(TypeError):
        native.NATIVE.clean_line(bytearray(data), 0)


@needs_clean_line
def test_clean_line_on_random_mixes_of_the_tricky_pieces() -> None:
    rnd = random.Random(16)
    pieces = _HEADS + _TAILS + [b"\t", b"-", b"T", b"Z", b":", b".", b" ", b"0", b"7", b"\xef\xbb\xbf"]
    for _ in range(20000):
        line = b"".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 6)))
        _check(line)


@needs_clean_line
def test_clean_line_on_every_line_of_the_bundled_logs() -> None:
    logs = sorted((ROOT / "examples").glob("*.log")) + sorted((ROOT / "tests" / "ci" / "rule_logs").glob("*.log"))
    assert len(logs) > 40
    told = total = 0
    for log in logs:
        data = log.read_bytes()
        start = 0
        for line in data.split(b"\n"):
            total += 1
            told += _check(line, data, start) is not None
            start += len(line) + 1
    assert told > total * 0.9


@needs_clean_line
def test_clean_start_in_c_gives_the_python_forms_answer() -> None:
    rnd = random.Random(29)
    pieces = _HEADS + _TAILS
    lines = list(_lines()) + [b"".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 5))) for _ in range(5000)]
    told = 0
    for line in lines:
        got = clean_start(line)
        assert got == _in_python(clean_start, line), line
        told += got is not None
    assert told > len(lines) // 10  # most random mixes hold a tab or an escape code
