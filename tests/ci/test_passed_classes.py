"""What a Surefire test class prints before it passes (a logged exception) is not a cause of the failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from repopilot.ci import diagnose_source

LOGGED = """[INFO] Running com.acme.ParserTest
java.lang.IllegalStateException: expected in this test
\tat com.acme.Parser.parse(Parser.java:12)
\tat com.acme.ParserTest.crashes(ParserTest.java:30)
[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.41 s - in com.acme.ParserTest
"""
FAILING = """[INFO] Running com.acme.ClientTest
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.2 s <<< FAILURE! - in com.acme.ClientTest
[ERROR] com.acme.ClientTest.connects  Time elapsed: 0.1 s  <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <200> but was: <500>
\tat com.acme.ClientTest.connects(ClientTest.java:21)
"""


def _diagnose(tmp_path: Path, text: str) -> dict:
    log = tmp_path / "surefire.log"
    log.write_text(text)
    [r] = [rep.contract() for rep in diagnose_source(str(log))]
    return r


def test_exception_logged_by_a_passing_class_is_not_causal(tmp_path: Path) -> None:
    r = _diagnose(tmp_path, "[INFO] start\n" + LOGGED + FAILING + "[INFO] BUILD FAILURE\n")
    assert r["category"] == "test"
    assert not set(range(3, 6)) & set(r["error_lines"])  # the passing class's exception
    assert 10 in r["error_lines"]  # the real assertion failure


@pytest.mark.parametrize("summary", [
    "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.41 s <<< FAILURE! - in "
    "com.acme.ParserTest",
    "[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.41 s - in com.acme.OtherTest",
])
def test_exception_stays_causal_unless_its_own_class_passed(tmp_path: Path, summary: str) -> None:
    text = "[INFO] start\n" + LOGGED.replace(LOGGED.splitlines()[-1], summary) + "[INFO] BUILD FAILURE\n"
    r = _diagnose(tmp_path, text)
    assert 3 in r["error_lines"]


def test_summary_places_found_once_answer_as_find_does() -> None:
    # The `Tests run: ` places a chunk's look-ups share (testclasses._Found) give what `bytes.find` gives, in any
    # order of asking: forwards line by line, backwards, jumping past what is known, at and past the end.
    import random

    from repopilot.ci.testclasses import _TESTS_RUN, _Found

    rng = random.Random(7)
    lines = [rng.choice([b"[INFO] Tests run: 3, Failures: 0 - in a.B", b"[INFO] Running a.B", b"x" * 5000, b""])
             for _ in range(400)]
    data = b"\n".join(lines)
    found = _Found(data)
    asked = [rng.randrange(len(data) + 1) for _ in range(300)] + list(range(0, len(data), 997))
    asked += [len(data), 0, len(data) - 1]
    for pos in asked:
        assert found.find(pos) == data.find(_TESTS_RUN, pos), pos
        hit = found.find(pos)
        if hit != -1:  # then on from that line's end, as a look-up goes
            end = data.find(b"\n", hit)
            end = len(data) if end == -1 else end
            assert found.find(end) == data.find(_TESTS_RUN, end)
