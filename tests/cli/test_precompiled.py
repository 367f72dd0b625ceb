"""What a wheel carries compiled (cli/precompiled.py): each pattern is the pattern `re` compiles (the same matches
on a real log), each dataclass method the code object `exec` compiles; the console script installs them before it
loads the CLI, only what is held is taken from them, anything amiss leaves `re` and dataclasses as they are, and a
diagnose gives the same report with them as without."""

from __future__ import annotations

import json
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from repopilot.cli import precompiled as cp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LOG = EXAMPLES / "go-build-error.log"


@pytest.fixture(scope="module")
def memo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file as setup.py's build hook writes it: a new process, its state in a temporary directory."""
    tmp = tmp_path_factory.mktemp("build")
    env = {**os.environ, "REPOPILOT_RUNS_DIR": str(tmp / "runs"), "REPOPILOT_CACHE_DIR": str(tmp / "cache"),
           "REPOPILOT_HISTORY": str(tmp / "history.sqlite3"), "XDG_CONFIG_HOME": str(tmp / "config")}
    env.pop("REPOPILOT_MODEL", None)
    subprocess.run([sys.executable, "-m", "repopilot.cli.precompiled", str(tmp / "prebuilt")], env=env, cwd=tmp,
                   check=True, capture_output=True, timeout=600)
    names = sorted(p.name for p in (tmp / "prebuilt").iterdir())
    assert names == sorted([cp.memo_name(), Path(cp.rest_name(cp.memo_name())).name])
    return tmp / "prebuilt"


def _memo(directory: Path) -> tuple[cp.Patterns, cp.Sources]:
    data: tuple[cp.Patterns, cp.Sources] = marshal.loads((directory / cp.memo_name()).read_bytes())
    return data


def _patterns(directory: Path) -> cp.Patterns:
    return _memo(directory)[0]


def _rest(directory: Path) -> cp.Patterns:
    """The patterns read when a run first lacks one (the catalog's and the secret rules')."""
    rest: cp.Patterns = marshal.loads(Path(cp.rest_name(str(directory / cp.memo_name()))).read_bytes())
    return rest


def test_the_memo_holds_the_patterns_a_diagnose_compiles(memo_dir: Path) -> None:
    patterns = {p for p, _ in _patterns(memo_dir)}
    from repopilot.ci.verdict import _TEST_SUMMARY
    from repopilot.core.secret_rules import _present, default_rules

    assert _TEST_SUMMARY.pattern in patterns  # the project's own, compiled as a module loads
    # Made at run time, from the secret rules' keywords: a diagnose compiles it when the keywords are looked for by
    # regex, not when the pass in C looks for them (core/_keywords.c); then it is with the rest.
    detector = default_rules()._detector.pattern
    assert detector in patterns if _present is None else detector in {p for p, _ in _rest(memo_dir)}
    assert len(patterns) > 100


def test_the_rest_holds_every_catalog_and_secret_pattern(memo_dir: Path) -> None:
    from repopilot.app import compile_patterns
    from repopilot.ci.catalog import LazyPattern, load_catalog
    from repopilot.ci.prebuild import _rule_patterns
    from repopilot.core.secret_rules import default_rules

    held, rest = _patterns(memo_dir), _rest(memo_dir)
    assert rest and not held.keys() & rest.keys()  # only what the example's diagnose did not compile
    every = {(p.pattern, p.flags) for r in load_catalog().rules for p in _rule_patterns(r)
             if isinstance(p, LazyPattern)}
    every |= {(r.regex, 0) for r in default_rules().rules}
    assert len(every) > 500 and every <= held.keys() | rest.keys(), sorted(every - held.keys() - rest.keys())[:3]
    assert compile_patterns() > 600


