"""The rule-independent locator: it finds the error lines of a tool no rule knows, explains each line it chose
in the trace, never chooses a generic trailer, and its shipped weights fit its features."""

from __future__ import annotations

import json
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from repopilot.ci.engine import diagnose_input, to_report
from repopilot.ci.locator import (
    FEATURES,
    _gathered,
    _line_row,
    candidates,
    default_model,
    detect_shape,
    feature_rows,
    locate,
)
from repopilot.ci.scanner import Marker, ScanResult
from repopilot.ci.sources import open_sources
from repopilot.core import TraceRecorder

# OCaml's dune: no rule file knows it.
DUNE = """\
$ opam exec -- dune build @install
Entering directory '/builds/app'
File "bin/main.ml", line 3, characters 8-9:
3 | let x = y + 1
            ^
Error: Unbound value y
Leaving directory '/builds/app'
ERROR: Job failed: exit code 1
"""


def test_shipped_weights_fit_the_features() -> None:
    data = json.loads((resources.files("repopilot.ci") / "locator_weights.json").read_text())
    assert tuple(data["features"]) == FEATURES
    model = default_model()
    assert 0.0 < model.threshold < 1.0 and model.max_lines > 0


def test_an_unknown_tool_gets_its_error_lines_and_the_trace_says_why(tmp_path: Path) -> None:
    log = tmp_path / "dune.log"
    log.write_text(DUNE)
    rec = TraceRecorder.start("diagnose", "dune", directory=tmp_path / "runs")
    res = diagnose_input(open_sources(str(log))[0], recorder=rec)
    r = to_report(res).contract()
    assert 6 in r["error_lines"]  # `Error: Unbound value y`
    assert 8 not in r["error_lines"]  # the runner's trailer is never a cause
    top = r["failures"][0]
    assert top["rule"] == "locator" and top["causal"]
    assert "chosen by the locator" in top["note"]
    steps = [s for s in rec.trace.steps if s.type == "decision" and (s.detail or {}).get("decision") == "locator"]
    assert len(steps) == 1
    lines = steps[0].detail["lines"]
    chosen = {entry["line"]: entry for entry in lines}
    assert 6 in chosen and chosen[6]["why"]  # the features that chose it
    assert "6" in json.dumps(res.excerpt.ranges) or any(a <= 6 <= b for a, b in res.excerpt.ranges)


def test_the_locator_is_deterministic_and_respects_excluded_lines() -> None:
    texts = dict(enumerate(DUNE.splitlines(), 1))
    model = default_model()
    first = locate(texts, total=len(texts), model=model)
    again = locate(texts, total=len(texts), model=model)
    assert [(s.line, s.probability) for s in first.lines] == [(s.line, s.probability) for s in again.lines]
    without = locate(texts, total=len(texts), model=model, exclude={6})
    assert 6 not in {s.line for s in without.lines}


def test_features_see_the_log_shape_and_the_end_of_the_failing_step() -> None:
    texts = {1: "##[group]Run make", 2: "make: *** [all] Error 2", 3: "##[error]Process completed with exit code 2."}
    assert detect_shape(texts.values()) == "github"
    assert detect_shape(["section_start:1:step_script", "ERROR: Job failed: exit code 1"]) == "gitlab"
    assert detect_shape(["[Pipeline] stage"]) == "jenkins"
    assert detect_shape(["hello"]) == "plain"
    rows = feature_rows(texts, end=3, shape="github", step_start=1)
    assert rows[2]["end_le5"] == 1.0 and rows[2]["in_step"] == 1.0 and rows[2]["trailer"] == 1.0
    assert rows[2]["shape_github"] == 1.0


