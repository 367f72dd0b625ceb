"""Azure Pipelines logs: each task between `##[section]Starting: X` and `##[section]Finishing: X` inside the job's
own section, a Command line task's banner and script printed before its output, `##[error]Bash exited with code
'1'.` when it fails. The failing task is the step (its name, script, exit code), its banner and script are not
output, and tasks that run after the failure (`condition: always()`, the post-job checkout) do not explain it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repopilot.ci import split
from repopilot.ci.catalog import load_catalog
from repopilot.ci.engine import Result, diagnose_input
from repopilot.ci.locator import detect_shape
from repopilot.ci.scanner import Scanner
from repopilot.ci.sources import open_sources

_BANNER = [
    "==============================================================================",
    "Task         : Command line",
    "Description  : Run a command line script using Bash on Linux and macOS and cmd.exe on Windows",
    "Version      : 2.246.1",
    "Author       : Microsoft Corporation",
    "Help         : https://docs.microsoft.com/azure/devops/pipelines/tasks/utility/command-line",
    "==============================================================================",
]


def _task(name: str, script: str, output: list[str], code: int = 0) -> list[str]:
    lines = [f"##[section]Starting: {name}", *_BANNER, "Generating script.", "Script contents:", script,
             "========================== Starting Command Output ===========================",
             "/usr/bin/bash --noprofile --norc /home/vsts/work/_temp/0c5e1d2a-61f4-4b8e-9a57-3f1de0a8b2c4.sh",
             *output]
    if code:
        lines += ["", f"##[error]Bash exited with code '{code}'."]
    return [*lines, f"##[section]Finishing: {name}"]


def _job(*tasks: list[str]) -> str:
    head = ["##[section]Starting: Linux", "##[section]Starting: Initialize job", "Agent name: 'Azure Pipelines 3'",
            "Agent machine name: 'fv-az512-118'", "Current agent version: '4.248.0'", "##[group]Operating System",
            "Ubuntu", "24.04.1", "LTS", "##[endgroup]", "Agent running as: 'vsts'", "Prepare build directory.",
            "Download all required tasks.", "Downloading task: CmdLine (2.246.1)",
            "Start tracking orphan processes.", "##[section]Finishing: Initialize job",
            "##[section]Starting: Checkout acme/ledger@main to s", _BANNER[0], "Task         : Get sources",
            "Description  : Get sources from a repository. Supports Git, TfsVC, and SVN repositories.", _BANNER[0],
            "Syncing repository: acme/ledger (GitHub)", '##[command]git init "/home/vsts/work/1/s"',
            "##[command]git checkout --progress --force refs/remotes/origin/main",
            "HEAD is now at 4e1f2a9 Merge pull request #42 from acme/fix",
            "##[section]Finishing: Checkout acme/ledger@main to s"]
    tail = ["##[section]Starting: Post-job: Checkout acme/ledger@main to s",
            "Cleaning any cached credential from repository: acme/ledger (GitHub)",
            "##[section]Finishing: Post-job: Checkout acme/ledger@main to s", "##[section]Starting: Finalize Job",
            "Cleaning up task key", "Start cleaning up orphan processes.",
            "Terminate orphan process: pid (2731) (node)", "##[section]Finishing: Finalize Job",
            "##[section]Finishing: Linux"]
    lines = [*head, *(t for task in tasks for t in task), *tail]
    return "".join(f"2026-11-12T10:{k // 600:02d}:{k // 10 % 60:02d}.{k:07d}Z {t}\n" for k, t in enumerate(lines))


PYTEST_OUT = [
    "F.                                                                       [100%]",
    "=================================== FAILURES ===================================",
    "________________________________ test_roundtrip ________________________________",
    "",
    "    def test_roundtrip():",
    ">       assert load(dump(1)) == 2",
    "E       assert 1 == 2",
    "",
    "tests/test_io.py:6: AssertionError",
    "=========================== short test summary info ============================",
    "FAILED tests/test_io.py::test_roundtrip - assert 1 == 2",
    "1 failed, 1 passed in 0.02s",
]
# A checker no rule knows, whose failure reads like an error report.
UNKNOWN_OUT = [
    "Scanning 14 modules",
    "src/Ledger/Post.qz:42:17: mismatched unit in argument 2 of `post`",
    "    wanted: Cents",
    "    given:  String",
    "1 problem in 14 modules",
]
# What runs after the failure (`condition: always()`) and reports an error of its own.
PUBLISH = _task("Publish coverage", "ls coverage", ["ls: cannot access 'coverage': No such file or directory"], 2)


def _diagnose(tmp_path: Path, text: str) -> Result:
    path = tmp_path / "azure.log"
    path.write_text(text)
    return diagnose_input(open_sources(str(path))[0])


def _numbered(text: str, prefix: str) -> int:
    """The 1-based number of the first line whose text (after the timestamp) starts with `prefix`."""
    return next(i for i, t in enumerate(text.splitlines(), 1) if t[29:].startswith(prefix))


def test_the_failing_task_is_the_step_with_its_script_and_exit_code(tmp_path: Path) -> None:
    text = _job(_task("Install", "python -m pip install -e .[test]", ["Successfully installed ledger-0.3.1"]),
                _task("Run tests", "python -m pytest -q", PYTEST_OUT, 1), PUBLISH)
    res = _diagnose(tmp_path, text)
    step = res.diagnosis.step
    assert step is not None
    assert step.name == "Run tests"
    assert step.header_line == _numbered(text, "##[section]Starting: Run tests")
    assert step.error_line == _numbered(text, "##[error]Bash exited with code '1'")
    assert step.exit_code == 1
    assert step.command == "python -m pytest -q"
    assert res.diagnosis.category == "test"
    lines = res.diagnosis.error_lines
    assert _numbered(text, "E       assert 1 == 2") in lines
    # Nothing of the task that ran after the failure, whose own error is a consequence.
    assert all(n < _numbered(text, "##[section]Starting: Publish coverage") for n in lines)


def test_a_tool_no_rule_knows_is_located_in_its_output_not_in_the_banner(tmp_path: Path) -> None:
    text = _job(_task("Types", "npx qzc --check src", UNKNOWN_OUT, 2), PUBLISH)
    res = _diagnose(tmp_path, text)
    lines = set(res.diagnosis.error_lines)
    assert res.diagnosis.step is not None and res.diagnosis.step.name == "Types"
    assert _numbered(text, "src/Ledger/Post.qz:42:17") in lines
    banner = range(_numbered(text, "##[section]Starting: Types"), _numbered(text, "Scanning 14 modules"))
    assert not lines & set(banner), "the task's banner, script and shell line are not its output"
    assert all(n < _numbered(text, "##[section]Starting: Publish coverage") for n in lines)


def test_the_script_decides_the_category_when_the_output_does_not(tmp_path: Path) -> None:
    out = ["Checking 31 files", "src/app.qz: 3 findings", "  12:4  unused binding `total`",
           "  40:1  line longer than 100 characters", "Found 2 problems"]
    res = _diagnose(tmp_path, _job(_task("CmdLine", "npm run lint", out, 1)))
    assert res.diagnosis.step is not None and res.diagnosis.step.command == "npm run lint"
    assert res.diagnosis.category == "lint"


def test_a_task_without_a_script_still_names_the_step(tmp_path: Path) -> None:
    """A task that prints no script (Maven, .NET): its name and the process's exit code from its error line."""
    task = ["##[section]Starting: Build", _BANNER[0], "Task         : .NET Core", _BANNER[0],
            '##[command]"/usr/bin/dotnet" build /home/vsts/work/1/s/Ledger.sln',
            "Program.cs(12,17): error CS0103: The name 'totl' does not exist in the current context "
            "[/home/vsts/work/1/s/Ledger/Ledger.csproj]",
            "##[error]Error: The process '/usr/bin/dotnet' failed with exit code 1",
            "##[section]Finishing: Build"]
    text = _job(task)
    res = _diagnose(tmp_path, text)
    step = res.diagnosis.step
    assert step is not None and step.name == "Build" and step.exit_code == 1 and step.command is None
    assert _numbered(text, "Program.cs(12,17): error CS0103") in res.diagnosis.error_lines
    # The task's own line says only that the process failed.
    assert _numbered(text, "##[error]Error: The process") not in res.diagnosis.error_lines


def test_the_shape_is_azure_not_github() -> None:
    assert detect_shape(["##[section]Starting: Run tests", "##[error]Bash exited with code '1'."]) == "azure"
    assert detect_shape(["##vso[task.logissue type=error]boom"]) == "azure"
    assert detect_shape(["##[group]Run pytest", "##[error]Process completed with exit code 1."]) == "github"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_log_scanned_in_parts_keeps_every_task(tmp_path: Path) -> None:
    one_job = _job(_task("Run tests", "python -m pytest -q", PYTEST_OUT, 1), PUBLISH)
    path = tmp_path / "jobs.log"
    path.write_text(one_job * 60)
    scanner = Scanner(load_catalog(), engine="re", chunk_size=16 * 1024)
    with path.open("rb") as fh:
        one = scanner.scan(fh)
    parts = split.scan_file(scanner, path, path.stat().st_size, 3, min_part=16 * 1024)
    assert len(one.sections) == 60 * 14 and len(one.scripts) == 60 * 3
    assert [(m.line, m.text) for m in parts.sections] == [(m.line, m.text) for m in one.sections]
    assert {n: (m.line, m.text) for n, m in parts.scripts.items()} == {
        n: (m.line, m.text) for n, m in one.scripts.items()}