def test_each_pattern_held_matches_as_re_compiles_it(memo_dir: Path) -> None:
    text = LOG.read_text()
    data = text.encode()
    for (pattern, flags), (cflags, code, groups, groupindex, indexgroup) in (_patterns(memo_dir)
                                                                              | _rest(memo_dir)).items():
        ours = cp._sre.compile(pattern, cflags, memoryview(code).cast(cp._CODE).tolist(), groups, groupindex,
                               indexgroup)
        theirs = re.compile(pattern, flags)
        assert (ours.pattern, ours.flags, ours.groups, ours.groupindex) == \
            (theirs.pattern, theirs.flags, theirs.groups, theirs.groupindex)
        subject = data if isinstance(pattern, bytes) else text
        assert [(m.span(), m.groups()) for m in ours.finditer(subject)] == \
            [(m.span(), m.groups()) for m in theirs.finditer(subject)], pattern


def test_the_memo_holds_each_dataclass_method_as_exec_compiles_it(memo_dir: Path) -> None:
    sources = _memo(memo_dir)[1]
    assert any("def __init__(self,category:_type_category,strength:_type_strength" in s for s in sources)  # verdict
    for source, code in sources.items():
        assert marshal.loads(code) == compile(source, "<string>", "exec")


_DATACLASS = """
import dataclasses, sys
from repopilot.cli import precompiled as cp
installed = cp.install(sys.argv[1]) if len(sys.argv) > 1 else None

@dataclasses.dataclass
class Point:
    x: int

@dataclasses.dataclass(frozen=True)
class Other:
    y: int

print(installed, Point(1).x, Other(2) == Other(2), Other(2))
"""