# Node printing an uncaught error: `file:line`, the source, a caret, a blank line, then the message and its stack.
NODE_UNCAUGHT = """\
{p}##[group]Run node app.js
{p}node app.js
{p}##[endgroup]
{p}seed 497624
{p}/home/runner/work/app/app/app.js:3
{p}function total(order) {{ return order.items.length; }}
{p}                                           ^
{p}
{p}TypeError: Cannot read properties of undefined (reading 'length')
{p}    at total (/home/runner/work/app/app/app.js:3:44)
{p}    at Object.<anonymous> (/home/runner/work/app/app/app.js:4:13)
{p}
{p}Node.js v20.20.2
{p}##[error]Process completed with exit code 1.
"""


def test_one_error_printed_over_a_few_lines_is_one_failure_with_one_fingerprint(tmp_path: Path) -> None:
    prints = []
    for n, prefix in enumerate(("", "2026-11-23T13:09:00.0270730Z ")):
        log = tmp_path / f"node{n}.log"
        log.write_text(NODE_UNCAUGHT.format(p=prefix))
        r = to_report(diagnose_input(open_sources(str(log))[0])).contract()
        located = [f for f in r["failures"] if f["rule"] == "locator" and f["causal"]]
        assert located, r["failures"]
        assert "TypeError" in located[0]["message"]
        # Whether or not the header line scored as a block of its own, it belongs to the same failure.
        assert len(located) == 1, [f["message"] for f in located]
        prints.append(located[0]["fingerprint"])
    assert prints[0] == prints[1]


def test_a_chosen_line_grows_over_its_likely_neighbours_as_far_as_they_go() -> None:
    from repopilot.ci.locator import GROW_LINES, extend_picked

    # An error header (10) and the lines under it that carry its content (11-13), then an unlikely line (14).
    probability = {9: 0.05, 10: 0.9, 11: 0.4, 12: 0.35, 13: 0.3, 14: 0.1, 15: 0.5}
    assert extend_picked({10}, probability, 0.3) == {10, 11, 12, 13}
    # Bounded: a long run of likely lines stops GROW_LINES away from the chosen one.
    run = {n: 0.5 for n in range(100, 130)}
    grown = extend_picked({110}, run, 0.3)
    assert grown == set(range(110 - GROW_LINES, 110 + GROW_LINES + 1))


def test_expected_and_actual_in_other_runners_words_read_as_an_assertion() -> None:
    from repopilot.ci.locator import _line_row

    for text in ("med(c(1, 2, 3, 4)) not equal to 2.5.", "---- Result should have been (exact matching):",
                 "---- Result was:", "expected 3 but was 4", "1/1 mismatches"):
        assert _line_row(text)["assert"] == 1.0, text
    assert _line_row("Downloading left-pad 1.3.0")["assert"] == 0.0


def test_character_fractions_count_what_they_say() -> None:
    # _line_row counts punctuation as what is neither alphanumeric nor a space: true only if no character is both.
    assert not any(chr(i).isalnum() and chr(i).isspace() for i in range(sys.maxunicode + 1))
    every_ascii = "".join(map(chr, range(1, 128)))
    for text in ("  ERROR: main.go:12:3: undefined: foo", "Ünïcödé — ½ ٣ x\u3000y!", "\t#!@ 42", every_ascii,
                 "x" + every_ascii[::-1] + "\x1c\x1f y"):
        stripped = text.rstrip().lstrip()
        row = _line_row(text)
        n = len(stripped)
        assert row["upper_frac"] == sum(c.isupper() for c in stripped) / n
        assert row["digit_frac"] == sum(c.isdigit() for c in stripped) / n
        assert row["punct_frac"] == sum(not c.isalnum() and not c.isspace() for c in stripped) / n


