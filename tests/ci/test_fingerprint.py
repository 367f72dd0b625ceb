"""Failure fingerprints: the same failure on another run, runner or day keeps its identity; different ones differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repopilot.ci import RENDERERS, DiagnosisReport, read_report
from repopilot.ci.fingerprint import fingerprint, identifies, normalise_message, normalise_path
from repopilot.cli.main import main
from repopilot.core import load_trace

from .test_same_failure import PYTEST_LOG


@pytest.mark.parametrize(("a", "b"), [
    ("connect ECONNREFUSED 127.0.0.1:41233", "connect ECONNREFUSED 127.0.0.1:39001"),
    ("FileNotFoundError: /tmp/pytest-of-runner/pytest-3/test_x0/data.csv",
     "FileNotFoundError: /tmp/pytest-of-ci/pytest-17/test_x1/data.csv"),
    ("timed out after 3.01 sec at 2026-11-03T10:22:01.123Z", "timed out after 12 sec at 2026-12-24T23:59:59Z"),
    ("object at 0x7f3a2c1b9e80 is not callable", "object at 0x55d1e0a0c2f0 is not callable"),
    ("Randomized with seed 48213", "Randomized with seed 7"),
    ("cache key 4e1f2a9c0b7d3e5f missing", "cache key 9a8b7c6d5e4f3a2b missing"),
    ("worker pid 4412 exited", "worker pid 977 exited"),
    ("/home/runner/work/app/app/src/x.py:3: error", "/builds/group/app/src/x.py:3: error"),
])
def test_what_varies_between_runs_is_masked(a: str, b: str) -> None:
    assert normalise_message(a) == normalise_message(b)


@pytest.mark.parametrize(("a", "b"), [
    ("error[E0308]: mismatched types", "error[E0599]: no method named `len`"),
    ("ModuleNotFoundError: No module named 'yaml'", "ModuleNotFoundError: No module named 'toml'"),
    ("cannot find symbol: variable sizee", "cannot find symbol: variable count"),
])
def test_different_failures_keep_different_messages(a: str, b: str) -> None:
    assert normalise_message(a) != normalise_message(b)


def test_fingerprint_ignores_line_numbers_and_workspaces_but_not_the_test_or_file() -> None:
    base = {"rule": "pytest.failure", "category": "test", "message": "assert 3 == 5"}
    one = fingerprint(**base, file="/home/runner/work/p/p/tests/test_a.py", test="test_add")
    assert one == fingerprint(**base, file="tests/test_a.py", test="test_add")
    assert one != fingerprint(**base, file="tests/test_a.py", test="test_sub")
    assert one != fingerprint(**base, file="tests/test_b.py", test="test_add")
    assert one != fingerprint(**{**base, "rule": "jest.test-failure"}, file="tests/test_a.py", test="test_add")
    assert len(one) == 16 and int(one, 16) >= 0
    assert normalise_path("D:\\a\\p\\p\\src\\x.c") == "src/x.c"


def test_a_summary_without_file_or_test_is_told_apart_by_its_lines() -> None:
    summary = {"rule": "ctest.failure", "category": "test", "message": "The following tests FAILED:"}
    assert (fingerprint(**summary, lines=["The following tests FAILED:", "  6 - Registry.Missing (Timeout)"])
            != fingerprint(**summary, lines=["The following tests FAILED:", "  2 - Parser.Empty (Failed)"]))
    assert (fingerprint(**summary, lines=["  6 - Registry.Missing (Timeout)"])
            == fingerprint(**summary, lines=["  7 - Registry.Missing (Timeout)"]))


def test_trailers_do_not_identify() -> None:
    assert not identifies("Process completed with exit code 1.")
    assert not identifies("Process completed with exit code -6.")
    assert not identifies("     ^^^^^")
    assert identifies("Process completed with exit code 137.")  # the OOM killer says something
    assert identifies("ZeroDivisionError: division by zero")


def test_every_format_and_the_trace_carry_the_fingerprint(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ci.log"
    log.write_text(PYTEST_LOG)
    assert main(["diagnose", str(log), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    fp = report["failures"][0]["fingerprint"]
    assert len(fp) == 16
    parsed = DiagnosisReport.model_validate(report)
    assert fp[:8] in RENDERERS["markdown"]([parsed])
    assert f"fingerprint {fp[:8]}" in RENDERERS["github"]([parsed])
    assert main(["diagnose", str(log)]) == 0
    assert f"fp {fp[:8]}" in capsys.readouterr().out
    assert fp in json.dumps(load_trace(report["trace_run_id"]).model_dump(mode="json"))
    # The same log elsewhere (another checkout, other timings) is the same failure.
    moved = tmp_path / "moved.log"
    moved.write_text(PYTEST_LOG.replace("in 0.02s", "in 1.91s"))
    assert main(["diagnose", str(moved), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["failures"][0]["fingerprint"] == fp


def test_a_report_recorded_before_fingerprints_gets_the_same_one() -> None:
    old = {"category": "test", "failures": [{"rule": "pytest.failure", "category": "test", "message": "boom",
                                             "test": "test_x"}]}
    report = read_report(old)
    assert report is not None
    assert report.failures[0].fingerprint == fingerprint(rule="pytest.failure", category="test", message="boom",
                                                         test="test_x")
