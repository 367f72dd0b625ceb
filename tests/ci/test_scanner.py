"""The one-pass scanner: both engines agree, line numbers count `\\n` only, chunk boundaries change nothing."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from repopilot.ci.catalog import load_catalog
from repopilot.ci.scanner import Scanner, hyperscan_available

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ci"
ENGINES = ["re", pytest.param("hyperscan", marks=pytest.mark.skipif(not hyperscan_available(),
                                                                     reason="no hyperscan wheel"))]


def _scan(data: bytes, engine: str, chunk: int = 8 * 1024 * 1024):
    return Scanner(load_catalog(), engine=engine, chunk_size=chunk).scan(io.BytesIO(data))


def _summary(res) -> list[tuple[str, int, int, int]]:
    return [(h.rule.id, h.line, h.first, h.last) for h in res.hits]


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.log")))
def test_engines_agree_and_chunking_is_invisible(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    ref = _scan(data, "re")
    assert bool(ref.hits) == ("pass" not in name), f"hits on {name}: {len(ref.hits)}"
    assert ref.lines == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if hyperscan_available():
        hs = _scan(data, "hyperscan")
        assert hs.engine == "hyperscan"
        assert _summary(hs) == _summary(ref)
        assert [m.line for m in hs.errors] == [m.line for m in ref.errors]
    small = _scan(data, "re", chunk=4096)  # many chunk boundaries, blocks crossing them
    assert _summary(small) == _summary(ref)
    assert small.lines == ref.lines


@pytest.mark.parametrize("engine", ENGINES)
def test_line_numbers_count_newlines_only(engine: str) -> None:
    log = (
        b"2024-01-01T00:00:00.0000000Z ##[group]Run go test ./...\n"
        b"2024-01-01T00:00:00.0000000Z go test ./...\n"
        b"2024-01-01T00:00:01.0000000Z ##[endgroup]\n"
        b"progress 10%\rprogress 50%\rprogress 100%\r\n"                         # line 4: \r rewrites
        b"\x1b[31mbad \xff\xfe utf-8\x1b[0m\n"                                    # line 5: ANSI, invalid UTF-8
        b"2024-01-01T00:00:02.0000000Z --- FAIL: TestParse (0.01s)\r\n"          # line 6, CRLF
        b"2024-01-01T00:00:02.0000000Z     parse_test.go:12: got 1, want 2\r\n"  # line 7
        b"2024-01-01T00:00:02.0000000Z FAIL\r\n"
        b"2024-01-01T00:00:02.0000000Z ##[error]Process completed with exit code 1.\r\n"
    )
    res = _scan(log, engine)
    assert res.lines == 9
    fail = [h for h in res.hits if h.rule.id == "go.test-failed"]
    assert [(h.line, h.first, h.last) for h in fail] == [(6, 6, 7)]
    assert fail[0].fields["test"] == "TestParse"
    assert [m.line for m in res.errors] == [9]
    assert [g.line for g in res.groups] == [1]
    assert res.text[5] == "bad \ufffd\ufffd utf-8"


@pytest.mark.parametrize("engine", ENGINES)
def test_trigger_in_a_carriage_return_segment(engine: str) -> None:
    # javac under Maven on some agents ends lines with a bare \r: every segment is a candidate.
    log = b"[INFO] x\n[ERROR] /w/A.java:[3,5] cannot find symbol\r  symbol:   class Foo\r\n[INFO] y\n"
    res = _scan(log, engine)
    hit = next(h for h in res.hits if h.rule.id == "maven.compile-error")
    assert hit.line == 2 and hit.fields["file"] == "/w/A.java"


def test_empty_input() -> None:
    res = _scan(b"", "re")
    assert res.lines == 0 and not res.hits


def test_keyword_memory_is_bounded() -> None:
    data = b"".join(b"error number %d\n" % i for i in range(5000))
    res = _scan(data, "re", chunk=16 * 1024)
    assert res.lines == 5000
    assert 0 < len(res.keywords) <= 400
    assert res.keywords[-1].line == 5000


@pytest.mark.parametrize("engine", ENGINES)
def test_the_last_keyword_lines_are_kept_whichever_chunks_hold_them(engine: str) -> None:
    # Keyword lines spread over the chunks in memory (the newest holding fewer than are kept): the last 400 of them,
    # in order, with their text, as counted from the log's start; lines with no keyword or several are counted once.
    pad = b" " + b"." * 90  # 160 lines a chunk: the last 400 lie in three
    rows = [b"error number %d%s" % (i, pad) if i % 3 else b"plain %d, an error and a failure%s" % (i, pad)
            for i in range(3000)]
    rows[2990:] = [b"quiet %d" % i for i in range(2990, 3000)]
    res = _scan(b"\n".join(rows) + b"\n", engine, chunk=16 * 1024)
    expected = [(n + 1, rows[n].decode()) for n in range(2990)][-400:]
    assert [(m.line, m.text) for m in res.keywords] == expected


@pytest.mark.skipif(not hyperscan_available(), reason="no hyperscan wheel")
def test_unscannable_user_trigger_is_a_config_error() -> None:
    from repopilot.ci.catalog import Catalog, load_rule_files
    from repopilot.core import ConfigError

    bad = load_rule_files([("u.toml", b"""