def _covered(items: Any, needles: tuple[str, ...], ignorecase: bool) -> bool:
    """Whether every match of the parsed pattern `items` holds one of `needles` (lower-case when `ignorecase`, as
    `str.lower()` gives an ASCII line). A run of literal characters counts; so does a group, a repeat of at least
    one, or an alternation every branch of which is covered; and, case-insensitively, a literal no ASCII
    character matches (the words are only looked for in ASCII lines)."""
    from re import _constants as c  # type: ignore[attr-defined]

    def run_covered(run: str) -> bool:
        if ignorecase and any(not any(re.fullmatch(re.escape(ch), chr(a), re.IGNORECASE) for a in range(128))
                              for ch in run):
            return True
        text = run.lower() if ignorecase else run
        return any(n in text for n in needles)

    run = ""
    for op, av in [*items, (None, None)]:
        if op is c.LITERAL:
            run += chr(av)
            continue
        if op is c.AT:  # zero-width: the literals either side are next to each other
            continue
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1 and len(av[2]) == 1 and av[2][0][0] is c.LITERAL:
            run += chr(av[2][0][1])  # `=+`: one `=` at least, next to what comes before
            if run_covered(run):
                return True
            run = ""
            continue
        if run and run_covered(run):
            return True
        run = ""
        if op is c.SUBPATTERN and _covered(av[-1], needles, ignorecase):
            return True
        if op is c.BRANCH and all(_covered(alt, needles, ignorecase) for alt in av[1]):
            return True
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1 and _covered(av[2], needles, ignorecase):
            return True
    return False


def test_every_match_of_a_line_shape_holds_one_of_its_words() -> None:
    from re import _parser  # type: ignore[attr-defined]

    from repopilot.ci.locator import _ASSERT, _EXC_NAME, _EXC_WORDS, _NEEDS

    assert _NEEDS and all(p.flags & re.IGNORECASE for p in _NEEDS)
    for pattern, needles in _NEEDS.items():
        assert all(n == n.lower() for n in needles), pattern.pattern
        assert _covered(_parser.parse(pattern.pattern, pattern.flags), needles, True), pattern.pattern
    assert not _EXC_NAME.flags & re.IGNORECASE
    assert _covered(_parser.parse(_EXC_NAME.pattern, _EXC_NAME.flags), _EXC_WORDS, False)
    # The check itself: a word that only some branches hold does not cover the pattern.
    assert not _covered(_parser.parse(r"\bfoo\b|bar", re.IGNORECASE), ("foo",), True)
    assert not _covered(_parser.parse(r"(?:a|b)?c+", re.IGNORECASE), ("a", "b"), True)
    assert _covered(_parser.parse(r"x(?:aa|bb)c+", re.IGNORECASE), ("aa", "bb"), True)
    assert _covered(_parser.parse(r"\[=+", re.IGNORECASE), ("[=",), True)
    # Every word is needed: without one of them some match holds none (here: `got`).
    assert not _covered(_parser.parse(_ASSERT.pattern, _ASSERT.flags), tuple(set(_NEEDS[_ASSERT]) - {"got"}), True)


def _ungated(text: str) -> dict[str, float]:
    """`_line_row`'s shapes, every pattern run on every line (what the words let it skip)."""
    from repopilot.ci import locator as loc

    s = text.rstrip()
    words = loc._DIRS.sub("", s) if "/" in s or "\\" in s else s
    on_words = {"err_word": loc._ERR_WORD, "exc_name": loc._EXC_NAME, "problem": loc._PROBLEM, "warn": loc._WARN,
                "negated": loc._NEGATED, "success": loc._SUCCESS, "assert": loc._ASSERT}
    on_line = {"path_line": loc._PATH_LINE, "path_line_col": loc._PATH_LINE_COL, "line_word": loc._LINE_WORD,
               "summary": loc._SUMMARY, "trailer": loc._TRAILER, "progress": loc._PROGRESS}
    return {**{k: float(bool(p.search(words))) for k, p in on_words.items()},
            **{k: float(bool(p.search(s))) for k, p in on_line.items()}}


