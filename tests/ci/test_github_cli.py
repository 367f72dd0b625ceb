"""`repopilot github logs` through the real CLI entry: files written, exit codes, no token in any output."""

from __future__ import annotations

from pathlib import Path

import pytest

from repopilot.cli.main import main
from tests.fixtures.github.fake_github import LINT_LOG, TEST_LOG, TOKEN, FakeGitHub, github

__all__ = ["github"]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_logs_writes_one_file_per_failed_job(github: FakeGitHub, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["github", "logs", github.run_url, "--out", str(tmp_path / "logs")], capsys)

    assert code == 0, err
    assert (tmp_path / "logs" / "test_3.12.log").read_bytes() == TEST_LOG
    assert (tmp_path / "logs" / "lint.log").read_bytes() == LINT_LOG
    assert "(failed step: Run tests)" in out and "(failed step: Ruff)" in out
    assert TOKEN not in out + err


def test_jobs_with_the_same_name_get_distinct_files(github: FakeGitHub, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    github.jobs[2]["name"] = "test (3.12)"
    code, _, err = _run(["github", "logs", github.run_url, "-o", str(tmp_path)], capsys)
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.glob("*.log")) == ["test_3.12-1.log", "test_3.12.log"]


def test_bad_url_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["github", "logs", "https://gitlab.com/a/b/-/pipelines/1"], capsys)
    assert code == 2
    assert err.strip().startswith("repopilot: not a GitHub Actions run URL")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_server_errors_exhaust_retries_and_exit_4(github: FakeGitHub, capsys: pytest.CaptureFixture[str]) -> None:
    github.fail(r"/jobs$", 500, body={"message": f"internal error near {TOKEN}"}, times=99)
    code, out, err = _run(["github", "logs", github.run_url], capsys)

    assert code == 4
    assert "gave up after 4 attempts (HTTP 500)" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert TOKEN not in out + err
    # Exponential backoff, with up to 25 % jitter taken off each pause (the shared retry policy).
    assert len(github.sleeps) == 3
    assert all(0.75 * full <= slept <= full for slept, full in zip(github.sleeps, [1.0, 2.0, 4.0], strict=True))


def test_401_exits_4_and_names_the_variable(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_NotTheRightOne0000000000000000000000")
    code, out, err = _run(["github", "logs", github.run_url], capsys)
    assert code == 4
    assert err.strip() == "repopilot: GITHUB_TOKEN missing or invalid (HTTP 401)"
    assert "ghp_NotTheRightOne" not in out + err


def test_404_exits_4_with_not_found_or_no_access(github: FakeGitHub, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["github", "logs", "https://github.com/octo/demo/actions/runs/1"], capsys)
    assert code == 4
    assert "not found or no access (HTTP 404)" in err


def test_run_without_failures_exits_2(github: FakeGitHub, capsys: pytest.CaptureFixture[str]) -> None:
    for job in github.jobs:
        job["conclusion"] = "success"
    code, _, err = _run(["github", "logs", github.run_url], capsys)
    assert code == 2
    assert "has no failed jobs to diagnose" in err
