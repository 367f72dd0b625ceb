"""Prefilters: the cheaper forms hyperscan scans for scan forms with a generic lead (ci/prefilter.py), and the
confirmation that keeps the scan's answer that of the exact forms (ci/confirm.py)."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import pytest

from repopilot.ci import confirm, native
from repopilot.ci.catalog import SCAN_LINE_START, Catalog, load_catalog
from repopilot.ci.prefilter import prefilter
from repopilot.ci.scanner import Scanner, ScanResult, hyperscan_available

needs_hs = pytest.mark.skipif(not hyperscan_available(), reason="no hyperscan wheel")
ROOT = Path(__file__).resolve().parents[2]


def _pre(form: str) -> str | None:
    return prefilter(form, SCAN_LINE_START)


def test_a_generic_lead_is_dropped_up_to_the_first_literal() -> None:
    assert _pre(r"(?:^|\r|Z )(?:(?:[^\s\[]\S*\.java):(?:\d+): error: .)") == r"\.java:\d+: error: ."
    assert _pre(r"(?:^|\r|Z )(?:\s*--- FAIL: (?:\S+) \([\d.]+m?s\))") == r"--- FAIL: \S+ \([\d.]+m?s\)"
    # Literal alternatives count by their shortest; `\x27` and escaped punctuation are literals.
    assert _pre(r"(?:^|\r|Z )\S+(?:Exception|Error): \x27") == r"(?:Exception|Error): \x27"
    assert _pre(r"[A-Z][A-Z0-9_]*(?:TOKEN|SECRET) is") == r"(?:TOKEN|SECRET) is"


def test_forms_that_start_at_a_literal_or_have_a_bounded_lead_are_scanned_as_they_are() -> None:
    assert _pre(r"(?:^|\r|Z )(?:\[ERROR\] (?:\S+\.java):\[(?:\d+),(?:\d+)\] .)") is None  # starts at a literal
    assert _pre(r"(?:^|\r|Z )(?:#\d (?:\d\.\d )?ERROR: .)") is None  # nothing unbounded before `ERROR: `
    assert _pre(r"(?:^|\r|Z )\S*ab") is None  # no literal of three characters
    assert _pre(r"\S*foo|bar") is None  # a top-level alternation
    assert _pre(r"(?i)\S*foobar") is None  # syntax it does not read: left alone
    assert _pre(r"\S*\p{L}foobar") is None


def _bare(pattern: str) -> str:
    return pattern.replace("(?:", "").replace(")", "")  # groups of one alternative are spliced


def test_every_bundled_prefilter_is_a_suffix_of_its_form_and_compiles() -> None:
    catalog = load_catalog()
    pairs = [(f, p) for forms, pres in zip(catalog.scan_forms, catalog.prefilters, strict=True)
             for f, p in zip(forms, pres, strict=True) if p is not None]
    assert len(pairs) > 20
    for form, pre in pairs:
        assert _bare(form).endswith(_bare(pre)) and len(pre) < len(form)
        re.compile(pre.encode())
    if hyperscan_available():
        import hyperscan

        db = hyperscan.Database()
        db.compile(expressions=[p.encode() for _, p in pairs], ids=list(range(len(pairs))), elements=len(pairs),
                   flags=[hyperscan.HS_FLAG_MULTILINE] * len(pairs))


def test_a_prefilter_flags_every_line_its_form_flags_on_the_rules_examples() -> None:
    for rule, forms, pres in zip(*(lambda c: (c.rules, c.scan_forms, c.prefilters))(load_catalog()), strict=True):
        flags = re.MULTILINE | (re.IGNORECASE if rule.ignore_case else 0)
        for form, pre in zip(forms, pres, strict=True):
            if pre is None:
                continue
            for ex in rule.examples:
                data = ex.text.encode()
                exact = {data.count(b"\n", 0, m.end()) for m in re.finditer(form.encode(), data, flags)}
                loose = {data.count(b"\n", 0, m.end()) for m in re.finditer(pre.encode(), data, flags)}
                assert exact <= loose, (rule.id, form)


def _exact_only(catalog: Catalog) -> Catalog:
    plain = dataclasses.replace(catalog)
    object.__setattr__(plain, "prefilters", tuple(tuple(None for _ in forms) for forms in plain.scan_forms))
    return plain


def _facts(res: ScanResult) -> dict[str, object]:
    return {"hits": [(h.rule.id, h.line, h.first, h.last, h.fields, h.message) for h in res.hits],
            "losers": [(c.rule_id, c.line, c.winner) for c in res.losers], "capped": res.capped,
            "groups": [m.line for m in res.groups], "jobs": list(res.jobs), "lines": res.lines}


# Lines a prefilter flags and its exact form does not (a Maven warning for a path at the line start, an exception
# named mid-line), beside ones both flag, many times over: past the rules' caps, where unconfirmed lines would
# wait as late candidates and change which ones are kept.
_LOG = b"".join([
    b"[WARNING] /src/a/B.java:[3,4] deprecated\n",
    b"/src/a/B.java:[12,8] cannot find symbol\n",
    b"2024-01-01T00:00:00.0000000Z Caused by x: java.lang.IllegalStateException: boom\n",
    b"java.lang.IllegalStateException: boom\n",
    b"  at a.B.c(B.java:3)\n",
    b"x/B.java:4: error: ';' expected\n",
    b"[INFO] see Foo.java:5: error: in a sentence\n",
] * 400)


@needs_hs
@pytest.mark.parametrize("with_c", [True, False])
def test_the_scan_answers_what_the_exact_forms_answer(with_c: bool) -> None:
    catalog = load_catalog()
    pre = Scanner(catalog, engine="hyperscan", chunk_size=16 * 1024)
    exact = Scanner(_exact_only(catalog), engine="hyperscan", chunk_size=16 * 1024)
    assert getattr(pre.engine, "_prefiltered").exact is not None
    assert getattr(exact.engine, "_prefiltered").exact is None
    loose = getattr(pre.engine, "_prefiltered")
    unconfirmed: list[int] = []
    loose.database.scan(_LOG, match_event_handler=lambda pid, start, end, flags, context: unconfirmed.append(end),
                        scratch=loose.scratches()[0])
    assert len(unconfirmed) > len(native.pairs(exact.engine.scan(_LOG))) + 1000  # the prefilters alone flag more
    if with_c and not native.available():
        pytest.skip("no C extension")
    was = native.use(with_c)
    try:
        for piece in (_LOG, _LOG[:20000]):
            assert sorted(native.pairs(pre.engine.scan(piece))) == sorted(native.pairs(exact.engine.scan(piece)))
        got, want = pre.scan(io.BytesIO(_LOG)), exact.scan(io.BytesIO(_LOG))
    finally:
        native.use(was)
    assert _facts(got) == _facts(want)
    assert len(got.hits) > 3 and got.capped


@needs_hs
def test_the_bundled_logs_scan_as_with_the_exact_forms() -> None:
    catalog = load_catalog()
    pre, exact = Scanner(catalog, engine="hyperscan"), Scanner(_exact_only(catalog), engine="hyperscan")
    logs = sorted((ROOT / "examples").glob("*.log")) + sorted((ROOT / "tests" / "ci" / "rule_logs").glob("*"))
    assert len(logs) > 40
    for path in logs:
        data = path.read_bytes()
        assert _facts(pre.scan(io.BytesIO(data))) == _facts(exact.scan(io.BytesIO(data))), path.name


def test_a_payload_is_what_was_packed_and_nothing_else_passes_for_one() -> None:
    assert confirm.unpack(confirm.pack(b"db", b"exact", b"\x00\x01")) == (b"db", b"exact", b"\x00\x01")
    assert confirm.unpack(confirm.pack(b"db", b"", b"")) == (b"db", b"", b"")
    for bad in (b"", b"x" * 30, confirm.pack(b"db", b"e", b"m") + b"!"):
        with pytest.raises(ValueError):
            confirm.unpack(bad)


@needs_hs
def test_a_cache_entry_that_is_not_a_payload_is_compiled_again(tmp_path: Path) -> None:
    catalog = load_catalog()
    first = Scanner(catalog, engine="hyperscan", cache_dir=tmp_path)
    entry = max(tmp_path.glob("hyperscan-*.db"), key=lambda p: p.stat().st_size)  # the catalog's, not the keywords'
    import hyperscan

    entry.write_bytes(hyperscan.dumpb(getattr(first.engine, "_db")))  # an old-style entry: one database
    again = Scanner(catalog, engine="hyperscan", cache_dir=tmp_path)
    assert _facts(again.scan(io.BytesIO(_LOG))) == _facts(first.scan(io.BytesIO(_LOG)))
    assert confirm.unpack(entry.read_bytes())[1]  # rewritten with the exact forms' database


@needs_hs
def test_an_extension_built_before_take_lines_still_confirms() -> None:
    class Stale:  # the collector of an extension built from an older source: no take_lines
        class Matches(list):  # type: ignore[type-arg]
            def __call__(self, pid: int, start: int, end: int, flags: int = 0, context: object = None) -> None:
                self.append((end, pid))

    catalog = load_catalog()
    engine = getattr(Scanner(catalog, engine="hyperscan").engine, "_prefiltered")
    exact = Scanner(_exact_only(catalog), engine="hyperscan").engine
    got = engine.scan(_LOG, engine.scratches(), Stale)
    assert isinstance(got, list) and sorted(got) == sorted(native.pairs(exact.scan(_LOG)))
