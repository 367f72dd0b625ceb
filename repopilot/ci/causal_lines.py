"""Which lines of an error's block are causal, whatever the language: stack frames, expected/actual values, layout
and summary lines, lists of offenders.

The labelling guideline keeps, of a stack trace, the exception line and the frames in the project's own files.
The frames of the runtime, the test runner and installed libraries (and the lines that continue them) are context:
the excerpt shows them around the error, but they are not `error_lines`. A frame is told by its shape (Python's
`File "x", line N`, `at pkg.Class.method(File.java:N)`, JS `at fn (file:N:M)`, Go's `path.go:N +0x..`, Ruby's
`from x.rb:N:in`, a Lisp debugger's numbered frames, native `#N 0x...`), and whose it is by where it points.
The values an assertion prints under its message (`Expected:` / `3`, `left: 14`) are causal; blank and ruled lines,
zero counts, a build tool's advice, the CI system's own lines and a runner's closing count are not (where the log
says more); a tool that reports through a list has its problem header and the items under it read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["filler", "foreign_frames", "listed_offenders", "value_lines"]

_FRAME = re.compile(
    r"^\s*\d{1,3}: \(|^\s+at [\w$.<>/\[\] ]+[(\s]|^\s*at [\w$.<>]+\.[\w$<>]+\(|^\s*File \".*\", line \d+|"
    r"^\s*#\d+\s+0x[0-9a-f]+|^\s+\d+: 0x|^\s*\.\.\. \d+ more|^\s+[\w/.-]+\.(?:go|rs|rb|js|mjs|cjs|ts|py|php|ex|exs)"
    r":\d+(?::\d+)?(?: \+0x[0-9a-f]+.*)?$|^\s*from \S+:\d+:in|^\s+\S+:\d+:in [`']|^\s+at \S+:\d+:\d+\)?$|"
    # Rust's and C++'s symbolized frames (`  12: core::panicking::panic_fmt`), Elixir's (`(elixir 1.14) lib/x.ex:5:`),
    # PHP's (`#3 /app/vendor/phpunit/...(42): ...`, `#4 {main}`).
    r"^\s+\d+: [\w<>${}.]+(?:::[\w<>${}.]+)+|^\s+\(\w+ [\d.]+\) \S+:\d+:|"
    r"^#\d+ (?:\S+\(\d+\)|\[internal function\]|\{main\})|"
    # pytest's location under a frame it printed (`/usr/lib/python3.11/pathlib.py:1044: FileNotFoundError`).
    r"^\S+\.py:\d+: (?:\w+(?:Error|Exception|Warning|Exit))?\s*$")
# Where a frame points outside the project: the language's runtime and standard library, the test runner, installed
# packages and toolchains.
_FOREIGN = re.compile(
    r"site-packages|dist-packages|node_modules|node:internal|\(internal/|\binternal/(?:modules|process|main)/|"
    r"<frozen |/usr/(?:local/)?(?:lib|share)/|/opt/hostedtoolcache/|/rustc/|/library/(?:std|core|alloc)/|"
    r"\.cargo/registry|/pkg/mod/|/go-1\.\d+/|/go/src/(?:runtime|testing)/|\bruntime/\w+\.go|\btesting/\w+\.go|"
    r"/gems/|/lib/ruby/|/\.rbenv/|/\.pyenv/|/lib/python\d\.\d+/|\.m2/repository|/\.gradle/|"
    r"\bat (?:java|javax|jdk|sun|com\.sun|org\.junit|junit|org\.apache\.maven|org\.gradle|org\.testng|kotlin|"
    r"scala|org\.scalatest|org\.codehaus|worker\.org\.gradle)\.|"
    r"\bat (?:new )?(?:Promise|process\.|Module\.|Object\.<anonymous> \(node:|Generator\.next|"
    r"runMicrotasks|processTicksAndRejections|async Promise)|"
    r"\(SB-|\(\(FLET |\(\(LABELS |\(\(LAMBDA \(|\(EVAL-TLF|\(LOAD #|#<\S+ for \"file |"
    r"^\s+\d+: (?:core|std|alloc|test|rust_begin_unwind|__rust|_start|__libc|start_thread|clone)\b|"
    r"\bat (?:System|Microsoft|NUnit|Xunit)\.|^\s+\((?:elixir|ex_unit|stdlib|kernel|mix|erts|iex|logger) [\d.]+\)|"
    r"/vendor/|\[internal function\]|\{main\}", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*\d{1,3}: \(")
# A numbered debugger frame belongs to the project only when it names a file of the job's checkout.
_PROJECT_PATH = re.compile(r"/home/runner/work/|/builds/|/var/jenkins/|/home/travis/build/|/srv/|/workspace/|"
                           r"\"(?:\./)?(?:src|tests?|lib|app|spec)/")
_CONTINUED = re.compile(r"^\s{8,}\S")  # a long frame wrapped onto the next line
_LEVEL_TAG = re.compile(r"^\[(?:ERROR|WARN(?:ING)?|INFO|DEBUG|FATAL)\] ?")


def foreign_frames(lines: Iterable[int], texts: Mapping[int, str]) -> set[int]:
    """Of `lines`, the stack frames that point outside the project, and the lines that only continue them."""
    out: set[int] = set()
    for n in sorted(lines):
        text = texts.get(n, "")
        if text.startswith("["):  # Maven's and others' level tag before the frame (`[ERROR] \tat org.apache…`)
            text = _LEVEL_TAG.sub("", text)
        if _FRAME.search(text):
            if _FOREIGN.search(text) or (_NUMBERED.match(text) and not _PROJECT_PATH.search(text)):
                out.add(n)
        elif n - 1 in out and _CONTINUED.match(text) and not _FRAME.search(text):
            out.add(n)
    return out


# A label that introduces a value of an assertion: `Expected:`, `  left: 14`, `---- Result was:`, `got:`, `Actual`.
_LABEL = re.compile(r"^\s*(?:[-=*|>]+\s*)?(?:left|right|expected|actual|got|want(?:ed)?|received|result(?: was| should "
                    r"have been)?|but (?:was|got)|instead got|obtained|value)\b[^:\n]{0,40}:", re.IGNORECASE)
# ... whose value follows on the next lines (nothing after the colon), or a count of mismatches before them.
_HEADER = re.compile(r":\s*$|\bmismatch(?:es)?\s*$", re.IGNORECASE)
_VALUES = 3  # value lines taken under one header
_REACH = 8  # lines looked at below a causal line
_RULED = re.compile(r"^[\s=_*#\-\u2500-\u257f]*$")  # blank, or a ruled line (ASCII or box-drawing)
# A new section or a runner's status line: not a value.
_SECTION = re.compile(r"^\s*(?:={2,}|-{2,}|\*{2,}|#{2,}|\[(?:INFO|ERROR|WARN\w*)\])|^(?:FAIL|PASS|ok|not ok)\b")


# A count of zero (`* Missing licenses: 0`, `Read errors: 0`, `0 failures`): a summary saying what did not fail.
_ZERO = re.compile(r"^\W*[A-Za-z][\w /()-]{0,60}:\s*0\s*$|^\W*0 (?:errors?|failures?|failed|problems?|issues?)\W*$",
                   re.IGNORECASE)


# Build tools' advice after a failure: how to get more output, where to read about errors in general.
_ADVICE = re.compile(
    r"^\[ERROR\]\s*(?:To see the full stack trace of the errors|Re-run Maven using the -X switch|For more information "
    r"about the errors and possible solutions|\[Help \d+\] https?://|After correcting the problems, you can resume|"
    r"mvn <args> -rf |$)|^> (?:Run with --(?:stacktrace|info|debug|scan) option|Get more help at https?://)")


# The CI system's own lines and the echo of the command that ran (context, by the guideline).
_CI_LINE = re.compile(r"^(?:##\[(?:group|endgroup|section|command|debug)|\[command\]|\[Pipeline\]|"
                      r"section_(?:start|end):|travis_(?:fold|time):|\$ |\+ (?=[\w./~$-]))")


# A runner's closing count (`Tests: 1 failed, 12 passed`, `Found 2 errors`, `[ FAIL 1 | WARN 0 | ... ]`): it says that
# something failed, not what (context, unless the log holds nothing better).
_COUNT = re.compile(
    r"^\W*(?:Found \d+ errors?\b|\[ ?FAIL \d+ \||Tests?:\s+\d+ failed|Test Suites:\s+\d+ failed|\d+ (?:failed|passed|"
    r"failing|passing|errors?|failures?|problems?|tests? failed)\b|Ran \d+ tests? in |FAILED \((?:failures|errors)=\d+|"
    r"Files=\d+, Tests=\d+|Result: FAIL|Tests run: \d+, Failures: \d+, Errors: \d+(?:, Skipped: \d+)?\s*$|"
    r"Executed \d+ of \d+|\d+ examples?, \d+ failures?|\d+ tests?, \d+ (?:assertions|failures)|"
    r".*\b\d+ (?:failed|errors?)\b.*\b\d+ passed\b|\d+ tests?, \d+ passed, \d+ failed|test result: (?:ok|FAILED)\.)",
    re.IGNORECASE)
# The guideline's generic trailers: they say only that something failed (`make: *** [all] Error 1`).
_TRAILER = re.compile(
    r"^(?:g?make(?:\[\d+\])?: \*\*\* \[|"
    r"npm ERR! (?:A complete log of this run|code E?LIFECYCLE|errno \d|Lifecycle script)|"
    r"\[INFO\] BUILD FAILURE|BUILD FAILED|error: could not compile|error: test failed, to rerun pass|"
    r"(?:error )?Command failed with exit code \d|ELIFECYCLE|Error: Process completed with exit code|"
    r"Tests? failed\.?$|FAILURE: Build failed with an exception\.)|"
    # A bare section heading over the failures (cargo's and rspec's `failures:`).
    r"^\s*(?i:failures|failed tests|failing tests|summary of all failing tests|errors)\s*:?\s*$")


def filler(text: str) -> bool:
    """A blank or ruled line (part of a block's layout), a count of zero (not an assertion's value), a build tool's
    generic advice, the CI system's own lines and command echoes, a runner's closing count: not a cause where the
    log says more."""
    return bool(_RULED.match(text) or (_ZERO.match(text) and not _LABEL.match(text)) or _ADVICE.match(text)
                or _CI_LINE.match(text) or _COUNT.match(text) or _TRAILER.match(text))


def value_lines(causal: Iterable[int], texts: Mapping[int, str]) -> set[int]:
    """The lines under causal lines that carry an assertion's values: labelled values (`left: 14`, `Expected: 3`)
    and the lines that follow a label with nothing after its colon (`Result was:` / `4`), a few each."""
    out: set[int] = set()
    for n in sorted(causal):
        values = _VALUES if _opens_values(texts.get(n, "")) else 0
        for k in range(n + 1, n + 1 + _REACH):
            text = texts.get(k)
            if text is None or filler(text):
                break
            if _LABEL.match(text):
                out.add(k)
                values = _VALUES if _HEADER.search(text) else 0
            elif values and not _SECTION.match(text):
                out.add(k)
                values -= 1
            else:
                break
    return out - set(causal)


def _opens_values(text: str) -> bool:
    return bool(_HEADER.search(text) and (_LABEL.match(text) or "mismatch" in text.lower()))


# A tool that reports through a list (a licence checker's, a formatter's "would reformat" list): a header that says
# what is wrong with the items below it (`The following files have no copyright and licensing information:`).
_LIST_HEADER = re.compile(r"^\W*(?=.*\b(?:no|not|missing|without|fail\w*|invalid|would be \w+|need\w*|unformatted|"
                          r"violat\w*|errors?|wrong|unknown|unused|unmet|outdated|out of date|differ\w*|mismatch\w*|"
                          r"lack\w*|bad|broken|forbidden|banned|denied)\b)[A-Za-z][^:]{8,120}:\s*$", re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[*\-•]|\d+[.)])\s+\S|^\s+[\w./\\-]+\.\w+\s*$")
_ITEMS = 10


def listed_offenders(texts: Mapping[int, str], first: int, last: int) -> set[int]:
    """Between lines `first` and `last`: each problem header that a list of items follows, and its items (a few)."""
    out: set[int] = set()
    for n in sorted(k for k in texts if first <= k <= last):
        # A header ends in `:` (and spaces, which `\s` and `str.rstrip` both take as `str.isspace` does): a cheap
        # test that nearly every line fails, before the pattern's look-ahead, which tries every word of the line.
        if n in out or not texts[n].rstrip().endswith(":") or not _LIST_HEADER.match(texts[n]) \
                or not _ITEM.match(texts.get(n + 1, "")):
            continue
        out.add(n)
        k = n + 1
        while k <= n + _ITEMS and _ITEM.match(texts.get(k, "")):
            out.add(k)
            k += 1
    return out
