"""One error printed several ways by its tool is one failure, not three."""

import json
from pathlib import Path

import pytest

from repopilot.cli.main import main

PYTEST_LOG = """\
============================= test session starts ==============================
collected 2 items

tests/test_calc.py F.                                                    [100%]

=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(2, 3) == 5
E       assert -1 == 5
E        +  where -1 = add(2, 3)

tests/test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert -1 == 5
========================= 1 failed, 1 passed in 0.02s ==========================
"""


def test_pytest_section_location_and_summary_are_one_failure(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ci.log"
    log.write_text(PYTEST_LOG)
    assert main(["diagnose", str(log), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    causal = [f for f in report["failures"] if f.get("causal")]
    assert len(causal) == 1
    failure = causal[0]
    assert failure["test"] == "test_add"
    assert failure["file"] == "tests/test_calc.py" and failure["line"] == 5  # from the location line
    shown = [entry["line"] for entry in failure["lines"]]
    assert shown == sorted(set(shown))  # in line order, each once
    assert {7, 10, 11, 14, 16} <= set(shown)  # section header, E lines, location, summary
    assert report["error_lines"] == shown


def test_two_different_tests_stay_two_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ci.log"
    log.write_text(PYTEST_LOG.replace(
        "FAILED tests/test_calc.py::test_add - assert -1 == 5",
        "FAILED tests/test_calc.py::test_add - assert -1 == 5\nFAILED tests/test_io.py::test_read - OSError"))
    assert main(["diagnose", str(log), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    tests = {f.get("test") for f in report["failures"] if f.get("causal")}
    assert {"test_add", "test_read"} <= tests


def test_reports_from_the_public_api_are_redacted(tmp_path: Path) -> None:
    from repopilot.ci import diagnose_source

    token = "ghp_" + "A1b2" * 9
    log = tmp_path / "ci.log"
    log.write_text(PYTEST_LOG.replace("assert -1 == 5", f"assert {token!r} == 5"))
    report = diagnose_source(str(log))[0].contract()
    assert token not in json.dumps(report)
    assert "[REDACTED]" in json.dumps(report)