def test_a_method_held_is_taken_from_the_file_and_others_compile(tmp_path: Path) -> None:
    marked = tmp_path / "marked"
    held = {}
    exec_ = cp.record(lambda: exec(compile("import dataclasses\n@dataclasses.dataclass\nclass Point:\n    x: int\n",
                                           "t", "exec"), {}))[1]
    for source in exec_:  # the same source, compiled to something that shows where it came from
        held[source] = marshal.dumps(compile(source.replace("self.x=x", "self.x='from the file'"), "<string>", "exec"))
    marked.mkdir()
    (marked / cp.memo_name()).write_bytes(marshal.dumps(({}, held)))
    out = subprocess.run([sys.executable, "-c", _DATACLASS, str(marked)], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "True from the file True Other(y=2)"
    plain = subprocess.run([sys.executable, "-c", _DATACLASS], capture_output=True, text=True, check=True,
                           timeout=60).stdout
    assert plain.strip() == "None 1 True Other(y=2)"


_PROBE = """
import re, sys
from repopilot.cli import precompiled as cp
installed = cp.install(sys.argv[1])
import dataclasses
parsed = []
parse = re._parser.parse
re._parser.parse = lambda p, *a: (parsed.append(p), parse(p, *a))[1]
re.compile(sys.argv[2], int(sys.argv[3]))
re.compile("never (?P<seen>before)")
print(installed, parsed, hasattr(dataclasses, "exec"))
"""


@pytest.mark.parametrize("part", ["held", "rest"])
def test_only_patterns_held_are_taken_from_it(memo_dir: Path, part: str) -> None:
    patterns = _patterns(memo_dir) if part == "held" else _rest(memo_dir)
    pattern, flags = next((p, f) for p, f in patterns if isinstance(p, str) and "\x00" not in p)
    out = subprocess.run([sys.executable, "-c", _PROBE, str(memo_dir), pattern, str(flags)], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    assert out.strip() == "True ['never (?P<seen>before)'] True"


_UNREAD = """
import marshal, sys
from repopilot.cli import precompiled as cp
loads = marshal.loads
read = []
marshal.loads = lambda data: (read.append(len(data)), loads(data))[1]
cp.install(sys.argv[1])
import re
re.compile(sys.argv[2], int(sys.argv[3]))
print(len(read))
re.compile("never (?P<seen>before)")
print(len(read))
"""


def test_the_rest_is_read_only_when_a_pattern_is_missing(memo_dir: Path) -> None:
    pattern, flags = next((p, f) for p, f in _patterns(memo_dir) if isinstance(p, str) and "\x00" not in p)
    out = subprocess.run([sys.executable, "-c", _UNREAD, str(memo_dir), pattern, str(flags)], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    assert out.split() == ["1", "2"]  # the file at install; the rest at the first pattern the file lacks


def test_a_missing_or_damaged_rest_leaves_the_rest_to_re(memo_dir: Path, tmp_path: Path) -> None:
    (tmp_path / cp.memo_name()).write_bytes((memo_dir / cp.memo_name()).read_bytes())
    pattern, flags = next((p, f) for p, f in _rest(memo_dir) if isinstance(p, str) and "\x00" not in p)
    for rest in (None, b"\x00 not marshal", marshal.dumps(["a list"])):
        if rest is not None:
            Path(cp.rest_name(str(tmp_path / cp.memo_name()))).write_bytes(rest)
        out = subprocess.run([sys.executable, "-c", _PROBE, str(tmp_path), pattern, str(flags)],
                             capture_output=True, text=True, check=True, timeout=60).stdout
        assert out.strip() == f"True [{pattern!r}, 'never (?P<seen>before)'] True"


@pytest.mark.parametrize("content", [None, b"\x00 not marshal", marshal.dumps(["a list"]), marshal.dumps(({}, []))])
def test_no_file_or_a_damaged_one_leaves_re_as_it_is(tmp_path: Path, content: bytes | None) -> None:
    if content is not None:
        (tmp_path / cp.memo_name()).write_bytes(content)
    out = subprocess.run([sys.executable, "-c", _PROBE, str(tmp_path), "a(b)", "0"], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    assert out.strip() == "False ['a(b)', 'never (?P<seen>before)'] False"


def test_the_console_script_installs_them_before_it_loads_the_cli(memo_dir: Path, tmp_path: Path) -> None:
    code = ("import re, sys\nfrom repopilot.cli import precompiled as cp\ncp.PREBUILT = sys.argv[1]\n"
            "original = re._compiler.compile\nimport repopilot.cli as cli\nsys.argv = ['repopilot', '--version']\n"
            "cli.leave = sys.exit\n"
            "try:\n    cli.run()\nexcept SystemExit:\n    pass\n"
            "print(re._compiler.compile is not original, 'repopilot.cli.main' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(memo_dir)], capture_output=True, text=True, check=True,
                         timeout=120, env={**os.environ, "REPOPILOT_RUNS_DIR": str(tmp_path / "runs")}).stdout
    assert out.split()[-2:] == ["True", "True"]


_WHEN = re.compile(r'("(?:trace_run_id|first_seen|last_seen)": )"[^"]*"')
_DIAGNOSE = """
import sys
from repopilot.cli import precompiled as cp
if sys.argv[1] != "-":
    assert cp.install(sys.argv[1])
from repopilot.cli.main import main
sys.exit(main(["diagnose", sys.argv[2], "--format", "json", "--no-llm"]))
"""


@pytest.mark.parametrize("log", ["go-build-error.log", "maven-compile-error.log", "docker-build-network.log"])
def test_a_diagnose_reports_the_same_with_them(memo_dir: Path, tmp_path: Path, log: str) -> None:
    reports = []
    for memo in ("-", str(memo_dir), "-"):  # the first fills the cache (a cold one may scan with another engine)
        state = tmp_path / str(len(reports))
        env = {**os.environ, "REPOPILOT_RUNS_DIR": str(state / "runs"), "REPOPILOT_CACHE_DIR": str(tmp_path / "c"),
               "REPOPILOT_HISTORY": str(state / "history.sqlite3"), "XDG_CONFIG_HOME": str(state / "config")}
        env.pop("REPOPILOT_MODEL", None)
        out = subprocess.run([sys.executable, "-c", _DIAGNOSE, memo, str(EXAMPLES / log)], capture_output=True,
                             text=True, check=True, timeout=120, env=env, cwd=tmp_path).stdout
        reports.append(_WHEN.sub(r'\1"-"', out))  # the run's id and the history's times
    assert reports[1] == reports[2]
    assert json.loads(reports[1])["failures"]
