"""Files in reports and annotations are repository-relative, as GitHub needs them to place an annotation: no
runner workspace prefix (Linux, macOS, Windows, container, self-hosted, the job's GITHUB_WORKSPACE), no
`##[error]` glued in front, `/` separators; paths outside the repository stay as they are and never become an
annotation's `file`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from repopilot.ci.paths import is_repo_relative, repo_relative
from repopilot.cli.main import main


@pytest.mark.parametrize(("path", "expected"), [
    ("/home/runner/work/demo/demo/tests/test_calc.py", "tests/test_calc.py"),
    ("/home/runner/_work/demo/demo/src/a.go", "src/a.go"),  # self-hosted Linux
    ("/Users/runner/work/my.app/my.app/Sources/App.swift", "Sources/App.swift"),  # macOS
    ("D:\\a\\demo\\demo\\src\\Program.cs", "src/Program.cs"),  # Windows
    ("C:/a/demo/demo/src/x.ts", "src/x.ts"),
    ("C:\\actions-runner\\_work\\demo\\demo\\lib\\x.rb", "lib/x.rb"),  # self-hosted Windows
    ("/opt/actions-runner/_work/demo/demo/pkg/x.go", "pkg/x.go"),
    ("/__w/demo/demo/packages/app/x.test.ts", "packages/app/x.test.ts"),  # container job
    ("/github/workspace/action.yml", "action.yml"),  # Docker container action
    ("##[error]packages/app/src/x.test.ts", "packages/app/src/x.test.ts"),
    ("##[error]/home/runner/work/demo/demo/a.py", "a.py"),
    ("./src/main.rs", "src/main.rs"),
    ("src\\lib.rs", "src/lib.rs"),
    ("src/app.py", "src/app.py"),
    ("/usr/include/stdio.h", "/usr/include/stdio.h"),  # outside the repository: left as it is
    ("/home/runner/work/demo/other/x.py", "/home/runner/work/demo/other/x.py"),  # not REPO/REPO
    ("/home/runner/go/pkg/mod/golang.org/x/net@v0.1.0/http.go", "/home/runner/go/pkg/mod/golang.org/x/net@v0.1.0/"
                                                                "http.go"),
])
def test_runner_paths_become_repository_relative(path: str, expected: str) -> None:
    assert repo_relative(path) == expected


def test_the_jobs_workspace_is_stripped_too() -> None:
    assert repo_relative("/srv/ci/checkout/src/a.py", "/srv/ci/checkout") == "src/a.py"
    assert repo_relative("/srv/ci/checkout/src/a.py", "/srv/ci/checkout/") == "src/a.py"
    assert repo_relative("E:\\build\\src\\a.cs", "E:\\build") == "src/a.cs"
    assert repo_relative("/srv/ci/checkout-2/a.py", "/srv/ci/checkout") == "/srv/ci/checkout-2/a.py"
    assert repo_relative(None) is None


@pytest.mark.parametrize(("path", "placeable"), [
    ("src/a.py", True), ("a.py", True), ("/usr/include/stdio.h", False), ("C:/x/a.cs", False),
    ("../outside.py", False), ("src\\a.py", False), ("~/a.py", False), ("", False),
])
def test_which_paths_github_can_place(path: str, placeable: bool) -> None:
    assert is_repo_relative(path) is placeable


def _ts_log(tmp_path: Path, workspace: str = "/home/runner/work/demo/demo") -> Path:
    lines = ["##[group]Run npx tsc --noEmit", "npx tsc --noEmit", "##[endgroup]",
             "##[error]packages/app/src/x.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
             f"FAIL {workspace}/packages/app/src/x.test.ts",
             "/usr/include/stdio.h:12:1: error: unknown type name 'foo'",
             "##[error]Process completed with exit code 2."]
    log = tmp_path / "ts.log"
    log.write_text("".join(f"2026-01-01T00:00:{i:02d}.0000000Z {line}\n" for i, line in enumerate(lines)))
    return log


_FILE = re.compile(r"^::error file=([^,:]*)")


def test_annotations_carry_only_repository_relative_files(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(_ts_log(tmp_path)), "--format", "github", "--no-llm"]) == 0
    lines = capsys.readouterr().out.splitlines()
    files = [m.group(1) for line in lines if (m := _FILE.match(line))]
    assert "packages/app/src/x.ts" in files and "packages/app/src/x.test.ts" in files
    assert all(is_repo_relative(f) for f in files)
    assert not any("##[error]" in line.split("::", 2)[1] or "/home/runner" in line.split("::", 2)[1]
                   for line in lines)


def test_json_and_text_show_repository_relative_files(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_WORKSPACE", "/srv/ci/checkout")
    log = _ts_log(tmp_path, workspace="/srv/ci/checkout")
    assert main(["diagnose", str(log), "--format", "json", "--no-llm"]) == 0
    files = {f.get("file") for f in json.loads(capsys.readouterr().out)["failures"]}
    assert {"packages/app/src/x.ts", "packages/app/src/x.test.ts"} <= files
    assert not any(f and (f.startswith(("##", "/srv")) or "\\" in f) for f in files)
    assert main(["diagnose", str(log), "--no-llm"]) == 0
    out = capsys.readouterr().out
    assert "packages/app/src/x.ts:3" in out and "##[error]packages" not in out.split("│")[0]
