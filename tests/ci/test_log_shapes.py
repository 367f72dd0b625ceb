"""Log shapes that must not change the diagnosis: a log saved with Windows line endings (CRLF, as downloaded
from a Windows runner) diagnoses the same lines as its LF twin; `\\r` progress-bar overwrites and very long lines
do not hide the failure after them."""

from __future__ import annotations

from pathlib import Path

import pytest

from repopilot.ci.engine import Result, diagnose_input
from repopilot.ci.lines import display_text, segments
from repopilot.ci.sources import open_sources

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ci"

# rustfmt's diff: its context lines start with one space, and a blank source line is a line holding one space;
# the block must hold them whatever the line ending.
RUSTFMT = "\n".join([
    '##[group]Run cargo fmt --all -- --check',
    'cargo fmt --all -- --check',
    'shell: /usr/bin/bash -e {0}',
    '##[endgroup]',
    'Diff in /home/runner/work/stock/stock/src/item.rs:12:',
    ' ',
    ' impl Item {',
    '     pub fn new(sku: &str) -> Self {',
    '-        Item { sku: Sku(sku.to_string()) }',
    '+        Item {',
    '+            sku: Sku(sku.to_string()),',
    '+        }',
    '     }',
    ' }',
    ' ',
    '##[error]Process completed with exit code 1.',
]) + "\n"

PYTEST = """\
+ pytest -q
F.
=================================== FAILURES ===================================
________________________________ test_roundtrip ________________________________

    def test_roundtrip():
>       assert load(dump(1)) == 2
E       assert 1 == 2

tests/test_io.py:6: AssertionError
=========================== short test summary info ============================
FAILED tests/test_io.py::test_roundtrip - assert 1 == 2
1 failed, 1 passed in 0.02s
"""


def _diagnose(tmp_path: Path, name: str, data: bytes) -> Result:
    folder = tmp_path / name
    folder.mkdir()
    path = folder / "job.log"  # one name for both twins: the excerpt's header names the file
    path.write_bytes(data)
    return diagnose_input(open_sources(str(path))[0])


def _same(a: Result, b: Result) -> None:
    assert b.diagnosis.error_lines == a.diagnosis.error_lines
    assert b.diagnosis.category == a.diagnosis.category
    assert [(f.rule, f.first, f.last) for f in b.diagnosis.failures] == [
        (f.rule, f.first, f.last) for f in a.diagnosis.failures]
    assert b.excerpt.ranges == a.excerpt.ranges


@pytest.mark.parametrize("text", [RUSTFMT, PYTEST], ids=["rustfmt-diff", "pytest"])
def test_crlf_log_diagnoses_like_its_lf_twin(tmp_path: Path, text: str) -> None:
    lf = _diagnose(tmp_path, "lf", text.encode())
    crlf = _diagnose(tmp_path, "crlf", text.replace("\n", "\r\n").encode())
    assert lf.diagnosis.error_lines, "the LF log must have causal lines for the comparison to mean anything"
    _same(lf, crlf)


def test_crlf_rustfmt_block_keeps_its_blank_context_lines(tmp_path: Path) -> None:
    crlf = _diagnose(tmp_path, "crlf", RUSTFMT.replace("\n", "\r\n").encode())
    # The whole diff, its one-space lines included (lines 5-15), not the heading and the first hunk only.
    assert set(range(5, 15)) <= set(crlf.diagnosis.error_lines)


def test_crlf_fixture_matches_lf(tmp_path: Path) -> None:
    data = (FIXTURES / "go-build-error.log").read_bytes()
    _same(_diagnose(tmp_path, "lf", data), _diagnose(tmp_path, "crlf", data.replace(b"\n", b"\r\n")))


def test_segments_of_crlf_lines() -> None:
    assert segments(" \r") == [" "]
    assert segments("\r") == [""]
    assert segments("  at foo (a.js:1:2)\r") == ["  at foo (a.js:1:2)"]
    # A progress bar overwritten in place still shows its last state; a CRLF ending does not change that.
    bar = "".join(f"{i}%\r" for i in range(0, 100, 10)) + "100% done"
    assert display_text(bar + "\r") == display_text(bar) == "100% done"


def test_progress_bars_and_very_long_lines_do_not_hide_the_failure(tmp_path: Path) -> None:
    bar = "".join(f"Downloading {i}% [{'=' * (i // 5)}]\r" for i in range(101)) + "done"
    noise = ["+ ./fetch-assets.sh", bar, "x" * 300_000, "const a=1;" * 20_000]
    lines = noise + PYTEST.splitlines()
    for eol in ("\n", "\r\n"):
        res = _diagnose(tmp_path, "long" + str(len(eol)), (eol.join(lines) + eol).encode())
        d = res.diagnosis
        assert d.category == "test"
        first = len(noise) + 1
        # The assertion (`E       assert 1 == 2`) and the summary line are causal, none of the noise is.
        assert first + 7 in d.error_lines and first + 11 in d.error_lines
        assert min(d.error_lines) > len(noise)
        assert res.excerpt.tokens <= 1500
