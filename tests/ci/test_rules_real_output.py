"""The ecosystem rules on output captured from the real tools (pytest 9, unittest, CPython 3.11, mypy, ruff 0.17,
pip, black, flake8, pyright, gcc 12, GNU ld, make, CMake, CTest, cargo/rustc/clippy/rustfmt 1.95, Node 20, jest 29,
vitest 2, mocha 10, tsc 5, eslint 8, prettier 3, npm 11, yamllint, shellcheck, RSpec 3.12, RuboCop 1.39, PHPUnit 9.6,
PHP 8.2, Elixir 1.14, Bundler, pnpm 9, yarn 1, Poetry 2.5), run through the whole engine:
as a plain log and wrapped the way a GitHub Actions job log carries it (timestamps, the step's `##[group]Run`
header, the runner's `##[error]` trailer). Each case names the rule that must rank first, the category, and the
lines (by their text) that must be among the causal `error_lines`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from repopilot.ci.engine import diagnose_input
from repopilot.ci.lines import clean_text
from repopilot.ci.sources import open_sources

LOGS = Path(__file__).parent / "rule_logs"


@dataclass(frozen=True)
class Case:
    log: str
    rule: str
    category: str
    causal: tuple[str, ...]  # substrings of lines that must be in error_lines
    quiet: tuple[str, ...] = ()  # substrings of lines that must not be


CASES = [
    Case("pytest.log", "pytest.failed-summary", "test",
         ("E       ZeroDivisionError: division by zero", "FAILED tests/test_calc.py::TestDiv::test_zero")),
    Case("pytest_short.log", "pytest.failed-summary", "test",
         ("E   ZeroDivisionError: division by zero", "FAILED tests/test_calc.py::test_nested")),
    Case("unittest.log", "unittest.failure", "test",
         ("FAIL: test_add (test_um.MathTest.test_add)", "AssertionError: 2 != 3", "KeyError: 'k'"),
         ("Ran 3 tests in",)),
    Case("traceback.log", "python.traceback", "build",
         ("FileNotFoundError: [Errno 2]", "RuntimeError: config missing")),
    Case("modnotfound.log", "python.module-not-found", "dependency",
         ("ModuleNotFoundError: No module named 'yaml_not_installed'", "import yaml_not_installed")),
    Case("mypy.log", "mypy.error", "typecheck", ("[assignment]", "[no-untyped-def]"), ("Found 3 errors",)),
    Case("ruff.log", "ruff.diagnostic", "lint", ("--> typed.py:1:8", "F401 [*] `os` imported but unused"),
         ("Found 2 errors.",)),
    Case("ruff_concise.log", "ruff.violation", "lint", ("F401 [*]",)),
    Case("ruff_format.log", "ruff.would-reformat", "lint", ("unformatted: File would be reformatted",)),
    Case("pip.log", "pip.no-matching-distribution", "dependency",
         ("Could not find a version that satisfies", "No matching distribution found")),
    Case("gcc_make.log", "gcc.error", "build",
         ("error: \u2018buf\u2019 undeclared", "In file included from parse.c:1:", "|            ^~~")),
    Case("ld.log", "ld.undefined-reference", "build",
         ("undefined reference to `compute_sum'", "in function `main'", "ld returned 1 exit status")),
    Case("cmake.log", "cmake.error", "build",
         ("CMake Error at CMakeLists.txt:3 (find_package):", "NotAPackageXyzConfig.cmake"),
         ("-- Detecting C compile features - done",)),
    Case("ctest.log", "ctest.failure", "test", ("The following tests FAILED:", "3 - crashes (SEGFAULT)")),
    Case("cargo_test.log", "cargo.test-failure", "test",
         ("---- tests::adds stdout ----", "assertion `left == right` failed", "right: 3"),
         ("test tests::ok ... ok",)),
    Case("cargo_build.log", "rustc.error", "build",
         ("error[E0308]: mismatched types", "expected `i32`, found `&str`", "error[E0425]"),
         ("Compiling rs v0.1.0",)),
    Case("clippy.log", "clippy.denied-lint", "lint",
         ("error: this `if` has identical blocks", "implied by `-D warnings`", "error: writing `&Vec`")),
    Case("rustfmt.log", "rustfmt.diff", "lint", ("Diff in /home/runner/work/app/app/src/lib.rs:1:",)),
    Case("cargo_resolve.log", "cargo.resolution", "dependency",
         ("no matching package named `serde` found", "required by package")),
    Case("node_cnf.log", "node.cannot-find-module", "dependency",
         ("Error: Cannot find module 'express-not-installed-xyz'", "Require stack:")),
    Case("node_esm.log", "node.cannot-find-module", "dependency",
         ("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod-not-here'",)),
    Case("jest.log", "jest.test-failure", "test",
         ("● Cart \u203a adds an item", "Received: 3", "at Object.toEqual (src/cart.test.js:4:61)",
          "Cannot find module './does-not-exist' from 'src/broken.test.js'"), ("Tests:       2 failed",)),
    Case("jest_color.log", "jest.test-failure", "test", ("● Cart \u203a keeps objects", "-     3,")),
    Case("vitest.log", "vitest.test-failure", "test",
         ("FAIL", "AssertionError", "src/math.test.mjs:5:42"), ("Duration",)),
    Case("mocha.log", "mocha.failures", "test",
         ("1 failing", "AssertionError [ERR_ASSERTION]", "at Context.<anonymous> (test/array.spec.js:5:14)"),
         ("1 passing",)),
    Case("tsc.log", "tsc.error", "typecheck", ("error TS2322", "error TS2339")),
    Case("tsc_pretty.log", "tsc.error", "typecheck", ("TS2339", "console.log(c.totl);"), ("Found 2 errors",)),
    Case("eslint.log", "eslint.error", "lint", ("/home/runner/work/app/app/src/index.js", "no-undef"),
         ("problems",)),
    Case("prettier.log", "prettier.check", "lint", ("[warn] src/ugly.js", "Code style issues found")),
    Case("pyright.log", "pyright.error", "typecheck",
         ("p.py:2:12 - error", '"int" is not assignable to "str" (reportReturnType)', "p.py:4:4 - error")),
    Case("black.log", "black.would-reformat", "lint", ("would reformat tb.py", "2 files would be reformatted")),
    Case("flake8.log", "flake8.violation", "lint", ("F401 'os' imported but unused", "E111")),
    Case("yamllint.log", "yamllint.error", "lint", ("(key-duplicates)", ".github/workflows/ci.yml")),
    Case("yamllint_parsable.log", "yamllint.error", "lint", ("[error] trailing spaces",),
         ("[warning] missing document start",)),
    Case("shellcheck.log", "shellcheck.issue", "lint", ("SC2086", "SC2045 (error)"), ("For more information:",)),
    Case("shellcheck_gcc.log", "shellcheck.issue", "lint", ("[SC2045]",)),
    Case("npm_eresolve.log", "npm.eresolve", "dependency",
         ("npm error code ERESOLVE", 'peer react@"^16.14.0" from react-dom@16.14.0')),
    Case("npm_ci_sync.log", "npm.lockfile-out-of-sync", "dependency",
         ("can only install packages when", "Missing: is-number@7.0.0 from lock file"),
         ("Clean install a project", "--install-strategy")),
    Case("pip_resolution.log", "pip.resolution-impossible", "dependency",
         ("ERROR: Cannot install requests==2.31.0", "requests 2.31.0 depends on urllib3", "ResolutionImpossible"),
         ("Collecting requests",)),
    Case("rspec.log", "rspec.failure", "test",
         ("1) Calculator#add returns the sum", "got: 4", "NoMethodError:", "rspec ./spec/calculator_spec.rb:10"),
         ("Finished in",)),
    Case("rubocop.log", "rubocop.offense", "lint", ("Style/Documentation", "Naming/MethodParameterName", "^^^^"),
         ("offenses detected",)),
    Case("phpunit.log", "phpunit.failure", "test",
         ("There were 2 failures:", "Failed asserting that 3 is identical to 4.", "+'bar'", "Error: Call to undefined"),
         ("Tests: 4, Assertions: 3",)),
    Case("php_parse.log", "php.fatal-error", "build", ("syntax error, unexpected token",)),
    Case("php_fatal.log", "php.fatal-error", "build", ("Call to undefined function format_price()", "#0 ")),
    Case("exunit.log", "exunit.failure", "test", ("1) test adds numbers (ExTest)", "right: 3"),
         ("2 tests, 1 failure",)),
    Case("elixir_compile.log", "elixir.compile-error", "build",
         ("== Compilation error in file lib/ex.ex ==", "undefined function totl/0")),
    Case("mix_format.log", "mix.format", "lint", ("--check-formatted", "* lib/ex.ex")),
    # a bare target the job asked for (a misspelt `make test`) is the job's configuration (GUIDELINE.md)
    Case("make_norule.log", "make.no-such-target", "config", ("No rule to make target 'tset'",)),
    Case("mix_deps.log", "mix.deps", "dependency", ("Unchecked dependencies", "the dependency is not available")),
    Case("pnpm_frozen.log", "pnpm.lockfile-outdated", "dependency",
         ("ERR_PNPM_OUTDATED_LOCKFILE", "specifiers in the lockfile")),
    Case("yarn_frozen.log", "yarn.lockfile-outdated", "dependency", ("--frozen-lockfile",), ("Resolving packages",)),
    Case("cargo_locked.log", "cargo.lock-outdated", "dependency", ("--locked was passed", "help: to generate")),
    Case("bundler.log", "bundler.resolution", "dependency",
         ("Could not find gem 'rspec-core (~> 99.0)'", "* rspec-core-3.12.0"), ("Don't run Bundler as root",)),
    Case("poetry.log", "poetry.lock-outdated", "dependency",
         ("pyproject.toml changed significantly since poetry.lock was last generated",),
         ("Installing dependencies from lock file", "[tool.poetry.name] is deprecated")),
    Case("py_syntax.log", "python.syntax-error", "build", ('File "/home/runner/work/app/app/pysyn.py", line 2',
                                                           "SyntaxError: invalid syntax")),
    Case("py_indent.log", "python.syntax-error", "build", ("IndentationError: unexpected indent", "y = 2")),
    Case("py_syntax_import.log", "python.syntax-error", "build", ("import mod_syn", "'(' was never closed")),
    Case("node_syntax.log", "node.syntax-error", "build",
         ("/home/runner/work/app/app/jssyn.js:2", "SyntaxError: Unexpected token ';'", "at wrapSafe")),
]

_TS = "2026-01-05T10:00:00.0000000Z "


def _github(text: str) -> str:
    """The tool's output as one failing step of a GitHub Actions job log."""
    head = ["Current runner version: '2.321.0'", "##[group]Run make check", "make check", "##[endgroup]"]
    tail = ["##[error]Process completed with exit code 1.", "Post job cleanup."]
    body = text.splitlines()
    return "".join(f"{_TS}{line}\n" for line in [*head, *body, *tail])


def _diagnose(path: Path) -> tuple[list[int], list[str], str, str]:
    res = diagnose_input(open_sources(str(path))[0])
    d = res.diagnosis
    lines = [clean_text(t) for t in path.read_text(encoding="utf-8").split("\n")]
    top = d.failures[0].rule if d.failures else "-"
    return d.error_lines, lines, d.category, top


@pytest.mark.parametrize("shape", ["plain", "github"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.log)
def test_real_tool_output(case: Case, shape: str, tmp_path: Path) -> None:
    text = (LOGS / case.log).read_text(encoding="utf-8")
    path = tmp_path / case.log
    path.write_text(text if shape == "plain" else _github(text), encoding="utf-8")
    error_lines, lines, category, top = _diagnose(path)
    assert top == case.rule
    assert category == case.category
    chosen = {n: lines[n - 1] for n in error_lines}
    for needle in case.causal:
        assert any(needle in t for t in chosen.values()), f"{needle!r} not among the causal lines"
    for needle in case.quiet:
        assert not any(needle in t for t in chosen.values()), f"{needle!r} wrongly among the causal lines"
    assert not any("Process completed with exit code" in t for t in chosen.values())
