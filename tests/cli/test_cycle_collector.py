"""The console script starts with the cycle collector off (loading the CLI makes no cyclic garbage); `diagnose` and
`history` keep it off to the end, any other command (an agent run, the service) turns it back on first."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from repopilot.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.enable()


def test_diagnose_runs_without_it_and_another_command_gets_it_back(collector_off: None, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "build.log"
    log.write_text("[ERROR] /w/A.java:[1,5] cannot find symbol\n")
    assert main(["diagnose", str(log), "--no-llm", "--format", "json"]) == 0
    assert not gc.isenabled()
    main(["runs", "--help"])  # a command the typer app runs
    assert gc.isenabled() and gc.get_freeze_count() > 0  # what was loaded is left out of its walks
    capsys.readouterr()


def test_the_console_script_turns_it_off_before_loading_the_cli(tmp_path: Path) -> None:
    # What the collector's state is when the wheel's precompiled file is installed (first) and when the diagnosis
    # runs, told on stderr as it happens (the script may end the process without unwinding).
    code = ("import gc, sys\n"
            "import repopilot.cli as cli, repopilot.cli.precompiled as p, repopilot.cli.diagnose_run as d\n"
            "def tell(what):\n"
            "    sys.stderr.write(f'{what}: {gc.isenabled()};'); sys.stderr.flush()\n"
            "install, diagnose = p.install, d.run_diagnose\n"
            "p.install = lambda *a: (tell('loading'), install(*a))[1]\n"
            "d.run_diagnose = lambda *a, **k: (tell('diagnosing'), diagnose(*a, **k))[1]\n"
            "sys.argv = ['repopilot', 'diagnose', sys.argv[1], '--no-llm', '--format', 'json']\n"
            "cli.run()\n")
    log = tmp_path / "build.log"
    log.write_text("[ERROR] /w/A.java:[1,5] cannot find symbol\n")
    proc = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, cwd=ROOT,
                          env={"PATH": "", "HOME": str(tmp_path), "REPOPILOT_RUNS_DIR": str(tmp_path / "runs")},
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "loading: False;diagnosing: False;" in proc.stderr
