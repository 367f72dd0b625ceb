"""Issue 13 item 5: a causal line longer than 200 characters is shown cut and says so (`…` and the column), in
the terminal text, in Markdown (job summary and PR comment alike), and `--full-lines` shows it whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from repopilot.app import GitHubRunReport, parse_run_url
from repopilot.ci import DiagnosisReport
from repopilot.cli.main import main
from tests.cli.terminal import run_in_terminal

TAIL = "cannot be converted to java.util.List<com.example.orders.OrderLine> in the call to OrderService.price"
LONG = ("/home/runner/work/shop/shop/src/main/java/com/example/orders/OrderService.java:[42,17] incompatible "
        "types: java.util.Map<java.lang.String,com.example.orders.OrderLine> " + TAIL)
LOG = ("[INFO] BUILD FAILURE\n[ERROR] COMPILATION ERROR :\n"
       f"[ERROR] {LONG}\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:"
       "compile (default-compile) on project shop: Compilation failure\n")
WHOLE = f"[ERROR] {LONG}"
MARK = f"… [cut at column 200 of {len(WHOLE)}]"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    assert len(WHOLE) > 200
    p = tmp_path / "build.log"
    p.write_text(LOG)
    return p


def test_text_on_an_80_column_terminal_marks_the_cut(log: Path, tmp_path: Path) -> None:
    env = {"REPOPILOT_RUNS_DIR": str(tmp_path / "runs")}
    screen = run_in_terminal(["diagnose", str(log), "-q"], env=env)
    joined = "".join(screen.lines)  # the terminal folds the long line over several rows
    assert screen.code == 0 and WHOLE[:200] + MARK in joined and TAIL not in joined
    whole = run_in_terminal(["diagnose", str(log), "-q", "--full-lines"], env=env)
    assert WHOLE in "".join(whole.lines) and "cut at column" not in whole.text


def test_markdown_and_the_pr_comment_mark_the_cut(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(log), "--format", "markdown", "-q"]) == 0
    markdown = capsys.readouterr().out
    assert WHOLE[:200] + MARK in markdown and TAIL not in markdown
    assert main(["diagnose", str(log), "--format", "markdown", "-q", "--full-lines"]) == 0
    assert WHOLE in capsys.readouterr().out
    assert main(["diagnose", str(log), "--format", "json", "-q"]) == 0
    report = DiagnosisReport.model_validate_json(capsys.readouterr().out)
    found = GitHubRunReport(url="https://github.com/o/r/actions/runs/1",
                            ref=parse_run_url("https://github.com/o/r/actions/runs/1"), reports=[report])
    comment = found.render("markdown")  # what `github report` appends and posts as the PR comment
    assert MARK in comment and TAIL not in comment
    assert WHOLE in found.render("markdown", full_lines=True)
