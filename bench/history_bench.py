"""The failure history at scale (issue 12): 100,000 recorded diagnoses, then how long listing recurring failures
takes, in process and as the whole `repopilot history --json` command (start-up included: it takes the quick
path of cli/history_run.py, without typer or rich); and two writers at once losing nothing.

    python bench/history_bench.py                      # 100,000 diagnoses
    python bench/history_bench.py --diagnoses 20000 --writers 4

Diagnoses are spread over 2,000 fingerprints (a few very frequent, most rare: Zipf-like), 30 jobs, 6 branches and
5,000 commits; one in ten records is a passing job (what flake rates are computed from).
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from repopilot.ci import FailureRow, HistoryStore, RunRecord  # noqa: E402


def synthetic(n: int, seed: int = 7, prefix: str = "") -> list[RunRecord]:
    rng = random.Random(seed)
    fps = [f"{rng.getrandbits(64):016x}" for _ in range(2000)]
    cum = list(itertools.accumulate(1 / (i + 1) for i in range(len(fps))))
    start = time.time() - 80 * 86_400
    runs = []
    for i in range(n):
        job = f"job-{rng.randrange(30)}"
        commit = f"{rng.randrange(5000):040x}"
        passed = rng.random() < 0.1
        picked = [] if passed else rng.choices(fps, cum_weights=cum, k=rng.randint(1, 3))
        runs.append(RunRecord(repository="acme/shop", workflow="CI", job=job, branch=f"b{rng.randrange(6)}",
                              commit=commit, run_id=f"{prefix}{i}", attempt=1, category="test",
                              conclusion="success" if passed else "failure", recorded_at=start + i * 60,
                              failures=[FailureRow(fingerprint=f, rule="pytest.failure", category="test",
                                                   message=f"assert failed {f[:4]}") for f in picked]))
    return runs


def _writer(path: str, prefix: str, n: int) -> None:
    store = HistoryStore(Path(path))
    for run in synthetic(n, seed=hash(prefix) & 0xFFFF, prefix=prefix):
        store.record(run)  # one transaction each: the writers interleave


def two_writers(path: Path, writers: int, each: int) -> tuple[int, int, float]:
    started = time.perf_counter()
    procs = [multiprocessing.Process(target=_writer, args=(str(path), f"w{i}-", each)) for i in range(writers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    return writers * each, HistoryStore(path).count(), time.perf_counter() - started


def _wall(command: list[str], env: dict[str, str], repeat: int) -> list[float]:
    """Wall-clock milliseconds of `command` as a process, `repeat` times (after one warm-up run)."""
    subprocess.run(command, env=env, check=True, capture_output=True)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        times.append((time.perf_counter() - t) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--diagnoses", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--each", type=int, default=500, help="diagnoses each concurrent writer records")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="history-bench-") as tmp:
        path = Path(tmp) / "history.sqlite3"
        store = HistoryStore(path)
        t0 = time.perf_counter()
        runs = synthetic(args.diagnoses)
        for i in range(0, len(runs), 5000):
            store.record_many(runs[i:i + 5000])
        load = time.perf_counter() - t0
        size = path.stat().st_size
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            fresh = HistoryStore(path)  # fresh connections each time, as a command has; the queries it makes
            fresh.count()
            top = fresh.recurring(limit=20)
            times.append((time.perf_counter() - t) * 1000)
        env = {**os.environ, "REPOPILOT_HISTORY": str(path)}
        cli = _wall([str(Path(sys.executable).parent / "repopilot"), "history", "--json"], env, args.repeat)
        bare = _wall([sys.executable, "-c", "pass"], env, args.repeat)
        print(f"{args.diagnoses:,} diagnoses recorded in {load:.1f} s ({size / 1e6:.1f} MB); top {len(top)} recurring "
              f"failures in median {statistics.median(times):.1f} ms (max {max(times):.1f} ms) in process")
        print(f"`repopilot history --json`, the whole command: median {statistics.median(cli):.0f} ms wall (min "
              f"{min(cli):.0f} ms), of which Python's own start-up (`python -c pass`) median "
              f"{statistics.median(bare):.0f} ms; target < 200 ms")
        wrote, found, secs = two_writers(Path(tmp) / "concurrent.sqlite3", args.writers, args.each)
        print(f"{args.writers} writers at once recorded {wrote} diagnoses (one transaction each) in {secs:.1f} s; "
              f"{found} in the file: {'nothing lost' if found == wrote else f'{wrote - found} LOST'}")
        return 0 if found == wrote else 1


if __name__ == "__main__":
    sys.exit(main())
