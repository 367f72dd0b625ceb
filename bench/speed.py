"""Diagnosis speed and memory on logs made of real content, against `grep -Eic` and a raw hyperscan scan.

    python bench/speed.py [CIDIFF_DIR] [--sizes 1,10,50,100,500] [--mix-size 50] [--runs 5] [--mixes LIST]
                          [--no-wheel]

Logs (made once under bench/out/speed/, never committed): real logs concatenated up to each size, then a real
build error at the end (a bundled Maven compile error, or the mix's own kind). The content comes from the
CiDiff logs when CIDIFF_DIR is given (failing and passing runs; Jenkins and GitHub Actions; Maven, Gradle, Go),
the project's own real logs (examples/, tests/ci/rule_logs/) and the labelled corpus under bench/corpus/cases/
when it is there. Mixes:
- `real`: everything, ANSI colour as captured, at every --sizes size (the headline);
- `real-noansi`: the same without escape sequences; `maven`, `gradle`, `pytest`, `jest`, `go`: only logs of
  that tool (a mix with no logs is left out and said so); these at --mix-size;
- `generated`: bench/throughput.py's generated GitHub-style log, as a second line at --mix-size.

For each log, --runs paired runs (in each run every contender once, in turn, the file in the page cache):
- `grep`: `grep -Eic 'error|fail|fatal|exception|panic:|killed|timed out|denied'` (the scanner's keywords);
- `hs`: one hyperscan scan of the file, 1 MB at a time, as the scanner's engine does it (a child process;
  database load excluded): its database, the matches kept in C, and the lines of its prefilters' matches scanned
  again with the exact forms (ci/confirm.py): the floor of any hyperscan-based tool;
- `inproc`: `diagnose_input()` in a child process (scanner built beforehand, its defaults as the CLI's): scan,
  diagnosis, excerpt;
- `whole`: `repopilot diagnose FILE --format json --no-llm` as a user runs it (process start, imports, trace
  write, JSON out; the defaults: a big file scanned ahead by a helper process, ci/ahead.py), with its CPU seconds
  (its children's included) and peak memory three ways (sampled from /proc): the process tree's RSS with the
  pages a fork shares counted once (the headline), the plain sum of its processes' RSS (shared pages counted in
  each), and the main process's own peak (VmHWM, sampled: wait4's would count this bench's own pages, which the
  child had before its exec). Time and memory come from two runs of each: sampling the memory slows the run it
  samples (as grep's runs are not sampled, neither is a timed one);
- `forked`: the same with REPOPILOT_SCAN_WORKERS set to the CPUs (at most 4): a big file is scanned in parts by
  forked workers (ci/split.py): time, CPU of all its processes and the tree's peak RSS;
- `one pass`: the same with REPOPILOT_SCAN_AHEAD=0: no helper scanning ahead (ci/ahead.py), everything in one
  process: time, CPU and peak RSS;
- `fixed`: the same command on the first 12 KB of a real log: what any run costs (start-up, imports, the catalog,
  the trace), the floor under `whole` whatever the log's size;
- `wheel` and `fixed (wheel)`: `whole` and `fixed` with RepoPilot installed from a wheel built from this tree into
  a new virtual environment (as bench/startup.py does; `--no-wheel` leaves them out): what a user runs. The wheel
  carries the validated catalog, hyperscan's database and precompiled patterns (setup.py), which an editable
  install makes at run time, so its start-up is shorter.
The table shows medians (seconds) and the median of the per-run ratios whole/grep, inproc/grep, fixed/grep and
whole/hs. Then one stage profile per log (in process, one pass in one process): reading and cleaning (ANSI),
engine scan, line counting, flagged-line work, late hits, diagnosis, locator (when the diagnosis has one),
excerpt, trace write.
Everything also goes to bench/out/speed.json. The machine this runs on is shared: compare ratios from one run,
not seconds across runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "speed"
sys.path.insert(0, str(ROOT))

from repopilot.ci.lines import ANSI_BYTES  # noqa: E402
from repopilot.ci.scanner import KEYWORDS  # noqa: E402

_MB = 1024 * 1024
_TOOLS = {
    "maven": re.compile(rb"\[INFO\] (?:BUILD|Building|---)|maven", re.IGNORECASE),
    "gradle": re.compile(rb"^> Task :|BUILD FAILED in |gradle", re.MULTILINE),
    "pytest": re.compile(rb"=+ (?:FAILURES|short test summary info|test session starts) =+"),
    "jest": re.compile(rb"^\s*(?:PASS|FAIL) .*\.(?:test|spec)\.[jt]sx?|Test Suites: ", re.MULTILINE),
    "go": re.compile(rb"^(?:--- FAIL: |ok  \t|FAIL\t|go: downloading )", re.MULTILINE),
}
# A real build error the log ends with, per mix (bundled real logs).
_ENDINGS = {"go": "examples/go-build-error.log", "pytest": "tests/ci/rule_logs/pytest.log",
            "jest": "tests/ci/rule_logs/jest.log"}
_DEFAULT_ENDING = "examples/maven-compile-error.log"

_HS_CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[2])
from repopilot.ci import native
from repopilot.ci.engine import default_scanner
prefiltered = default_scanner().engine._prefiltered
scratches = prefiltered.scratches()
with open(sys.argv[1], "rb") as fh:
    t0 = time.perf_counter()
    while block := fh.read(1 << 20):
        prefiltered.scan(block, scratches, native.NATIVE)
print(time.perf_counter() - t0)
"""

