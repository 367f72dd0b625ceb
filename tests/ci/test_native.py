"""The C forms of the scanner's per-byte passes (ci/_native.c) give exactly what the pure-Python forms give: ANSI
stripping byte for byte against the regex on random and adversarial bytes, line numbers and line starts of matches
against `Scanner._locate`'s own loop, hyperscan's matches kept in C against the Python callback, and whole scans and
diagnoses with and without the extension."""

from __future__ import annotations

import io
import random
import shutil
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from repopilot.ci import native
from repopilot.ci.catalog import load_catalog
from repopilot.ci.engine import diagnose_input
from repopilot.ci.lines import ANSI_BYTES, strip_ansi_bytes
from repopilot.ci.scanner import Scanner, ScanResult, hyperscan_available
from repopilot.ci.sources import open_sources

ROOT = Path(__file__).resolve().parents[2]
needs_c = pytest.mark.skipif(not native.available(), reason="the C extension was not built")
# An editable install keeps the extension it built until it is installed again: one built from an older source lacks
# what came later (and the scanner does without it: ci/confirm.py).
needs_take = pytest.mark.skipif(not native.available() or not hasattr(native.NATIVE.Matches, "take_lines"),
                                reason="the C extension was built from an older source (pip install -e . again)")


def _regex(data: bytes) -> bytes:
    return b"".join(ANSI_BYTES.split(data))


def test_the_extension_is_built_where_a_compiler_is() -> None:
    # An install on a machine with a C compiler builds it (setup.py; also in editable mode): CI runs on one, so a
    # build that silently stopped working fails here rather than only making big logs slower.
    if not (shutil.which(sysconfig.get_config_var("CC").split()[0]) or shutil.which("cc")):
        pytest.skip("no C compiler")
    assert native.available()


# Every form ANSI_BYTES knows, each cut short at every length (the regex then keeps the ESC, or takes `ESC x` as a
# two-byte sequence), and the bytes that end or break a sequence.
_FORMS = [b"\x1b[0m", b"\x1b[1;31m", b"\x1b[?25l", b"\x1b[>4m", b"\x1b[ q", b"\x1b[12;3 @", b"\x1b]0;title\x07",
          b"\x1b]8;;http://x\x1b\\", b"\x1bPq#0;2\x1b\\", b"\x1bX sos \x1b\\", b"\x1b^pm\x1b\\", b"\x1b_apc\x1b\\",
          b"\x1b(B", b"\x1b#8", b"\x1b%G", b"\x1b ( B", b"\x1b7", b"\x1b=", b"\x1bM", b"\x1bc", b"\x1b~", b"\x1b0"]
_BREAKS = [b"\n", b"\x07", b"\x1b", b"\\", b"\r", b"\x00", b"\x7f", b"\xff", b"\xc3\xa9", b"\x80", b"\t", b" "]


def _adversarial() -> Iterator[bytes]:
    for form in _FORMS:
        for cut in range(1, len(form) + 1):
            head = form[:cut]
            yield head
            for brk in _BREAKS:
                yield head + brk + b"x"
                yield b"ab" + head + brk + form
    yield b"\x1b" * 5 + b"[m"
    yield b"\x1b\x1b[31m\x1b]\x1b]0;t\x07\x1b[\n\x1b[1;2"
    yield b"\x1b]0;never ended\n\x1bPno end either\x1b x\n"


def test_strip_ansi_gives_what_the_regex_gives_on_every_form_and_its_breaks() -> None:
    cases = list(_adversarial())
    assert len(cases) > 1000
    for case in cases:
        assert strip_ansi_bytes(case) == _regex(case), case


@needs_c
def test_strip_ansi_in_c_gives_what_the_regex_gives_on_random_bytes() -> None:
    assert native.NATIVE is not None
    strip = native.NATIVE.strip_ansi
    rng = random.Random(16)
    # Bytes that matter to the grammar, and pieces of sequences, drawn at random; then bytes of any value.
    alphabet = [bytes([b]) for b in b"\x1b[]\\\x07\nPX^_( /0?;m@~\x7f\xff#%1\r"] + [b"\x1b[", b"\x1b]", b"\x1b\\"]
    for _ in range(30_000):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert strip(data) == _regex(data), data
    for _ in range(3_000):
        data = bytes(rng.randrange(256) if rng.random() < 0.5 else rng.choice(b"\x1b[]\\\x07\n;0m")
                     for _ in range(rng.randint(0, 300)))
        assert strip(data) == _regex(data), data
    for case in _adversarial():
        assert strip(case) == _regex(case), case


@needs_c
def test_strip_ansi_in_c_on_a_big_buffer_and_other_buffers() -> None:
    assert native.NATIVE is not None
    strip = native.NATIVE.strip_ansi
    # Past the size where the interpreter lock is let go, ending inside a sequence.
    line = b"[\x1b[1;34mINFO\x1b[m] Tests run: 1, \x1b]8;;u\x1b\\Failures\x1b]8;;\x1b\\: 0 \xe9\x1b(B\x1b\n"
    big = line * 5000 + b"\x1b[1;3"
    assert len(big) > 256 * 1024
    assert strip(big) == _regex(big)
    assert strip(bytearray(big)) == _regex(big) and strip(memoryview(big)) == _regex(big)
    plain = b"no escapes here\n" * 10
    assert strip(plain) is plain  # nothing to remove: the same object, as the Python form returns
    assert strip(b"") == b""


def _python_locate(data: bytes, first: int, matches: list[tuple[int, int]]) -> tuple[object, ...]:
    was = native.use(False)
    try:
        return Scanner._locate(data, first, list(matches))
    finally:
        native.use(was)


