"""The weakening guard: deterministic checks on a proposed diff, before anything runs, for "fixes" that make a
check pass by silencing it (a test skipped, deleted or its expectation changed, `|| true`, a lowered threshold,
a new lint suppression, a CI step removed, a fixture the diagnosis never named rewritten).

A hit blocks the proposal unless the person allowed weakening; either way it is shown. The checks read only the
diff's text (it is untrusted: nothing here runs or opens it), line by line, by file kind.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..core import GuardHit, GuardResult

__all__ = ["check_weakening", "is_ci_file", "is_test_file"]

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")

_TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|specs|__tests__|t|testing|src/test)/|(^|/)test_[^/]*$|_test\.[a-z]+$|\.test\.[jt]sx?$|"
    r"\.spec\.[jt]sx?$|(^|/)[^/]*Tests?\.(java|kt|cs|scala)$|_spec\.rb$|\.t$|\.bats$|(^|/)conftest\.py$|"
    r"(^|/)[^/]*_test\.(py|tcl|sh)$|\.test$", re.I)
_CI_PATH = re.compile(r"(^|/)(\.github/workflows/[^/]+\.ya?ml|\.gitlab-ci\.yml|\.circleci/config\.ya?ml|"
                      r"Jenkinsfile|azure-pipelines\.ya?ml|\.travis\.yml|bitbucket-pipelines\.yml|"
                      r"\.buildkite/[^/]+\.ya?ml)$", re.I)
_CONFIG_PATH = re.compile(r"\.(toml|cfg|ini|json|ya?ml|xml|gradle|kts|properties)$|(^|/)(\.coveragerc|\.flake8|"
                          r"\.pylintrc|\.eslintrc[^/]*|Makefile|[^/]*\.mk|CMakeLists\.txt|\.golangci[^/]*)$", re.I)
_SCRIPT_PATH = re.compile(r"\.(sh|bash|bats|ps1|cmd|bat)$|(^|/)(Makefile|[^/]*\.mk|scripts?/[^/.]+)$", re.I)
_FIXTURE_PATH = re.compile(r"(^|/)(fixtures?|testdata|test_data|golden|goldens|snapshots?|__snapshots__|"
                           r"expected|expectations)/|\.(snap|golden|expected)$|(^|/)expected[_.-][^/]*$", re.I)

# Added lines that skip or expect a failure, in any test framework we know.
_SKIP = re.compile(
    r"@pytest\.mark\.(skip|skipif|xfail)\b|\bpytest\.(skip|xfail)\(|@unittest\.(skip|expectedFailure)|"
    r"\bself\.skipTest\(|\bt\.Skip(Now|f)?\(|#\[ignore\b|@(Ignore|Disabled)\b|\b(it|test|describe)\.(skip|todo)\(\s*[\'\"`]|"
    r"\b(xit|xtest|xdescribe)\(|\bplan\s+skip_all\b|^\s*SKIP:\s*\{|\btodo_skip\b|"
    r"-constraints\s+\{?\s*(knownBug|skip)|\btestConstraint\s+\w+\s+0|\bGTEST_SKIP\b|\bDISABLED_\w+|"
    r"@tag\s+:skip|\bmark\.skip\b")
# Words that skip a test only inside a test file (elsewhere `skip(` is ordinary code).
_SKIP_IN_TESTS = re.compile(r"^\s*skip\b|\bskip\(|\bpending\b|\bskip\s+['\"]")
# Lines that are assertions in the test frameworks we know.
_ASSERT = re.compile(
    r"^\s*assert\b|\bassert\w*[!(]|\bassert_\w+|\bself\.assert\w+\(|\bAssert\.\w+\(|\bexpect\(|\bshould\b|"
    r"\bt\.(Error|Errorf|Fatal|Fatalf|Fail|FailNow)\(|\brequire\.\w+\(|\bassert\.\w+\(|\b(ok|is|isnt|like|"
    r"unlike|is_deeply|cmp_ok)\s*\(|\[\s*\"?\$?(status|output)\b.*(-eq|==|=|!=)|\b(EXPECT|ASSERT)_\w+\(|"
    r"\bCHECK\w*\(|^\s*\[\[?\s.*\]\]?\s*$|\btest\s+\S+\s+\{?[^}]*\}\s*-result\b|-result\s", re.I)
_TAUTOLOGY = re.compile(
    r"\bassert\s+(True|1|not\s+False)\b|assertTrue\(\s*(True|true|1)\s*\)|expect\(\s*true\s*\)|"
    r"\bassert!\(\s*true\s*\)|\bok\(\s*1\s*[,)]|\bpytest\.approx\(|toBeCloseTo\(|assertAlmostEqual\(|"
    r"\bassert_in_delta\b|\bnot\s+None\b\s*$|\bis not None\b\s*$|>=\s*0\b|\babs_tol\b|\brel_tol\b", re.I)
_SWALLOW = [
    (re.compile(r"\|\|\s*(true|:)\b|\|\|\s*exit\s+0\b|;\s*true\s*$"), "or_true", "a failing command is made to "
     "succeed (|| true)"),
    (re.compile(r"^\s*exit\s+0\b|\bexit\s+0\s*$|\bsys\.exit\(\s*0\s*\)|\bos\.Exit\(\s*0\s*\)|\bprocess\.exit\(\s*0"
                r"\s*\)"), "exit_0", "an early `exit 0` makes the check succeed"),
    (re.compile(r"\bset\s+\+e\b"), "set_plus_e", "`set +e` lets failing commands pass"),
    (re.compile(r"continue-on-error:\s*true|allow_failure:\s*true|ignore_errors?:\s*true|failOnError\s*[=:]\s*"
                r"false|testFailureIgnore|-Dmaven\.test\.failure\.ignore|ignoreFailures\s*=\s*true", re.I),
     "continue_on_error", "the CI step or build is told to ignore a failure"),
    (re.compile(r"-DskipTests|-Dmaven\.test\.skip|--skip-tests?\b|-x\s+test\b|--deselect\b|\s-k\s+['\"]?not\b|"
                r"--ignore[= ]\S*test|testPathIgnorePatterns|\bnorecursedirs\b|--exclude[= ]\S*test|"
                r"\btestIgnore\b|<exclude>[^<]*Test", re.I), "tests_excluded", "tests are excluded from the run"),
]
_SUPPRESS = re.compile(
    r"#\s*noqa\b|#\s*type:\s*ignore\b|#\s*pylint:\s*disable|#\s*pragma:\s*no\s*cover|eslint-disable|"
    r"@ts-(ignore|expect-error|nocheck)\b|@SuppressWarnings\b|@SuppressLint\b|#!?\[allow\(|//\s*nolint\b|"
    r"#\s*nosec\b|shellcheck\s+disable=|#\s*rubocop:\s*disable|no\s+warnings\b|#\s*mypy:\s*ignore|"
    r"\bNOLINT\b|#pragma\s+(GCC|clang)\s+diagnostic\s+ignored|-Wno-[\w-]+|--disable=|\bstylelint-disable", re.I)
# A removed line that made warnings errors, or made a check strict.
_STRICT_REMOVED = re.compile(r"-Werror\b|#!?\[deny\(|-D\s*warnings|\bstrict\s*[=:]\s*true|set\s+-e\b|"
                             r"warnings\s+FATAL|use\s+warnings\s+FATAL|--strict\b|pipefail", re.I)
# key = number lines whose number must not go down (coverage, minimum scores) or up (maximum allowances).
_FLOOR = re.compile(r"(fail[_-]?under|cov[_-]fail[_-]under|coverage\w*|minimum\w*|min[_-]\w*|threshold\w*|"
                    r"branches|lines|functions|statements|covered\w*ratio)\W{0,4}\s*[=:]?\s*['\"]?(\d+(?:\.\d+)?)",
                    re.I)
_CEILING = re.compile(r"(max[_-]?(?:line[_-]?length|complexity|warnings|errors|args|locals|statements|"
                      r"branches|line-length)|line[_-]length|max-warnings)\W{0,4}\s*[=:]?\s*['\"]?(\d+)", re.I)
_TEST_DEF = re.compile(
    r"^\s*(async\s+)?def\s+(test\w*)|^\s*func\s+(Test\w+)|^\s*#\[test\]|^\s*@(Test|ParameterizedTest)\b|"
    r"\b(?:it|test)\(\s*['\"`]([^'\"`]+)|^\s*@test\s+\"([^\"]+)|^\s*test\s+['\"]([^'\"]+)|^\s*(?:void\s+)?"
    r"(test\w*)\s*\(|\bsubtest\s+['\"]([^'\"]+)|^\s*tcltest::test\s+(\S+)|^\s*test\s+(\S+)\s+\{")
_CI_STEP = re.compile(r"^\s*-\s*(name|run|uses|script)\s*:|^\s*(run|script)\s*:|^\s*-\s+\w+.*\b(test|lint|check|"
                      r"build|make|pytest|npm|cargo|go|mvn)\b", re.I)
_CI_OFF = re.compile(r"^\s*if:\s*(false|\$\{\{\s*false\s*\}\})|when:\s*never|^\s*when:\s*manual", re.I)


@dataclass
class _FileChange:
    path: str
    deleted: bool = False
    created: bool = False
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def is_test_file(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def is_ci_file(path: str) -> bool:
    return bool(_CI_PATH.search(path))


def check_weakening(diff: str, named: Iterable[str] = (), *, allowed: bool = False) -> GuardResult:
    """The guard's result for `diff` (a validated unified diff). `named`: the files the diagnosis named (a fixture
    it named may be rewritten). `allowed`: the person passed --allow-weakening (hits are kept, nothing blocks)."""
    names = {_norm(n) for n in named if n}
    hits: list[GuardHit] = []
    for change in _changes(diff):
        hits.extend(_check_file(change, names))
    return GuardResult(hits=hits, allowed=allowed)


def _check_file(c: _FileChange, named: set[str]) -> Iterator[GuardHit]:
    test, ci = _testish(c), is_ci_file(c.path)
    if c.deleted and (test or ci):
        yield GuardHit(rule="test_deleted" if test else "ci_deleted", file=c.path,
                       why="a test or CI file is deleted")
    if _FIXTURE_PATH.search(c.path) and not c.created and not _is_named(c.path, named):
        yield GuardHit(rule="fixture_rewritten", file=c.path, line=(c.removed or c.added or [""])[0],
                       why="a fixture or expected-output file the diagnosis did not name is rewritten")
    yield from _line_hits(c)
    if test:
        yield from _test_hits(c)
    if ci:
        yield from _ci_hits(c)
    if _CONFIG_PATH.search(c.path) or ci:
        yield from _threshold_hits(c)


def _testish(c: _FileChange) -> bool:
    """A test file, or a Rust file whose changed lines are in its test module (Rust keeps tests beside code)."""
    if is_test_file(c.path):
        return True
    return c.path.endswith(".rs") and any("#[test]" in x or re.search(r"\bassert\w*!", x)
                                          for x in c.removed + c.added)


def _scriptish(path: str) -> bool:
    return is_test_file(path) or is_ci_file(path) or bool(_SCRIPT_PATH.search(path) or _CONFIG_PATH.search(path))


def _line_hits(c: _FileChange) -> Iterator[GuardHit]:
    before = Counter(_key(x) for x in c.removed)
    for line in _new(c):
        skips = _SKIP.search(line) or (_testish(c) and _SKIP_IN_TESTS.search(line))
        if skips and before[_key(line)] == 0:
            yield GuardHit(rule="skip_added", file=c.path, line=line, why="a test is skipped or expected to fail")
        for pattern, rule, why in _SWALLOW:
            if pattern.search(line) and before[_key(line)] == 0 and (rule != "exit_0" or _scriptish(c.path)):
                yield GuardHit(rule=rule, file=c.path, line=line, why=why)
        if _SUPPRESS.search(line) and not _SUPPRESS.search(_matching_removed(line, c.removed)):
            yield GuardHit(rule="suppression_added", file=c.path, line=line, why="a warning or lint check is "
                           "suppressed")
        if c.path.endswith(("Makefile", ".mk")) and re.match(r"^\t-\S", line):
            yield GuardHit(rule="or_true", file=c.path, line=line, why="a make recipe line ignores its failure (-)")
    after = Counter(_key(x) for x in c.added)
    for line in c.removed:
        if _STRICT_REMOVED.search(line) and after[_key(line)] == 0 and \
                not any(_STRICT_REMOVED.search(a) for a in c.added):
            yield GuardHit(rule="strictness_removed", file=c.path, line=line,
                           why="a setting that made warnings or failures fatal is removed")


def _test_hits(c: _FileChange) -> Iterator[GuardHit]:
    gone = Counter(_test_names(c.removed))
    gone.subtract(Counter(_test_names(c.added)))
    for name, n in gone.items():
        if n > 0 and not c.deleted:
            yield GuardHit(rule="test_deleted", file=c.path, line=name, why="a test is removed")
    removed = [x for x in c.removed if _ASSERT.search(x)]
    added = [x for x in c.added if _ASSERT.search(x)]
    kept = Counter(_key(x) for x in c.added)
    changed = [x for x in removed if kept[_key(x)] == 0]
    if len(changed) > len(added):
        for line in changed[len(added):] or changed:
            yield GuardHit(rule="assertion_removed", file=c.path, line=line, why="an assertion is removed")
    elif changed:
        # The same number of assertions with different text: the test now expects something else.
        yield GuardHit(rule="assertion_changed", file=c.path, line=changed[0],
                       why="an assertion's expectation is changed to match what the code does")
    for line in added:
        if _TAUTOLOGY.search(line) and not any(_TAUTOLOGY.search(r) for r in c.removed):
            yield GuardHit(rule="assertion_loosened", file=c.path, line=line,
                           why="an assertion is loosened (always true, approximate or only checks presence)")


def _ci_hits(c: _FileChange) -> Iterator[GuardHit]:
    steps_gone = len([x for x in c.removed if _CI_STEP.search(x)]) - len([x for x in c.added if _CI_STEP.search(x)])
    if steps_gone > 0:
        first = next(x for x in c.removed if _CI_STEP.search(x))
        yield GuardHit(rule="ci_step_removed", file=c.path, line=first, why="a CI step or command is removed")
    for line in c.added:
        if _CI_OFF.search(line):
            yield GuardHit(rule="ci_step_disabled", file=c.path, line=line, why="a CI step is turned off")


def _threshold_hits(c: _FileChange) -> Iterator[GuardHit]:
    for pattern, lower_is_weaker in ((_FLOOR, True), (_CEILING, False)):
        old = {m.group(1).lower(): float(m.group(2)) for x in c.removed for m in pattern.finditer(x)}
        for line in c.added:
            for m in pattern.finditer(line):
                key, new = m.group(1).lower(), float(m.group(2))
                if key in old and (new < old[key] if lower_is_weaker else new > old[key]):
                    yield GuardHit(rule="threshold_lowered", file=c.path, line=line,
                                   why=f"{m.group(1)} goes from {old[key]:g} to {new:g}")


# -- reading the diff ------------------------------------------------------------------------------------------

def _changes(diff: str) -> list[_FileChange]:
    """Each file's added and removed lines, read with the hunk counts (so `--- x` inside a hunk is a line)."""
    lines = diff.split("\n")
    out: list[_FileChange] = []
    cur: _FileChange | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = _path(line[4:]), _path(lines[i + 1][4:])
            cur = _FileChange(path=new or old or "?", deleted=new is None, created=old is None)
            out.append(cur)
            i += 2
            continue
        m = _HUNK.match(line)
        if m and cur is not None:
            i = _read_hunk(cur, lines, i + 1, int(m.group(1) or 1), int(m.group(2) or 1))
            continue
        i += 1
    return out


