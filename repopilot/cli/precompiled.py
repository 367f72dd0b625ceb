"""What a wheel compiles once, when it is built, that every start of `repopilot` would otherwise compile again: the
regular expressions and the dataclasses' methods the modules of a diagnose make as they load.

Both are made from text at run time, in Python, before the C parts take over. `re.compile` parses and compiles a
pattern (re/_parser.py, re/_compiler.py) and hands the result to the C engine (`_sre.compile`); `@dataclass`
writes the source of `__init__`, `__eq__`, `__repr__`, ... and `exec`s it, which compiles it. A diagnose of a
small log makes a few hundred patterns (its own: the secret rules, the verdict's cues, the locator's features; the
standard library's: tokenize, json, ...) and about fifty dataclasses: together about two fifths of its start-up.
What the C engine receives for a pattern, and the code object compiled from a method's source, depend only on the
text and the Python that compiled them, so a wheel carries them, keyed by the text, for what one diagnose makes,
and in a second file, read only when a run first lacks a pattern, every other regex of the rule catalog and the
secret rules, which a run compiles as its log needs them (a big log, a hundred or more). Both are written by
`write_precompiled` (run by setup.py's build hook) and named for the Python version; the console script (`cli.run`)
installs them before anything else is imported. A pattern or a method found there is taken from it;
any other, or another Python, or no file (an editable install), is compiled as always. Nothing is written at run
time, and the file is trusted as the code is: it is installed with it.
"""

from __future__ import annotations

import marshal
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PREBUILT", "install", "memo_name", "record", "rest_name", "write_precompiled"]

PREBUILT = os.path.join(os.path.dirname(__file__), "prebuilt")  # filled by setup.py for a wheel
_compiler: Any = getattr(re, "_compiler")  # noqa: B009  (private: mypy knows no stub for it)
_parser: Any = getattr(re, "_parser")  # noqa: B009
_sre: Any = getattr(_compiler, "_sre")  # noqa: B009
_CODE: Literal["I"] = "I"  # the C engine's code words (4 bytes in every CPython; memo_name says so)

# (pattern, flags) -> what `_sre.compile` takes after the pattern: flags, code (as bytes), groups, groupindex,
# indexgroup
Entry = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]
Patterns = dict[tuple[str | bytes, int], Entry]
Sources = dict[str, bytes]  # a dataclass method's source -> its code object, marshalled


def memo_name() -> str:
    """The file's name for this Python: its version (a fix release may compile differently) and the C engine's
    code format."""
    version = sys.version.split()[0]
    return f"precompiled-{sys.implementation.cache_tag}-{version}-{_sre.MAGIC}-{_sre.CODESIZE}.marshal"


def install(directory: str | None = None) -> bool:
    """From now on in this process, take what the file in `directory` (default: the wheel's) holds from it; False
    (and nothing changed) when there is no file for this Python or it cannot be read."""
    path = os.path.join(directory or PREBUILT, memo_name())
    try:
        with open(path, "rb") as fh:
            memo = marshal.loads(fh.read())  # noqa: S302  (installed with the code, see above)
    except (OSError, ValueError, EOFError, TypeError):
        return False
    if not (isinstance(memo, tuple) and len(memo) == 2 and all(isinstance(m, dict) for m in memo)) \
            or memoryview(b"").cast(_CODE).itemsize != _sre.CODESIZE:
        return False
    _install_patterns(memo[0], rest_name(path))
    _install_sources(memo[1])
    return True


def rest_name(path: str) -> str:
    """The file of the rest of the patterns beside the file at `path`."""
    return path.removesuffix(".marshal") + "-rest.marshal"


def _install_patterns(patterns: Patterns, rest: str | None = None) -> None:
    """`rest`: a file of more patterns, read the first time a pattern is not among `patterns` (the catalog's and
    the secret rules', which a big log needs: reading them at every start would cost more than they save on a
    small log)."""
    original = _compiler.compile
    unread = [rest] if rest else []

    def compile_(pattern: Any, flags: Any = 0) -> Any:
        key = (pattern, int(flags)) if isinstance(pattern, str | bytes) else None
        entry = None if key is None else patterns.get(key)
        if entry is None and key is not None and unread:
            _read_rest(patterns, unread.pop())
            entry = patterns.get(key)
        if entry is None:
            return original(pattern, flags)
        flags, code, groups, groupindex, indexgroup = entry
        return _sre.compile(pattern, flags, memoryview(code).cast(_CODE).tolist(), groups, groupindex, indexgroup)

    _compiler.compile = compile_


