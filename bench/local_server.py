"""llama.cpp's OpenAI-compatible server (llama-cpp-python, the `local` extra) with a cap on every completion.

    python bench/local_server.py --model PATH.gguf --port 8080 [--n_threads 2] [--max-completion-tokens 384]
        [any other `python -m llama_cpp.server` option]

Why a wrapper and not `python -m llama_cpp.server` itself: its `chatml-function-calling` chat format (the one
that turns a ChatML model's text into OpenAI tool calls) generates a tool call's arguments and the message that
may follow it with `max_tokens=None`, whatever the request says. A small model that loops inside a JSON string
then writes until the context is full: minutes per reply on two cores. Here every completion the server asks of
the model is capped (a request's own smaller `max_tokens` still wins); a capped reply ends with
finish_reason "length" and the caller sees a truncated tool call, which RepoPilot reports to the model as bad
arguments. Nothing else is changed: the chat format, grammar and sampling are llama-cpp-python's.
"""

from __future__ import annotations

import functools
import sys
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


def main(argv: list[str]) -> None:
    limit = 384
    rest: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg == "--max-completion-tokens":
            limit = int(next(it))
        elif arg.startswith("--max-completion-tokens="):
            limit = int(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    _cap(limit)
    from llama_cpp.server.__main__ import main as serve

    sys.argv = [sys.argv[0], *rest]
    serve()


if __name__ == "__main__":
    main(sys.argv[1:])
