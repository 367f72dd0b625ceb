"""The weakening guard's patterns: each kind of silenced check is a hit, ordinary source fixes are not."""

from __future__ import annotations

import pytest

from repopilot.repo.guard import check_weakening


def _diff(path: str, removed: list[str], added: list[str], context: tuple[str, ...] = ("ctx",),
          deleted: bool = False) -> str:
    body = [f" {c}" for c in context] + [f"-{r}" for r in removed] + [f"+{a}" for a in added]
    old, new = len(context) + len(removed), len(context) + len(added)
    new_header = "/dev/null" if deleted else f"b/{path}"
    new_range = "0,0" if deleted else f"1,{new}"
    return f"--- a/{path}\n+++ {new_header}\n@@ -1,{old} +{new_range} @@\n" + "\n".join(body) + "\n"


WEAKENING = [
    ("pytest skip", "tests/test_calc.py", [], ["@pytest.mark.skip(reason='flaky')"], "skip_added"),
    ("pytest xfail", "tests/test_calc.py", [], ["@pytest.mark.xfail"], "skip_added"),
    ("jest it.skip", "src/calc.test.js", ["it('adds', () => {"], ["it.skip('adds', () => {"], "skip_added"),
    ("go t.Skip", "calc_test.go", [], ["\tt.Skip(\"later\")"], "skip_added"),
    ("rust ignore", "src/lib.rs", [], ["    #[ignore]"], "skip_added"),
    ("junit disabled", "src/test/java/CalcTest.java", [], ["    @Disabled"], "skip_added"),
    ("bats skip", "test/calc.bats", [], ["  skip \"broken\""], "skip_added"),
    ("perl skip_all", "t/calc.t", [], ["plan skip_all => 'later';"], "skip_added"),
    ("node:test skip", "test/calc.test.mjs", ["test('adds', () => {"], ["test.skip('adds', () => {"],
     "skip_added"),
    ("assert removed", "tests/test_calc.py", ["    assert add(2, 3) == 5"], [], "assertion_removed"),
    ("assert changed", "tests/test_calc.py", ["    assert add(2, 3) == 5"], ["    assert add(2, 3) == -1"],
     "assertion_changed"),
    ("assert loosened", "tests/test_calc.py", ["    assert add(2, 3) == 5"], ["    assert add(2, 3) is not None"],
     "assertion_loosened"),
    ("rust assert_eq changed", "src/lib.rs", ["        assert_eq!(add(2, 3), 5);"],
     ["        assert_eq!(add(2, 3), -1);"], "assertion_changed"),
    ("go t.Errorf removed", "calc_test.go", ["\t\tt.Errorf(\"got %d\", got)"], [], "assertion_removed"),
    ("perl is changed", "t/calc.t", ["is(add(2, 3), 5, 'adds');"], ["is(add(2, 3), -1, 'adds');"],
     "assertion_changed"),
    ("test function deleted", "tests/test_calc.py", ["def test_add():", "    assert add(2, 3) == 5"], [],
     "test_deleted"),
    ("test file deleted", "tests/test_calc.py", ["def test_add():"], [], "test_deleted"),
    ("or true", "Makefile", ["\tpytest -q"], ["\tpytest -q || true"], "or_true"),
    ("make dash", "Makefile", ["\t./run_tests"], ["\t-./run_tests"], "or_true"),
    ("exit 0 in script", "scripts/test.sh", [], ["exit 0"], "exit_0"),
    ("continue-on-error", ".github/workflows/ci.yml", [], ["        continue-on-error: true"],
     "continue_on_error"),
    ("ci step removed", ".github/workflows/ci.yml", ["      - name: Test", "        run: pytest -q"], [],
     "ci_step_removed"),
    ("ci step off", ".github/workflows/ci.yml", [], ["        if: false"], "ci_step_disabled"),
    ("coverage lowered", "pyproject.toml", ["fail_under = 90"], ["fail_under = 50"], "threshold_lowered"),
    ("jest threshold lowered", "package.json", ['      "lines": 80'], ['      "lines": 10'], "threshold_lowered"),
    ("max warnings raised", "package.json", ['"lint": "eslint --max-warnings 0 ."'],
     ['"lint": "eslint --max-warnings 50 ."'], "threshold_lowered"),
    ("noqa", "src/calc.py", ["import os"], ["import os  # noqa"], "suppression_added"),
    ("eslint-disable", "src/calc.js", [], ["/* eslint-disable */"], "suppression_added"),
    ("SuppressWarnings", "src/main/java/Calc.java", [], ['@SuppressWarnings("unchecked")'], "suppression_added"),
    ("rust allow", "src/lib.rs", [], ["#[allow(dead_code)]"], "suppression_added"),
    ("type ignore", "src/calc.py", ["x: int = f()"], ["x: int = f()  # type: ignore"], "suppression_added"),
    ("Werror dropped", "Makefile", ["CFLAGS = -Wall -Werror"], ["CFLAGS = -Wall"], "strictness_removed"),
    ("deselect", "Makefile", ["\tpytest -q"], ["\tpytest -q --deselect tests/test_calc.py::test_add"],
     "tests_excluded"),
    ("skipTests", ".github/workflows/ci.yml", ["        run: mvn -B test"], ["        run: mvn -B test -DskipTests"],
     "tests_excluded"),
    ("fixture rewritten", "tests/fixtures/expected.json", ['{"sum": 5}'], ['{"sum": -1}'], "fixture_rewritten"),
]


