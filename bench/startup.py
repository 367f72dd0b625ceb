"""Start-up of `repopilot diagnose` on a small log, whole process, warm and on an empty cache, as installed here and
as a user installs it.

    python bench/startup.py [--runs 10] [--log examples/go-build-error.log] [--kb 12] [--instructions] [--no-wheel]

Each run is a fresh `repopilot diagnose LOG --format json --no-llm` process (stdout to /dev/null, the trace in a
temporary runs directory, written as a user's run writes it, fsync included). The rows are run in turns, one of
each per round (paired runs: a machine that gets busier slows every row alike), and each row reports the median
of its runs: wall time, and CPU time (user + system of the child), which a busy machine inflates less.

- `python -c pass`: the interpreter's floor; `import typer, pydantic, rich`: the frameworks' (for scale).
- `diagnose, warm`: one cache directory and one failure history, filled by two untimed runs (the validated
  catalog, then hyperscan's database).
- `diagnose, empty cache`: a new empty REPOPILOT_CACHE_DIR and no failure history every run (a fresh machine or
  CI runner: no validated catalog, no hyperscan database, no history file yet).
- `(this venv)`: RepoPilot as installed in the interpreter running the bench. A development checkout is an
  editable install: its `__editable__` finder takes part in every import, and it carries no prebuilt catalog,
  database or compiled patterns (setup.py makes them only for a wheel).
- `(wheel)`: what a user gets. A wheel built from this tree (`pip wheel`, with the build hook) is installed with
  its dependencies into a new virtual environment in a temporary directory. `--no-wheel` leaves these rows out.

The log is the first `--kb` KB of `--log`, cut at a line end (the issue's 12 KB case). RepoPilot's own modules are
compiled to bytecode first (`compileall`), as `pip install` does for a wheel: an editable install under
PYTHONDONTWRITEBYTECODE would otherwise compile every module from source on every run. Then the ten slowest
imports of one warm run (`python -X importtime`). hyperfine is not needed.

`--instructions` also counts the instructions of one run of each row under valgrind (callgrind): slow, but the
same on a busy machine as on a quiet one, so two versions can be compared where times cannot.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _exe() -> str:
    return shutil.which("repopilot", path=str(Path(sys.executable).parent)) or "repopilot"


def _once(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


Samples = list[tuple[float, float]]


def _paired(rows: dict[str, tuple[list[str], bool]], env: dict[str, str], runs: int) -> dict[str, Samples]:
    """Each row once per round, `runs` rounds; a row with `fresh` True gets a new empty cache directory and no
    failure history."""
    times: dict[str, Samples] = {name: [] for name in rows}
    for _ in range(runs):
        for name, (cmd, fresh) in rows.items():
            with tempfile.TemporaryDirectory() as cache:
                times[name].append(_once(cmd, _fresh(env, Path(cache)) if fresh else env))
    return times


def _fresh(env: dict[str, str], directory: Path) -> dict[str, str]:
    return {**env, "REPOPILOT_CACHE_DIR": str(directory / "cache"),
            "REPOPILOT_HISTORY": str(directory / "history.sqlite3")}


_NOT_COPIED = shutil.ignore_patterns(".venv", ".git", "__pycache__", "build", "dist", "*.egg-info", ".mypy_cache",
                                     ".ruff_cache", ".pytest_cache", ".runs", "out")


def _wheel_install(into: Path) -> tuple[str, list[str]]:
    """RepoPilot as a user installs it: a wheel built from this tree (a copy: the build writes `build/`), installed
    with its dependencies into a new virtual environment under `into`. Returns its `repopilot` and the prebuilt
    entries the wheel carries."""
    src = into / "src"
    shutil.copytree(ROOT, src, ignore=_NOT_COPIED)
    wheels = into / "wheels"
    _quietly([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(src)])
    wheel = next(wheels.glob("repopilot-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        prebuilt = sorted(Path(n).name for n in zf.namelist() if "/prebuilt/" in n)
    venv = into / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    _quietly([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)])
    return str(venv / "bin" / "repopilot"), prebuilt


def _quietly(cmd: list[str]) -> None:
    """Run pip; its output is shown only when it fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")


