"""Bad input and secrets, command by command: every failure is one clear line on stderr and the documented exit
code (2 input/usage/config, 4 provider/GitHub, 3 awaiting approval, 5 interrupted, 1 only for real bugs), never
a traceback; whatever was already recorded stays a valid trace; and no secret reaches stdout, stderr, a trace or
the exported HTML page."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from repopilot.cli import fix as fix_cli
from repopilot.cli.main import main
from repopilot.core import ProviderError, diff_sha256, read_trace
from repopilot.core.trace_log import read_run
from repopilot.providers import PROVIDERS, ProviderInfo, ScriptedModel
from tests.cli.test_fix import FIX, LOG, PROPOSE, READ, Script

ROOT = Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"
# Shaped like the real thing so the redaction patterns, not only the exact-value scrub, are exercised.
OPENAI_KEY = "sk-proj-" + "Q7" * 24
GITHUB_TOKEN = "ghp_" + "Zx9" * 12
LOG_TOKEN = "ghp_" + "Lk3" * 12


# -- helpers --------------------------------------------------------------------------------------------------

def _cli(args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_one_clear_line(err: str, needle: str = "") -> None:
    """The failure is said once, on the last line, prefixed like every RepoPilot error; no traceback."""
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "nothing was said on stderr"
    assert lines[-1].startswith("repopilot: "), lines[-1]
    assert "internal error" not in lines[-1]
    assert needle.lower() in lines[-1].lower(), lines[-1]


def _subprocess(args: Sequence[str], *, env: dict[str, str] | None = None, stdin: bytes | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repopilot.cli.main", *args], input=None if stdin is None
                          else stdin.decode("latin-1"), capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, cwd=ROOT, check=False)


def _traces(runs: Path) -> list[dict[str, Any]]:
    """Every trace file, each checked to be valid JSON of a RepoPilot trace."""
    found = []
    for path in sorted(runs.glob("*.json")):
        data = read_trace(path).model_dump(mode="json")
        found.append(data)
    return found


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return tmp_path / "runs"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """One bad input of each kind."""
    d = tmp_path / "inputs"
    d.mkdir()
    paths = {
        "missing": d / "missing.log",
        "directory": d / "adir",
        "empty": d / "empty.log",
        "nul": d / "nul.log",
        "png": d / "image.png",
        "truncated_zip": d / "logs.zip",
        "zip_without_logs": d / "nothing.zip",
    }
    paths["directory"].mkdir()
    paths["empty"].write_bytes(b"")
    paths["nul"].write_bytes(b"error: x\x00\x00\x00 y\n" * 10)
    paths["png"].write_bytes(PNG)
    good = d / "good.zip"
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("build/1_Run tests.txt", LOG)
    paths["truncated_zip"].write_bytes(good.read_bytes()[:40])
    with zipfile.ZipFile(paths["zip_without_logs"], "w") as zf:
        zf.writestr("notes/", "")
    return paths


BAD_FILES = [
    ("missing", "no such file"),
    ("directory", "is a directory"),
    ("empty", "is empty"),
    ("nul", "binary"),
    ("png", "binary"),
    ("truncated_zip", "zip"),
    ("zip_without_logs", ""),
]


# -- diagnose and fix: bad log files ----------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "needle"), BAD_FILES)
def test_diagnose_bad_source_is_one_line_exit_2(kind: str, needle: str, files: dict[str, Path], runs: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(["diagnose", str(files[kind])], capsys)
    assert code == 2
    _assert_one_clear_line(err, needle)
    assert out == ""


@pytest.mark.parametrize(("kind", "needle"), BAD_FILES)
def test_diagnose_bad_baseline_is_one_line_exit_2(kind: str, needle: str, files: dict[str, Path],
                                                 tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    code, _, err = _cli(["diagnose", str(log), "--baseline", str(files[kind])], capsys)
    assert code == 2
    _assert_one_clear_line(err, needle)


@pytest.mark.parametrize(("kind", "needle"), BAD_FILES)
def test_fix_bad_source_exits_2_and_leaves_a_valid_failed_trace(
        kind: str, needle: str, files: dict[str, Path], git_repo: Path, runs: Path, script: Script,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(["fix", str(files[kind]), "--repo", str(git_repo), "--no-llm-diagnosis"], capsys)
    assert code == 2
    _assert_one_clear_line(err, needle)
    (trace,) = _traces(runs)
    assert trace["status"] == "failed"
    assert script.turns == []  # the model was never asked


@pytest.mark.parametrize(("content", "expected"), [
    (b"error: \xff\xfe not utf-8 \xc3\x28\nFAILED tests/test_calc.py::test_add\n", "FAILED tests/test_calc.py"),
    (b"step one\rstep two\rerror: it broke\r", "error: it broke"),
])
def test_diagnose_odd_text_logs_are_read_not_refused(content: bytes, expected: str, tmp_path: Path, runs: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "odd.log"
    log.write_bytes(content)
    code, out, err = _cli(["diagnose", str(log), "--format", "json"], capsys)
    assert code == 0, err
    assert expected in json.loads(out)["excerpt"]["text"]
    (trace,) = _traces(runs)
    assert trace["status"] == "completed"


def test_diagnose_empty_and_binary_stdin_exit_2(runs: Path) -> None:
    for data, needle in ((b"", "stdin is empty"), (PNG, "binary")):
        done = _subprocess(["diagnose", "-"], stdin=data, env={"REPOPILOT_RUNS_DIR": str(runs)})
        assert done.returncode == 2
        _assert_one_clear_line(done.stderr, needle)


def test_a_50_mb_single_line_log_is_diagnosed_in_bounded_time_and_memory(tmp_path: Path, runs: Path) -> None:
    log = tmp_path / "huge.log"
    with log.open("wb") as fh:
        fh.write(b"error: ")
        for _ in range(50):
            fh.write(b"y" * (1 << 20))
        fh.write(b"\n")
    started = time.monotonic()
    done = _subprocess(["diagnose", str(log), "--format", "json"], env={"REPOPILOT_RUNS_DIR": str(runs)},
                       timeout=120)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert len(report["excerpt"]["text"]) < 20_000  # the line is cut for the excerpt, not copied whole
    assert took < 60
    # ru_maxrss of the biggest child so far (KiB on Linux): far below the log's size plus the interpreter.
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 400 * 1024
    assert os.path.getsize(runs / f"{read_trace(runs / os.listdir(runs)[0]).run_id}.json") \
        < 1_000_000


# -- hostile paths --------------------------------------------------------------------------------------------

@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Script:
    s = Script([READ, PROPOSE, "Fixed."])
    monkeypatch.setitem(PROVIDERS, "test", ProviderInfo(name="test", factory=lambda m, env: ScriptedModel(s)))
    monkeypatch.setenv("REPOPILOT_MODEL", "test:script")
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: False)
    return s


def _scripted(monkeypatch: pytest.MonkeyPatch, replies: Sequence[Any] | Callable[..., Any]) -> None:
    monkeypatch.setitem(PROVIDERS, "test", ProviderInfo(
        name="test", factory=lambda m, env: ScriptedModel(replies if callable(replies) else list(replies))))
    monkeypatch.setenv("REPOPILOT_MODEL", "test:script")


@pytest.mark.parametrize(("repo", "needle"), [
    ("{tmp}/../../../nonexistent", "does not exist"),
    ("{tmp}/plain-dir", "not inside a git repository"),
    ("{tmp}/a-file.txt", "not a directory"),
])
@pytest.mark.parametrize("command", [["ask", "what is this?"], ["fix", "{log}"]])
def test_hostile_repo_option_is_refused(repo: str, needle: str, command: list[str], tmp_path: Path,
                                        script: Script, capsys: pytest.CaptureFixture[str]) -> None:
    # tmp_path lives outside any git repository, so a plain directory there is not a work tree.
    (tmp_path / "plain-dir").mkdir()
    (tmp_path / "a-file.txt").write_text("x")
    (tmp_path / "ci.log").write_text(LOG)
    args = [a.format(log=tmp_path / "ci.log") for a in command]
    code, _, err = _cli([*args, "--repo", repo.format(tmp=tmp_path)], capsys)
    assert code == 2
    _assert_one_clear_line(err, needle)
    assert script.turns == []


@pytest.mark.parametrize("path", ["../outside.txt", "{outside}", "escape/outside.txt", "link-out",
                                  ".git/config"])
def test_hostile_tool_paths_become_error_results_and_never_leak(
        path: str, git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("TOP-SECRET-OUTSIDE-THE-REPO\n")
    (git_repo / "escape").symlink_to(tmp_path, target_is_directory=True)
    (git_repo / "link-out").symlink_to(outside)
    target = path.format(outside=outside)
    _scripted(monkeypatch, [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": target}}]},
        {"tool_calls": [{"name": "list_files", "arguments": {"path": target}}]},
        {"tool_calls": [{"name": "search_code", "arguments": {"pattern": "TOP-SECRET", "path": target}}]},
        "done",
    ])
    code, out, err = _cli(["ask", "read it", "--repo", str(git_repo), "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["status"] == "completed"
    (trace,) = _traces(tmp_path / "runs")
    results = [s for s in trace["steps"] if s["type"] == "tool_result"]
    assert len(results) == 3 and all(s["error"] for s in results)
    assert "TOP-SECRET-OUTSIDE" not in json.dumps(trace) + out + err


# -- hostile run ids ------------------------------------------------------------------------------------------

HOSTILE_IDS = ["../../etc/passwd", "a/b", "", "x" * 5000, "/etc/passwd", "..", "a\nb", "20260101-000000-abcdef"]
RUN_COMMANDS = [["runs", "show"], ["trace", "export", "--html", "{tmp}/page.html", "--"], ["approve"],
                ["reject"], ["resume"]]


@pytest.mark.parametrize("run_id", HOSTILE_IDS, ids=lambda r: repr(r)[:20])
@pytest.mark.parametrize("command", RUN_COMMANDS, ids=lambda c: "-".join(c[:2]))
def test_hostile_run_ids_are_refused(command: list[str], run_id: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    args = [a.format(tmp=tmp_path) for a in command]
    if "--" not in args:
        args.append("--")
    code, out, err = _cli([*args, run_id], capsys)
    assert code == 2
    _assert_one_clear_line(err)
    assert len(err) < 400  # a huge id is not echoed whole
    assert "root:" not in out + err
    assert not (tmp_path / "page.html").exists()
    assert not Path("/etc/passwd.json").exists() and not Path("/etc/passwd.lock").exists()


# -- corrupted traces -----------------------------------------------------------------------------------------

def _awaiting_fix_run(git_repo: Path, tmp_path: Path, runs: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    assert main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 3
    capsys.readouterr()
    (path,) = runs.glob("*.json")
    return path


def _edit(change: Callable[[dict[str, Any]], Any]) -> Callable[[Path], None]:
    def apply(path: Path) -> None:
        data = read_run(path)[0]
        change(data)
        path.write_text(json.dumps(data))
    return apply


CORRUPTIONS: dict[str, tuple[Callable[[Path], None], str]] = {
    # Cut inside the first line: no run is left. (A cut anywhere later is a torn last write, which is tolerated:
    # see tests/core/test_trace_log.py.)
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:40]), "not a RepoPilot trace"),
    "empty": (lambda p: p.write_bytes(b""), "not a RepoPilot trace"),
    "not-utf8": (lambda p: p.write_bytes(b"\xff\xfe{" + p.read_bytes()), "not a RepoPilot trace"),
    "array": (lambda p: p.write_text("[]"), "not a RepoPilot trace"),
    "steps-wrong-type": (_edit(lambda d: d.update(steps="many")), "not a RepoPilot trace"),
    "totals-wrong-type": (_edit(lambda d: d["totals"].update(steps="many")), "not a RepoPilot trace"),
    "proposal-wrong-type": (_edit(lambda d: d.update(proposal=[1, 2])), "not a RepoPilot trace"),
    "missing-run-id": (_edit(lambda d: d.pop("run_id")), "not a RepoPilot trace"),
    "missing-goal": (_edit(lambda d: d.pop("goal")), "not a RepoPilot trace"),
    "other-runs-id": (_edit(lambda d: d.update(run_id="20200101-000000-000000")), "holds run"),
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
@pytest.mark.parametrize("command", RUN_COMMANDS, ids=lambda c: "-".join(c[:2]))
def test_corrupted_traces_are_refused_and_left_as_they_were(
        corruption: str, command: list[str], git_repo: Path, tmp_path: Path, runs: Path, script: Script,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = _awaiting_fix_run(git_repo, tmp_path, runs, capsys)
    corrupt, needle = CORRUPTIONS[corruption]
    corrupt(path)
    before = path.read_bytes()
    turns = list(script.turns)
    args = [a.format(tmp=tmp_path) for a in command]
    code, _, err = _cli([*args, path.stem], capsys)
    assert code == 2
    _assert_one_clear_line(err, needle)
    assert path.read_bytes() == before
    assert not (runs / "20200101-000000-000000.json").exists()
    assert script.turns == turns  # no model call on a trace that could not be read


def test_runs_list_skips_corrupted_traces(git_repo: Path, tmp_path: Path, runs: Path, script: Script,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    good = _awaiting_fix_run(git_repo, tmp_path, runs, capsys)
    for name, (corrupt, _) in CORRUPTIONS.items():
        bad = runs / f"29990101-000000-{name[:6]}.json"
        bad.write_bytes(good.read_bytes())
        corrupt(bad)
    (runs / "29990101-000000-adir.json").mkdir()
    code, out, err = _cli(["runs", "list", "--json"], capsys)
    assert code == 0, err
    listed = [r["run_id"] for r in json.loads(out)]
    assert good.stem in listed
    code, out, err = _cli(["runs", "show", "latest"], capsys)
    assert code == 0, err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", [["approve"], ["resume"]])
def test_a_proposal_whose_sha256_does_not_match_is_refused(
        command: list[str], git_repo: Path, tmp_path: Path, runs: Path, script: Script,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = _awaiting_fix_run(git_repo, tmp_path, runs, capsys)
    _edit(lambda d: d["proposal"].update(sha256="0" * 64))(path)
    code, _, err = _cli([*command, path.stem], capsys)
    assert code == 2
    _assert_one_clear_line(err, "altered")
    branches = subprocess.run(["git", "branch"], cwd=git_repo, capture_output=True, text=True).stdout
    assert "repopilot/" not in branches
    # runs show and trace export still read it: the trace is intact, only the proposal is refused.
    assert _cli(["runs", "show", path.stem], capsys)[0] == 0
    assert _cli(["trace", "export", path.stem, "--html", str(tmp_path / "p.html")], capsys)[0] == 0


# -- malformed model replies ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("call", "needle"), [
    ({"name": "rm_rf", "arguments": {"path": "/"}}, "unknown tool"),
    ({"name": "read_file", "arguments": "README.md"}, "not valid JSON"),
    ({"name": "read_file", "arguments": "[1, 2]"}, "expected a JSON object"),
    ({"name": "read_file", "arguments": ["README.md"]}, "expected a JSON object"),
    ({"name": "read_file", "arguments": 7}, "expected a JSON object"),
    ({"name": "read_file", "arguments": '{"path": "READ'}, "not valid JSON"),
    ({"name": "read_file", "arguments": {"path": 12, "start_line": "x"}}, "invalid arguments"),
    ({"arguments": {}}, "unknown tool"),
])
def test_malformed_tool_calls_become_error_results_and_the_run_goes_on(
        call: dict[str, Any], needle: str, git_repo: Path, runs: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _scripted(monkeypatch, [{"content": "", "tool_calls": [call]}, "the answer"])
    code, out, err = _cli(["ask", "q", "--repo", str(git_repo), "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["answer"] == "the answer"
    (trace,) = _traces(runs)
    (result,) = [s for s in trace["steps"] if s["type"] == "tool_result"]
    assert needle in (result["error"] or "")


@pytest.mark.parametrize(("exc", "code", "status", "needle"), [
    (ProviderError("rate limited", provider="test", status=429), 4, "failed", "rate limited"),
    (RuntimeError("model exploded"), 1, "failed", "internal error"),
    (KeyboardInterrupt(), 5, "interrupted", "interrupted"),
])
@pytest.mark.parametrize("command", ["ask", "fix"])
def test_an_exception_from_the_model_keeps_the_recorded_steps(
        exc: BaseException, code: int, status: str, needle: str, command: str, git_repo: Path, tmp_path: Path,
        runs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    _scripted(monkeypatch, [READ, exc])
    args = ["ask", "q"] if command == "ask" else ["fix", str(log), "--no-llm-diagnosis"]
    got, _, err = _cli([*args, "--repo", str(git_repo)], capsys)
    assert got == code
    assert "Traceback" not in err
    last = [line for line in err.splitlines() if line.strip()][-1]
    assert needle in last
    (trace,) = _traces(runs)
    assert trace["status"] == status
    # The first model turn and its tool call were recorded before the failure and are still there.
    kinds = [s["type"] for s in trace["steps"] if s["type"] != "decision"]
    assert kinds[:3] == ["llm_call", "tool_call", "tool_result"]


# -- a reader that goes away: `repopilot … | head -1` ------------------------------------------------------------

@pytest.mark.parametrize("command", [
    ["diagnose", "{log}", "-v"],
    ["diagnose", "{log}", "--format", "json"],
    ["diagnose", "{log}", "--format", "markdown"],
    ["runs", "list"],
    ["runs", "show", "latest"],
    ["runs", "show", "latest", "--json"],
    ["trace", "export", "latest", "--html", "-"],
    ["models"],
    ["ask", "what is this?", "--repo", "{repo}"],
], ids=lambda c: "-".join(c[:3]))
def test_a_closed_stdout_is_not_a_failure(command: list[str], git_repo: Path, tmp_path: Path, runs: Path) -> None:
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    env = {"REPOPILOT_RUNS_DIR": str(runs), "REPOPILOT_MODEL": "scripted:demo"}
    assert _subprocess(["diagnose", str(log)], env=env).returncode == 0  # something for `latest`
    args = [a.format(log=log, repo=git_repo) for a in command]
    # The read end is closed before the child writes anything, so its first write to stdout fails (EPIPE),
    # exactly as when `head -1` has exited.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "repopilot.cli.main", *args], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, **env}, cwd=ROOT,
                              timeout=60, check=False)
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert "internal error" not in done.stderr
    for trace in _traces(runs):
        assert trace["status"] == "completed"


# -- log text is shown as it is ---------------------------------------------------------------------------------

def test_log_text_is_printed_verbatim_not_as_emoji_or_markup(tmp_path: Path, runs: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "odd:x:name.log"
    text = "list:x:38:38:Mailing List Manager :warning: [bold]not bold[/] [/red]"
    log.write_text(f"{text}\n")
    code, out, err = _cli(["diagnose", str(log)], capsys)
    assert code == 0, err
    assert text in out
    assert "❌" not in out + err and "⚠" not in out + err
    code, out, err = _cli(["runs", "show", "latest"], capsys)
    assert code == 0, err
    assert "odd:x:name.log" in out and "❌" not in out


def test_runs_show_names_the_file_of_a_failure_without_a_line(tmp_path: Path, runs: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ci.log"
    log.write_text("FAILED tests/t.py::test_a - boom\n")
    assert _cli(["diagnose", str(log)], capsys)[0] == 0
    code, out, err = _cli(["runs", "show", "latest"], capsys)
    assert code == 0, err
    assert "rule confidence 0.90) at tests/t.py: " in out


# -- secrets --------------------------------------------------------------------------------------------------

UNSHAPED_KEY = "plain-gateway-Secret-4242"  # no known credential shape: only the environment net catches it
SECRETS = (OPENAI_KEY, GITHUB_TOKEN, LOG_TOKEN, UNSHAPED_KEY)


def test_secrets_never_reach_output_traces_or_the_page(git_repo: Path, tmp_path: Path, runs: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)
    monkeypatch.setenv("ANTHROPIC_API_KEY", UNSHAPED_KEY)
    log = tmp_path / "ci.log"
    log.write_text(LOG.replace("python -m pytest -q\n", f"python -m pytest -q\nAuthorization: token {LOG_TOKEN}\n"
                               f"curl -H 'Authorization: Bearer {GITHUB_TOKEN}' -d key={OPENAI_KEY}\n", 1)
                   + f"##[error]push failed for {LOG_TOKEN} using {UNSHAPED_KEY}\n")
    (git_repo / "settings.env").write_text(f"OPENAI_API_KEY={OPENAI_KEY}\nTOKEN={LOG_TOKEN}\n")
    leaky = f"I found {OPENAI_KEY} and {GITHUB_TOKEN}; also {UNSHAPED_KEY} and {LOG_TOKEN}."
    _scripted(monkeypatch, [
        {"content": leaky, "tool_calls": [
            {"name": "read_file", "arguments": {"path": "settings.env"}},
            {"name": "search_code", "arguments": {"pattern": UNSHAPED_KEY}},
            {"name": "read_file", "arguments": {"path": OPENAI_KEY}}]},
        {"content": "", "tool_calls": [{"id": "p1", "name": "propose_fix", "arguments": {
            "diff": FIX, "explanation": leaky}}]},
        leaky,
    ])
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: False)
    seen: list[str] = []
    for args in (["fix", str(log), "--repo", str(git_repo)],
                 ["diagnose", str(log), "-v"],
                 ["diagnose", str(log), "--format", "json"],
                 ["diagnose", str(log), "--format", "markdown"],
                 ["diagnose", str(log), "--format", "github"],
                 ["runs", "list", "--json"],
                 ["runs", "list"],
                 ["models", "--json"],
                 ["models"]):
        code, out, err = _cli(args, capsys)
        assert code in (0, 3), (args, err)
        seen += [out, err]
    fix_run = next(t for t in _traces(runs) if t["command"] == "fix")
    assert fix_run["status"] == "awaiting_approval"
    assert fix_run["proposal"]["sha256"] == diff_sha256(FIX)
    for run_id in [t["run_id"] for t in _traces(runs)]:
        for args in (["runs", "show", run_id], ["runs", "show", run_id, "--json"],
                     ["trace", "export", run_id, "--html", "-"],
                     ["trace", "export", run_id, "--html", str(tmp_path / f"{run_id}.html")]):
            code, out, err = _cli(args, capsys)
            assert code == 0, (args, err)
            seen += [out, err]
        seen.append((tmp_path / f"{run_id}.html").read_text())
    seen += [p.read_text() for p in runs.glob("*.json")]
    everything = "\n".join(seen)
    assert "[REDACTED]" in everything  # the secrets were there to be caught
    leaks = [(i, secret, text[max(0, text.find(secret) - 80):text.find(secret)])
             for i, text in enumerate(seen) for secret in SECRETS if secret in text]
    assert not leaks, "\n".join(f"{i} {s[:12]} after: {c!r}" for i, s, c in leaks)
    # An approval still works on the redacted trace: the diff had no secret in it.
    assert _cli(["approve", fix_run["run_id"], "--sha256", diff_sha256(FIX)], capsys)[0] == 0


@pytest.mark.parametrize("as_json", [False, True])
def test_a_secret_the_model_repeats_is_not_printed_by_ask(as_json: bool, git_repo: Path, runs: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", UNSHAPED_KEY)
    (git_repo / ".env").write_text(f"GITHUB_TOKEN={GITHUB_TOKEN}\n")
    _scripted(monkeypatch, [{"content": "", "tool_calls": [{"name": "read_file", "arguments": {"path": ".env"}}]},
                            f"The token is {GITHUB_TOKEN} and the key {UNSHAPED_KEY}."])
    code, out, err = _cli(["ask", "what is the token?", "--repo", str(git_repo), *(["--json"] if as_json else [])],
                          capsys)
    assert code == 0, err
    assert "The token is [REDACTED]" in out
    everything = out + err + "".join(p.read_text() for p in runs.glob("*.json"))
    assert GITHUB_TOKEN not in everything and UNSHAPED_KEY not in everything


# -- Ctrl-C and end of input at the approval prompt ----------------------------------------------------------

@pytest.mark.parametrize(("raised", "code"), [(KeyboardInterrupt(), 5), (EOFError(), 3)])
def test_no_answer_at_the_prompt_applies_nothing_and_the_run_can_still_be_approved(
        raised: BaseException, code: int, git_repo: Path, tmp_path: Path, runs: Path, script: Script,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import typer

    log = tmp_path / "ci.log"
    log.write_text(LOG)
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: True)

    def confirm(*args: Any, **kwargs: Any) -> bool:
        # click turns Ctrl-C and end of input inside its prompt into Abort; a Ctrl-C can also land just outside.
        if isinstance(raised, EOFError):
            raise typer.Abort()
        raise raised

    monkeypatch.setattr(typer, "confirm", confirm)
    got, _, err = _cli(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"], capsys)
    assert got == code
    assert "Traceback" not in err
    (trace,) = _traces(runs)
    assert trace["status"] == "awaiting_approval"
    assert "repopilot/" not in subprocess.run(["git", "branch"], cwd=git_repo, capture_output=True,
                                              text=True).stdout
    assert _cli(["approve", trace["run_id"], "--sha256", diff_sha256(FIX)], capsys)[0] == 0


# -- REPOPILOT_MODEL ------------------------------------------------------------------------------------------

ODD_MODELS = [
    (None, "no model configured"),
    ("", "no model configured"),
    ("   ", "not provider:model"),
    ("openai", "not provider:model"),
    (":", "not provider:model"),
    ("openai:", "not provider:model"),
    (":gpt-4o", "not provider:model"),
    ("nope:model", "unknown provider"),
    ("ünï:cödé", "unknown provider"),
    ("x" * 3000 + ":m", "unknown provider"),
    ("openai:gpt-4o-mini", "OPENAI_API_KEY is not set"),
    ("anthropic:claude", "ANTHROPIC_API_KEY is not set"),
    ("gemini:flash", "GEMINI_API_KEY is not set"),
    (OPENAI_KEY, "not provider:model"),  # a key pasted into the wrong variable is not echoed
]


@pytest.mark.parametrize(("value", "needle"), ODD_MODELS, ids=lambda v: repr(v)[:16])
@pytest.mark.parametrize("command", ["ask", "fix", "resume"])
def test_odd_model_settings_exit_2_before_anything_runs(
        value: str | None, needle: str, command: str, git_repo: Path, tmp_path: Path, runs: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    run_id = ""
    if command == "resume":  # an interrupted ask run, resumed with a broken setting
        _scripted(monkeypatch, [READ, KeyboardInterrupt()])
        assert main(["ask", "q", "--repo", str(git_repo)]) == 5
        run_id = _traces(runs)[0]["run_id"]
    if value is None:
        monkeypatch.delenv("REPOPILOT_MODEL", raising=False)
    else:
        monkeypatch.setenv("REPOPILOT_MODEL", value)
    before = {p.name: p.read_bytes() for p in runs.glob("*.json")} if runs.exists() else {}
    capsys.readouterr()
    args = {"ask": ["ask", "q", "--repo", str(git_repo)], "fix": ["fix", str(log), "--repo", str(git_repo)],
            "resume": ["resume", run_id]}[command]
    code, _, err = _cli(args, capsys)
    assert code == 2
    _assert_one_clear_line(err, needle)
    assert len(err) < 600
    assert OPENAI_KEY not in err
    after = {p.name: p.read_bytes() for p in runs.glob("*.json")} if runs.exists() else {}
    assert after == before  # nothing recorded, nothing changed


def test_models_shows_odd_settings_as_a_problem(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    for value, _ in ODD_MODELS[1:]:
        monkeypatch.setenv("REPOPILOT_MODEL", value or "")
        code, out, err = _cli(["models", "--json"], capsys)
        assert code == 0, err
        configured = json.loads(out)["configured"]
        assert configured["problem"] or value.startswith(("openai:", "anthropic:", "gemini:"))
        assert OPENAI_KEY not in out + err


@pytest.mark.parametrize("endpoint", ["ftp://models.example", "not a url", "http://:80/v1", "http://[bad", "http://h:port",
                                      "http://a b.example", "http://user:hunter2secret@[bad"])
@pytest.mark.parametrize(("model", "variable"), [("openai:gpt-4o-mini", "OPENAI_BASE_URL"),
                                                 ("ollama:llama3.2", "OLLAMA_HOST"),
                                                 ("anthropic:claude", "ANTHROPIC_BASE_URL")])
def test_a_malformed_endpoint_is_a_setting_to_fix_not_a_connection_to_retry(
        endpoint: str, model: str, variable: str, git_repo: Path, runs: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", model)
    monkeypatch.setenv(variable, endpoint)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", UNSHAPED_KEY)
    started = time.monotonic()
    code, _, err = _cli(["ask", "q", "--repo", str(git_repo)], capsys)
    assert code == 2
    _assert_one_clear_line(err, "endpoint")
    assert time.monotonic() - started < 5  # refused at once, no retries
    assert "hunter2secret" not in err and OPENAI_KEY not in err
    assert not runs.exists() or not list(runs.glob("*.json"))
    code, out, err = _cli(["models"], capsys)
    assert code == 0, err
    assert "hunter2secret" not in out + err


# -- file names that are not UTF-8, a runs directory that cannot be written ---------------------------------------

def test_a_file_name_that_is_not_utf8_is_diagnosed_and_recorded(tmp_path: Path, runs: Path) -> None:
    name = os.fsencode(tmp_path) + b"/build\xff.log"
    with open(name, "wb") as fh:
        fh.write(LOG.encode())
    env = {**os.environ, "REPOPILOT_RUNS_DIR": str(runs)}
    for fmt in ("text", "json"):
        done = subprocess.run([sys.executable, "-m", "repopilot.cli.main", "diagnose", name, "--format", fmt],
                              capture_output=True, env=env, cwd=ROOT, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert b"Traceback" not in done.stderr
    traces = _traces(runs)
    assert len(traces) == 2 and all(t["status"] == "completed" for t in traces)
    shown = subprocess.run([sys.executable, "-m", "repopilot.cli.main", "runs", "show", "latest"],
                           capture_output=True, env=env, cwd=ROOT, timeout=60, check=False)
    assert shown.returncode == 0, shown.stderr
    missing = subprocess.run([sys.executable, "-m", "repopilot.cli.main", "diagnose", b"/nonexistent/\xfe.log"],
                             capture_output=True, env=env, cwd=ROOT, timeout=60, check=False)
    assert missing.returncode == 2
    _assert_one_clear_line(missing.stderr.decode(errors="replace"), "no such file")


@pytest.mark.parametrize("runs_dir", ["{tmp}/a-file", "{tmp}/a-file/below", "/proc/no-such-dir"])
def test_a_runs_directory_that_cannot_be_written_is_a_setting_to_fix(
        runs_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    monkeypatch.setenv("REPOPILOT_RUNS_DIR", runs_dir.format(tmp=tmp_path))
    code, _, err = _cli(["diagnose", str(log)], capsys)
    assert code == 2
    _assert_one_clear_line(err, "REPOPILOT_RUNS_DIR")
    assert (tmp_path / "a-file").read_text() == "not a directory"


# -- github logs / report -------------------------------------------------------------------------------------

HOSTILE_RUNS = ["../../etc/passwd", "a/b", "file:///etc/passwd", "https://github.com/o/r/actions/runs/../../x",
                "https://github.com/../r/actions/runs/1", "https://github.com/o/r/actions/runs/1/job/abc",
                "https://github.com/o/r/actions/runs/-1", "javascript:alert(1)",
                # issue 15 item 6: these three ended as "internal error", exit 1
                "https://github.com:99999/o/r/actions/runs/1", "https://[::1/o/r/actions/runs/1",
                "https://github.com/o/r/actions/runs/" + "9" * 5000]


@pytest.mark.parametrize("run", HOSTILE_RUNS)
@pytest.mark.parametrize("command", [["github", "logs"], ["github", "report"], ["diagnose"]])
def test_hostile_run_urls_are_refused_before_any_request(run: str, command: list[str], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)
    monkeypatch.chdir(tmp_path)
    code, out, err = _cli([*command, run], capsys)
    assert code == 2
    _assert_one_clear_line(err)
    assert GITHUB_TOKEN not in out + err
    assert list(tmp_path.iterdir()) == []  # nothing downloaded or written


@pytest.mark.parametrize(("payload", "needle"), [
    (b"\xff\xfe\x00binary", "GITHUB_EVENT_PATH"),
    (b'{"workflow_run": {"html_url": "../../etc"', "GITHUB_EVENT_PATH"),
    (b'{"workflow_run": {"html_url": "../../etc"}}', "not a GitHub Actions run URL"),
    (b"[1, 2]", "no run to report on"),
])
def test_a_broken_event_payload_is_one_line_exit_2(payload: bytes, needle: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    event = tmp_path / "event.json"
    event.write_bytes(payload)
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    for name in ("GITHUB_RUN_ID", "GITHUB_REPOSITORY", "REPOPILOT_RUN"):
        monkeypatch.delenv(name, raising=False)
    code, _, err = _cli(["github", "report"], capsys)
    assert code == 2
    _assert_one_clear_line(err, needle)
