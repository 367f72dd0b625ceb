"""The next piece of a big log read, cleaned and scanned by the engine in a thread while the scan works on this one.

Hyperscan lets go of the interpreter lock while it scans, and so does reading a file: in a thread they overlap the
per-line Python work on the piece before (locating matches, growing blocks), which holds the lock; cleaning holds
it too, so only those two overlap. The pieces come out in order, each with its matches, exactly as a scan in turn
would give them, and only one piece is read ahead (its bytes and its cleaning: a few hundred KB). A log of one piece
never starts the thread.
(Forked workers scanning parts of a file, ci/split.py, each scan in turn: they already keep the CPUs busy.)

glibc gives each thread that allocates a malloc arena of its own; the pieces read ahead are allocated in the
thread's and freed by the scan's, and what that leaves in the second arena grew with the log (2.5 MB more peak
memory at 500 MB, none at 10). The process keeps one arena (`M_ARENA_MAX`; the interpreter lock serialises
allocation anyway), set before the first thread reads ahead.
"""

from __future__ import annotations

import functools
import itertools
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from .native import Found as Matches

__all__ = ["one_malloc_arena", "scanned_ahead"]

P = TypeVar("P")
_DONE = object()
_M_ARENA_MAX = -8  # glibc's malloc.h


def scanned_ahead(pieces: Iterable[P], scan: Callable[[P], Matches | None]) -> Iterator[tuple[P, Matches | None]]:
    """Each piece with `scan(piece)`; after the first, the next piece is read and scanned in a thread while the
    caller works on this one (one at a time: the scan's memory grows by one piece). `scan` is called by one thread
    at a time: a hyperscan scratch space may serve it."""
    it = iter(pieces)
    first = next(it, None)
    if first is None:
        return
    second = next(it, None)
    if second is None:
        yield first, scan(first)
        return
    matches = scan(first)  # before the thread starts: never two scans at once
    one_malloc_arena()
    out: queue.SimpleQueue[object] = queue.SimpleQueue()
    go = threading.Semaphore(0)  # one more piece may be read
    stop = threading.Event()
    worker = threading.Thread(target=_work, args=(itertools.chain([second], it), scan, out, go, stop), daemon=True,
                              name="repopilot-scan-ahead")
    worker.start()
    try:
        go.release()
        yield first, matches
        while (got := out.get()) is not _DONE:
            if isinstance(got, BaseException):
                raise got
            go.release()
            yield got  # type: ignore[misc]
    finally:
        stop.set()
        worker.join()


def _work(pieces: Iterator[P], scan: Callable[[P], Matches | None], out: queue.SimpleQueue[object],
          go: threading.Semaphore, stop: threading.Event) -> None:
    try:
        while True:
            while not go.acquire(timeout=0.05):
                if stop.is_set():
                    return
            if stop.is_set():
                return
            piece = next(pieces, _DONE)
            if piece is _DONE:
                break
            out.put((piece, scan(piece)))  # type: ignore[arg-type]
        got: object = _DONE
    except BaseException as exc:  # handed to the scan's thread, which raises it
        got = exc
    out.put(got)


@functools.cache
def one_malloc_arena() -> bool:
    """Whether the C library now keeps one malloc arena for the process (glibc; elsewhere nothing is changed)."""
    try:
        import ctypes  # only a log of more than one piece gets here (the import costs a few milliseconds)

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_ARENA_MAX, 1))