def _read_rest(patterns: Patterns, path: str) -> None:
    try:
        with open(path, "rb") as fh:
            more = marshal.loads(fh.read())  # noqa: S302  (installed with the code, see above)
    except (OSError, ValueError, EOFError, TypeError):
        return
    if isinstance(more, dict):
        for key, entry in more.items():
            patterns.setdefault(key, entry)


def _install_sources(sources: Sources) -> None:
    import dataclasses  # imported with the package already (repopilot/__init__.py: without inspect)

    # dataclasses calls `exec` by name: a global of that module named so is found before the builtin.
    def exec_(source: Any, scope: Any = None, names: Any = None) -> None:
        code = sources.get(source) if isinstance(source, str) else None
        exec(source if code is None else marshal.loads(code), scope, names)  # noqa: S102, S302

    setattr(dataclasses, "exec", exec_)  # noqa: B010


def _compiled(pattern: str | bytes, flags: int) -> Entry:
    """What `re._compiler.compile` passes to `_sre.compile` for `pattern` (the same steps, Python 3.11 to 3.13)."""
    from array import array  # only when a wheel is built

    parsed = _parser.parse(pattern, flags)
    code = array(_CODE, _compiler._code(parsed, flags)).tobytes()  # bytes: marshal reads them at once
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup)


def record(run: Callable[[], object]) -> tuple[Patterns, Sources]:
    """The compiled form of every pattern (those `re` already holds in its own cache excepted) and every dataclass
    method `run` makes."""
    patterns: Patterns = {}
    sources: Sources = {}
    original = _compiler.compile

    def compile_(pattern: Any, flags: Any = 0) -> Any:
        if isinstance(pattern, str | bytes) and not flags & re.DEBUG:
            patterns[(pattern, int(flags))] = _compiled(pattern, int(flags))
        return original(pattern, flags)

    def exec_(source: Any, scope: Any = None, names: Any = None) -> None:
        if isinstance(source, str):
            sources[source] = marshal.dumps(compile(source, "<string>", "exec"))
        exec(source, scope, names)  # noqa: S102

    _compiler.compile = compile_
    import dataclasses  # imported with the package already (repopilot/__init__.py: without inspect)

    setattr(dataclasses, "exec", exec_)  # noqa: B010
    try:
        run()
    finally:
        _compiler.compile = original
        delattr(dataclasses, "exec")
    return patterns, sources


def _cached_by_re() -> Patterns:
    """The patterns `re` holds in its cache before anything is recorded: compiled as this interpreter started (a
    build environment's `.pth` files import urllib.parse, which a diagnose imports later), they would be missing
    from the file, and a run's first missing pattern reads the rest."""
    found: Patterns = {}
    for key in list(getattr(re, "_cache", {})):
        if isinstance(key, tuple) and len(key) == 3 and isinstance(key[1], str | bytes) \
                and isinstance(key[2], int) and not key[2] & re.DEBUG:
            found[(key[1], int(key[2]))] = _compiled(key[1], int(key[2]))
    return found


def _diagnose_example() -> None:
    from .main import main

    example = os.path.join(os.path.dirname(os.path.dirname(__file__)), "ci", "examples", "go-build-error.log")
    for _ in range(2):  # on an empty cache (the catalog validated, then cached), and warm (the cached one read)
        if main(["diagnose", example, "--format", "json", "--no-llm"]) != 0:
            raise SystemExit(f"repopilot diagnose {example} failed")


def _compile_the_rest() -> None:
    # What the example does not meet and a bigger log does: the rule catalog's regexes (a 50 MB log compiled 154 of
    # them, about 10 ms) and the secret rules' (those whose keywords its report holds).
    from ..app import compile_patterns

    compile_patterns()


def write_precompiled(into: str) -> str:
    """Record what `repopilot diagnose` compiles on the bundled example log, then the rest of the catalog's and
    the secret rules' patterns (read only when a run needs one), and write them into `into`; returns the file's
    name. Run in a new process (`python -m repopilot.cli.precompiled INTO`, as setup.py does), so every module is
    imported afresh, with the runs, cache and history in a temporary directory."""
    early = _cached_by_re()
    patterns, sources = record(_diagnose_example)
    patterns = early | patterns
    more = record(_compile_the_rest)[0]
    rest = {key: entry for key, entry in more.items() if key not in patterns}
    os.makedirs(into, exist_ok=True)
    path = os.path.join(into, memo_name())
    with open(path, "wb") as out:
        marshal.dump((patterns, sources), out)
    with open(rest_name(path), "wb") as out:
        marshal.dump(rest, out)
    return memo_name()


if __name__ == "__main__":
    write_precompiled(sys.argv[1])
