"""Time and size bounds on the repository tools (issue 15, items 3 and 4): a slow git child is killed at the
per-tool limit or the run's deadline, nothing is left running, and a huge line is never read whole."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from repopilot.core import (
    Agent,
    Budgets,
    SystemMessage,
    ToolCall,
    ToolContext,
    ToolRegistry,
    TraceRecorder,
    UserMessage,
)
from repopilot.providers import ScriptedModel
from repopilot.repo import GitTimeout, repo_tools, run_git

# glibc's regex engine backtracks on a back-reference: this runs for minutes on one line of 3,000 "a"s.
SLOW_PATTERN = r"(a*)*\1b"


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{proc.name}: {cmdline}")
    return found


@pytest.fixture
def slow_repo(git_repo: Path) -> Path:
    (git_repo / "long.txt").write_text("a" * 3000 + "c\n")
    return git_repo


def _search(root: Path, ctx: ToolContext, **kw: float) -> str:
    tools = ToolRegistry(repo_tools(root, **kw))
    call = ToolCall(id="c1", name="search_code", arguments={"pattern": SLOW_PATTERN})
    return tools.execute(call, ctx).content


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to look for left processes")
def test_slow_git_grep_is_killed_at_the_tool_limit(slow_repo: Path) -> None:
    started = time.monotonic()
    out = _search(slow_repo, ToolContext("run", "c1"), tool_seconds=1.0)
    elapsed = time.monotonic() - started
    assert "stopped" in out and "longer than 1s" in out
    assert elapsed < 5.0
    assert _processes_mentioning(str(slow_repo)) == []


def test_slow_git_grep_is_killed_at_the_run_deadline(slow_repo: Path) -> None:
    started = time.monotonic()
    out = _search(slow_repo, ToolContext("run", "c1", deadline=time.monotonic() + 1.0), tool_seconds=60.0)
    assert "time budget ran out" in out
    assert time.monotonic() - started < 5.0
    assert _processes_mentioning(str(slow_repo)) == []


def test_run_git_output_cap_kills_the_child(git_repo: Path) -> None:
    (git_repo / "big.txt").write_text("line of text\n" * 200_000)
    started = time.monotonic()
    out = run_git(git_repo, ["grep", "-n", "--untracked", "-e", "line", "--", "."], max_bytes=10_000)
    assert out.truncated and len(out) == 10_000
    assert time.monotonic() - started < 5.0
    with pytest.raises(GitTimeout):
        run_git(git_repo, ["status"], deadline=time.monotonic() - 1)


def test_a_run_with_a_slow_tool_ends_on_its_seconds_budget(slow_repo: Path, tmp_path: Path) -> None:
    calls = {"pattern": SLOW_PATTERN}
    model = ScriptedModel([{"tool_calls": [{"id": "s1", "name": "search_code", "arguments": calls}]},
                           "nothing found in time"])
    rec = TraceRecorder.start("ask", "find it", directory=tmp_path / "runs")
    agent = Agent(model, ToolRegistry(repo_tools(slow_repo)), rec, Budgets(max_seconds=2.0))
    started = time.monotonic()
    result = agent.run([SystemMessage(content="sys"), UserMessage(content="go")])
    assert time.monotonic() - started < 8.0
    assert result.status == "budget_exhausted:seconds"
    assert result.answer == "nothing found in time"
    assert _processes_mentioning(str(slow_repo)) == []


def test_read_file_never_holds_a_huge_line(git_repo: Path) -> None:
    with (git_repo / "huge.txt").open("wb") as fh:
        fh.write(b"x" * 20_000_000 + b"\nsecond line\n")
    tools = ToolRegistry(repo_tools(git_repo, max_line_bytes=100))
    out = tools.execute(ToolCall(id="r", name="read_file", arguments={"path": "huge.txt", "start_line": 1,
                                                                      "end_line": 2}), ToolContext("r", "r"))
    assert len(out.content) < 1000
    assert "second line" in out.content and "cut" in out.content


def test_read_file_result_is_capped_in_bytes(git_repo: Path) -> None:
    (git_repo / "many.txt").write_text("".join(f"{'y' * 90} {i}\n" for i in range(1500)))
    tools = ToolRegistry(repo_tools(git_repo, max_result_bytes=10_000))
    out = tools.execute(ToolCall(id="r", name="read_file", arguments={"path": "many.txt"}), ToolContext("r", "r"))
    assert 10_000 <= len(out.content) < 11_000
    assert "[more lines after" in out.content
