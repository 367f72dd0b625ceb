"""What keeps a flagged line cheap on huge logs: a rule's hits past its first ones are only counted, except the
latest; Surefire's passing classes are found around hits, also when their lines are chunks apart."""

from __future__ import annotations

import io

import pytest

from repopilot.ci.catalog import load_catalog
from repopilot.ci.late import LATE as _LATE
from repopilot.ci.scanner import _EAGER, Scanner, hyperscan_available


def _scan(data: bytes, chunk: int = 64 * 1024, engine: str = "re"):
    return Scanner(load_catalog(), engine=engine, chunk_size=chunk).scan(io.BytesIO(data))


def _compile_error(i: int) -> bytes:
    return b"[ERROR] /w/src/A%d.java:[%d,5] cannot find symbol\n  symbol:   class Foo%d\n[INFO] filler\n" % (i, i, i)


# The `re` fallback flags a line for every rule anchored at a line start, so only hyperscan's flags say that all
# of a line's rules are past their cap.
@pytest.mark.skipif(not hyperscan_available(), reason="no hyperscan wheel")
def test_a_rule_past_its_cap_keeps_its_first_and_latest_hits_and_counts_the_rest() -> None:
    total = _EAGER + 3 * _LATE + 40
    data = b"".join(_compile_error(i) for i in range(total)) + b"[INFO] BUILD FAILURE\n"
    res = _scan(data, chunk=16 * 1024, engine="hyperscan")
    lines = [h.line for h in res.hits if h.rule.id == "maven.compile-error"]
    assert lines[:_EAGER] == [3 * i + 1 for i in range(_EAGER)]  # the first ones, in order
    assert lines[-_LATE:] == [3 * i + 1 for i in range(total - _LATE, total)]  # and the latest ones
    assert len(lines) == _EAGER + _LATE
    assert res.capped["maven.compile-error"] > 0
    last = res.hits[-1]
    assert (last.first, last.last) == (3 * (total - 1) + 1, 3 * (total - 1) + 2)  # its block was grown
    assert last.fields["file"] == f"/w/src/A{total - 1}.java"
    assert res.text[last.line].startswith("[ERROR] /w/src/A")


def _surefire(cls: str, passed: bool, filler: int) -> bytes:
    out = [f"[INFO] Running {cls}".encode(), b"java.lang.IllegalStateException: boom",
           f"\tat {cls}.crashes(X.java:3)".encode()]
    out += [b"[INFO] some test output line" for _ in range(filler)]
    summary = ("Failures: 0, Errors: 0" if passed else "Failures: 1, Errors: 0")
    out.append(f"[INFO] Tests run: 2, {summary}, Skipped: 0, Time elapsed: 0.4 s - in {cls}".encode())
    return b"\n".join(out) + b"\n"


def test_passing_class_spans_are_found_across_chunks() -> None:
    data = b"[INFO] start\n" + _surefire("com.a.PassTest", True, 400) + _surefire("com.a.FailTest", False, 400)
    for chunk in (1024, 4096, 1024 * 1024):
        res = _scan(data, chunk=chunk)
        hits = [h.line for h in res.hits if h.rule.id == "java.exception"]
        assert hits == [3, 3 + 404]
        assert len(res.passed_classes) == 1
        start, end = res.passed_classes[0]
        assert (start, end) == (2, 405)  # `Running` .. its summary, the failing class not among them


def test_a_set_of_flagged_patterns_is_planned_once_rules_in_catalog_order() -> None:
    sc = Scanner(load_catalog(), engine="re")
    rules = sc.catalog.rules
    pids_of: dict[int, list[int]] = {}
    for pid, rule_index in enumerate(sc._rule_of):
        if rule_index >= 0:
            pids_of.setdefault(rule_index, []).append(pid)
    a = next(i for i, pids in pids_of.items() if len(pids) > 1)  # a rule with two triggers, both on the line
    b = min(i for i in pids_of if i < a)
    group = sc._struct_of.index("group")
    idxs, structs, ids = plan = sc._plan({*pids_of[a], group, pids_of[b][0]})
    assert idxs == (b, a)  # catalog order, each rule once
    assert structs == {"group"}
    assert ids == (rules[b].id, rules[a].id)
    assert sc._plan({group, pids_of[b][0], *pids_of[a]}) is plan  # the same set: worked out once
    assert sc._plan({group}) == ((), frozenset({"group"}), ())