_INPROC_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
sys.path.insert(0, sys.argv[2] + "/bench")
import speed_stages
from repopilot.ci.engine import default_scanner, diagnose_input
from repopilot.ci.sources import open_sources
sc = default_scanner()
stages = speed_stages.install(sc) if sys.argv[3] == "profile" else None
[log] = open_sources(sys.argv[1])
t0 = time.perf_counter()
# The profile: one pass in one process (a helper scanning ahead would hide the scan's stages in another).
result = diagnose_input(log, scanner=sc, workers=1 if stages is not None else 0, ahead=stages is None)
dt = time.perf_counter() - t0
if stages is not None:
    speed_stages.finish(stages, dt, result)
print(json.dumps({"seconds": dt, "stages": stages}))
"""


def _sources(cidiff: Path | None) -> list[Path]:
    files: list[Path] = []
    if cidiff is not None:
        index = cidiff / "index.tsv"
        if not index.is_file():
            sys.exit(f"{cidiff}: no index.tsv (expected the CiDiff data set)")
        for row in index.read_text().splitlines()[1:]:
            case = cidiff / row.split("\t")[0]
            files += [p for p in (case / "fail.log", case / "pass.log") if p.is_file()]
    files += sorted((ROOT / "examples").glob("*.log")) + sorted((ROOT / "tests" / "ci" / "rule_logs").glob("*.log"))
    files += sorted((ROOT / "bench" / "corpus" / "cases").glob("*/*/fail.log"))
    return files


def _mixes(files: list[Path]) -> dict[str, list[Path]]:
    mixes: dict[str, list[Path]] = {"real": files, "real-noansi": files}
    heads = {p: p.read_bytes()[: 4 * _MB] for p in files}
    for tool, rx in _TOOLS.items():
        mixes[tool] = [p for p in files if rx.search(heads[p])]
    return mixes


def _make_log(name: str, files: list[Path], mb: int) -> Path:
    """The concatenation of `files` (in turn, again and again) up to `mb` MB, then a real build error."""
    ending = ROOT / _ENDINGS.get(name, _DEFAULT_ENDING)
    key = json.dumps([name, mb, [str(p) for p in files], str(ending), 2])
    path = OUT / f"{name}-{mb}mb.log"
    stamp = path.with_suffix(".key")
    if path.exists() and stamp.exists() and stamp.read_text() == key:
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    strip = name.endswith("noansi")
    tmp = path.with_suffix(".tmp")
    size = 0
    with tmp.open("wb") as out:
        while size < mb * _MB:
            for p in files:
                data = p.read_bytes()
                if strip:
                    data = ANSI_BYTES.sub(b"", data)
                if not data.endswith(b"\n"):
                    data += b"\n"
                data = data[: mb * _MB - size] if size + len(data) > mb * _MB else data
                out.write(data)
                size += len(data)
                if size >= mb * _MB:
                    break
        if not data.endswith(b"\n"):
            out.write(b"\n")
        out.write(ending.read_bytes())
    tmp.replace(path)
    stamp.write_text(key)
    return path


def _warm(path: Path) -> None:
    with path.open("rb") as fh:
        while fh.read(16 * _MB):
            pass


def _grep(path: Path) -> float:
    # Output to a pipe, not /dev/null: GNU grep stops at the first match when its output is /dev/null.
    t0 = time.perf_counter()
    subprocess.run(["grep", "-Eic", KEYWORDS, str(path)], stdout=subprocess.PIPE, check=False)
    return time.perf_counter() - t0


def _child(code: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return proc.stdout


class _TreeMemory:
    """Peak memory of a process and its children (the scan's forked workers), sampled from /proc every few
    milliseconds: the sum of their RSS (the pages a fork shares counted in every process that maps them), and the
    tree's own: their private pages plus the shared ones once (the largest process's shared pages; a worker
    shares only what its parent holds)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.rss = self.tree = 0.0
        self.hwm = 0.0  # the process's own peak RSS since its exec (VmHWM), MB
        self.most = 1  # processes seen at once
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _pids(self) -> list[int]:
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            with contextlib.suppress(OSError, ValueError):
                todo += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        return pids

    @staticmethod
    def _rollup(pid: int) -> dict[str, int]:
        fields: dict[str, int] = {}
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
                name, value = line.split(":", 1)
                fields[name] = int(value.split()[0])
        return fields

    def _hwm(self) -> float:
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            self.hwm = max(self.hwm, self._hwm())
            pids = self._pids()
            rolls = [self._rollup(pid) for pid in pids]
            rss = sum(r.get("Rss", 0) for r in rolls)
            private = sum(r.get("Private_Clean", 0) + r.get("Private_Dirty", 0) for r in rolls)
            shared = max((r.get("Shared_Clean", 0) + r.get("Shared_Dirty", 0) for r in rolls), default=0)
            self.rss, self.tree = max(self.rss, rss / 1024), max(self.tree, (private + shared) / 1024)
            self.most = max(self.most, len(pids))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _whole(path: Path, runs_dir: str, workers: int | None = None, *, ahead: bool | None = None,
           exe: str | None = None) -> dict[str, object]:
    """`_diagnose_once` twice, in the same way: once timed, once with its memory sampled. Sampling reads every process's
    /proc/PID/smaps_rollup every 5 ms, which walks its page tables: on a 2-CPU machine whose two CPUs the scan and
    its helper keep busy, that took 15 ms (8%) off a 50 MB diagnose, while grep's runs are not sampled."""
    timed = _diagnose_once(path, runs_dir, workers, ahead=ahead, exe=exe, memory=False)
    sized = _diagnose_once(path, runs_dir, workers, ahead=ahead, exe=exe)
    if _gist(sized["report"]) != _gist(timed["report"]):  # type: ignore[arg-type]
        sys.exit(f"repopilot diagnose {path}: another diagnosis the second time")
    return {**sized, "seconds": timed["seconds"], "cpu": timed["cpu"]}