format = 1
[[rule]]
id = "u.bad"
category = "build"
ecosystem = "x"
tool = "x"
trigger = '(?>ab)c'
confidence = 0.9
hint = "h"
[[rule.example]]
text = "abc"
match = true
[[rule.example]]
text = "b"
match = false
""")])
    with pytest.raises(ConfigError, match="cannot be scanned"):
        Scanner(Catalog(version="1", rules=bad.rules), engine="hyperscan")


def test_falls_back_to_re_without_hyperscan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # `import hyperscan` now raises ImportError
    assert not hyperscan_available()
    sc = Scanner(load_catalog())
    assert sc.engine.name == "re"
    res = sc.scan(io.BytesIO((FIXTURES / "go-build-error.log").read_bytes()))
    assert res.engine == "re" and any(h.rule.id == "go.build-error" for h in res.hits)


def test_huge_line_is_truncated_not_buffered() -> None:
    data = b"start\n" + b"x" * (3 * 1024 * 1024) + b" --- FAIL: TestLate (0.1s)\n--- FAIL: TestNext (0.2s)\n"
    res = _scan(data, "re", chunk=64 * 1024)
    assert res.lines == 3 and res.size == len(data)
    assert [h.line for h in res.hits if h.rule.id == "go.test-failed"] == [3]


@pytest.mark.parametrize("engine", ENGINES)
def test_one_scanner_serves_several_threads_at_once(engine: str) -> None:
    """The service's worker runs jobs side by side with one cached scanner (hyperscan's scratch space serves one
    scan at a time: each thread needs its own)."""
    from concurrent.futures import ThreadPoolExecutor

    data = b"".join((FIXTURES / name).read_bytes() for name in sorted(p.name for p in FIXTURES.glob("*.log")))
    scanner = Scanner(load_catalog(), engine=engine, chunk_size=64 * 1024)
    expected = _summary(scanner.scan(io.BytesIO(data)))
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: _summary(scanner.scan(io.BytesIO(data))), range(24)))
    assert expected and all(r == expected for r in results)



@pytest.mark.parametrize("engine", ENGINES)
def test_escapes_inside_matched_words_change_no_hit_or_line(engine: str) -> None:
    plain = (b"[INFO] Compiling 3 source files\n"
             b"[ERROR] /w/src/main/java/A.java:[12,5] cannot find symbol\n"
             b"  symbol:   class Foo\n"
             b"[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.8.1:compile\n"
             b"[INFO] BUILD FAILURE\n")
    # As Maven colours it, and worse: inside the word, a charset reset (`tput sgr0`), a hyperlink.
    coloured = (b"[\x1b[1;34mINFO\x1b[m] Compiling 3 source files\n"
                b"[\x1b[1;31mERROR\x1b[m] /w/src/main/java/A.java:[12,5] cannot find symbol\x1b(B\x1b[m\n"
                b"  symbol:   \x1b]8;;https://x\x07class Foo\x1b]8;;\x07\n"
                b"[\x1b[1;31mER\x1b[0;1;31mROR\x1b[m] Failed to execute goal \x1b[32morg.apache.maven.plugins:"
                b"maven-compiler-plugin:3.8.1:compile\x1b[m\n"
                b"[\x1b[1;34mINFO\x1b[m] \x1b[1;31mBUILD FAILURE\x1b[m\n")
    ref, got = _scan(plain, engine), _scan(coloured, engine)
    assert {h.rule.id for h in ref.hits} >= {"maven.compile-error"}
    assert _summary(got) == _summary(ref)
    assert got.lines == ref.lines == 5
    assert got.text == ref.text
    assert [h.fields for h in got.hits] == [h.fields for h in ref.hits]
