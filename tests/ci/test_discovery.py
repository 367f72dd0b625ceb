"""`repopilot diagnose` with no SOURCE, on a terminal, inside a git checkout with a GitHub remote and a token:
the latest failed run of the current branch (or the one `--branch`, `--workflow`, `--run` choose), found through
a loopback fake of GitHub's API. A piped stdin is still read; without a token or a GitHub checkout nothing is
looked up."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from repopilot.cli import diagnose_run as diagnose_cli
from repopilot.cli.main import main
from repopilot.repo.github_origin import parse_remote
from tests.fixtures.github.fake_github import OWNER, REPO, RUN_ID, FakeGitHub, github, run

__all__ = ["github"]  # the fixture, imported for pytest

RUNS = f"/repos/{OWNER}/{REPO}/actions/runs"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: FakeGitHub) -> Path:
    """A clone of octo/demo on branch `feature`, the current directory, seen from a terminal."""
    repo = tmp_path / "demo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "feature")
    _git(repo, "remote", "add", "origin", f"git@github.com:{OWNER}/{REPO}.git")
    _git(repo, "remote", "add", "fork", "https://github.com/someone/demo.git")
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    monkeypatch.setattr(diagnose_cli, "stdin_is_terminal", lambda: True)
    github.runs = [run(4300, "feature", "success"), run(RUN_ID, "feature", "failure"),
                   run(4200, "main", "failure", workflow_id=9, path=".github/workflows/nightly.yml", name="Nightly"),
                   run(4100, "feature", "failure")]
    github.workflows = [{"id": 7, "name": "CI", "path": ".github/workflows/ci.yml"},
                        {"id": 9, "name": "Nightly", "path": ".github/workflows/nightly.yml"}]
    return repo


def _diagnose(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict], str]:
    code = main(["diagnose", "--format", "json", "--no-llm", *args])
    out, err = capsys.readouterr()
    data = json.loads(out) if code == 0 else []
    return code, data if isinstance(data, list) else [data], err


def test_the_latest_failed_run_of_the_current_branch(checkout: Path, github: FakeGitHub,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, reports, err = _diagnose(capsys)
    assert code == 0, err
    assert [r["job"] for r in reports] == ["test (3.12)", "lint"]
    assert {r["source"] for r in reports} == {f"https://github.com/{OWNER}/{REPO}/actions/runs/{RUN_ID}"}
    assert f"the latest failed run of {OWNER}/{REPO} on branch feature" in err
    listing = [r for r in github.requests if r.path == RUNS]
    assert listing and listing[0].query["branch"] == ["feature"] and listing[0].query["status"] == ["failure"]


def test_branch_workflow_and_run_choose(checkout: Path, github: FakeGitHub,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, reports, err = _diagnose(capsys, "--branch", "main")
    assert code == 0, err
    assert reports[0]["source"].endswith("/runs/4200") and "on branch main" in err

    code, reports, err = _diagnose(capsys, "--workflow", "Nightly", "--branch", "main")
    assert code == 0, err
    assert reports[0]["source"].endswith("/runs/4200") and "of workflow Nightly" in err
    assert f"/repos/{OWNER}/{REPO}/actions/workflows/9/runs" in github.paths()

    code, reports, err = _diagnose(capsys, "--workflow", ".github/workflows/ci.yml")
    assert code == 0, err
    assert reports[0]["source"].endswith(f"/runs/{RUN_ID}")
    assert f"/repos/{OWNER}/{REPO}/actions/workflows/ci.yml/runs" in github.paths()

    listings = github.paths().count(RUNS)
    code, reports, err = _diagnose(capsys, "--run", "4100")
    assert code == 0, err
    assert reports[0]["source"].endswith("/runs/4100") and github.paths().count(RUNS) == listings  # no lookup


def test_no_failed_run_and_unknown_workflow_are_clear_errors(checkout: Path, github: FakeGitHub,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _diagnose(capsys, "--branch", "docs")
    assert code == 2 and f"{OWNER}/{REPO}: no failed run on branch docs" in err and "Traceback" not in err
    code, _, err = _diagnose(capsys, "--workflow", "Release")
    assert code == 2 and "no workflow named 'Release'" in err


def test_a_piped_log_is_read_and_nothing_is_looked_up(checkout: Path, github: FakeGitHub,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(diagnose_cli, "stdin_is_terminal", lambda: False)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"FAILED tests/t.py::test_a - boom\n")))
    code, reports, _ = _diagnose(capsys)
    assert code == 0 and reports[0]["source"] == "-"
    assert github.requests == []


def test_without_a_token_or_a_github_checkout_nothing_is_looked_up(checkout: Path, github: FakeGitHub,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GITHUB_TOKEN")
    code, _, err = _diagnose(capsys)
    assert code == 2 and "no SOURCE given" in err
    code, _, err = _diagnose(capsys, "--branch", "main")
    assert code == 2 and "need a git checkout with a GitHub remote and GITHUB_TOKEN" in err
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_x")
    elsewhere = tmp_path / "plain"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = _diagnose(capsys)
    assert code == 2 and "no SOURCE given" in err
    assert github.requests == []


def test_flags_that_choose_a_run_need_no_source(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _diagnose(capsys, "some.log", "--branch", "main")
    assert code == 2 and "when no SOURCE is given" in err


def test_a_detached_head_asks_for_the_branch(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x")
    _git(checkout, "checkout", "-q", "--detach")
    code, _, err = _diagnose(capsys)
    assert code == 2 and "HEAD is detached" in err


@pytest.mark.parametrize(("url", "expected"), [
    ("git@github.com:octo/demo.git", ("github.com", "octo", "demo")),
    ("https://github.com/octo/demo", ("github.com", "octo", "demo")),
    ("https://x-access-token:abc@github.com/octo/my.repo.git", ("github.com", "octo", "my.repo")),
    ("ssh://git@github.com:22/octo/demo.git", ("github.com", "octo", "demo")),
    ("git@ghe.example.com:team/app.git/", ("ghe.example.com", "team", "app")),
    ("/srv/git/demo.git", None),
    ("https://github.com/octo", None),
    ("https://gitlab.com/group/sub/project.git", None),
])
def test_remote_urls(url: str, expected: tuple[str, str, str] | None) -> None:
    assert parse_remote(url) == expected