def test_the_words_skip_only_patterns_that_cannot_match() -> None:
    root = Path(__file__).resolve().parents[2]
    lines = [line for log in sorted((root / "examples").glob("*.log")) for line in log.read_text().splitlines()]
    lines += ["Tests run: 3, Failures: 1", "make[2]: *** [all] Error 2", "[=====>   ] 40%", "AssertionError",
              "src/a.py:3:4: E501", "ERR! code 1", "a\u017f\u017fert ok", "KEYError: x", "ÉRROR: ünïcode fault ✗",
              "0 errors",
              "npm ERR! code ELIFECYCLE", "expected 3 but was 4", "  File \"x.py\", line 3", "Process completed",
              "timed out", "time out", "Downloaded 3 MB", "result was", "should equal", "Error_reporting"]
    assert len(lines) > 500
    from repopilot.ci.locator import _PATH_LINE_COL_SEEN, _PATH_LINE_SEEN

    assert "(?<=" in _PATH_LINE_SEEN.pattern and "(?<=" in _PATH_LINE_COL_SEEN.pattern  # the rewrite applies
    lines += ["a.b:3", "./x.py(3,4)", "a..b:3", ".go:3", "-.c:[1,2]", "é.c:3", "x.c :3", "x/y.c:12:3"]
    for text in lines:
        row = _line_row(text)
        assert {k: row[k] for k in _ungated(text)} == _ungated(text), text


def test_progress_is_a_line_that_begins_with_what_it_is_doing() -> None:
    # A progress word inside an error message (`not installed locally`, `while building`) does not make it progress.
    for text in ("  Downloading requests-2.32.3-py3-none-any.whl (64 kB)", "[INFO] Building jar: target/a.jar",
                 "#5 Pulling fs layer", "   Compiling ledger v0.1.0 (/builds/acme/ledger)", "Progress: 45%"):
        assert _line_row(text)["progress"] == 1.0, text
    for text in ("Could not find gem 'nokogiri (~> 1.16)' in cached gems or installed locally.",
                 "error: linker `cc` not found while building ledger", "Package 'jansson' is not installed"):
        assert _line_row(text)["progress"] == 0.0, text


def test_a_tap_failure_is_not_a_success() -> None:
    assert _line_row("not ok 3 - adds two numbers")["success"] == 0.0
    assert _line_row("ok 2 - subtracts")["success"] == 1.0


def test_npm_echoes_its_scripts_but_gradle_prints_messages_after_its_arrow() -> None:
    for text in ("> calc@1.0.0 test", "> jest --ci", "$ make check", "+ ./gradlew build", "##[command]git fetch"):
        assert _line_row(text)["command"] == 1.0, text
    for text in ("> Task :app:compileJava FAILED", "> Could not find method testImplementaton() for arguments"):
        assert _line_row(text)["command"] == 0.0, text


@pytest.mark.parametrize(("line", "shape"), [
    ("##[section]Starting: Build", "azure"), ("##vso[task.logissue type=error]x", "azure"),
    ("##[group]Run make", "github"), ("section_start:1700000000:build", "gitlab"), ("section_end:1:build", "gitlab"),
    ("ERROR: Job failed: exit code 1", "gitlab"), ("travis_fold:start:install", "travis"),
    ("Done. Your build exited with 1.", "travis"), ("[Pipeline] sh", "jenkins"), ("Finished: FAILURE", "jenkins"),
])
def test_each_marker_tells_its_ci_system(line: str, shape: str) -> None:
    # detect_shape looks at a line only when it starts with a marker's first character.
    from repopilot.ci.locator import detect_shape

    assert detect_shape(["compiling", "", line, "  done"]) == shape
    assert detect_shape(["compiling", " " + line]) == "plain"


def test_every_exit_marker_starts_with_a_character_find_end_looks_for() -> None:
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]

    from repopilot.ci.locator import _EXIT_MARKER, _EXIT_STARTS, find_end

    (at, _), (branch, (_, alternatives)) = _parser.parse(_EXIT_MARKER.pattern, _EXIT_MARKER.flags)
    assert at is c.AT  # `^(?:a|b|…)`: the group is the branch
    firsts = {chr(alt[0][1]) for alt in alternatives if alt[0][0] is c.LITERAL}
    assert branch is c.BRANCH and len(firsts) >= 5 and firsts <= _EXIT_STARTS
    assert all(alt[0][0] is c.LITERAL for alt in alternatives)
    texts = {3: "Finished: FAILURE", 7: "##[error]Process completed with exit code 2.", 9: "done"}
    assert find_end(texts, 20, None) == 7


