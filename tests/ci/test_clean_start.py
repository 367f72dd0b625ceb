"""A marker line's start told from its bytes: always what the cleaned text says, or "ask `clean_text`"."""

from __future__ import annotations

import io

import pytest

from repopilot.ci.catalog import load_catalog
from repopilot.ci.lines import clean_start, clean_text
from repopilot.ci.scanner import _KEEP_MARKERS, Scanner, hyperscan_available

_TS = b"2024-05-06T07:08:09.1234567Z "
_PREFIXES = (b"##[group]", b"##[group]Run ", b"##[endgroup]", b"##[error]")


@pytest.mark.parametrize(("raw", "told"), [
    (b"##[group]Run mvn -B verify", True),
    (_TS + b"##[group]Run mvn -B verify", True),
    (_TS[:-1] + b"##[endgroup]", True),  # no space after the timestamp
    (b"##[endgroup]\r", True),  # a CRLF line
    (b"##[group]build \xff\xfe", True),  # invalid UTF-8 after the marker
    (b"", True),
    (_TS, True),  # the timestamp alone
    (b"[INFO] ##[group]", True),
    (b"\xff##[group]", None),  # not ASCII at the start: only clean_text tells
    (b"\xef\xbb\xbf##[group]x", None),  # a BOM
    (b"\x1b[36;1m##[group]Run x\x1b[0m", None),  # an escape code left in the line
    (b"build\tDo it\t" + _TS + b"##[group]Run x", None),  # `gh run view --log`: job and step before the time
    (b"2024-05-06T07:08:09Z ##[group]x", None),  # a timestamp of another width
    (_TS[:-2], None),  # 28 bytes: clean_text's own edge
    ("٢٠٢٤-05-06T07:08:09Z ##[group]x".encode(), None),  # digits of another script
    (b"1234 ##[group]x", None),
])
def test_the_bytes_tell_what_clean_text_says_or_nothing(raw: bytes, told: bool | None) -> None:
    start = clean_start(raw)
    assert (start is not None) is bool(told)
    if start is not None:
        for prefix in _PREFIXES:
            assert raw.startswith(prefix, start) == clean_text(raw).startswith(prefix.decode())
        assert raw[start:].decode("utf-8", "replace").startswith(clean_text(raw)[:12])


def _actions_log(groups: int) -> bytes:
    """An Actions log: `groups` steps, then a failing one whose script echo matches a rule inside its header."""
    out = [_TS + b"##[group]Run step %d\n" % k + _TS + b"echo %d\n" % k + _TS + b"##[endgroup]\n"
           for k in range(groups)]
    out.append(_TS + b"##[group]Run mvn -B compile\n")
    out.append(_TS + b"[ERROR] /w/src/A.java:[1,2] cannot find symbol\n")  # inside the `Run` header
    out.append(_TS + b"##[endgroup]\n")
    out.append(_TS + b"[ERROR] /w/src/B.java:[3,4] cannot find symbol\n")  # the step's own output
    out.append(_TS + b"##[error]Process completed with exit code 1.\n")
    return b"".join(out)


@pytest.mark.parametrize("engine", ["re", "hyperscan"])
def test_groups_past_the_kept_ones_still_open_and_close(engine: str) -> None:
    if engine == "hyperscan" and not hyperscan_available():
        pytest.skip("no hyperscan wheel")
    data = _actions_log(_KEEP_MARKERS + 50)
    res = Scanner(load_catalog(), engine=engine, chunk_size=16 * 1024).scan(io.BytesIO(data))
    assert len(res.groups) == len(res.endgroups) == _KEEP_MARKERS
    first = 3 * (_KEEP_MARKERS + 50) + 2
    hits = {h.line: h.rule.id for h in res.hits}
    assert hits.get(first) == hits.get(first + 2) == "maven.compile-error"
    assert first in res.in_script and first + 2 not in res.in_script
