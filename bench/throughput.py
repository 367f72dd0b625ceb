"""Scanning speed and memory on generated GitHub-Actions-style logs, against `grep -Eic` in the same run.

    python bench/throughput.py [--sizes 50,500] [--engine hyperscan|re] [--repeat 3]

Generates bench/out/gh-<N>mb.log once (timestamps, step groups, ANSI colour, go/npm/maven-like output and a
few real failures), then for each size:
- RepoPilot: a child process builds the scanner, then times one full scan (startup and compile excluded);
  its peak RSS comes from getrusage(RUSAGE_CHILDREN) once it exits;
- grep: `grep -Eic` with the scanner's keyword pattern over the same file (a few milliseconds of process
  start-up included, which only flatters grep).
The best of --repeat runs is reported; the file is read once beforehand so both read it from the page cache.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))

from repopilot.ci.scanner import KEYWORDS  # noqa: E402

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
from repopilot.ci.catalog import load_catalog
from repopilot.ci.scanner import Scanner
engine = None if sys.argv[2] == "auto" else sys.argv[2]
sc = Scanner(load_catalog(), engine=engine)
t0 = time.perf_counter()
with open(sys.argv[1], "rb") as fh:
    res = sc.scan(fh)
dt = time.perf_counter() - t0
print(json.dumps({"seconds": dt, "lines": res.lines, "hits": len(res.hits), "engine": res.engine}))
"""

# Calibrated on the GitHub Actions logs of the cidiff set: about 3.6% of lines hold a keyword and there are
# about 220 ANSI escape sequences per MB (colour on a few tools' lines).
_NOISE = [
    "go: downloading github.com/hashicorp/go-{n} v1.{n}.0",
    "ok  \tgithub.com/acme/app/internal/pkg{n}\t0.{n}s",
    "=== RUN   TestHandler{n}",
    "--- PASS: TestHandler{n} (0.0{n}s)",
    "[INFO] Compiling {n} source files to /home/runner/work/app/app/target/classes",
    "[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/acme/lib{n}/1.0/lib{n}-1.0.jar",
    "npm WARN deprecated package{n}@1.0.{n}: this version is no longer supported",
    "  Downloading wheel-{n}.0-py3-none-any.whl (64 kB)",
    "Step {n}/20 : RUN make build",
    "[command]/usr/bin/git -c protocol.version=2 fetch --no-tags --prune --depth=1 origin {n}",
    "INFO handled request id={n} status=200 duration=3ms",
    "  shell: /usr/bin/bash -e {{0}}",
    "    env: GOFLAGS=-mod=readonly GOPROXY=https://proxy.golang.org",
]
_KEYWORD_NOISE = [
    "DEBUG retrying connection attempt {n} (no error yet)",
    "=== RUN   TestErrorHandling{n}",
    "--- PASS: TestFailover{n} (0.01s)",
]
_COLOUR = "\x1b[32m✓\x1b[39m renders component {n} \x1b[90m(12 ms)\x1b[39m"
_FAILURES = [
    "--- FAIL: TestParseConfig (0.01s)\n    config_test.go:42: expected 3 items, got 2\nFAIL\n"
    "FAIL\tgithub.com/acme/app/internal/config\t0.012s",
    "##[error]internal/server/handler.go:88:9: undefined: os",
    "[ERROR] /home/runner/work/app/src/main/java/a/B.java:[12,8] cannot find symbol\n  symbol:   class Foo\n"
    "[INFO] 1 error",
    "ERROR: go.mod/go.sum are not up-to-date. Run 'go mod tidy' and then commit the updated files.",
]


def generate(path: Path, megabytes: int, seed: int = 10) -> None:
    """A log of about `megabytes` MB: a 1 MB body of realistic lines with steps, repeated with new timestamps."""
    stamp_file = path.with_suffix(".seed")
    if path.exists() and stamp_file.exists() and stamp_file.read_text() == str(seed):
        return
    rnd = random.Random(seed)
    body: list[str] = []
    size = 0
    while size < 1024 * 1024:
        if rnd.random() < 0.0008:  # the cidiff GitHub logs have about 7 groups per MB
            line = f"##[group]Run step {rnd.randint(1, 99)}"
        elif rnd.random() < 0.0008:
            line = rnd.choice(_FAILURES)
        elif rnd.random() < 0.034:
            line = rnd.choice(_KEYWORD_NOISE).format(n=rnd.randint(1, 9999))
        elif rnd.random() < 0.0045:
            line = _COLOUR.format(n=rnd.randint(1, 9999))
        else:
            line = rnd.choice(_NOISE).format(n=rnd.randint(1, 9999))
        body.append(line)
        size += len(line) + 30
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for block in range(megabytes):
            stamp = f"2024-05-01T{block // 3600 % 24:02d}:{block // 60 % 60:02d}:{block % 60:02d}"
            fh.write("".join(f"{stamp}.{i % 10000000:07d}Z {line}\n" for i, line in enumerate(body)))
        fh.write(f"{stamp}.9999999Z ##[error]Process completed with exit code 1.\n")
    tmp.replace(path)
    stamp_file.write_text(str(seed))


def run_repopilot(path: Path, engine: str) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), engine, str(ROOT)], capture_output=True,
                          text=True, check=True)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    data = json.loads(proc.stdout)
    # RUSAGE_CHILDREN's maxrss is the largest child so far: measure the big file after the small one.
    data["peak_rss_mb"] = max(peak_kb, before) / 1024
    return data


def run_grep(path: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(["grep", "-Eic", KEYWORDS, str(path)], capture_output=True, text=True)
    return time.perf_counter() - t0, int(proc.stdout.strip() or 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="50,500", help="log sizes in MB, comma-separated")
    ap.add_argument("--engine", default="auto", choices=["auto", "hyperscan", "re"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    results = []
    for mb in sorted(int(s) for s in args.sizes.split(",")):
        path = OUT / f"gh-{mb}mb.log"
        generate(path, mb)
        with path.open("rb") as fh:  # warm the page cache for both contenders
            while fh.read(16 * 1024 * 1024):
                pass
        rp = min((run_repopilot(path, args.engine) for _ in range(args.repeat)), key=lambda r: r["seconds"])
        gt, gcount = min(run_grep(path) for _ in range(args.repeat))
        row = {"mb": mb, "bytes": path.stat().st_size, "repopilot_s": round(rp["seconds"], 3),
               "grep_s": round(gt, 3), "ratio": round(rp["seconds"] / gt, 2) if gt else None,
               "peak_rss_mb": round(rp["peak_rss_mb"], 1), "engine": rp["engine"], "lines": rp["lines"],
               "hits": rp["hits"], "grep_lines": gcount}
        results.append(row)
        print(f"{mb:>4} MB: repopilot {row['repopilot_s']:.3f}s ({row['engine']}, {row['hits']} hits) | "
              f"grep -Eic {row['grep_s']:.3f}s ({gcount} lines) | ratio {row['ratio']}x | "
              f"peak RSS {row['peak_rss_mb']:.0f} MB")
    (OUT / "throughput.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
