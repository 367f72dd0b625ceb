"""Several jobs in one log: `gh run view --log-failed` output (JOB<TAB>STEP<TAB>timestamp text, each step's first
line with its BOM), run-logs zips and run URLs. Each job gets its own diagnosis, named for the job, with its
failing step; line numbers stay those of the log the user passed."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from repopilot.ci import open_sources
from repopilot.ci.engine import diagnose_input
from repopilot.ci.ghlog import is_gh_log
from repopilot.cli.main import main
from tests.fixtures.github.fake_github import FakeGitHub, github

__all__ = ["github"]  # the fixture, imported for pytest

BOM = "\ufeff"


def _gh_job(job: str, step: str, lines: list[str]) -> list[str]:
    return [f"{job}\t{step}\t{BOM if i == 0 else ''}2026-01-01T00:00:{i:02d}.1234567Z {text}"
            for i, text in enumerate(lines)]


TEST_JOB = _gh_job("test (3.12)", "Run tests", [
    "##[group]Run pytest -q", "pytest -q", "##[endgroup]", "=========== FAILURES ===========",
    "FAILED tests/test_calc.py::test_add - assert -1 == 5", "##[error]Process completed with exit code 1."])
LINT_JOB = _gh_job("lint", "Ruff", [
    "##[group]Run ruff check .", "ruff check .", "##[endgroup]",
    "src/app.py:3:1: F401 [*] `os` imported but unused", "Found 1 error.",
    "##[error]Process completed with exit code 1."])
GH_LOG = ("\n".join(TEST_JOB + LINT_JOB) + "\n").encode()


def test_gh_output_is_recognised_and_plain_logs_are_not() -> None:
    assert is_gh_log(GH_LOG[:8192])
    assert not is_gh_log(b"2026-01-01T00:00:00.1234567Z ##[group]Run make\n")
    assert not is_gh_log(b"a\tb\tc\n")  # tabs alone are not the prefix


def test_each_job_is_its_own_diagnosis_with_its_failing_step(tmp_path: Path) -> None:
    log = tmp_path / "failed.log"
    log.write_bytes(GH_LOG)
    inputs = open_sources(str(log))
    assert [(i.job, i.failed_step) for i in inputs] == [("test (3.12)", "Run tests"), ("lint", "Ruff")]
    test, lint = (diagnose_input(i).report() for i in inputs)
    assert (test.job, test.category, test.failing_step and test.failing_step.name) == ("test (3.12)", "test",
                                                                                      "Run tests")
    assert (lint.job, lint.category, lint.failing_step and lint.failing_step.name) == ("lint", "lint", "Ruff")
    # Line numbers are the original file's: the lint job's error is line 10 of what was passed.
    assert lint.error_lines == [10]
    assert lint.failures[0].lines[0].text == "src/app.py:3:1: F401 [*] `os` imported but unused"
    # The excerpt starts clean (no JOB/STEP/BOM prefix) and holds only its own job's lines.
    first = test.excerpt.text.splitlines()[1]
    assert first.endswith("| ##[group]Run pytest -q") and "\t" not in first and BOM not in first
    assert "pytest" not in lint.excerpt.text.split("\n", 1)[1] and "F401" not in test.excerpt.text
    assert "failing step: Ruff (exit 1)" in lint.excerpt.text.splitlines()[0]
    assert all(a >= 7 for a, _ in lint.excerpt.ranges)


def test_piped_gh_output_gives_one_json_report_per_job(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GH_LOG)))
    assert main(["diagnose", "-", "--format", "json", "--no-llm"]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [(r["job"], r["failing_step"]["name"], r["category"]) for r in reports] == [
        ("test (3.12)", "Run tests", "test"), ("lint", "Ruff", "lint")]
    assert [r["log"] for r in reports] == ["test (3.12) (stdin)", "lint (stdin)"]


def test_text_headers_name_each_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "failed.log"
    log.write_bytes(GH_LOG)
    assert main(["diagnose", str(log), "--no-llm"]) == 0
    out = capsys.readouterr().out
    assert out.index("test (3.12) (") < out.index("failing step: Run tests") < out.index("lint (") \
        < out.index("failing step: Ruff")


def test_a_zip_with_two_failed_jobs_gives_two_named_diagnoses(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "logs_1.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("0_test (3.12).txt", "\n".join(line.split("\t", 2)[2] for line in TEST_JOB) + "\n")
        z.writestr("1_lint.txt", "\n".join(line.split("\t", 2)[2] for line in LINT_JOB) + "\n")
    assert main(["diagnose", str(path), "--format", "json", "--no-llm"]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [(r["job"], r["category"]) for r in reports] == [("test (3.12)", "test"), ("lint", "lint")]
    assert [r["failing_step"]["name"] for r in reports] == ["pytest -q", "ruff check ."]


def test_run_url_headers_say_the_jobs_name(github: FakeGitHub, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", github.run_url, "--no-llm"]) == 0
    out = capsys.readouterr().out
    assert "job 1:" not in out
    heads = [line for line in out.splitlines() if not line.startswith(" ")]
    assert heads[0].startswith("test (3.12) (octo/demo run 4242, job 102): test")
    assert heads[1].startswith("lint (octo/demo run 4242, job 103): lint")
    assert "failing step: Run tests" in out and "failing step: Ruff" in out


def test_gh_output_through_a_real_pipe_without_a_dash(tmp_path: Path) -> None:
    """`gh run view RUN --log-failed | repopilot diagnose`: a real pipe, no SOURCE, one report per job."""
    env = {**os.environ, "REPOPILOT_RUNS_DIR": str(tmp_path / "runs"), "REPOPILOT_CACHE_DIR": str(tmp_path / "c")}
    proc = subprocess.run([sys.executable, "-m", "repopilot.cli.main", "diagnose", "--format", "json", "--no-llm"],
                          input=GH_LOG, capture_output=True, env=env, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    reports = json.loads(proc.stdout)
    assert [(r["job"], r["failing_step"]["name"]) for r in reports] == [("test (3.12)", "Run tests"), ("lint", "Ruff")]
    assert not any("\t" in ln["text"] or BOM in ln["text"] for r in reports for f in r["failures"] for ln in f["lines"])


def test_the_job_lines_are_the_ones_in_job_keeps() -> None:
    from repopilot.ci.diagnosis import Diagnosis

    texts = {n: f"line {n}" for n in range(1, 60)}
    for first, last in ((0, 0), (10, 0), (0, 30), (10, 30), (59, 59)):
        diag = Diagnosis(name="x", source="x", run_id=None, job=None, lines=60, size=1, engine="re",
                         catalog_version="1", job_first=first, job_last=last)
        assert diag.job_lines(texts) == {n: t for n, t in texts.items() if diag.in_job(n)}
