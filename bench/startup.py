"""Start-up of `repopilot diagnose` on a small log, whole process, warm and on an empty cache.

    python bench/startup.py [--runs 10] [--log examples/go-build-error.log] [--kb 12]

Each run is a fresh `repopilot diagnose LOG --format json --no-llm` process (stdout to /dev/null, the trace in a
temporary runs directory, written as a user's run writes it, fsync included). The rows are run in turns, one of
each per round (paired runs: a machine that gets busier slows every row alike), and each row reports the median
of its runs: wall time, and CPU time (user + system of the child), which a busy machine inflates less.

- `python -c pass`: the interpreter's floor; `import typer, pydantic, rich`: the frameworks' (for scale).
- `diagnose, warm`: one cache directory, filled by two untimed runs (the validated catalog, then hyperscan's
  database).
- `diagnose, empty cache`: a new empty REPOPILOT_CACHE_DIR every run (a fresh machine or CI runner: no validated
  catalog, no hyperscan database).

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
    """Each row once per round, `runs` rounds; a row with `fresh` True gets a new empty cache directory."""
    times: dict[str, Samples] = {name: [] for name in rows}
    for _ in range(runs):
        for name, (cmd, fresh) in rows.items():
            with tempfile.TemporaryDirectory() as cache:
                times[name].append(_once(cmd, {**env, "REPOPILOT_CACHE_DIR": cache} if fresh else env))
    return times


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
    args = ap.parse_args(argv)
    import repopilot

    compileall.compile_dir(str(Path(repopilot.__file__).parent), quiet=1)
    with (tempfile.TemporaryDirectory() as runs_dir, tempfile.TemporaryDirectory() as cache,
          tempfile.TemporaryDirectory() as logs):
        log = _small_log(args.log.resolve(), args.kb, Path(logs)) if args.kb else args.log.resolve()
        diagnose = [_exe(), "diagnose", str(log), "--format", "json", "--no-llm"]
        env = {**os.environ, "REPOPILOT_RUNS_DIR": runs_dir, "REPOPILOT_CACHE_DIR": cache}
        env.pop("REPOPILOT_MODEL", None)
        for _ in range(2):  # the first run validates the catalog (a small log is scanned with `re`), the second
            # compiles hyperscan's database: both are cached from then on
            subprocess.run(diagnose, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        frameworks = [sys.executable, "-c", "import typer, pydantic, rich.console"]
        rows = {"python -c pass": ([sys.executable, "-c", "pass"], False),
                "import typer, pydantic, rich": (frameworks, False),
                "diagnose, warm": (diagnose, False),
                "diagnose, empty cache": (diagnose, True)}
        times = _paired(rows, env, args.runs)
        print(f"{log.name} ({log.stat().st_size / 1024:.0f} KB), {args.runs} paired runs: medians of wall time and "
              "of CPU time (user + system)")
        for name, samples in times.items():
            wall = statistics.median(w for w, _ in samples)
            cpu = statistics.median(c for _, c in samples)
            line = f"  {name:<32} {wall * 1000:7.1f} ms wall {cpu * 1000:7.1f} ms CPU"
            if args.instructions:
                cmd, fresh = rows[name]
                with tempfile.TemporaryDirectory() as empty:
                    counted = _instructions(cmd, {**env, "REPOPILOT_CACHE_DIR": empty} if fresh else env)
                line += "" if counted is None else f" {counted:8.0f} M instructions"
            print(line)
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "repopilot.cli.main", *diagnose[1:]],
                              env=env, capture_output=True, text=True, check=True)
        rows = [line.split("|") for line in proc.stderr.splitlines() if line.startswith("import time:")]
        own = sorted(((int(r[0].split(":")[1]), r[2].strip()) for r in rows[1:]), reverse=True)[:10]
        print("  slowest imports (self, ms): " + ", ".join(f"{name} {us / 1000:.1f}" for us, name in own))
    return 0


if __name__ == "__main__":
    sys.exit(main())
