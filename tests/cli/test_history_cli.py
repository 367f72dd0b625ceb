"""`diagnose` remembers; `repopilot history` lists recurring failures; `history prune` forgets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repopilot.cli.main import main
from tests.ci.test_same_failure import PYTEST_LOG


def _diagnose(log: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["diagnose", str(log), "--no-llm", *args]) == 0
    return capsys.readouterr().out


def test_a_failure_seen_before_says_so_and_is_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/calc")
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    monkeypatch.setenv("GITHUB_JOB", "test")
    for n, sha in enumerate(("1a2b3c4d5e", "9f8e7d6c5b")):
        monkeypatch.setenv("GITHUB_SHA", sha)
        monkeypatch.setenv("GITHUB_RUN_ID", str(100 + n))
        log = tmp_path / f"run{n}.log"
        log.write_text(PYTEST_LOG.replace("0.02s", f"0.0{n + 3}s"))
        text = _diagnose(log, capsys)
    assert "seen 2 times since" in text and "first on 1a2b3c4" in text
    report = json.loads(_diagnose(log, capsys, "--format", "json"))  # the same job again: not counted twice
    failure = report["failures"][0]
    assert failure["history"]["count"] == 2 and failure["history"]["branches"] == ["main"]
    assert report["commit"] == "9f8e7d6c5b" and report["repository"] == "acme/calc"
    assert main(["history", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["diagnoses"] == 2
    top = listed["recurring"][0]
    assert top["fingerprint"] == failure["fingerprint"] and top["count"] == 2
    assert top["first_commit"] == "1a2b3c4d5e"
    assert Path(listed["history"]) == tmp_path / "state" / "repopilot" / "history.sqlite3"
    assert main(["history"]) == 0
    assert failure["fingerprint"][:8] in capsys.readouterr().out
    assert main(["history", "prune", "--days", "0"]) == 0
    assert "forgot 2 diagnoses" in capsys.readouterr().out
    assert main(["history", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["recurring"] == []


def test_a_diagnose_opens_the_history_file_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    opened: list[object] = []
    real = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: opened.append(a[0]) or real(*a, **k))
    log = tmp_path / "ci.log"
    log.write_text(PYTEST_LOG)
    for _ in range(2):  # reads (attribution), records, prunes when due, reads again (seen before)
        _diagnose(log, capsys, "--format", "json")
    assert opened == [tmp_path / "state" / "repopilot" / "history.sqlite3"] * 2


def test_history_off_records_nothing_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOPILOT_HISTORY", "off")
    log = tmp_path / "ci.log"
    log.write_text(PYTEST_LOG)
    assert "history" not in json.loads(_diagnose(log, capsys, "--format", "json"))["failures"][0]
    assert not (tmp_path / "state").exists()
    assert main(["history"]) == 2
    assert "turned off" in capsys.readouterr().err


def test_an_unwritable_history_costs_the_memory_not_the_diagnosis(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "not-a-db.sqlite3"
    bad.write_text("this is not sqlite " * 100)
    monkeypatch.setenv("REPOPILOT_HISTORY", str(bad))
    log = tmp_path / "ci.log"
    log.write_text(PYTEST_LOG)
    report = json.loads(_diagnose(log, capsys, "--format", "json"))
    assert report["category"] == "test" and "history" not in report["failures"][0]
    assert main(["history"]) == 2
    assert "not a RepoPilot failure history" in capsys.readouterr().err


# -- the quick path (cli/history_run.py): the same options as the typer command, without typer or rich ----------

def test_the_quick_path_reads_exactly_the_options_the_typer_command_declares() -> None:
    import typer.main

    from repopilot.cli.app import build_app
    from repopilot.cli.history_run import QUICK_HISTORY

    group = typer.main.get_command(build_app("history")).commands["history"]  # type: ignore[attr-defined]
    assert {o for p in group.params for o in p.opts} == set(QUICK_HISTORY)
    assert {p.name for p in group.params} == set(QUICK_HISTORY.values())


@pytest.mark.parametrize(("argv", "expected"), [
    (["history"], {}), (["history", "--json"], {"as_json": True}), (["history", "-n", "5"], {"limit": 5}),
    (["--debug", "history", "--limit=7", "--json"], {"limit": 7, "as_json": True, "debug": True}),
])
def test_the_common_case_is_read(argv: list[str], expected: dict[str, object]) -> None:
    from repopilot.cli.history_run import quick_history

    assert quick_history(argv) == {"debug": False, **expected}


@pytest.mark.parametrize("argv", [
    ["history", "prune"], ["history", "--help"], ["history", "-n", "0"], ["history", "-n", "x"], ["history", "-n"],
    ["history", "-n", "10001"], ["history", "--json", "--json"], ["history", "--json=1"], ["history", "-n5"],
    ["history", "--limit", "-3"], ["runs"], [], ["--version", "history"],
])
def test_anything_else_goes_to_typer(argv: list[str]) -> None:
    from repopilot.cli.history_run import quick_history

    assert quick_history(argv) is None


def test_history_json_imports_no_typer_rich_or_diagnosis(tmp_path: Path) -> None:
    from tests.cli.test_startup_imports import _loaded, _modules

    modules = _modules(tmp_path, "history", "--json", "-n", "3")
    assert "repopilot.ci.failure_history" in modules  # it did read the history
    heavy = ("typer", "rich", "repopilot.cli.app", "repopilot.ci.report", "repopilot.ci.diagnosis",
             "repopilot.ci.engine", "repopilot.ci.catalog", "httpx")
    assert [m for m in heavy if _loaded(modules, m)] == []


def test_bad_limits_are_typer_s_to_explain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "-n", "0"]) == 2
    assert "Invalid value for '--limit'" in capsys.readouterr().err
