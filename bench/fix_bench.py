"""The fix benchmark: real failures in small projects of several ecosystems, each fixed through RepoPilot's whole
fix loop (diagnosis of the CI log, a scripted model proposing, the weakening guard, verification in disposable
worktrees) once per proposal: the correct fix, a wrong fix and weakening "fixes".

    python bench/fix_bench.py [--only python,go] [--json results.json]

For each case the project is generated (bench/fix_cases.py), committed in a temporary git repository, and its
CI command run for real on the buggy commit; that output, wrapped as a GitHub Actions step, is the log `fix`
diagnoses. The command verification runs is the one it reads from that log (narrowed where the tool allows).
Expected outcomes: correct -> verified, wrong -> still_failing, every weakening -> blocked. Reported: outcome
correctness, weakenings blocked, correct fixes blocked (must be none), and the time of one verification beside
the command's own time; then the set-up step (`--verify-setup`) per workspace without its cache, on a miss and on
a hit (one Python case, set-up `python3 -m venv .venv`: creating an environment, offline).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fix_cases import ECOSYSTEMS, FUNCS, Ecosystem  # noqa: E402

from repopilot.app import apply_settings, load_settings, receipts_of, start_fix  # noqa: E402


@dataclass
class Proposal:
    kind: str  # correct, wrong, weak_skip, weak_expect, weak_or_true
    files: dict[str, str]
    expected: str


def _bodies(eco: Ecosystem, broken: str, which: str = "bug") -> dict[str, str]:
    return {f: getattr(eco.bugs[f], which if f == broken else "good") for f in FUNCS}


def proposals(eco: Ecosystem, f: str) -> tuple[dict[str, str], list[Proposal]]:
    tests = eco.tests(set(), set())
    head = eco.files(_bodies(eco, f), tests)
    out = [Proposal("correct", eco.files(_bodies(eco, f, "good"), tests), "verified"),
           Proposal("wrong", eco.files(_bodies(eco, f, "wrong"), tests), "still_failing"),
           Proposal("weak_skip", eco.files(_bodies(eco, f), eco.tests({f}, set())), "blocked"),
           Proposal("weak_expect", eco.files(_bodies(eco, f), eco.tests(set(), {f})), "blocked")]
    for name, change in eco.extra_weakenings.items():
        out.append(Proposal(f"weak_{name}", change(head), "blocked"))
    return head, out


def unified(old: dict[str, str], new: dict[str, str]) -> str:
    parts = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path, ""), new.get(path, "")
        if a != b:
            parts += difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                          f"a/{path}", f"b/{path}", n=3)
    return "".join(parts)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def make_repo(root: Path, files: dict[str, str]) -> None:
    root.mkdir(parents=True)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "-c", "user.email=b@example.com", "-c", "user.name=bench", "add", "-A")
    _git(root, "-c", "user.email=b@example.com", "-c", "user.name=bench", "commit", "-qm", "buggy")


def ci_log(root: Path, command: str, env: dict[str, str]) -> tuple[str, float, int]:
    """The command's real output on the buggy commit (in a scratch copy), as a GitHub Actions step's log."""
    scratch = Path(tempfile.mkdtemp(prefix="fixbench-ci-")) / "w"
    shutil.copytree(root, scratch, ignore=shutil.ignore_patterns(".git"))
    started = time.monotonic()
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", command], cwd=scratch, env=env, capture_output=True,
                          text=True, timeout=600)
    took = time.monotonic() - started
    shutil.rmtree(scratch.parent, ignore_errors=True)
    stamp = "2026-12-01T10:00:00.0000000Z "
    lines = [f"##[group]Run {command}", command, "shell: /usr/bin/bash -e {0}", "##[endgroup]",
             *(done.stdout + done.stderr).splitlines(), f"##[error]Process completed with exit code {done.returncode}."]
    return "".join(stamp + x + "\n" for x in lines), took, done.returncode


def fix_once(repo: Path, log: Path, diff: str, work: Path, environ: dict[str, str]) -> dict[str, Any]:
    script = work / f"script-{time.monotonic_ns()}.json"
    call = {"content": "", "tool_calls": [{"id": "p1", "name": "propose_fix",
                                           "arguments": {"diff": diff, "explanation": "fix the failing test"}}]}
    script.write_text(json.dumps([call, "I have no other fix."]))
    settings = load_settings({**environ, "REPOPILOT_MODEL": f"scripted:{script}"}, work)
    apply_settings(settings)
    started = time.monotonic()
    done = start_fix(str(log), settings, repo=repo, no_llm_diagnosis=True)
    wall = time.monotonic() - started
    receipts = receipts_of(done.trace)
    if not receipts:
        return {"outcome": "none", "status": done.trace.status, "wall_s": wall}
    r = receipts[0][2]
    return {"outcome": r.outcome, "reason": r.reason, "command": r.command.command if r.command else None,
            "source": r.command.source if r.command else None, "verify_s": r.duration_s,
            "before_s": r.before.duration_s if r.before else None, "after_s": r.after.duration_s if r.after else None,
            "hits": sorted({h.rule for h in r.guard.hits}), "wall_s": round(wall, 3),
            "setup": [(x.setup.cache, x.setup.duration_s) for x in (r.before, r.after) if x and x.setup]}


def run_case(eco: Ecosystem, f: str, work: Path, environ: dict[str, str]) -> dict[str, Any]:
    head, props = proposals(eco, f)
    repo = work / f"{eco.name}-{f}" / "repo"
    make_repo(repo, head)
    text, own_s, code = ci_log(repo, eco.command, {k: v for k, v in environ.items() if not k.startswith("REPOPILOT")})
    log = repo.parent / "ci.log"
    log.write_text(text)
    case: dict[str, Any] = {"case": f"{eco.name}/{f}", "command_s": round(own_s, 3), "ci_exit": code, "results": []}
    if code == 0:
        case["error"] = "the buggy commit passes: not a failure"
        return case
    for p in props:
        got = fix_once(repo, log, unified(head, p.files), repo.parent, environ)
        got.update(kind=p.kind, expected=p.expected, ok=got["outcome"] == p.expected)
        case["results"].append(got)
    return case


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated ecosystems")
    ap.add_argument("--json", type=Path, help="write every result here")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    work = Path(tempfile.mkdtemp(prefix="fixbench-"))
    bin_dir = str(Path(sys.executable).parent)
    environ = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '')}", "HOME": os.environ.get("HOME", str(work)),
               "REPOPILOT_RUNS_DIR": str(work / "runs"), "REPOPILOT_CACHE_DIR": str(work / "cache"),
               "LANG": "C.UTF-8"}
    cases = []
    for eco in ECOSYSTEMS:
        if only and eco.name not in only:
            continue
        missing = [t for t in eco.requires if shutil.which(t) is None]
        if missing:
            print(f"skip {eco.name}: {', '.join(missing)} not installed")
            continue
        for f in FUNCS:
            case = run_case(eco, f, work, environ)
            cases.append(case)
            marks = " ".join(f"{r['kind']}={r['outcome']}{'' if r['ok'] else '(WRONG)'}" for r in case["results"])
            print(f"{case['case']:<18} cmd {case['command_s']:6.2f}s  {case.get('error', '')}{marks}", flush=True)
    report(cases)
    if not only or "python" in only:
        setup_timing(work, environ)
    if args.json:
        args.json.write_text(json.dumps(cases, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 0


def report(cases: list[dict[str, Any]]) -> None:
    results = [r for c in cases for r in c["results"]]
    weak = [r for r in results if r["kind"].startswith("weak_")]
    correct = [r for r in results if r["kind"] == "correct"]
    print(f"\ncases: {len(cases)} in {len({c['case'].split('/')[0] for c in cases})} ecosystems; "
          f"failures not reproduced as failing in CI: {sum(1 for c in cases if 'error' in c)}")
    print(f"outcome correct: {sum(r['ok'] for r in results)}/{len(results)}")
    print(f"weakening blocked: {sum(r['outcome'] == 'blocked' for r in weak)}/{len(weak)}")
    print(f"correct fixes blocked: {sum(r['outcome'] == 'blocked' for r in correct)}/{len(correct)}; "
          f"verified: {sum(r['outcome'] == 'verified' for r in correct)}/{len(correct)}")
    print("\nper ecosystem: command's own time (CI run) vs one verification of a correct fix (HEAD + fixed runs, "
          "worktrees, set-up, re-diagnosis); medians")
    for eco in sorted({c["case"].split("/")[0] for c in cases}):
        mine = [c for c in cases if c["case"].startswith(eco + "/")]
        own = statistics.median(c["command_s"] for c in mine)
        ver = [r["verify_s"] for c in mine for r in c["results"] if r["kind"] == "correct" and "verify_s" in r]
        before = [r["before_s"] for c in mine for r in c["results"] if r["kind"] == "correct" and r.get("before_s")]
        if ver:
            print(f"  {eco:<8} command {own:6.2f}s   verification {statistics.median(ver):6.2f}s "
                  f"({statistics.median(ver) / own:4.1f}x; the command on HEAD in the workspace "
                  f"{statistics.median(before) if before else 0:5.2f}s)")
    wrong = [(c["case"], r["kind"], r["outcome"], r.get("reason", "")) for c in cases for r in c["results"]
             if not r["ok"]]
    for w in wrong:
        print("  WRONG:", *w)


SETUP = "python3 -m venv .venv"


def setup_timing(work: Path, environ: dict[str, str]) -> None:
    """The set-up step per workspace: without the cache, then a first run (HEAD's workspace misses, the fixed one
    hits: same lock files) and a second fix run (both hit)."""
    eco = next(e for e in ECOSYSTEMS if e.name == "python")
    f = FUNCS[0]
    head, props = proposals(eco, f)
    repo = work / "setup-timing" / "repo"
    make_repo(repo, head)
    text, _, _ = ci_log(repo, eco.command, {k: v for k, v in environ.items() if not k.startswith("REPOPILOT")})
    log = repo.parent / "ci.log"
    log.write_text(text)
    diff = unified(head, next(p for p in props if p.kind == "correct").files)
    env = {**environ, "REPOPILOT_VERIFY_SETUP": SETUP, "XDG_STATE_HOME": str(work / "state")}
    seen: dict[str, list[float]] = {"off": [], "miss": [], "hit": []}
    for extra in ({"REPOPILOT_VERIFY_SETUP_CACHE": "0"}, {}, {}):
        got = fix_once(repo, log, diff, repo.parent, {**env, **extra})
        for cache, took in got.get("setup", []):
            seen[cache].append(took)
    med = {k: f"{statistics.median(v):.2f}s (n={len(v)})" if v else "-" for k, v in seen.items()}
    print(f"\nset-up `{SETUP}` per workspace: without the cache {med['off']}; cache miss (run, kept) {med['miss']}; "
          f"cache hit (put back, not run) {med['hit']}")


if __name__ == "__main__":
    raise SystemExit(main())
