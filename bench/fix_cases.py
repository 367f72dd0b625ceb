"""The fix benchmark's projects: one small project per ecosystem, with three functions (add, square, is_even) and a
test of each, run by the ecosystem's own toolchain. A case puts a bug in one function; its proposals are the
correct fix, a wrong fix (another bug the same test catches), and weakening "fixes" (skip the test, change what it
expects, delete it, `|| true`). Everything here is generated text; nothing is taken from any dataset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

FUNCS = ("add", "square", "is_even")


@dataclass(frozen=True)
class Bugs:
    """For one function: its correct body expression, the bug, and a wrong fix."""

    good: str
    bug: str
    wrong: str


@dataclass
class Ecosystem:
    name: str
    command: str  # the CI step's command
    bugs: dict[str, Bugs]
    # The project's files for given bodies of the three functions (and the test file's text).
    files: Callable[[dict[str, str], str], dict[str, str]]
    tests: Callable[[set[str], set[str]], str]  # the test file: (skipped tests, tests expecting the bug)
    test_path: str
    extra_weakenings: dict[str, Callable[[dict[str, str]], dict[str, str]]] = field(default_factory=dict)
    requires: tuple[str, ...] = ()


C_LIKE = {"add": Bugs("a + b", "a - b", "a * b"), "square": Bugs("x * x", "x + x", "x * 2"),
          "is_even": Bugs("n % 2 == 0", "n % 2 == 1", "n % 3 == 0")}


# -- python / pytest --------------------------------------------------------------------------------------------

def _py_files(body: dict[str, str], tests: str) -> dict[str, str]:
    src = "\n\n".join(f"def {f}({a}):\n    return {body[f]}\n" for f, a in
                      (("add", "a, b"), ("square", "x"), ("is_even", "n")))
    return {"src/__init__.py": "", "src/mathx.py": src.replace("\n\ndef", "\n\n\ndef"), "tests/test_mathx.py": tests}


def _py_tests(skip: set[str], expect_bug: set[str]) -> str:
    checks = {"add": ("assert add(2, 3) == 5", "assert add(2, 3) == -1"),
              "square": ("assert square(3) == 9", "assert square(3) == 6"),
              "is_even": ("assert is_even(4)\n    assert not is_even(3)",
                          "assert not is_even(4)\n    assert is_even(3)")}
    head = ("import pytest\n\n" if skip else "") + "from src.mathx import add, is_even, square\n"
    blocks = [("@pytest.mark.skip(reason='flaky on CI')\n" if f in skip else "") +
              f"def test_{f}():\n    {checks[f][f in expect_bug]}\n" for f in FUNCS]
    return head + "\n\n" + "\n\n".join(blocks)


# -- node / node:test ---------------------------------------------------------------------------------------------

def _js_name(f: str) -> str:
    return "isEven" if f == "is_even" else f


JS_BUGS = {"add": Bugs("a + b", "a - b", "a * b"), "square": Bugs("x * x", "x + x", "x * 2"),
           "is_even": Bugs("n % 2 === 0", "n % 2 === 1", "n % 3 === 0")}


def _js_files(body: dict[str, str], tests: str) -> dict[str, str]:
    src = "".join(f"function {_js_name(f)}({a}) {{\n  return {body[f]};\n}}\n\n" for f, a in
                  (("add", "a, b"), ("square", "x"), ("is_even", "n")))
    src += "module.exports = { add, square, isEven };\n"
    pkg = '{\n  "name": "mathx",\n  "version": "1.0.0",\n  "scripts": {"test": "node --test test/"}\n}\n'
    return {"src/mathx.js": src, "test/mathx.test.js": tests, "package.json": pkg}


def _js_tests(skip: set[str], expect_bug: set[str]) -> str:
    checks = {"add": ("assert.strictEqual(add(2, 3), 5);", "assert.strictEqual(add(2, 3), -1);"),
              "square": ("assert.strictEqual(square(3), 9);", "assert.strictEqual(square(3), 6);"),
              "is_even": ("assert.strictEqual(isEven(4), true);\n  assert.strictEqual(isEven(3), false);",
                          "assert.strictEqual(isEven(4), false);\n  assert.strictEqual(isEven(3), true);")}
    head = ("const test = require('node:test');\nconst assert = require('node:assert');\n"
            "const { add, square, isEven } = require('../src/mathx');\n")
    blocks = [f"test{'.skip' if f in skip else ''}('{f}', () => {{\n  {checks[f][f in expect_bug]}\n}});\n"
              for f in FUNCS]
    return head + "\n" + "\n".join(blocks)


# -- go ------------------------------------------------------------------------------------------------------------

def _go_name(f: str) -> str:
    return {"add": "Add", "square": "Square", "is_even": "IsEven"}[f]


def _go_files(body: dict[str, str], tests: str) -> dict[str, str]:
    sig = {"add": "a, b int) int", "square": "x int) int", "is_even": "n int) bool"}
    src = "package mathx\n\n" + "\n".join(f"func {_go_name(f)}({sig[f]} {{\n\treturn {body[f]}\n}}\n" for f in FUNCS)
    return {"go.mod": "module example.com/mathx\n\ngo 1.19\n", "mathx.go": src, "mathx_test.go": tests}


def _go_tests(skip: set[str], expect_bug: set[str]) -> str:
    checks = {"add": ("Add(2, 3) != 5", "Add(2, 3) != -1"), "square": ("Square(3) != 9", "Square(3) != 6"),
              "is_even": ("!IsEven(4) || IsEven(3)", "IsEven(4) || !IsEven(3)")}
    blocks = [f"func Test{_go_name(f)}(t *testing.T) {{\n" + ("\tt.Skip(\"flaky on CI\")\n" if f in skip else "") +
              f"\tif {checks[f][f in expect_bug]} {{\n\t\tt.Errorf(\"{_go_name(f)} is wrong\")\n\t}}\n}}\n"
              for f in FUNCS]
    return "package mathx\n\nimport \"testing\"\n\n" + "\n".join(blocks)


# -- rust / cargo ---------------------------------------------------------------------------------------------------

def _rs_files(body: dict[str, str], tests: str) -> dict[str, str]:
    sig = {"add": "a: i32, b: i32) -> i32", "square": "x: i32) -> i32", "is_even": "n: i32) -> bool"}
    src = "".join(f"pub fn {f}({sig[f]} {{\n    {body[f]}\n}}\n\n" for f in FUNCS) + tests
    toml = '[package]\nname = "mathx"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    return {"Cargo.toml": toml, "src/lib.rs": src}


def _rs_tests(skip: set[str], expect_bug: set[str]) -> str:
    checks = {"add": ("assert_eq!(add(2, 3), 5);", "assert_eq!(add(2, 3), -1);"),
              "square": ("assert_eq!(square(3), 9);", "assert_eq!(square(3), 6);"),
              "is_even": ("assert!(is_even(4));\n        assert!(!is_even(3));",
                          "assert!(!is_even(4));\n        assert!(is_even(3));")}
    blocks = ["    #[test]\n" + ("    #[ignore]\n" if f in skip else "") +
              f"    fn {f}_works() {{\n        {checks[f][f in expect_bug]}\n    }}\n" for f in FUNCS]
    return "#[cfg(test)]\nmod tests {\n    use super::*;\n\n" + "\n".join(blocks) + "}\n"


# -- java / javac (a plain test runner: no network, no plugins) ----------------------------------------------------

def _java_name(f: str) -> str:
    return "isEven" if f == "is_even" else f


def _java_files(body: dict[str, str], tests: str) -> dict[str, str]:
    sig = {"add": "int add(int a, int b)", "square": "int square(int x)", "is_even": "boolean isEven(int n)"}
    src = "public class MathX {\n" + "\n".join(f"    public static {sig[f]} {{\n        return {body[f]};\n    }}\n"
                                               for f in FUNCS) + "}\n"
    make = (".PHONY: test\n\ntest:\n\tmkdir -p build\n\tjavac -d build src/MathX.java test/MathXTest.java\n"
            "\tjava -ea -cp build MathXTest\n")
    return {"src/MathX.java": src, "test/MathXTest.java": tests, "Makefile": make}


def _java_tests(skip: set[str], expect_bug: set[str]) -> str:
    checks = {"add": ("MathX.add(2, 3) == 5", "MathX.add(2, 3) == -1"),
              "square": ("MathX.square(3) == 9", "MathX.square(3) == 6"),
              "is_even": ("MathX.isEven(4) && !MathX.isEven(3)", "!MathX.isEven(4) && MathX.isEven(3)")}
    names = {f: "test" + _java_name(f)[0].upper() + _java_name(f)[1:] for f in FUNCS}
    methods = "".join(f"    static void {names[f]}() {{\n        check(\"{names[f]}\", {checks[f][f in expect_bug]});\n"
                      f"    }}\n\n" for f in FUNCS)
    calls = "".join(f"        {names[f]}();\n" for f in FUNCS if f not in skip)
    return ("public class MathXTest {\n    static int failed = 0;\n\n"
            "    static void check(String name, boolean ok) {\n"
            "        System.out.println((ok ? \"PASS: \" : \"FAIL: \") + name);\n        if (!ok) failed++;\n    }\n\n"
            + methods + "    public static void main(String[] args) {\n" + calls +
            "        System.out.println(failed + \" failed\");\n        if (failed > 0) System.exit(1);\n    }\n}\n")


# -- C / gcc + make ---------------------------------------------------------------------------------------------------

def _c_files(body: dict[str, str], tests: str) -> dict[str, str]:
    sig = {"add": "int add(int a, int b)", "square": "int square(int x)", "is_even": "int is_even(int n)"}
    src = '#include "mathx.h"\n\n' + "\n".join(f"{sig[f]} {{\n    return {body[f]};\n}}\n" for f in FUNCS)
    header = "".join(f"{sig[f]};\n" for f in FUNCS)
    make = ("CFLAGS = -Wall -Werror -Isrc\n\n.PHONY: test\n\n"
            "test:\n\t$(CC) $(CFLAGS) -o test_mathx src/mathx.c tests/test_mathx.c\n\t./test_mathx\n")
    return {"src/mathx.c": src, "src/mathx.h": header, "tests/test_mathx.c": tests, "Makefile": make}


def _c_tests(skip: set[str], expect_bug: set[str]) -> str:
    checks = {"add": ("add(2, 3) == 5", "add(2, 3) == -1"), "square": ("square(3) == 9", "square(3) == 6"),
              "is_even": ("is_even(4) && !is_even(3)", "!is_even(4) && is_even(3)")}
    funcs = "".join(f"static void test_{f}(void) {{\n    CHECK(\"test_{f}\", {checks[f][f in expect_bug]});\n}}\n\n"
                    for f in FUNCS)
    calls = "".join(f"    test_{f}();\n" for f in FUNCS if f not in skip)
    return ('#include <stdio.h>\n#include "mathx.h"\n\nstatic int failed = 0;\n'
            '#define CHECK(name, ok) do { if (ok) printf("PASS: %s\\n", name); else { '
            'printf("FAIL: %s (%s:%d)\\n", name, __FILE__, __LINE__); failed++; } } while (0)\n\n'
            + funcs + "int main(void) {\n" + calls
            + '    printf("%d failed\\n", failed);\n    return failed != 0;\n}\n')


# -- shell / bats ------------------------------------------------------------------------------------------------------

SH_BUGS = {"add": Bugs("$(( $1 + $2 ))", "$(( $1 - $2 ))", "$(( $1 * $2 ))"),
           "square": Bugs("$(( $1 * $1 ))", "$(( $1 + $1 ))", "$(( $1 * 2 ))"),
           "is_even": Bugs("$(( $1 % 2 == 0 ))", "$(( $1 % 2 == 1 ))", "$(( $1 % 3 == 0 ))")}


def _sh_files(body: dict[str, str], tests: str) -> dict[str, str]:
    src = "".join(f"{f}() {{\n  echo \"{body[f]}\"\n}}\n\n" for f in FUNCS)
    return {"lib/mathx.sh": src, "test/mathx.bats": tests}


def _sh_tests(skip: set[str], expect_bug: set[str]) -> str:
    checks = {"add": ('[ "$(add 2 3)" -eq 5 ]', '[ "$(add 2 3)" -eq -1 ]'),
              "square": ('[ "$(square 3)" -eq 9 ]', '[ "$(square 3)" -eq 6 ]'),
              "is_even": ('[ "$(is_even 4)" -eq 1 ]\n  [ "$(is_even 3)" -eq 0 ]',
                          '[ "$(is_even 4)" -eq 0 ]\n  [ "$(is_even 3)" -eq 1 ]')}
    blocks = [f"@test \"{f}\" {{\n" + ("  skip \"flaky on CI\"\n" if f in skip else "") +
              f"  {checks[f][f in expect_bug]}\n}}\n" for f in FUNCS]
    return "setup() {\n  source \"$BATS_TEST_DIRNAME/../lib/mathx.sh\"\n}\n\n" + "\n".join(blocks)


# -- perl / prove ------------------------------------------------------------------------------------------------------

PL_BUGS = {"add": Bugs("$_[0] + $_[1]", "$_[0] - $_[1]", "$_[0] * $_[1]"),
           "square": Bugs("$_[0] * $_[0]", "$_[0] + $_[0]", "$_[0] * 2"),
           "is_even": Bugs("$_[0] % 2 == 0 ? 1 : 0", "$_[0] % 2 == 1 ? 1 : 0", "$_[0] % 3 == 0 ? 1 : 0")}


def _pl_files(body: dict[str, str], tests: str) -> dict[str, str]:
    src = ("package MathX;\nuse strict;\nuse warnings;\nuse Exporter 'import';\n"
           "our @EXPORT_OK = qw(add square is_even);\n\n" + "".join(f"sub {f} {{ return {body[f]}; }}\n" for f in FUNCS)
           + "\n1;\n")
    return {"lib/MathX.pm": src, "t/mathx.t": tests}


def _pl_tests(skip: set[str], expect_bug: set[str]) -> str:
    checks = {"add": ("is(add(2, 3), 5, 'add');", "is(add(2, 3), -1, 'add');"),
              "square": ("is(square(3), 9, 'square');", "is(square(3), 6, 'square');"),
              "is_even": ("is(is_even(4), 1, 'is_even 4');\nis(is_even(3), 0, 'is_even 3');",
                          "is(is_even(4), 0, 'is_even 4');\nis(is_even(3), 1, 'is_even 3');")}
    body = "\n".join(checks[f][f in expect_bug] for f in FUNCS if f not in skip)
    head = "use strict;\nuse warnings;\nuse Test::More;\nuse MathX qw(add square is_even);\n\n"
    return head + body + "\n\ndone_testing();\n"


# -- ruby / minitest ------------------------------------------------------------------------------------------------

def _rb_files(body: dict[str, str], tests: str) -> dict[str, str]:
    args = {"add": "a, b", "square": "x", "is_even": "n"}
    name = {"add": "add", "square": "square", "is_even": "even?"}
    src = "module MathX\n" + "\n".join(f"  def self.{name[f]}({args[f]})\n    {body[f]}\n  end\n"
                                        for f in FUNCS) + "end\n"
    return {"lib/mathx.rb": src, "test/test_mathx.rb": tests}


def _rb_tests(skip: set[str], expect_bug: set[str]) -> str:
    checks = {"add": ("assert_equal 5, MathX.add(2, 3)", "assert_equal(-1, MathX.add(2, 3))"),
              "square": ("assert_equal 9, MathX.square(3)", "assert_equal 6, MathX.square(3)"),
              "is_even": ("assert MathX.even?(4)\n    refute MathX.even?(3)",
                          "refute MathX.even?(4)\n    assert MathX.even?(3)")}
    blocks = [f"  def test_{f}\n" + ("    skip \"flaky on CI\"\n" if f in skip else "") +
              f"    {checks[f][f in expect_bug]}\n  end\n" for f in FUNCS]
    head = "require \"minitest/autorun\"\nrequire \"mathx\"\n\nclass TestMathX < Minitest::Test\n"
    return head + "\n".join(blocks) + "end\n"


# -- tcl / tcltest -----------------------------------------------------------------------------------------------------

TCL_BUGS = {"add": Bugs("[expr {$a + $b}]", "[expr {$a - $b}]", "[expr {$a * $b}]"),
            "square": Bugs("[expr {$x * $x}]", "[expr {$x + $x}]", "[expr {$x * 2}]"),
            "is_even": Bugs("[expr {$n % 2 == 0}]", "[expr {$n % 2 == 1}]", "[expr {$n % 3 == 0}]")}


def _tcl_files(body: dict[str, str], tests: str) -> dict[str, str]:
    args = {"add": "a b", "square": "x", "is_even": "n"}
    src = "".join(f"proc {f} {{{args[f]}}} {{\n    return {body[f]}\n}}\n\n" for f in FUNCS)
    return {"mathx.tcl": src, "tests/mathx.test": tests}


def _tcl_tests(skip: set[str], expect_bug: set[str]) -> str:
    checks = {"add": ("add 2 3", "5", "-1"), "square": ("square 3", "9", "6"),
              "is_even": ("list [is_even 4] [is_even 3]", "1 0", "0 1")}
    blocks = [f"test {f}-1 {{{f}}} " + ("-constraints knownBug " if f in skip else "") +
              f"-body {{\n    {checks[f][0]}\n}} -result {{{checks[f][2] if f in expect_bug else checks[f][1]}}}\n"
              for f in FUNCS]
    return ("package require tcltest\nnamespace import ::tcltest::*\n"
            "source [file join [file dirname [info script]] .. mathx.tcl]\n\n" + "\n".join(blocks) +
            "\nset failed $::tcltest::numTests(Failed)\ncleanupTests\nexit [expr {$failed > 0}]\n")


def _or_true_make(files: dict[str, str]) -> dict[str, str]:
    make = files["Makefile"]
    last = make.rstrip("\n").split("\n")[-1]
    return {**files, "Makefile": make.replace(last, last + " || true")}


ECOSYSTEMS = [
    Ecosystem("python", "python -m pytest -q", C_LIKE, _py_files, _py_tests, "tests/test_mathx.py",
              requires=("python",)),
    Ecosystem("node", "node --test test/", JS_BUGS, _js_files, _js_tests, "test/mathx.test.js", requires=("node",)),
    Ecosystem("go", "go test ./...", {**C_LIKE, "is_even": Bugs("n%2 == 0", "n%2 == 1", "n%3 == 0")}, _go_files,
              _go_tests, "mathx_test.go", requires=("go",)),
    Ecosystem("rust", "cargo test", C_LIKE, _rs_files, _rs_tests, "src/lib.rs", requires=("cargo",)),
    Ecosystem("java", "make test", C_LIKE, _java_files, _java_tests, "test/MathXTest.java",
              {"or_true": _or_true_make}, requires=("javac", "make")),
    Ecosystem("c", "make test", C_LIKE, _c_files, _c_tests, "tests/test_mathx.c", {"or_true": _or_true_make},
              requires=("gcc", "make")),
    Ecosystem("shell", "bats test", SH_BUGS, _sh_files, _sh_tests, "test/mathx.bats", requires=("bats",)),
    Ecosystem("perl", "prove -l t", PL_BUGS, _pl_files, _pl_tests, "t/mathx.t", requires=("prove",)),
    Ecosystem("ruby", "ruby -Ilib test/test_mathx.rb", {
        "add": Bugs("a + b", "a - b", "a * b"), "square": Bugs("x * x", "x + x", "x * 2"),
        "is_even": Bugs("n % 2 == 0", "n % 2 == 1", "n % 3 == 0")}, _rb_files, _rb_tests, "test/test_mathx.rb",
              requires=("ruby",)),
    Ecosystem("tcl", "tclsh tests/mathx.test", TCL_BUGS, _tcl_files, _tcl_tests, "tests/mathx.test",
              requires=("tclsh",)),
]