@needs_c
def test_locate_in_c_gives_the_python_line_numbers_and_starts() -> None:
    assert native.NATIVE is not None
    rng = random.Random(7)
    for _ in range(2_000):
        data = bytes(rng.choice(b"ab\n\n\r ") for _ in range(rng.randint(0, 400)))
        if rng.random() < 0.3:
            data *= rng.randint(1, 400)  # past the size where the lock is let go
        ends = [rng.randint(0, len(data)) for _ in range(rng.randint(0, 30))]
        matches = [(e, rng.randint(0, 400)) for e in ends]  # unsorted, repeated ends, a match ending at 0
        first = rng.randint(1, 10**6)
        want = _python_locate(data, first, matches)
        assert native.NATIVE.locate(data, first, matches) == want
        found = native.NATIVE.Matches()
        for end, pid in matches:
            found(pid, 0, end, 0, None)
        assert len(found) == len(matches) and found.pairs() == matches
        assert native.NATIVE.locate(data, first, found) == want


@needs_c
@pytest.mark.skipif(not hyperscan_available(), reason="no hyperscan wheel")
def test_hyperscan_matches_kept_in_c_are_the_python_callbacks_matches() -> None:
    sc = Scanner(load_catalog(), engine="hyperscan")
    data = strip_ansi_bytes(_mixed_log())
    with_c = sc.engine.scan(data)
    assert not isinstance(with_c, list)
    was = native.use(False)
    try:
        in_python = sc.engine.scan(data)
    finally:
        native.use(was)
    assert isinstance(in_python, list) and len(in_python) > 100
    assert sorted(native.pairs(with_c)) == sorted(in_python)


def _mixed_log() -> bytes:
    """Real logs of many tools, coloured Maven lines among them, a build error at the end."""
    logs = sorted((ROOT / "examples").glob("*.log")) + sorted((ROOT / "tests" / "ci" / "rule_logs").glob("*.log"))
    body = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in logs)
    coloured = b"".join(b"[\x1b[1;34mINFO\x1b[m] Running com.example.T%d\n[\x1b[1;34mINFO\x1b[m] Tests run: 3, "
                        b"Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in com.example.T%d\n" % (k, k)
                        for k in range(300))
    return body + coloured + body + (ROOT / "examples" / "maven-compile-error.log").read_bytes()


def _facts(res: ScanResult) -> dict[str, object]:
    return {
        "lines": res.lines, "size": res.size, "capped": res.capped, "text": res.text,
        "hits": [(h.rule.id, h.line, h.first, h.last, h.fields, h.message, h.late) for h in res.hits],
        "groups": [(m.line, m.text) for m in res.groups], "endgroups": res.endgroups, "successes": res.successes,
        "errors": [(m.line, m.text) for m in res.errors], "tail": [(m.line, m.text) for m in res.tail],
        "keywords": [(m.line, m.text) for m in res.keywords], "commands": [(m.line, m.text) for m in res.commands],
        "losers": [(c.rule_id, c.line, c.winner) for c in res.losers], "in_script": res.in_script,
        "passed": res.passed_classes, "jobs": list(res.jobs),
    }


@needs_take
def test_matches_take_lines_gathers_each_line_once_as_the_python_form_does() -> None:
    import random

    from repopilot.ci import _native, confirm

    rng = random.Random(7)
    for _ in range(200):
        data = bytes(rng.choice(b"ab\n") for _ in range(rng.randrange(1, 60)))
        pairs = sorted((rng.randrange(0, len(data) + 1), rng.randrange(0, 4)) for _ in range(rng.randrange(0, 12)))
        mask = bytes([0, 1, 1])  # pattern id 3 lies past the mask: never taken
        found = _native.Matches()
        for end, pid in pairs:
            found(pid, 0, end)
        taken = [(end, pid) for end, pid in pairs if pid in (1, 2)]
        assert found.take_lines(data, mask) == getattr(confirm, "_lines")(data, taken)
        assert found.pairs() == [(e, p) for e, p in pairs if p not in (1, 2)]  # the rest, in their order


@needs_c
@pytest.mark.parametrize("engine", ["hyperscan", "re"])
def test_a_scan_finds_the_same_with_and_without_the_extension(engine: str) -> None:
    if engine == "hyperscan" and not hyperscan_available():
        pytest.skip("no hyperscan wheel")
    sc = Scanner(load_catalog(), engine=engine, chunk_size=8 * 1024)  # many pieces: many boundaries
    log = _mixed_log()
    with_c = _facts(sc.scan(io.BytesIO(log)))
    was = native.use(False)
    try:
        in_python = _facts(sc.scan(io.BytesIO(log)))
    finally:
        native.use(was)
    assert with_c == in_python and len(with_c["hits"]) > 20  # type: ignore[arg-type]


@needs_c
def test_every_bundled_log_gets_the_same_report_with_and_without_the_extension(python_forms: None) -> None:
    logs = sorted((ROOT / "examples").glob("*.log")) + sorted((ROOT / "tests" / "ci" / "rule_logs").glob("*.log"))
    assert len(logs) > 40
    in_python = [diagnose_input(open_sources(str(p))[0]).report().contract() for p in logs]
    native.use(True)
    with_c = [diagnose_input(open_sources(str(p))[0]).report().contract() for p in logs]
    assert with_c == in_python


def test_the_python_forms_still_diagnose(python_forms: None) -> None:
    assert native.NATIVE is None
    log = ROOT / "examples" / "maven-compile-error.log"
    report = diagnose_input(open_sources(str(log))[0]).report()
    assert report.category == "build" and report.failures
