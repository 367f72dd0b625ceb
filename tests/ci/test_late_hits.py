"""The latest hits of rules past their cap cost a fixed budget however many rules fire and however long the log:
the newest are kept, the rest counted."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from repopilot.ci import late
from repopilot.ci.late import LATE, LateHit, LateHits
from repopilot.ci.window import Chunk


def _chunk(first: int) -> Chunk:
    return Chunk(b"x\n" * 1000, first, 1000)


def test_only_the_newest_candidates_of_a_leaving_chunk_are_checked() -> None:
    capped: dict[str, int] = {}
    hits = LateHits(capped)
    old, new = _chunk(1), _chunk(1001)
    for n in range(1, 201):  # 200 candidates of 40 rules on the old chunk
        hits.add(n, (0,), (f"r{n % 40}",), old, False)
    for n in range(1001, 1001 + late._TOTAL - 10):  # and almost a full budget of newer ones
        hits.add(n, (0,), (f"r{n % 40}",), new, False)
    checked = hits.leaving(old)
    assert [i.line for i in checked] == list(range(191, 201))  # the latest 10: room for no more
    assert sum(capped.values()) == 190


def test_kept_bytes_stay_within_the_budget_and_the_oldest_give_way() -> None:
    capped: dict[str, int] = {}
    hits = LateHits(capped)
    chunk = _chunk(1)
    rules = [SimpleNamespace(id=f"r{k}") for k in range(100)]
    for n in range(1, 1001):
        rule = rules[n % 100]
        hits.add(n, (0,), (rule.id,), chunk, False)
    for item in hits.unchecked():
        item.found = [(rule_of(item.line, rules), {}, "m")]  # type: ignore[list-item]
        hits.keep(item, b"y" * 1000, 0, 1000, 0)
    latest = hits.latest()
    assert len(latest) == late._TOTAL
    assert [i.line for i in latest] == list(range(1001 - late._TOTAL, 1001))
    assert sum(capped.values()) == 1000 - late._TOTAL  # the others counted
    assert late._TOTAL * 1000 <= late._BUDGET


def test_a_rule_keeps_its_latest_and_at_most_late_of_them() -> None:
    hits = LateHits({})
    chunk = _chunk(1)
    rule = SimpleNamespace(id="r")
    for n in range(1, 3 * LATE):
        hits.add(n, (0,), ("r",), chunk, False)
    for item in hits.unchecked():
        item.found = [(rule, {}, "m")]  # type: ignore[list-item]
        hits.keep(item, b"y", 0, 1, 0)
    assert [i.line for i in hits.latest()] == list(range(2 * LATE, 3 * LATE))


def rule_of(n: int, rules: list[SimpleNamespace]) -> SimpleNamespace:
    return rules[n % 100]


def _held_bytes(hits: LateHits) -> int:
    return sum(len(e.data) for e in hits._held.values())


def test_sparse_kept_hits_copy_their_lines_out_and_let_their_chunk_go() -> None:
    hits = LateHits({})
    rule = SimpleNamespace(id="r")
    chunks = [bytes([65 + k % 26]) * 1023 + b"\n" for k in range(40)]  # each a 1 KB chunk of its own
    big = [c * 256 for c in chunks]  # 256 KB each, one kept hit on each
    for k, data in enumerate(big):
        n = k + 1
        hits.add(n, (0,), ("r",), None, False)
        item = hits.queues["r"].items()[-1]
        item.found = [(rule, {}, "m")]  # type: ignore[list-item]
        hits.keep(item, data, 1024, 3072, 0)  # lines 2 and 3 of the chunk
    # Only the chunk checked last is held; the older hits copied their two lines out.
    assert _held_bytes(hits) == len(big[-1])
    kept = [i for i in hits.queues["r"].items() if i.size]
    assert all(len(i.data) == 2048 for i in kept[:-1]) and kept[-1].data is big[-1]
    assert all(i.data[i.lo:i.hi] == chunks[i.line - 1] * 2 for i in kept)
    assert [i.window().get(i.line) for i in kept[:1]] == [chunks[kept[0].line - 1][:-1].decode()]


def test_dense_kept_hits_share_their_chunk_until_too_few_are_left() -> None:
    hits = LateHits({})
    rules = [SimpleNamespace(id=f"r{k}") for k in range(100)]
    line = b"L" * 1023 + b"\n"  # 1 KB lines
    chunks = [line * 256 for _ in range(8)]  # 256 KB chunks, 31 hits on each, 32 KB kept around each
    n = most_copied = 0
    for data in chunks:
        for k in range(31):
            n += 1
            rule = rules[n % 100]
            hits.add(n, (0,), (rule.id,), None, False)
            item = hits.queues[rule.id].items()[-1]
            item.found = [(rule, {}, "m")]  # type: ignore[list-item]
            lo = max(0, k * 8 * 1024 - 16 * 1024)
            hits.keep(item, data, lo, min(len(data), lo + 32 * 1024), k * 8 * 1024 - lo)
            # What late hits hold never passes what they keep plus the chunk being checked.
            kept_bytes = sum(i.size for q in hits.queues.values() for i in q.items() if i.size)
            copies = [len(i.data) for q in hits.queues.values() for i in q.items()
                      if i.size and not any(i.data is c for c in chunks)]
            assert _held_bytes(hits) + sum(copies) <= kept_bytes + len(data)
            most_copied = max(most_copied, len(copies))
    kept = sorted((i for q in hits.queues.values() for i in q.items() if i.size), key=lambda i: i.line)
    assert len(kept) == late._TOTAL  # the newest, over four chunks and four hits
    # Hits share their chunk; only those left on a chunk that most of its hits gave way on copied their lines
    # out, fewer than a chunk's worth at any time (a fixed hold of 1 MB copied all those on the oldest chunk).
    copied_items = [i for i in kept if not any(i.data is c for c in chunks)]
    assert 0 < len(copied_items) <= most_copied < 8
    assert {id(e.data) for e in hits._held.values()} == {id(i.data) for i in kept if i not in copied_items}
    assert all(i.window().get(i.line) == line[:-1].decode() for i in kept)


def _run_rejecting(hits: LateHits) -> None:
    """Candidates of 20 rules over 200 chunks; the check rejects four in five, keeps the rest."""
    rules = [SimpleNamespace(id=f"r{k}") for k in range(20)]
    n = 0
    chunks: list[Chunk] = []
    for c in range(200):
        chunk = _chunk(1 + 1000 * c)
        chunks.append(chunk)
        for k in range(30):
            n = chunk.first + k
            hits.add(n, (0,), (rules[k % 20].id, rules[(k + 1) % 20].id) if k % 9 == 0 else (rules[k % 20].id,),
                     chunk, False)
        if len(chunks) > 3:
            for item in hits.leaving(chunks[-4]):
                item.chunk = None
                if item.line % 5 == 0:
                    item.found = [(rules[int(item.rule_ids[0][1:])], {}, "m")]  # type: ignore[list-item]
                    hits.keep(item, b"y" * 100, 0, 100, 0)


def test_dead_candidates_are_let_go_and_the_same_ones_are_kept_and_counted(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    capped: dict[str, int] = {}
    hits = LateHits(capped)
    _run_rejecting(hits)
    held = sum(len(q.slots) for q in hits.queues.values())
    latest = [(i.line, i.found[0][0].id) for i in hits.latest()]
    # The same run with every dead candidate kept in its queue, as before they were let go.
    monkeypatch.setattr(LateHits, "_let_dead_go", lambda self: None)
    ref_capped: dict[str, int] = {}
    ref = LateHits(ref_capped)
    _run_rejecting(ref)
    assert latest == [(i.line, i.found[0][0].id) for i in ref.latest()] and latest
    assert capped == ref_capped and sum(capped.values()) > 0
    assert [i.line for i in hits.unchecked()] == [i.line for i in ref.unchecked()]
    ref_held = sum(len(q.slots) for q in ref.queues.values())
    assert ref_held == 20 * late._ROOM  # every queue full, mostly of dead candidates
    live = {id(i) for q in hits.queues.values() for i in q.items()}
    # The kept ones, the candidates on the chunks in memory, and those of the chunks checked since dead ones were
    # last let go (every `_LET_GO_EVERY` chunks).
    assert held < ref_held / 3 and len(live) <= late._TOTAL + (3 + late._LET_GO_EVERY) * 30


def _run_dense(hits: LateHits) -> None:
    """One rule on most lines of 20 chunks (its queue turns over within a chunk still in memory), a second on
    every seventh; the check keeps every third."""
    rules = [SimpleNamespace(id="dense"), SimpleNamespace(id="sparse")]
    chunks: list[Chunk] = []
    for c in range(20):
        chunk = _chunk(1 + 1000 * c)
        chunks.append(chunk)
        for k in range(0, 1000, 3):
            hits.add(chunk.first + k, (0,), ("dense", "sparse") if k % 7 == 0 else ("dense",), chunk, False)
        if len(chunks) > 3:
            for item in hits.leaving(chunks[-4]):
                item.chunk = None
                if item.line % 3 == 0:
                    item.found = [(rules[0], {}, "m")]  # type: ignore[list-item]
                    hits.keep(item, b"y" * 100, 0, 100, 0)


@pytest.mark.parametrize("run", [_run_rejecting, _run_dense])
def test_the_queued_candidates_on_chunks_in_memory_are_counted_as_they_change(run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen: list[tuple[int, int]] = []
    leaving = LateHits.leaving

    def checked(self: LateHits, chunk: Chunk) -> list[LateHit]:
        out = leaving(self, chunk)
        # What `leaving` cut by: the count kept as candidates come and go, against a sum over them all.
        seen.append((self._live, sum(1 for w in self._waiting.values() for i in w if i.queued)))
        return out

    monkeypatch.setattr(LateHits, "leaving", checked)
    hits = LateHits({})
    run(hits)
    assert len(seen) > 10 and all(a == b for a, b in seen) and max(b for _, b in seen) > 0
