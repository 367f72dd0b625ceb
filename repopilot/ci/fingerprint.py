"""Failure fingerprints: one stable identity per failure, so the same failure on a re-run, on another runner or on
another day is recognised as the same one (history, attribution, one issue per recurring failure).

A fingerprint hashes what the failure *is*: the rule that found it (or `locator` for lines the locator chose),
its category, its message with everything that varies between runs masked (numbers, hashes, addresses,
durations, temporary and workspace paths, ports, timestamps, random seeds), and the file and test it names.
Line numbers are left out on purpose: an unrelated edit above a failing assertion must not make it a new
failure. Standard library only; `bench/fingerprints.py` measures how stable and how distinct they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from .digest import sha256
from .words import ascii_lower, may_hold

__all__ = ["CONSEQUENCES", "FINGERPRINT_VERSION", "fingerprint", "identifies", "normalise_message", "normalise_path",
           "normalise_test", "short_fingerprint"]

FINGERPRINT_VERSION = "1"
_LENGTH = 16  # hex digits: 64 bits, so distinct failures never meet by chance
_CONTEXT_LINES = 12
LOCATOR = "locator"  # the rule name of lines the locator chose (ci/located.py)
# Lines that only say that something failed, or hold no words at all (a caret line under an error): they name no
# failure, and whether a CI system prints them differs (only GitHub writes "Process completed with exit code").
_NOT_IDENTIFYING = re.compile(r"^(?:##\[error\])?(?:Error: )?Process completed with exit code (?!137\b|143\b)-?\d+\.?$"
                              r"|^[^A-Za-z]*(?:[A-Za-z][^A-Za-z]*){0,2}$")

# Order matters: the specific shapes first (a timestamp before its numbers, a temp path before its digits).
_MASKS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), r) for p, r in (
    # ISO timestamps and dates, clock times (with fractions), syslog-style dates
    (r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?", "<time>"),
    (r"\b\d{1,2}:\d\d:\d\d(?:[.,]\d+)?\b", "<time>"),
    (r"\b(?:mon|tue|wed|thu|fri|sat|sun)\w*,? +\w{3} +\d{1,2}\b", "<time>"),
    # UUIDs, long hex runs (commit hashes, digests, object ids), memory addresses
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uuid>"),
    (r"\b0x[0-9a-f]+\b", "<addr>"),
    (r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", "<hash>"),
    (r"\b(?:sha\d*|md5)[:-][0-9a-z+/=]{8,}", "<hash>"),
    # Temporary directories of every platform and tool, up to the next separator after the random part
    (r"(?:/private)?/(?:tmp|var/tmp|var/folders/[^/\s]+/[^/\s]+/[^/\s]+)/[^\s:'\"),\]]*", "<tmp>"),
    (r"[a-z]:\\users\\[^\\\s]+\\appdata\\local\\temp\\[^\s:'\"),\]]*", "<tmp>"),
    (r"\bpytest-of-[^/\s]+/pytest-\d+/[^\s:'\"),\]]*", "<tmp>"),
    # Random seeds, process ids, ports
    (r"\b(?:seed|random(?:ly)?[-_ ]seed|hypothesis[-_ ]seed)\b[\s=:]*-?\d+", "seed=<n>"),
    (r"\b(?:with|using) seed \d+", "seed=<n>"),
    (r"\bpid[\s=:]*\d+", "pid=<n>"),
    (r"\bport[\s=:]*\d+", "port=<n>"),
    (r"(?<=[a-z0-9\]])(?::\d{2,5})(?=[/\s'\"),]|$)", ":<port>"),
    # Durations: "1.23s", "120 ms", "in 3.4 seconds", "(0:00:01)"
    (r"\b\d+(?:\.\d+)?\s*(?:ns|us|µs|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)\b", "<dur>"),
))
# Words one of which every match of each mask holds, lower-case (None: the mask is always tried): a text holding
# none is not tried (ci/words.py), so a fingerprint costs a fraction of the sixteen searches
# (tests/ci/test_fingerprint_words.py checks every match holds one, and that the masked text is the same).
_MASK_WORDS: tuple[tuple[str, ...] | None, ...] = (
    ("-",), (":",), ("fri", "mon", "sat", "sun", "thu", "tue", "wed"), ("-",), ("0x",), None, ("md5", "sha"),
    ("tmp", "var/folders/"), ("\\appdata\\local\\temp\\",), ("pytest-of-",), ("seed",), ("seed",), ("pid",),
    ("port",), (":",), None,
)
_WORKSPACE_WORDS = ("/", ":")
# CI workspaces: where each runner checks the project out. What follows is the project's own path.
_WORKSPACES = re.compile(
    r"^(?:/home/runner/work/[^/]+/[^/]+/|/__w/[^/]+/[^/]+/|[a-z]:[\\/]a[\\/][^\\/]+[\\/][^\\/]+[\\/]"
    r"|/builds/[^/]+/[^/]+/|/home/travis/build/[^/]+/[^/]+/|/var/(?:lib/)?jenkins/workspace/[^/]+/"
    r"|/srv/ci/[^/]+/|/github/workspace/|/workspace/|/app/|/src/)", re.IGNORECASE)
# Numbers standing alone (not part of a word such as `E0308`, `TS2345`, `py311`, `utf8`).
_NUMBER = re.compile(r"(?<![A-Za-z_<])[-+]?\d+(?:[.,]\d+)*(?![A-Za-z_>])")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=4096)
def normalise_message(text: str) -> str:
    """The message with everything that varies between runs of the same failure masked. Remembered: a report's
    failures share lines (a failure repeated, context lines a summary quotes) and the text alone decides it."""
    # (Colour codes are gone already: messages are made from the log reader's clean lines, ci/lines.py.)
    text = _masked(text, _MASKS, _MASK_WORDS)
    if not text.isascii() or any(w in text for w in _WORKSPACE_WORDS):
        text = _workspace_paths(text)
    text = _NUMBER.sub("<n>", text)
    return _SPACE.sub(" ", text).strip()


def _workspace_paths(text: str) -> str:
    # A workspace prefix inside a message (`/home/runner/work/app/app/src/x.py:3`) is cut to the project path.
    return re.sub(r"(?<![\w.])(?:/|[a-z]:[\\/])[^\s:'\"),\]]+",
                  lambda m: _WORKSPACES.sub("", m.group(0)) or m.group(0), text, flags=re.IGNORECASE)


def normalise_path(path: str | None) -> str:
    """A file as the project names it: the CI workspace (or temporary directory) prefix cut, separators unified."""
    if not path:
        return ""
    text = path.strip().replace("\\", "/")
    text = _WORKSPACES.sub("", text)
    text = re.sub(r"^(?:/private)?/(?:tmp|var/tmp)/[^/]+/", "", text)
    return text.removeprefix("./")


def normalise_test(test: str | None) -> str:
    """A test id without what varies per run: addresses, hashes, temporary paths (parameters stay: `[3]` is a
    different case from `[4]`)."""
    if not test:
        return ""
    return _masked(test.strip(), _MASKS[3:9], _MASK_WORDS[3:9])  # uuids, addresses, hashes, temporary paths


def _masked(text: str, masks: Sequence[tuple[re.Pattern[str], str]], words: Sequence[tuple[str, ...] | None]) -> str:
    """`text` with each of `masks` applied in turn, those whose `words` it lacks skipped (see _MASK_WORDS)."""
    low = ascii_lower(text)
    for (pattern, replacement), needs in zip(masks, words, strict=True):
        if not may_hold(needs, low):
            continue
        masked = pattern.sub(replacement, text)
        if masked != text:
            text = masked
            low = ascii_lower(text)
    return text


def fingerprint(*, rule: str, category: str, message: str, file: str | None = None, test: str | None = None,
                lines: Sequence[str] = ()) -> str:
    """The failure's identity: 16 hex digits of a hash over its rule, category, masked message, file and test.

    A failure that names neither a file nor a test (a summary such as "The following tests FAILED:") would share
    its message with every other failure of its tool; its masked `lines` (as a set: parallel output interleaves
    differently on each run) tell them apart."""
    context = ""
    if not file and not test and rule != LOCATOR:  # the locator's message is already the block's own head line
        context = "\x1e".join(sorted({normalise_message(t) for t in lines[:_CONTEXT_LINES]} - {""}))
    # The locator's category is the verdict's guess for the whole log (it may change with the steps around);
    # a rule's category is the rule's own.
    parts = (FINGERPRINT_VERSION, rule, "" if rule == LOCATOR else category, normalise_message(message),
             normalise_path(file), normalise_test(test), context)
    return sha256("\x1f".join(parts).encode("utf-8", "backslashreplace")).hexdigest()[:_LENGTH]


# Rules whose finding is the consequence of another failure (make reporting a recipe failed, Maven's goal and
# test summaries, go's "[build failed]", an `##[error]` annotation): the same for many different failures, so
# they identify a job's failure only when nothing more specific is causal.
CONSEQUENCES = frozenset({"make.target-failed", "maven.goal-failed", "maven.test-failures", "surefire.summary",
                          "go.build-failed-package", "shell.archive-error", "github.error-annotation"})


def identifies(message: str) -> bool:
    """Whether a failure with this message names what failed (not only that something did)."""
    return not _NOT_IDENTIFYING.match(message.strip())


def short_fingerprint(fp: str) -> str:
    """The form people read: the first 8 digits (the full one is in JSON and the history)."""
    return fp[:8]
