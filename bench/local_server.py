"""llama.cpp's OpenAI-compatible server (llama-cpp-python, the `local` extra), with two repairs to its
`chatml-function-calling` chat format (the one that turns a ChatML model's text into OpenAI tool calls).

    python bench/local_server.py --model PATH.gguf --port 8080 [--n_threads 2] [--max-completion-tokens 384]
        [any other `python -m llama_cpp.server` option]

Why a wrapper and not `python -m llama_cpp.server` itself (llama-cpp-python 0.3.36):
1. Its template renders a `tool` message as an empty `<|im_start|>tool` line: the model never sees a tool's
   result, and calls the same tool again and again. Here each tool result reaches the model as a user turn,
   "Result of NAME:" and the text. Its template also shows each tool's name and parameters but not its
   description; the descriptions are added to the system message.
2. It generates a tool call's arguments and the message that may follow it with `max_tokens=None`, whatever the
   request says: a small model that loops inside a JSON string writes until the context is full (minutes per
   reply on two cores). Here every completion is capped (a request's own smaller `max_tokens` still wins); a
   capped call reaches RepoPilot as bad arguments, which the model is told.
The ChatML framing, the grammar and the sampling are llama-cpp-python's.

`launch()` starts it on loopback and waits until it answers; the live test (tests/providers/test_live_llama.py)
and bench/live_fix_local.py both start it that way, so what is measured is what is tested.

Experiment switches, off by default: `--force-tool NAME --force-after N` sets `tool_choice` to NAME on every
request that offers it once the conversation holds N assistant turns; `--force-fields a,b,c` also makes the
forced call's grammar require exactly those (string) arguments of the tool's schema. bench/live_fix_local.py
uses them for its "forced" arms (`--force-propose-after N [--force-edit]`) so that a model too small to decide
to propose still has its own proposal go through the guard, verification, receipt and approval; bench/LIVE.md
reports the arms apart.
"""

from __future__ import annotations

import functools
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _cap(limit: int) -> None:
    import llama_cpp

    original = llama_cpp.Llama.create_completion

    @functools.wraps(original)
    def capped(self: Any, *args: Any, **kwargs: Any) -> Any:
        asked = kwargs.get("max_tokens")
        if asked is None or asked <= 0 or asked > limit:
            kwargs["max_tokens"] = limit
        return original(self, *args, **kwargs)

    llama_cpp.Llama.create_completion = capped  # type: ignore[method-assign]


def _shown(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """`messages` with each tool result as a user turn naming its tool, and the tools' descriptions listed."""
    names: dict[Any, str] = {}
    out: list[dict[str, Any]] = []
    for m in messages:
        for call in m.get("tool_calls") or []:
            names[call.get("id")] = (call.get("function") or {}).get("name", "the tool")
        if m.get("role") == "tool":
            name = names.get(m.get("tool_call_id"), "the tool")
            out.append({"role": "user", "content": f"Result of {name}:\n{m.get('content') or ''}"})
        else:
            out.append(m)
    if tools and out and out[0].get("role") == "system":
        listing = "\n".join(f"- {t['function']['name']}: {t['function'].get('description', '')}" for t in tools)
        out[0] = {**out[0], "content": f"{out[0].get('content') or ''}\n\nWhat each function does:\n{listing}"}
    return out


def _forced(tool_choice: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
            force: str | None, after: int) -> Any:
    """`tool_choice` as asked, or the forced tool once the conversation has `after` assistant turns."""
    offered = {t["function"]["name"] for t in tools or []}
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    if force and force in offered and turns >= after:
        return {"type": "function", "function": {"name": force}}
    return tool_choice


def _narrowed(tools: list[dict[str, Any]] | None, name: str, fields: list[str]) -> list[dict[str, Any]] | None:
    """`tools` with `name`'s parameters cut to `fields`, each a required string (the forced call's grammar)."""
    if not tools or not fields:
        return tools
    out = []
    for t in tools:
        fn = t.get("function") or {}
        if fn.get("name") == name:
            props = (fn.get("parameters") or {}).get("properties") or {}
            params = {"type": "object", "required": fields, "additionalProperties": False,
                      "properties": {f: {"type": "string", "description": (props.get(f) or {}).get("description", "")}
                                     for f in fields}}
            t = {**t, "function": {**fn, "parameters": params}}
        out.append(t)
    return out


def _show_results(force: str | None = None, after: int = 0, fields: list[str] | None = None) -> None:
    from llama_cpp import llama_chat_format as formats

    original = formats.chatml_function_calling

    @functools.wraps(original)
    def handler(*, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                tool_choice: Any = None, **kwargs: Any) -> Any:
        choice = _forced(tool_choice, messages, tools, force, after)
        if force and choice is not tool_choice:
            tools = _narrowed(tools, force, fields or [])
        return original(messages=_shown(messages, tools), tools=tools, tool_choice=choice,  # type: ignore[arg-type]
                        **kwargs)

    formats.LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        "chatml-function-calling", handler, overwrite=True)


def command(gguf: Path, port: int, *options: str) -> list[str]:
    """The command line that runs this server for `gguf` on loopback `port`, with more options of either kind
    (llama.cpp's, or this wrapper's above)."""
    return [sys.executable, str(Path(__file__).resolve()), "--model", str(gguf), "--chat_format",
            "chatml-function-calling", "--host", "127.0.0.1", "--port", str(port), *options]


def launch(gguf: Path, log: Path, *options: str, timeout: float = 180.0) -> tuple[subprocess.Popen[bytes], str]:
    """Start the server (its output to `log`) and wait until it answers; returns it and its OpenAI base URL.
    RuntimeError, with the end of its output, when it exits or does not answer within `timeout` seconds."""
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with log.open("wb") as sink:
        proc = subprocess.Popen(command(gguf, port, *options), stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode}):\n{log.read_text()[-2000:]}")
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    stop(proc)
    raise RuntimeError(f"the server did not start within {timeout:.0f} s:\n{log.read_text()[-2000:]}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:  # uvicorn waits for a generation in flight; it need not finish
        proc.kill()
        proc.wait(10)


def main(argv: list[str]) -> None:
    ours = {"--max-completion-tokens": "384", "--force-tool": "", "--force-after": "0", "--force-fields": ""}
    rest: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg in ours:
            ours[arg] = next(it)
        else:
            rest.append(arg)
    _cap(int(ours["--max-completion-tokens"]))
    _show_results(ours["--force-tool"] or None, int(ours["--force-after"]),
                  [f for f in ours["--force-fields"].split(",") if f])
    from llama_cpp.server.__main__ import main as serve

    sys.argv = [sys.argv[0], *rest]
    serve()


if __name__ == "__main__":
    main(sys.argv[1:])