def _instructions(cmd: list[str], env: dict[str, str]) -> float | None:
    """Millions of instructions one run of `cmd` executes (valgrind's callgrind), or None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    return int(found.group(1)) / 1e6 if found else None


def _small_log(source: Path, kb: int, into: Path) -> Path:
    data = source.read_bytes()
    cut = data.rfind(b"\n", 0, kb * 1024) + 1 if len(data) > kb * 1024 else len(data)
    out = into / f"{source.stem}-{kb}kb.log"
    out.write_bytes(data[:cut or len(data)])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--log", type=Path, default=ROOT / "examples" / "go-build-error.log")
    ap.add_argument("--kb", type=int, default=12, help="use the first KB of the log (0: all of it)")
    ap.add_argument("--instructions", action="store_true", help="also count instructions under valgrind")
    ap.add_argument("--no-wheel", action="store_true", help="only RepoPilot as installed here, no wheel rows")
    args = ap.parse_args(argv)
    import repopilot

    compileall.compile_dir(str(Path(repopilot.__file__).parent), quiet=1)
    with (tempfile.TemporaryDirectory() as runs_dir, tempfile.TemporaryDirectory() as state,
          tempfile.TemporaryDirectory() as logs, tempfile.TemporaryDirectory() as install):
        log = _small_log(args.log.resolve(), args.kb, Path(logs)) if args.kb else args.log.resolve()
        env = {**_fresh(dict(os.environ), Path(state)), "REPOPILOT_RUNS_DIR": runs_dir}
        env.pop("REPOPILOT_MODEL", None)
        exes = {"this venv": _exe()}
        if not args.no_wheel:
            exes["wheel"], prebuilt = _wheel_install(Path(install))
            print(f"wheel: built from this tree; prebuilt entries it carries: {', '.join(prebuilt) or 'none'}")
        frameworks = [sys.executable, "-c", "import typer, pydantic, rich.console"]
        rows = {"python -c pass": ([sys.executable, "-c", "pass"], False),
                "import typer, pydantic, rich": (frameworks, False)}
        for where, exe in exes.items():
            diagnose = [exe, "diagnose", str(log), "--format", "json", "--no-llm"]
            for _ in range(2):  # the first run validates the catalog (a small log is scanned with `re`), the
                # second compiles hyperscan's database: both are cached from then on
                subprocess.run(diagnose, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            rows[f"diagnose, warm ({where})"] = (diagnose, False)
            rows[f"diagnose, empty cache ({where})"] = (diagnose, True)
        times = _paired(rows, env, args.runs)
        print(f"{log.name} ({log.stat().st_size / 1024:.0f} KB), {args.runs} paired runs: medians of wall time and "
              "of CPU time (user + system)")
        for name, samples in times.items():
            wall = statistics.median(w for w, _ in samples)
            cpu = statistics.median(c for _, c in samples)
            line = f"  {name:<36} {wall * 1000:7.1f} ms wall {cpu * 1000:7.1f} ms CPU"
            if args.instructions:
                cmd, fresh = rows[name]
                with tempfile.TemporaryDirectory() as empty:
                    counted = _instructions(cmd, _fresh(env, Path(empty)) if fresh else env)
                line += "" if counted is None else f" {counted:8.0f} M instructions"
            print(line)
        for where, exe in exes.items():
            python = str(Path(exe).parent / "python")
            proc = subprocess.run([python, "-X", "importtime", "-m", "repopilot.cli.main", "diagnose", str(log),
                                   "--format", "json", "--no-llm"], env=env, capture_output=True, text=True,
                                  check=True)
            lines = [line.split("|") for line in proc.stderr.splitlines() if line.startswith("import time:")]
            own = sorted(((int(r[0].split(":")[1]), r[2].strip()) for r in lines[1:]), reverse=True)[:10]
            print(f"  slowest imports, {where} (self, ms): " + ", ".join(f"{name} {us / 1000:.1f}" for us, name in own))
    return 0


if __name__ == "__main__":
    sys.exit(main())