def _diagnose_once(path: Path, runs_dir: str, workers: int | None = None, *, ahead: bool | None = None,
                   exe: str | None = None, memory: bool = True) -> dict[str, object]:
    """One `repopilot diagnose` process (`exe`: of another install): seconds, CPU seconds (its children
    included), and with `memory` the peak RSS of its largest process (its VmHWM) and the peak RSS and PSS summed
    over its processes (sampled), and its report."""
    exe = exe or shutil.which("repopilot", path=str(Path(sys.executable).parent)) or "repopilot"
    env = {**os.environ, "REPOPILOT_RUNS_DIR": runs_dir}
    if workers is not None:
        env["REPOPILOT_SCAN_WORKERS"] = str(workers)
    if ahead is not None:
        env["REPOPILOT_SCAN_AHEAD"] = "1" if ahead else "0"
    env.pop("REPOPILOT_MODEL", None)
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen([exe, "diagnose", str(path), "--format", "json", "--no-llm"], stdout=out,
                                stderr=subprocess.DEVNULL, env=env)
        sampler = _TreeMemory(proc.pid) if memory and Path("/proc/self/smaps_rollup").exists() else None
        _, status, usage = os.wait4(proc.pid, 0)
        dt = time.perf_counter() - t0
        if sampler is not None:
            sampler.stop()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            sys.exit(f"repopilot diagnose {path} exited {proc.returncode}")
        out.seek(0)
        report = json.loads(out.read())
    # wait4's peak counts the pages the child had before its exec, this bench's own (tens of MB, whatever the
    # log): the process's VmHWM, sampled until it exits, is its own peak.
    rss = sampler.hwm if sampler is not None and sampler.hwm else usage.ru_maxrss / 1024
    return {"seconds": dt, "cpu": usage.ru_utime + usage.ru_stime, "rss": rss,
            "rss_sum": max(rss, sampler.rss) if sampler else rss, "tree": max(rss, sampler.tree) if sampler else rss,
            "processes": sampler.most if sampler else 1,
            "report": report[0] if isinstance(report, list) else report}