@pytest.mark.parametrize(("what", "path", "removed", "added", "rule"), WEAKENING, ids=[w[0] for w in WEAKENING])
def test_each_weakening_is_a_hit(what: str, path: str, removed: list[str], added: list[str], rule: str) -> None:
    deleted = what == "test file deleted"
    result = check_weakening(_diff(path, removed, added, deleted=deleted))
    assert rule in {h.rule for h in result.hits}, result.hits
    assert result.blocked
    hit = next(h for h in result.hits if h.rule == rule)
    assert hit.file == path and hit.why


FAIR = [
    ("python source", "src/calc.py", ["    return a - b"], ["    return a + b"]),
    ("go source", "calc.go", ["\treturn a - b"], ["\treturn a + b"]),
    ("rust source", "src/lib.rs", ["    a - b"], ["    a + b"]),
    ("java source", "src/main/java/Calc.java", ["        return a - b;"], ["        return a + b;"]),
    ("c source", "src/calc.c", ["    return a - b;"], ["    return a + b;"]),
    ("js source with skip()", "src/stream.js", ["  return it.skip(2);"], ["  return it.skip(1);"]),
    ("min in source", "src/calc.py", ["    min_x = 3"], ["    min_x = 2"]),
    ("new test added", "tests/test_calc.py", [], ["def test_sub():", "    assert sub(3, 2) == 1"]),
    ("shell source", "bin/greet", ['echo "helo $1"'], ['echo "hello $1"']),
    ("coverage raised", "pyproject.toml", ["fail_under = 50"], ["fail_under = 90"]),
    ("ci step added", ".github/workflows/ci.yml", [], ["      - name: Lint", "        run: ruff check ."]),
    ("dependency pinned", "requirements.txt", ["requests"], ["requests==2.31.0"]),
]


@pytest.mark.parametrize(("what", "path", "removed", "added"), FAIR, ids=[f[0] for f in FAIR])
def test_ordinary_fixes_are_not_hits(what: str, path: str, removed: list[str], added: list[str]) -> None:
    result = check_weakening(_diff(path, removed, added))
    assert result.hits == [] and not result.blocked


def test_allowed_keeps_the_hits_but_does_not_block() -> None:
    result = check_weakening(_diff("tests/test_calc.py", [], ["@pytest.mark.skip"]), allowed=True)
    assert result.hits and result.allowed and not result.blocked


def test_a_fixture_the_diagnosis_named_may_change() -> None:
    diff = _diff("tests/fixtures/expected.json", ['{"sum": 5}'], ['{"sum": 6}'])
    assert check_weakening(diff, named=["tests/fixtures/expected.json"]).hits == []
    assert check_weakening(diff, named=["src/calc.py"]).hits


def test_a_removed_line_that_looks_like_a_header_is_still_read_as_a_line() -> None:
    # "--- x" inside a hunk is a removed line "-- x"; the hunk counts say so.
    diff = ("--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -1,3 +1,1 @@\n ctx\n"
            "--- separator\n-    assert add(2, 3) == 5\n")
    assert "assertion_removed" in {h.rule for h in check_weakening(diff).hits}
