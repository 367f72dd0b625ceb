"""Regular expressions compiled when the wheel was built, so that `repopilot` does not compile them at every start.

`re.compile` parses and compiles a pattern in Python (re/_parser.py, re/_compiler.py) before it hands the result to
the C engine (`_sre.compile`). `repopilot diagnose FILE` compiles a few hundred patterns as it starts (its own:
the secret rules, the verdict's cues, the locator's features; the standard library's: tokenize, json, ...), about
a fifth of its start-up. What the C engine receives depends only on the pattern, its flags and the Python that
compiled it, so a wheel carries it for the patterns one diagnose compiles (`write_patterns`, run by setup.py's
build hook), in a file named for the Python version, and the console script (`cli.run`) installs it before anything
else is imported. A pattern found there goes straight to the C engine; any other pattern, or another Python, or no
file (an editable install), compiles as always. Nothing is written at run time, and the file is trusted as the code
is: it is installed with it.
"""

from __future__ import annotations

import marshal
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PREBUILT", "install", "memo_name", "record", "write_patterns"]

PREBUILT = os.path.join(os.path.dirname(__file__), "prebuilt")  # filled by setup.py for a wheel
_compiler: Any = getattr(re, "_compiler")  # noqa: B009  (private: mypy knows no stub for it)
_parser: Any = getattr(re, "_parser")  # noqa: B009
_sre: Any = getattr(_compiler, "_sre")  # noqa: B009
_CODE: Literal["I"] = "I"  # the C engine's code words (4 bytes in every CPython; memo_name says so)

# (pattern, flags) -> what `_sre.compile` takes after the pattern: flags, code (as bytes), groups, groupindex,
# indexgroup
Entry = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]
Memo = dict[tuple[str | bytes, int], Entry]


def memo_name() -> str:
    """The file's name for this Python: its version (a fix release may compile a pattern differently) and the C
    engine's code format."""
    version = sys.version.split()[0]
    return f"patterns-{sys.implementation.cache_tag}-{version}-{_sre.MAGIC}-{_sre.CODESIZE}.marshal"


def install(directory: str | None = None) -> bool:
    """Compile the patterns the file in `directory` (default: the wheel's) holds from it, from now on in this
    process; False (and `re` left as it is) when there is no file for this Python or it cannot be read."""
    try:
        with open(os.path.join(directory or PREBUILT, memo_name()), "rb") as fh:
            memo = marshal.loads(fh.read())  # noqa: S302  (installed with the code, see above)
    except (OSError, ValueError, EOFError, TypeError):
        return False
    if not isinstance(memo, dict) or memoryview(b"").cast(_CODE).itemsize != _sre.CODESIZE:
        return False
    original = _compiler.compile

    def compile_(pattern: Any, flags: Any = 0) -> Any:
        entry = memo.get((pattern, int(flags))) if isinstance(pattern, str | bytes) else None
        if entry is None:
            return original(pattern, flags)
        flags, code, groups, groupindex, indexgroup = entry
        return _sre.compile(pattern, flags, memoryview(code).cast(_CODE).tolist(), groups, groupindex, indexgroup)

    _compiler.compile = compile_
    return True


def _compiled(pattern: str | bytes, flags: int) -> Entry:
    """What `re._compiler.compile` passes to `_sre.compile` for `pattern` (the same steps, Python 3.11 to 3.13)."""
    parsed = _parser.parse(pattern, flags)
    from array import array  # only when a wheel is built

    code = array(_CODE, _compiler._code(parsed, flags)).tobytes()  # bytes: marshal reads them at once
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup)


def record(run: Callable[[], object]) -> Memo:
    """The compiled form of every pattern `run` compiles (those `re` already holds in its own cache excepted)."""
    memo: Memo = {}
    original = _compiler.compile

    def compile_(pattern: Any, flags: Any = 0) -> Any:
        if isinstance(pattern, str | bytes) and not flags & re.DEBUG:
            memo[(pattern, int(flags))] = _compiled(pattern, int(flags))
        return original(pattern, flags)

    _compiler.compile = compile_
    try:
        run()
    finally:
        _compiler.compile = original
    return memo


def _diagnose_example() -> None:
    from .main import main

    example = os.path.join(os.path.dirname(os.path.dirname(__file__)), "ci", "examples", "go-build-error.log")
    for _ in range(2):  # on an empty cache (the catalog validated, then cached), and warm (the cached one read)
        if main(["diagnose", example, "--format", "json", "--no-llm"]) != 0:
            raise SystemExit(f"repopilot diagnose {example} failed")


def write_patterns(into: str) -> str:
    """Record the patterns `repopilot diagnose` compiles on the bundled example log and write them into `into`;
    returns the file's name. Run in a new process (`python -m repopilot.cli.compiled_patterns INTO`, as setup.py
    does), so every module is imported afresh, with the runs, cache and history in a temporary directory."""
    found = record(_diagnose_example)
    os.makedirs(into, exist_ok=True)
    with open(os.path.join(into, memo_name()), "wb") as out:
        marshal.dump(found, out)
    return memo_name()


if __name__ == "__main__":
    write_patterns(sys.argv[1])