def _cpus() -> int:
    """Forked workers for the `forked` row: one per CPU this process may use, at most 4."""
    try:
        return max(2, min(4, len(os.sched_getaffinity(0))))
    except (AttributeError, OSError):
        return max(2, min(4, os.cpu_count() or 1))


def _gist(report: dict[str, object]) -> object:
    """What every way of running must agree on (not the trace's id, nor what the failure history adds)."""
    failures = report.get("failures") or []
    return (report.get("category"), report.get("error_lines"), report.get("lines"), report.get("excerpt"),
            [(f.get("rule"), f.get("lines")) for f in failures])  # type: ignore[union-attr]


def _measure(path: Path, runs: int, small: Path, wheel: str | None) -> dict[str, object]:
    _warm(path)
    rows: dict[str, list[float]] = {k: [] for k in ("grep", "hs", "inproc", "whole", "cpu", "rss", "rss_sum",
                                                    "tree", "fixed", "forked", "forked_cpu", "forked_rss",
                                                    "onepass", "onepass_cpu", "onepass_rss", "wheel", "wheel_cpu",
                                                    "wheel_rss", "wheel_fixed")}
    stages: dict[str, float] = {}
    report: dict[str, object] = {}
    processes = 1
    with tempfile.TemporaryDirectory() as runs_dir:
        for _ in range(runs):
            rows["grep"].append(_grep(path))
            rows["hs"].append(float(_child(_HS_CHILD, str(path), str(ROOT))))
            got = json.loads(_child(_INPROC_CHILD, str(path), str(ROOT), "plain"))
            rows["inproc"].append(got["seconds"])
            whole = _whole(path, runs_dir)
            report = whole["report"]  # type: ignore[assignment]
            processes = max(processes, whole["processes"])  # type: ignore[call-overload]
            for k in ("cpu", "rss", "rss_sum", "tree"):
                rows[k].append(whole[k])  # type: ignore[arg-type]
            rows["whole"].append(whole["seconds"])  # type: ignore[arg-type]
            # The fixed cost in the same run: the same command on a 12 KB log.
            rows["fixed"].append(_diagnose_once(small, runs_dir, memory=False)["seconds"])  # type: ignore[arg-type]
            contenders = [("forked", {"workers": _cpus()}), ("onepass", {"ahead": False})]
            if wheel is not None:
                contenders.append(("wheel", {"exe": wheel}))
                fixed = _diagnose_once(small, runs_dir, exe=wheel, memory=False)
                rows["wheel_fixed"].append(fixed["seconds"])  # type: ignore[arg-type]
            for name, how in contenders:
                got = _whole(path, runs_dir, **how)  # type: ignore[arg-type]
                if _gist(got["report"]) != _gist(report):  # type: ignore[arg-type]
                    sys.exit(f"{name}: another diagnosis than the default's for {path}")
                for k, v in ((name, "seconds"), (f"{name}_cpu", "cpu"), (f"{name}_rss", "tree")):
                    rows[k].append(got[v])  # type: ignore[arg-type]
        # The stage profile: one pass in one process (a split scan's stages run in several).
        stages = json.loads(_child(_INPROC_CHILD, str(path), str(ROOT), "profile"))["stages"]
    rows = {k: v for k, v in rows.items() if v}
    med = {k: statistics.median(v) for k, v in rows.items()}
    ratio = {k: statistics.median(a / g for a, g in zip(rows[k], rows["grep"], strict=True) if g)
             for k in ("hs", "inproc", "whole", "fixed", "forked", "onepass", "wheel", "wheel_fixed") if k in rows}
    ratio["whole/hs"] = statistics.median(a / h for a, h in zip(rows["whole"], rows["hs"], strict=True) if h)
    return {"median": med, "ratio": ratio, "runs": rows, "stages": stages, "processes": processes,
            "lines": report.get("lines"), "category": report.get("category"),
            "top_rule": (report.get("failures") or [{}])[0].get("rule")}  # type: ignore[union-attr]


