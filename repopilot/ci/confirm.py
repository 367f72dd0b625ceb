"""Hyperscan's scan of a piece with prefilters in place of the costly scan forms, and their matches confirmed.

The catalog's database holds, for a scan form that hyperscan would follow through every line's first word, a cheaper
prefilter (ci/prefilter.py). The lines its matches fall on are gathered (a few hundred KB per 50 MB) and scanned
again with a second database of the exact forms; only what that finds is reported, at the line it was found on. So
the flagged lines and their pattern ids are the ones the exact forms give (what any scan of the log answers stays
the same), for a small part of what the exact forms cost over the whole log.

Also run by the helper that scans ahead (ci/ahead.py), which imports nothing of RepoPilot but this module, `pieces`
and the C extension: hence the engines and the extension are passed in, and the database travels as one payload.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable
from typing import Any

__all__ = ["Prefiltered", "pack", "unpack"]

_SIZES = struct.Struct("<qqq")  # the payload: the sizes of the database, the exact forms' database and the mask


def pack(database: bytes, exact: bytes, mask: bytes) -> bytes:
    """One payload of a serialised database, the serialised database of the exact forms (empty: none) and the mask
    of the prefilters' pattern ids."""
    return _SIZES.pack(len(database), len(exact), len(mask)) + database + exact + mask


def unpack(payload: bytes) -> tuple[bytes, bytes, bytes]:
    """What `pack` put together (ValueError when it is not a payload)."""
    if len(payload) < _SIZES.size:
        raise ValueError("not a database payload")
    a, b, c = _SIZES.unpack_from(payload)
    if a < 0 or b < 0 or c < 0 or _SIZES.size + a + b + c != len(payload):
        raise ValueError("not a database payload")
    at = _SIZES.size
    return payload[at:at + a], payload[at + a:at + a + b], payload[at + a + b:]


class Prefiltered:
    """A database whose prefilters' matches are confirmed by a second one (`exact`, None when it has none).
    `mask[pid]` is 1 for a pattern id whose form in `database` is a prefilter."""

    def __init__(self, hyperscan: Any, database: Any, exact: Any | None, mask: bytes) -> None:
        self._hs = hyperscan
        self.database = database
        self.exact = exact if any(mask) else None
        self.mask = mask

    def scratches(self) -> tuple[Any, Any | None]:
        """A scratch space for each database (one scan at a time uses them)."""
        hs = self._hs
        return hs.Scratch(self.database), (hs.Scratch(self.exact) if self.exact is not None else None)

    def scan(self, data: bytes, scratches: tuple[Any, Any | None], native: Any | None) -> Any:
        """(end offset, pattern id) of every match in `data`: the extension's `Matches` when `native` is the
        extension, else a list."""
        if native is not None and not hasattr(native.Matches, "take_lines"):
            native = None  # an extension built before it had take_lines (an editable install not rebuilt)
        if native is not None:
            found = native.Matches()
            self.database.scan(data, match_event_handler=found, scratch=scratches[0])
            if self.exact is not None:
                joined, starts, offsets = found.take_lines(data, self.mask)
                self._rescan(joined, starts, offsets, found, scratches[1])
            return found
        out: list[tuple[int, int]] = []
        append = out.append

        def on_match(pid: int, start: int, end: int, flags: int, context: Any) -> None:
            append((end, pid))

        self.database.scan(data, match_event_handler=on_match, scratch=scratches[0])
        if self.exact is None:
            return out
        mask = self.mask
        taken = [m for m in out if m[1] < len(mask) and mask[m[1]]]
        kept = [m for m in out if not (m[1] < len(mask) and mask[m[1]])]
        joined, starts, offsets = _lines(data, taken)
        self._rescan(joined, starts, offsets, lambda pid, start, end, flags, context: kept.append((end, pid)),
                     scratches[1])
        return kept

    def _rescan(self, joined: bytes, starts: list[int], offsets: list[int], report: Callable[..., Any],
                scratch: Any) -> None:
        """Scan the gathered lines (`joined`; each starts at `offsets[k]` there and `starts[k]` in the piece) with
        the exact forms; `report` what they find, with its end offset in the piece (as hyperscan's callback: id,
        from, to, flags, context)."""
        exact = self.exact
        if not starts or exact is None:
            return

        def on_match(pid: int, start: int, end: int, flags: int, context: Any) -> None:
            k = bisect.bisect_right(offsets, max(end - 1, 0)) - 1
            report(pid, 0, starts[k] + end - offsets[k], 0, None)

        exact.scan(joined, match_event_handler=on_match, scratch=scratch)


def _lines(data: bytes, taken: list[tuple[int, int]]) -> tuple[bytes, list[int], list[int]]:
    """The lines of `data` that matches `taken` fall on, each once: (joined by newlines, where each starts in
    `data`, where each starts in the joined bytes). `Matches.take_lines` in Python."""
    starts: list[int] = []
    parts: list[bytes] = []
    rfind, find = data.rfind, data.find
    for end, _ in taken:  # by end offset: the matches of one line come together
        at = min(end - 1 if end else 0, len(data) - 1)
        start = rfind(b"\n", 0, at) + 1
        if starts and start == starts[-1]:
            continue
        stop = find(b"\n", at)
        parts.append(data[start:stop if stop >= 0 else len(data)])
        starts.append(start)
    offsets: list[int] = []
    at = 0
    for part in parts:
        offsets.append(at)
        at += len(part) + 1
    return b"\n".join(parts), starts, offsets


def load(payload: bytes, hyperscan: Any) -> Prefiltered:
    """The `Prefiltered` a payload describes (hyperscan's errors when a database does not load here)."""
    database, exact, mask = unpack(payload)
    mode = hyperscan.HS_MODE_BLOCK
    return Prefiltered(hyperscan, hyperscan.loadb(database, mode), hyperscan.loadb(exact, mode) if exact else None,
                       mask)
