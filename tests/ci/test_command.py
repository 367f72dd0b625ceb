"""The failing command read from the log, and narrowed to the failing tests where the tool allows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from repopilot.ci import DiagnosisReport, ReportFailure, ReportLine, diagnose_input, open_sources
from repopilot.ci.command import find_command, log_lines, narrow

TS = "2026-12-01T10:00:00.0000000Z "


def _report(first_line: int, test: str | None = None, file: str | None = None, text: str = "") -> DiagnosisReport:
    failure = ReportFailure(rule="r", causal=True, test=test, file=file,
                            lines=[ReportLine(line=first_line, text=text)])
    return DiagnosisReport(category="test", failures=[failure], error_lines=[first_line])


def test_a_github_run_block_is_the_command_with_its_line(tmp_path: Path) -> None:
    log = tmp_path / "ci.log"
    log.write_text("".join(TS + x + "\n" for x in [
        "##[group]Run actions/checkout@v4", "##[endgroup]",
        "##[group]Run make lint", "make lint", "shell: /usr/bin/bash -e {0}", "##[endgroup]", "ok",
        "##[group]Run python -m pytest -q", "python -m pytest -q", "shell: /usr/bin/bash -e {0}",
        "env:", "  FOO: 1", "##[endgroup]",
        "FAILED tests/test_calc.py::test_add - assert -1 == 5", "##[error]Process completed with exit code 1."]))
    lines = log_lines(open_sources(str(log))[0])
    found = find_command(lines, _report(14, text="FAILED tests/test_calc.py::test_add - assert -1 == 5"))
    assert found is not None
    assert found.command == "python -m pytest -q tests/test_calc.py::test_add"
    assert found.narrowed_from == "python -m pytest -q"
    assert found.source.startswith("log line 8: ##[group]Run")


def test_a_multi_line_run_script_is_kept_whole_and_not_narrowed() -> None:
    lines = ["##[group]Run pip install -e .", "pip install -e .", "pytest -q", "shell: bash", "##[endgroup]",
             "FAILED tests/test_x.py::test_y"]
    found = find_command(lines, _report(6, text="FAILED tests/test_x.py::test_y"))
    assert found is not None and found.command == "pip install -e .\npytest -q" and found.narrowed_from is None


def test_a_shell_trace_nearest_before_the_failure_wins_and_echo_is_skipped() -> None:
    lines = ["+ make build", "built", "+ ./run-tests.sh unit", "+ echo done?", "FAIL: test_parse", "+ make clean"]
    found = find_command(lines, _report(5))
    assert found is not None and found.command == "./run-tests.sh unit" and "+ trace" in found.source
    assert found.source.startswith("log line 3")


def test_a_gitlab_dollar_line() -> None:
    found = find_command(["$ cargo test", "test tests::adds ... FAILED"], _report(2, test="tests::adds"))
    assert found is not None and found.command == "cargo test -- tests::adds"


def test_no_command_in_the_log_is_none() -> None:
    assert find_command(["error: something broke"], _report(1)) is None


@pytest.mark.parametrize(("command", "test", "file", "narrowed"), [
    ("pytest -q tests", "tests/test_a.py::test_b", None, "pytest -q tests/test_a.py::test_b"),
    ("python -m pytest -k slow -q", "tests/test_a.py::test_b", None,
     "python -m pytest -k slow -q tests/test_a.py::test_b"),
    ("go test ./...", "TestParse/empty", None, "go test ./... -run '^(TestParse)$'"),
    ("cargo test --all", "tests::adds", None, "cargo test --all -- tests::adds"),
    ("npx jest --ci", None, "src/calc.test.js", "npx jest --ci src/calc.test.js"),
    ("mvn -B test", "CalcTest#adds", None, "mvn '-Dtest=CalcTest#adds' -B test"),
    ("mvn -B test", "com.x.CalcTest.adds", None, "mvn '-Dtest=com.x.CalcTest#adds' -B test"),
    ("make test", "test_add", None, "make test"),  # a tool we cannot narrow stays as it is
    ("pytest -q && echo ok", "tests/test_a.py::test_b", None, "pytest -q && echo ok"),  # a shell line stays
])
def test_narrowing(command: str, test: str | None, file: str | None, narrowed: str) -> None:
    assert narrow(command, _report(1, test=test, file=file)) == narrowed


def test_the_command_of_a_real_diagnosis(tmp_path: Path) -> None:
    from tests.cli.test_fix import LOG

    log = tmp_path / "ci.log"
    log.write_text(LOG)
    source = open_sources(str(log))[0]
    found = find_command(log_lines(source), diagnose_input(source).report())
    assert found is not None and found.command == "python -m pytest -q tests/test_calc.py::test_add"
