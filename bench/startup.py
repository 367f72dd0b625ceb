"""Start-up of `repopilot diagnose` on a small log, whole process, warm and on an empty cache.

    python bench/startup.py [--runs 10] [--log examples/go-build-error.log]

Each run is a fresh `repopilot diagnose LOG --format json --no-llm` process (stdout to a file, the trace in a
temporary runs directory); `warm` reuses one cache directory (filled by a first, untimed run), `empty cache`
gets a new empty REPOPILOT_CACHE_DIR every run (a fresh machine: no compiled catalog, no hyperscan database).
The trace is written as a user's run writes it (fsync included). `python -c pass` and
`python -c "import typer, pydantic, rich.console"` are timed in the same runs (the
interpreter's and the frameworks' floor). Uses hyperfine when it is installed (`--warmup 2`, its median and
standard deviation), otherwise a timing loop; both report medians. Then the ten slowest imports of one warm
run (`python -X importtime`). The machine may be shared: compare against the floor of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
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


def _loop(cmd: list[str], env: dict[str, str], runs: int, fresh_cache: bool) -> tuple[float, float]:
    """Median wall and CPU (user + system) seconds of `runs` runs."""
    wall, cpu = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            run_env = {**env, "REPOPILOT_CACHE_DIR": cache} if fresh_cache else env
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            wall.append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(wall), statistics.median(cpu)


def _hyperfine(cmds: dict[str, str], runs: int, env: dict[str, str]) -> dict[str, tuple[float, float]]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        args = ["hyperfine", "--warmup", "2", "--runs", str(runs), "--export-json", out.name, "-N"]
        for name, cmd in cmds.items():
            args += ["-n", name, cmd]
        subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)
        data = json.loads(Path(out.name).read_text())
    return {r["command"]: (statistics.median(r["times"]), r["user"] + r["system"]) for r in data["results"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--log", type=Path, default=ROOT / "examples" / "go-build-error.log")
    args = ap.parse_args(argv)
    log = str(args.log.resolve())
    diagnose = [_exe(), "diagnose", log, "--format", "json", "--no-llm"]
    with tempfile.TemporaryDirectory() as runs_dir, tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "REPOPILOT_RUNS_DIR": runs_dir, "REPOPILOT_CACHE_DIR": cache}
        env.pop("REPOPILOT_MODEL", None)
        subprocess.run(diagnose, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        floor = [sys.executable, "-c", "pass"]
        frameworks = [sys.executable, "-c", "import typer, pydantic, rich.console"]
        results: dict[str, tuple[float, float]] = {}
        if shutil.which("hyperfine"):
            fresh = ("sh -c 'd=$(mktemp -d) && REPOPILOT_CACHE_DIR=$d " + " ".join(diagnose)
                     + " >/dev/null 2>&1; rm -rf $d'")
            results = _hyperfine({"python -c pass": " ".join(floor),
                                  "import typer, pydantic, rich": " ".join(frameworks[:2]) + ' "' + frameworks[2] + '"',
                                  "diagnose, warm": " ".join(diagnose),
                                  "diagnose, empty cache": fresh,
                                  "sh -c true (for the empty-cache row)": "sh -c 'd=$(mktemp -d); rm -rf $d'"},
                                 args.runs, env)
            how = "hyperfine"
        else:
            for name, cmd, fresh_cache in (("python -c pass", floor, False),
                                           ("import typer, pydantic, rich", frameworks, False),
                                           ("diagnose, warm", diagnose, False),
                                           ("diagnose, empty cache", diagnose, True)):
                results[name] = _loop(cmd, env, args.runs, fresh_cache)
            how = "timing loop"
        print(f"{Path(log).name} ({Path(log).stat().st_size / 1024:.0f} KB), {args.runs} runs, {how}: median wall "
              "time, and CPU time (user + system; hyperfine: mean) which a busy machine inflates less")
        for name, (wall, cpu) in results.items():
            print(f"  {name:<40} {wall * 1000:7.1f} ms wall {cpu * 1000:7.1f} ms CPU")
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "repopilot.cli.main", *diagnose[1:]],
                              env=env, capture_output=True, text=True, check=True)
        rows = [line.split("|") for line in proc.stderr.splitlines() if line.startswith("import time:")]
        own = sorted(((int(r[0].split(":")[1]), r[2].strip()) for r in rows[1:]), reverse=True)[:10]
        print("  slowest imports (self, ms): " + ", ".join(f"{name} {us / 1000:.1f}" for us, name in own))
    return 0


if __name__ == "__main__":
    sys.exit(main())