def _print_row(name: str, mb: int, r: dict[str, object]) -> None:
    med, ratio = r["median"], r["ratio"]
    assert isinstance(med, dict) and isinstance(ratio, dict)
    print(f"{name:<12} {mb:>4} MB | grep {med['grep']:6.3f} | hs {med['hs']:6.3f} ({ratio['hs']:4.1f}x) | "
          f"in-process {med['inproc']:6.3f} ({ratio['inproc']:4.1f}x) | whole {med['whole']:6.3f} "
          f"({ratio['whole']:4.1f}x; {ratio['whole/hs']:4.1f}x hs), CPU {med['cpu']:6.3f} in {r['processes']} "
          f"processes, peak RSS {med['tree']:5.1f} MB (shared pages once; summed {med['rss_sum']:4.0f} MB, largest "
          f"process {med['rss']:4.0f} MB) | {r['category']} {r['top_rule']}", flush=True)
    print(f"{'':<20} | one pass (REPOPILOT_SCAN_AHEAD=0): whole {med['onepass']:6.3f} ({ratio['onepass']:4.1f}x), "
          f"CPU {med['onepass_cpu']:6.3f}, peak RSS {med['onepass_rss']:5.1f} MB | forked ({_cpus()} workers): whole "
          f"{med['forked']:6.3f} ({ratio['forked']:4.1f}x), CPU {med['forked_cpu']:6.3f}, peak RSS "
          f"{med['forked_rss']:4.0f} MB | fixed cost, the same command on a 12 KB log: {med['fixed']:5.3f} "
          f"({ratio['fixed']:4.1f}x grep)", flush=True)
    if "wheel" in med:
        print(f"{'':<20} | wheel install: whole {med['wheel']:6.3f} ({ratio['wheel']:4.1f}x), CPU "
              f"{med['wheel_cpu']:6.3f}, peak RSS {med['wheel_rss']:5.1f} MB | fixed cost (wheel) "
              f"{med['wheel_fixed']:5.3f} ({ratio['wheel_fixed']:4.1f}x grep)", flush=True)


def _print_stages(stages: dict[str, float]) -> None:
    total = sum(stages.values()) or 1.0
    print("    stages (one pass, one process): " + ", ".join(f"{k} {v:.3f}s ({100 * v / total:.0f}%)"
                                                          for k, v in stages.items()), flush=True)


def _small_log() -> Path:
    """The first 12 KB of a real log (whole lines): what every run costs whatever the log's size."""
    path = OUT / "small-12kb.log"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        data = (ROOT / _DEFAULT_ENDING).read_bytes()[: 12 * 1024]
        path.write_bytes(data[: data.rfind(b"\n") + 1])
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cidiff", nargs="?", type=Path, help="the CiDiff data set (index.tsv and case folders)")
    ap.add_argument("--sizes", default="1,10,50,100,500", help="sizes of the `real` log, MB")
    ap.add_argument("--mix-size", type=int, default=50, help="size of the other mixes' logs, MB (0: none)")
    ap.add_argument("--mixes", default="real-noansi,maven,gradle,pytest,jest,go,generated")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-wheel", action="store_true", help="no wheel rows (setting up the wheel takes a minute)")
    args = ap.parse_args(argv)
    files = _sources(args.cidiff)
    mixes = _mixes(files)
    plan = [("real", int(s)) for s in args.sizes.split(",") if s]
    if args.mix_size:
        plan += [(m, args.mix_size) for m in args.mixes.split(",") if m]
    print(f"{len(files)} real logs ({sum(p.stat().st_size for p in files) / _MB:.1f} MB); "
          f"{args.runs} paired runs; medians, ratios to grep -Eic in the same runs", flush=True)
    small = _small_log()
    with contextlib.ExitStack() as stack:
        wheel = None
        if not args.no_wheel:
            from startup import _wheel_install  # bench/startup.py: the same install a user gets

            wheel, prebuilt = _wheel_install(Path(stack.enter_context(tempfile.TemporaryDirectory())))
            print(f"wheel: built from this tree, in a new venv; prebuilt entries it carries: {', '.join(prebuilt)}",
                  flush=True)
        results = _run(plan, mixes, args.runs, small, wheel)
    (ROOT / "bench" / "out" / "speed.json").write_text(json.dumps(results, indent=1))
    return 0


def _run(plan: list[tuple[str, int]], mixes: dict[str, list[Path]], runs: int, small: Path,
         wheel: str | None) -> list[dict[str, object]]:
    results = []
    for name, mb in plan:
        if name == "generated":
            from throughput import generate  # bench/throughput.py

            path = ROOT / "bench" / "out" / f"gh-{mb}mb.log"
            generate(path, mb)
        elif not mixes.get(name):
            print(f"{name:<12} {mb:>4} MB | no logs of this kind among the sources: left out", flush=True)
            continue
        else:
            path = _make_log(name, mixes[name], mb)
        r = _measure(path, runs, small, wheel)
        _print_row(name, mb, r)
        _print_stages(r["stages"])  # type: ignore[arg-type]
        results.append({"mix": name, "mb": mb, "bytes": path.stat().st_size, **r})
    return results


if __name__ == "__main__":
    sys.exit(main())