def _read_hunk(cur: _FileChange, lines: list[str], i: int, old_left: int, new_left: int) -> int:
    while i < len(lines) and (old_left > 0 or new_left > 0):
        line = lines[i]
        if line.startswith("-"):
            cur.removed.append(line[1:])
            old_left -= 1
        elif line.startswith("+"):
            cur.added.append(line[1:])
            new_left -= 1
        elif line.startswith("\\"):
            pass  # "\ No newline at end of file"
        else:
            old_left -= 1
            new_left -= 1
        i += 1
    return i


def _path(text: str) -> str | None:
    name = text.split("\t", 1)[0].strip().strip('"')
    if name == "/dev/null":
        return None
    return name[2:] if name.startswith(("a/", "b/")) else name


def _norm(path: str) -> str:
    return PurePosixPath(path.strip().lstrip("./")).as_posix()


def _is_named(path: str, named: set[str]) -> bool:
    p = _norm(path)
    return any(p == n or p.endswith("/" + n) or n.endswith("/" + p) for n in named)


def _key(line: str) -> str:
    return " ".join(line.split())


def _new(c: _FileChange) -> list[str]:
    return c.added


def _matching_removed(line: str, removed: list[str]) -> str:
    """The removed line `line` replaces (same text without the comment), or "" when it is new."""
    code = _key(line.split("#", maxsplit=1)[0].split("//", maxsplit=1)[0])
    return next((r for r in removed if code and _key(r.split("#")[0].split("//")[0]) == code), "")


def _test_names(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        m = _TEST_DEF.search(line)
        if m:
            yield next((g for g in m.groups()[1:] if g), None) or _key(line)