def test_candidates_are_gathered_once_per_result_and_each_caller_gets_its_own_copy() -> None:
    res = ScanResult(lines=9, text={1: "a", 5: "e"}, tail=[Marker(8, "h"), Marker(5, "other")],
                     keywords=[Marker(3, "c")])
    first = candidates(res)
    assert first == _gathered(res, 3000) == {1: "a", 5: "e", 8: "h", 3: "c"}
    first[2] = "changed by a caller"
    again = candidates(res)
    assert again == {1: "a", 5: "e", 8: "h", 3: "c"} and again is not first
    assert candidates(res, limit=2) == {5: "e", 8: "h"}  # another limit: gathered for it
    res.tail.append(Marker(9, "i"))  # (a result is not changed after its scan; if it were, it is seen)
    assert candidates(res)[9] == "i"
    other = ScanResult(lines=2, text={2: "b"})
    assert candidates(other) == {2: "b"}


def _random_and_real_lines(alphabet: str) -> list[str]:
    import random

    rnd = random.Random(19)
    root = Path(__file__).resolve().parents[2]
    lines = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 16))) for _ in range(50000)]
    for log in sorted((root / "examples").glob("*.log")) + sorted((root / "tests/ci/rule_logs").glob("*.log")):
        lines += log.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines


def test_the_directories_removed_are_the_ones_the_first_form_removed() -> None:
    from repopilot.ci import locator as loc

    first = re.compile(r"(?:[^\s/\\]*[/\\])+(?=\S)")  # tried at every character of a word
    for line in _random_and_real_lines("ab/\\ \t.\u00a0\u2003x/"):
        assert loc._DIRS.sub("", line) == first.sub("", line), line


def _shape_reference(texts: list[str]) -> str:
    """detect_shape as first written: every line through the whole chain of markers."""
    seen = set()
    for t in texts:
        if t.startswith(("##[section]", "##vso[")):
            seen.add("azure")
        elif t.startswith("##["):
            seen.add("github")
        elif t.startswith("section_start:") or t.startswith("section_end:") or t.startswith("ERROR: Job failed"):
            seen.add("gitlab")
        elif t.startswith("travis_") or t.startswith("Done. Your build exited"):
            seen.add("travis")
        elif t.startswith("[Pipeline]") or t.startswith("Finished: "):
            seen.add("jenkins")
    return next((s for s in ("azure", "github", "gitlab", "travis", "jenkins") if s in seen), "plain")


def test_the_shape_is_the_one_every_marker_compared_gives() -> None:
    import random

    marks = ["##[section]Starting: x", "##vso[task.x]", "##[group]Run x", "##[error]x", "section_start:1:x",
             "section_end:1:x", "ERROR: Job failed: exit code 1", "travis_fold:start:x",
             "Done. Your build exited with 1.", "[Pipeline] sh", "Finished: FAILURE", "#1 [internal] x", "s", "E",
             "t", "D", "[", "F", "#", "", "plain"]
    rnd = random.Random(21)
    for _ in range(3000):
        texts = [rnd.choice(marks) for _ in range(rnd.randint(0, 8))]
        assert detect_shape(texts) == _shape_reference(texts), texts


def test_the_contribution_values_are_the_contributions_own() -> None:
    import random

    model = default_model()
    rnd = random.Random(22)
    for _ in range(500):
        row = {name: rnd.choice([0.0, 1.0, rnd.random(), rnd.uniform(-3, 3)])
               for name in rnd.sample(FEATURES, rnd.randint(0, len(FEATURES)))}
        assert model.contribution_values(row) == [c for _, c in model.contributions(row)]
        assert model.bias + sum(model.contribution_values(row)) == model.bias + sum(
            c for _, c in model.contributions(row))
