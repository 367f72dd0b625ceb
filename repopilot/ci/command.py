"""The failing command, read from the log: the GitHub Actions `##[group]Run …` block, a `+ cmd` shell trace or a
GitLab `$ cmd` line nearest before the failure, then narrowed to the failing tests where the tool allows it
(pytest node ids, `go test -run`, `cargo test NAME`, `jest PATH`, `mvn -Dtest=`). Nothing is guessed: no
command in the log is None, and the caller says so. The result says where the command came from."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence

from ..core import FailingCommand
from .lines import clean_text
from .report import DiagnosisReport
from .sources import LogInput

__all__ = ["find_command", "log_lines", "narrow"]

MAX_LOG_BYTES = 64 * 1024 * 1024
_GROUP_RUN = re.compile(r"^##\[group\]Run (.+)$")
_GROUP_END = re.compile(r"^##\[endgroup\]")
_STEP_META = re.compile(r"^\s*(shell|env):")
_TRACE = re.compile(r"^\+ (\S.*)$")
_GITLAB = re.compile(r"^\$ (\S.*)$")
# Trace lines that set up rather than run the check.
_NOT_A_CHECK = re.compile(r"^(echo|printf|set|export|cd|pushd|popd|true|:|source|\.|unset|trap|shift|local)\b")
_SHELL_OPS = re.compile(r"&&|\|\||[|;<>`$(){}]")


def log_lines(log: LogInput) -> list[str]:
    """The log's lines as matching reads them (timestamp prefix and ANSI codes removed), bounded in bytes."""
    with log.open() as fh:
        data = fh.read(MAX_LOG_BYTES)
    return [clean_text(x) for x in data.decode("utf-8", "replace").split("\n")]


def find_command(lines: Sequence[str], report: DiagnosisReport) -> FailingCommand | None:
    """The command that failed, nearest before the failure's first line, narrowed to its failing tests."""
    anchor = _anchor(report, len(lines))
    found: tuple[str, str] | None = None
    i = 0
    while i < min(anchor, len(lines)):
        line = lines[i]
        m = _GROUP_RUN.match(line)
        if m:
            script, after = _run_block(lines, i, m.group(1).strip())
            found = (script, f"log line {i + 1}: ##[group]Run")
            i = after
            continue
        t = _TRACE.match(line) or _GITLAB.match(line)
        if t and not _NOT_A_CHECK.match(t.group(1)):
            kind = "+ trace" if line.startswith("+") else "$ line"
            found = (t.group(1).strip(), f"log line {i + 1}: {kind}")
        i += 1
    if found is None:
        return None
    command, source = found
    narrowed = narrow(command, report)
    if narrowed != command:
        return FailingCommand(command=narrowed, source=f"{source}, narrowed to the failing tests",
                              narrowed_from=command)
    return FailingCommand(command=command, source=source)


def _anchor(report: DiagnosisReport, total: int) -> int:
    """The first line (1-based) of the failure: the causal lines, else the error lines, else the end."""
    numbers = [ln.line for f in report.causal_failures() for ln in f.lines] or list(report.error_lines)
    if report.failing_step is not None and report.failing_step.error_line:
        numbers.append(report.failing_step.error_line)
    return min(numbers) if numbers else total


def _run_block(lines: Sequence[str], i: int, header: str) -> tuple[str, int]:
    """The script of the `##[group]Run` block at `i` (GitHub repeats it in full after the header) and the
    index after the block."""
    body: list[str] = []
    j = i + 1
    while j < len(lines) and not _GROUP_END.match(lines[j]):
        if _STEP_META.match(lines[j]):
            while j < len(lines) and not _GROUP_END.match(lines[j]):
                j += 1
            break
        body.append(lines[j])
        j += 1
    script = "\n".join(x for x in body if x.strip()).strip()
    return (script if script.startswith(header.split(maxsplit=1)[0]) else header), j + 1


# -- narrowing ---------------------------------------------------------------------------------------------

def narrow(command: str, report: DiagnosisReport) -> str:
    """`command` limited to the report's failing tests when it is one plain invocation of a tool we know."""
    if "\n" in command or _SHELL_OPS.search(command):
        return command
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    tests = _failing_tests(report)
    files = sorted({f.file for f in report.causal_failures() if f.file})
    for fn in (_pytest, _go, _cargo, _jest, _mvn):
        done = fn(words, tests, files)
        if done is not None:
            return shlex.join(done)
    return command


def _failing_tests(report: DiagnosisReport) -> list[str]:
    out: list[str] = []
    for f in report.causal_failures():
        if f.test and f.test not in out:
            out.append(f.test)
        for ln in f.lines:
            m = re.search(r"\bFAILED (\S+::\S+)", ln.text)
            if m and m.group(1) not in out:
                out.append(m.group(1))
    return out


def _at(words: list[str], *names: str) -> int | None:
    return next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] in names), None)


def _positional_dropped(rest: Iterable[str], takes_value: frozenset[str]) -> list[str]:
    out: list[str] = []
    value_next = False
    for w in rest:
        if value_next or w.startswith("-"):
            out.append(w)
            value_next = not value_next and w in takes_value
        else:
            value_next = False
    return out


def _pytest(words: list[str], tests: list[str], files: list[str]) -> list[str] | None:
    i = _at(words, "pytest", "py.test")
    ids = [t for t in tests if "::" in t]
    if i is None or not ids:
        return None
    takes = frozenset({"-k", "-m", "-p", "-c", "-o", "--rootdir", "--maxfail", "-n", "--tb"})
    return [*words[:i + 1], *_positional_dropped(words[i + 1:], takes), *ids]


def _go(words: list[str], tests: list[str], files: list[str]) -> list[str] | None:
    names = sorted({t.split("/")[0] for t in tests if re.fullmatch(r"(Test|Example|Fuzz)\w*(/.*)?", t)})
    if words[:2] != ["go", "test"] or not names or "-run" in words:
        return None
    return [*words, "-run", f"^({'|'.join(names)})$"]


def _cargo(words: list[str], tests: list[str], files: list[str]) -> list[str] | None:
    names = [t for t in tests if re.fullmatch(r"[\w:]+", t)]
    if words[:2] != ["cargo", "test"] or not names:
        return None
    if "--" in words:
        at = words.index("--")
        return [*words[:at], *words[at:], *names]
    return [*words, "--", *names]


def _jest(words: list[str], tests: list[str], files: list[str]) -> list[str] | None:
    i = _at(words, "jest", "vitest")
    paths = [f for f in files if re.search(r"\.(test|spec)\.[cm]?[jt]sx?$", f)]
    if i is None or not paths:
        return None
    return [*words[:i + 1], *_positional_dropped(words[i + 1:], frozenset({"-c", "--config"})), *paths]


def _mvn(words: list[str], tests: list[str], files: list[str]) -> list[str] | None:
    i = _at(words, "mvn", "mvnw")
    names = [re.sub(r"\.([a-z]\w*)$", r"#\1", t.replace("::", "#")) for t in tests
             if re.fullmatch(r"[\w.$]+([#.:]+\w+)?", t)]
    if i is None or not names or any(w.startswith("-Dtest=") for w in words):
        return None
    return [*words[:i + 1], f"-Dtest={','.join(names)}", *words[i + 1:]]
