"""The rule-independent locator: a line-relevance model that ranks the lines of any log, whatever the tool.

It never reads the whole log. Its candidates are the lines the scan already holds: the keyword lines near the
end, the blocks rules flagged, the lines before each failing step's exit marker and the log's tail. Each
candidate gets features of the line (error words and where they sit, `path:line[:col]` shapes, indentation and
continuation, summary and trailer shapes, how rare its template is among the candidates), of its place (distance
to the exit marker or the end, inside the failing step, after the last command) and of the log's shape (GitHub
groups, Azure Pipelines sections, GitLab sections, Travis folds, Jenkins stages, plain). A logistic model trained
offline (bench/train_locator.py) turns them into a probability; its weights are data (`locator_weights.json`), read
with the standard library. Inference is deterministic and explains itself: every chosen line keeps its top features.
"""

from __future__ import annotations

import json
import math
import re
import weakref
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from .scanner import ScanResult
from .words import ascii_lower, may_hold

# The package's own data files, read from the installed package (a wheel or a checkout: both are files on disk;
# importlib.resources and what it imports cost about 2 ms of every `diagnose`).
_HERE = Path(__file__).parent

__all__ = [
    "FEATURES",
    "Located",
    "LocatorModel",
    "Scored",
    "candidates",
    "default_model",
    "detect_shape",
    "feature_rows",
    "locate",
    "score_lines",
]

# Azure Pipelines first: its logs carry GitHub's `##[` markers too (the two runners share their lineage).
SHAPES = ("azure", "github", "gitlab", "travis", "jenkins", "plain")

# Line shapes. Each is searched on the display text of one candidate line.
_ERR_WORD = re.compile(r"\b(?:error|errors|fatal|failed|failure|failures|fail|panic|exception|abort(?:ed)?|"
                       r"crash(?:ed)?|segmentation fault|traceback)\b|ERR!|✗|✖|\u00d7|❌|💥", re.IGNORECASE)
_ERR_START = re.compile(r"^\s*(?:\[?(?:error|fatal|fail(?:ed|ure)?|panic|critical|exception)\b\]?|E\s{2,}|"
                        r"\w*(?:Error|Exception|Failure)\b:?|not ok\b|[✗✖\u00d7❌●]|-{3} FAIL|\(FAIL\))", re.IGNORECASE)
_ERR_PREFIX = re.compile(r"^\s*(?:\S+:\s*)?(?:error|fatal)(?:\[\w+\])?:", re.IGNORECASE)
_EXC_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Failure|Fault)\b")
_PROBLEM = re.compile(r"\b(?:cannot|can't|could not|couldn't|unable to|not found|no such|undefined|undeclared|"
                      r"missing|invalid|unexpected|unknown|unresolved|denied|refused|mismatch|incompatible|"
                      r"not defined|not allowed|expected|violat\w*|forbidden|timed? ?out|killed|out of memory|"
                      r"no space|would reformat|would be reformatted|reformatted|not formatted|differ)\b",
                      re.IGNORECASE)
_WARN = re.compile(r"\bwarn(?:ing)?s?\b|\bdeprecat\w*", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:0|no|zero) (?:errors?|failures?|failed|problems?|issues?)\b|\berrors?:? 0\b|"
                      r"\bfailures?: 0\b|\bwithout errors?\b|error_?reporting|on_?error|\berror[-_]\w", re.IGNORECASE)
# TAP's `not ok 3 - …` is a failure, not a success.
_SUCCESS = re.compile(r"\b(?:passed|passing|success(?:ful(?:ly)?)?|succeeded)\b|(?<!\bnot )\bok\b|✓|✔",
                      re.IGNORECASE)
_PATH_LINE = re.compile(r"[\w./\\-]+\.[A-Za-z]\w{0,9}(?::\d+|\(\d+(?:,\d+)?\)|:\[\d+(?:,\d+)?\])")
_PATH_LINE_COL = re.compile(r"[\w./\\-]+\.[A-Za-z]\w{0,9}(?::\d+:\d+|\(\d+,\d+\)|:\[\d+,\d+\])")
_LINE_WORD = re.compile(r"\bline \d+\b", re.IGNORECASE)
_FRAME = re.compile(r"^\s*\d{1,3}: \(|"  # a Lisp backtrace's numbered frame, `3: (ERROR ...)`
                    r"^\s+at [\w$.<>/]+[(\s]|^\s*File \".*\", line \d+|^\s*#\d+\s+0x[0-9a-f]+|^\s+\d+: 0x|"
                    r"^\s*\.\.\. \d+ more|^\s+[\w/.-]+\.(?:go|rs|rb|js|ts|py|php|ex|exs):\d+|^\s*from \S+:\d+:in")
_CARET = re.compile(r"^\s*(?:\d+\s*)?\|?\s*[\^~]+[\s\^~-]*$|^\s*\|\s*\^")
_ASSERT = re.compile(r"\bassert\w*|\bexpected\b|\bactual\b|\breceived\b|\bto (?:equal|be|have|match)\b|"
                     r"\bgot\b|!=|==|\bwant\b|\bdiffer|\bnot equal\b|\bshould (?:have been|be|equal)\b|"
                     r"\bbut (?:was|is)\b|\binstead of\b|\bmismatch(?:es|ed)?\b|\bresult was\b", re.IGNORECASE)
_SUMMARY = re.compile(r"\b\d+ (?:failed|errors?|passed|failures?|tests?|examples?|skipped|problems?|warnings?|"
                      r"files?)\b|\bTests run:|\btests? (?:failed|passed)\b", re.IGNORECASE)
_TRAILER = re.compile(r"(?:Process completed|exited|exit(?:ed)? (?:with )?(?:code|status)|returned exit code|"
                      r"Job failed|Build step|Finished: (?:FAILURE|ABORTED|UNSTABLE)|make(?:\[\d+\])?: \*\*\*|"
                      r"A complete log of this run|npm ERR! (?:code|errno|path|command|syscall|Lifecycle|"
                      r"Failed at|This is probably|A complete)|ELIFECYCLE|Command failed with exit code|"
                      r"BUILD FAILED|BUILD FAILURE|error: could not compile|Your build exited|"
                      r"FAILURE: Build failed with an exception)", re.IGNORECASE)
# npm's `> pkg@1.0 test` / `> jest` echo its scripts; Gradle's `> Task :test` and `> Could not find …` are its
# progress and its messages, not commands.
_COMMAND = re.compile(r"^(?:\$ |\+ |> (?![A-Z][a-z]+\b)|(?:##)?\[command\]|Run |##\[group\]Run )")
_RUNNER = re.compile(r"^(?:##\[(?:group|endgroup|debug|section)|\[Pipeline\]|section_(?:start|end):|travis_(?:fold|"
                     r"time):|Post job cleanup|Cleaning up orphan|Current runner version|Stage \")")
# A progress or status line begins with what it is doing (`Downloading x`, `  Compiling foo v0.1`, `[INFO] Building
# jar`, `#5 Pulling fs layer`); the same word inside a message (`not installed locally`, `while building`) is not.
_PROGRESS = re.compile(r"^\s*(?:\[[^\]]{1,20}\]\s*|#\d+\s+)?(?:Downloading|Downloaded|Download|Fetching|Installing|"
                       r"Installed|Collecting|Resolving|Requirement already|Compiling|Building|Checking|Running|"
                       r"Unpacking|Preparing|Using|Setting up|Get:\d+|Progress|Pulling|Extracting)\b|\d+%|\[=+",
                       re.IGNORECASE)
_ADVICE = re.compile(r"\b(?:you|your|please)\b", re.IGNORECASE)
# A heading that announces what is wrong and ends where the message begins (`* What went wrong:`, `Caused by:`,
# `Details:`, `The following files have no license:`): the next line states it.
_HEADING = re.compile(r"^\W{0,4}[\w ,'-]{0,60}\b(?:wrong|errors?|fail\w*|problems?|violations?|issues?|caused by|"
                      r"details|reason|cause)\s*:\s*$", re.IGNORECASE)
_LEVEL_INFO = re.compile(r"^\s*\[?(?:INFO|DEBUG|TRACE|NOTE|notice)\]?\b", re.IGNORECASE)
_LEVEL_ERR = re.compile(r"^\s*\[(?:ERROR|FATAL|SEVERE|CRITICAL|ERR)\]")
_GH_ERROR = re.compile(r"^##\[error\]")
_INDENT = re.compile(r"^(\s*)")
_TEMPLATE_TOKEN = re.compile(r"[^\s]*[\d/\\.:=][^\s]*|\"[^\"]*\"|'[^']*'")
_CONT = re.compile(r"^\s+\S|^\s*[|│>^~]")
_EXIT_MARKER = re.compile(
    r"^(?:##\[error\]Process completed with exit code|ERROR: Job failed|The command \".*\" exited with|"
    r"ERROR: script returned exit code|Build step '.*' marked build as failure|Finished: (?:FAILURE|ABORTED)|"
    r"Done\. Your build exited with [1-9])")

# The first character of every exit marker (`_EXIT_MARKER` is anchored at the line's start).
_EXIT_STARTS = frozenset("#ETBFD")
# Words one of which every match of a case-insensitive shape above holds, lower-case: a line holding none is not
# tried (ci/words.py). tests/ci/test_locator.py derives the words from each pattern, so a pattern edited without
# its words fails there.
_NEEDS: dict[re.Pattern[str], tuple[str, ...]] = {
    _ERR_WORD: ("err", "fatal", "fail", "panic", "exception", "abort", "crash", "segmentation fault", "traceback"),
    _PROBLEM: ("cannot", "can't", "could", "unable to", "not ", "no such", "undefined", "undeclared", "missing",
               "invalid", "expected", "unknown", "unresolved", "denied", "refused", "mismatch", "incompatible",
               "violat", "forbidden", "out", "killed", "no space", "reformat", "differ"),
    _WARN: ("warn", "deprecat"),
    _NEGATED: ("error", "fail", "problem", "issue"),
    _SUCCESS: ("pass", "succe", "ok"),
    _LINE_WORD: ("line ",),
    _ASSERT: ("assert", "expected", "actual", "received", "to ", "got", "!=", "==", "want", "differ", "not equal",
              "should ", "but ", "instead of", "mismatch", "result was"),
    _SUMMARY: ("fail", "error", "pass", "test", "example", "skipped", "problem", "warning", "file"),
    _TRAILER: ("process completed", "exit", "job failed", "build step", "finished: ", "make", "a complete log",
               "npm err! ", "elifecycle", "command failed", "build fail", "could not compile", "failure: build"),
    _PROGRESS: ("download", "fetching", "install", "collecting", "resolving", "requirement already", "compiling",
                "building", "checking", "running", "unpacking", "preparing", "using", "setting up", "get:",
                "progress", "pulling", "extracting", "%", "[="),
}
# Whether a line holds a `path:line` (or `path:line:col`), not where: a path's last character before the dot is
# then enough, looked behind from the dot (which `re` finds fast), instead of every run of path characters tried
# from every position. A pattern edited so that the rewrite no longer applies is used as it is.
_PATH_LINE_SEEN, _PATH_LINE_COL_SEEN = (re.compile(p.pattern.replace(r"[\w./\\-]+\.", r"(?<=[\w./\\-])\.", 1))
                                        for p in (_PATH_LINE, _PATH_LINE_COL))
# The same for `_EXC_NAME`, which is case-sensitive: its words are looked for in the line as it is.
_EXC_WORDS = ("Error", "Exception", "Failure", "Fault")


# The same words by the pattern's identity: a compiled pattern's hash is computed over all of its code at each
# look-up (0.3-1 us, ten look-ups a line), an int's is not.
_NEEDS_BY_ID = {id(pattern): words for pattern, words in _NEEDS.items()}


def _seen(pattern: re.Pattern[str], text: str, low: str | None) -> float:
    """1.0 if `pattern` matches `text` (whose lower-case form is `low` when it is ASCII, else None)."""
    return float(may_hold(_NEEDS_BY_ID[id(pattern)], low) and pattern.search(text) is not None)


_LINE_FEATURES = (
    "advice", "err_word", "err_start", "err_prefix", "exc_name", "problem", "warn", "negated", "success", "path_line",
    "path_line_col", "line_word", "frame", "caret", "assert", "summary", "trailer", "command", "runner",
    "progress", "level_info", "level_err", "gh_error", "blank", "indent", "indent_deep", "len_log", "upper_frac",
    "digit_frac", "punct_frac", "rare", "template_log", "first_of_template",
)
_PLACE_FEATURES = (
    "end_le5", "end_le20", "end_le60", "end_le200", "end_far", "after_end", "in_step", "after_command",
    "prev_err", "next_err", "cont_of_err", "near_err_density", "near_path_density", "block_pos",
    "after_heading", "under_warning",
)
FEATURES: tuple[str, ...] = (*_LINE_FEATURES, *_PLACE_FEATURES, *(f"shape_{s}" for s in SHAPES))


@dataclass(frozen=True)
class LocatorModel:
    """Logistic weights over FEATURES (standardised with `mean`/`scale`), and the decision thresholds."""

    features: tuple[str, ...]
    coef: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    threshold: float = 0.5
    max_lines: int = 40
    extend: float = 1.0  # a neighbour of a chosen line joins at threshold * extend
    info: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LocatorModel:
        feats = tuple(data["features"])
        n = len(feats)
        model = cls(features=feats, coef=tuple(float(x) for x in data["coef"]), bias=float(data["bias"]),
                    mean=tuple(float(x) for x in data.get("mean", [0.0] * n)),
                    scale=tuple(float(x) or 1.0 for x in data.get("scale", [1.0] * n)),
                    threshold=float(data.get("threshold", 0.5)), max_lines=int(data.get("max_lines", 40)),
                    extend=float(data.get("extend", 1.0)),
                    info=dict(data.get("info", {})))
        if not (len(model.coef) == len(model.mean) == len(model.scale) == n):
            raise ValueError("locator weights: features, coef, mean and scale differ in length")
        return model

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "coef": list(self.coef), "bias": self.bias,
                "mean": list(self.mean), "scale": list(self.scale), "threshold": self.threshold,
                "max_lines": self.max_lines, "extend": self.extend, "info": dict(self.info)}

    def contributions(self, row: Mapping[str, float]) -> list[tuple[str, float]]:
        return [(name, w * (row.get(name, 0.0) - mu) / sd)
                for name, w, mu, sd in zip(self.features, self.coef, self.mean, self.scale, strict=True)]

    def contribution_values(self, row: Mapping[str, float]) -> list[float]:
        """The values `contributions` gives, in its order, computed the same way: without a tuple each (a line is
        scored on about sixty features, and a small log's locator scores every candidate line)."""
        get = row.get
        return [w * (get(name, 0.0) - mu) / sd for name, w, mu, sd in self._terms]

    @cached_property
    def _terms(self) -> tuple[tuple[str, float, float, float], ...]:
        return tuple(zip(self.features, self.coef, self.mean, self.scale, strict=True))

    def probability(self, row: Mapping[str, float]) -> float:
        z = self.bias + sum(c for _, c in self.contributions(row))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@lru_cache(maxsize=1)
def default_model() -> LocatorModel:
    data = _HERE.joinpath("locator_weights.json").read_text(encoding="utf-8")
    return LocatorModel.from_dict(json.loads(data))


def load_model(path: Path) -> LocatorModel:
    return LocatorModel.from_dict(json.loads(path.read_text(encoding="utf-8")))


# Each CI system's markers by their first character: a line is compared only with the markers that begin as it
# does (every other line with none), in the order of SHAPES.
_MARKERS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "#": ((("##[section]", "##vso["), "azure"), (("##[",), "github")),
    "s": ((("section_start:", "section_end:"), "gitlab"),),
    "E": ((("ERROR: Job failed",), "gitlab"),),
    "t": ((("travis_",), "travis"),),
    "D": ((("Done. Your build exited",), "travis"),),
    "[": ((("[Pipeline]",), "jenkins"),),
    "F": ((("Finished: ",), "jenkins"),),
}


def detect_shape(texts: Iterable[str]) -> str:
    """The CI system that wrote the log, from the markers among the lines the scan kept."""
    seen = set()
    for t in texts:
        marks = _MARKERS.get(t[:1])
        if marks is None:
            continue
        for prefixes, shape in marks:
            if t.startswith(prefixes):
                if shape == SHAPES[0]:
                    return shape  # the first of SHAPES wins whatever else the lines show
                seen.add(shape)
                break
    for shape in SHAPES[:-1]:
        if shape in seen:
            return shape
    return "plain"


@dataclass
class Scored:
    """A candidate line's probability of being causal, and the features that raised it most."""

    line: int
    probability: float
    why: list[tuple[str, float]]  # the features that pushed it up most


@dataclass
class Located:
    """The locator's choice: the lines, best first as scored, and the blocks they form in line order."""

    lines: list[Scored]
    blocks: list[tuple[int, int]]
    shape: str
    end: int
    candidates: int


def _template(text: str) -> str:
    return _TEMPLATE_TOKEN.sub("*", text.strip().lower())[:60]


# Directories of a path: words in them (a project called `error-pages`, `tests/failing/`) say nothing of the line.
# What `(?:[^\s/\\]*[/\\])+(?=\S)` removes (a word's start up to its last separator that is not its last
# character), tried only where a word starts: that form was tried again at every character of a word without a
# separator, the most costly of a line's features (tests/ci/test_locator.py compares the two).
_DIRS = re.compile(r"(?<!\S)\S*[/\\](?=\S)")


def _line_row(text: str) -> dict[str, float]:
    s = text.rstrip()
    stripped = s.lstrip()
    n = len(stripped)
    indent = len(s) - n
    words = _DIRS.sub("", s) if "/" in s or "\\" in s else s
    low = ascii_lower(s)
    words_low = low if low is None or words is s else words.lower()
    # A `path:line:col` is a `path:line` too: the narrower shape is looked for only where the wider one is.
    path_line = _PATH_LINE_SEEN.search(s) is not None
    row = {
        "err_word": _seen(_ERR_WORD, words, words_low),
        "err_start": float(bool(_ERR_START.search(s))),
        "err_prefix": float(bool(_ERR_PREFIX.search(s))),
        "exc_name": float(any(w in words for w in _EXC_WORDS) and _EXC_NAME.search(words) is not None),
        "problem": _seen(_PROBLEM, words, words_low),
        "warn": _seen(_WARN, words, words_low),
        "negated": _seen(_NEGATED, words, words_low),
        "success": _seen(_SUCCESS, words, words_low),
        "path_line": float(path_line),
        "path_line_col": float(path_line and _PATH_LINE_COL_SEEN.search(s) is not None),
        "line_word": _seen(_LINE_WORD, s, low),
        "frame": float(bool(_FRAME.search(s))),
        "caret": float(bool(_CARET.search(s))),
        "assert": _seen(_ASSERT, words, words_low),
        "summary": _seen(_SUMMARY, s, low),
        "trailer": _seen(_TRAILER, s, low),
        "command": float(bool(_COMMAND.search(s))),
        "runner": float(bool(_RUNNER.search(s))),
        "progress": _seen(_PROGRESS, s, low),
        "level_info": float(bool(_LEVEL_INFO.search(s))),
        "level_err": float(bool(_LEVEL_ERR.search(s))),
        "gh_error": float(bool(_GH_ERROR.search(s))),
        "blank": float(n == 0),
        "indent": float(indent > 0),
        "indent_deep": float(indent >= 4),
        "len_log": math.log1p(n) / 5.0,
        # Advice speaks to the reader (`If you need a custom transformation, specify…`, `Please see…`); a tool's
        # statement of what went wrong seldom does.
        "advice": float(low is not None and ("you" in low or "please" in low) and _ADVICE.search(s) is not None),
    }
    if n and low is not None:
        # An ASCII line: the characters of each kind are those bytes.translate deletes, at C speed.
        data = stripped.encode("ascii")
        upper = n - len(data.translate(None, _ASCII_UPPER))
        digits = n - len(data.translate(None, _ASCII_DIGITS))
        row["upper_frac"] = upper / n
        row["digit_frac"] = digits / n
        row["punct_frac"] = len(data.translate(None, _ASCII_ALNUM_SPACE)) / n
    elif n:
        # Counted by str's own methods mapped over the line, not a generator step per character; no character
        # is both alphanumeric and a space (tests/ci/test_locator.py), so the rest is punctuation.
        row["upper_frac"] = sum(map(str.isupper, stripped)) / n
        row["digit_frac"] = sum(map(str.isdigit, stripped)) / n
        row["punct_frac"] = (n - sum(map(str.isalnum, stripped)) - sum(map(str.isspace, stripped))) / n
    return row


# The ASCII characters str.isupper, str.isdigit, and str.isalnum or str.isspace are true of, asked of each.
_ASCII_UPPER = bytes(c for c in range(128) if chr(c).isupper())
_ASCII_DIGITS = bytes(c for c in range(128) if chr(c).isdigit())
_ASCII_ALNUM_SPACE = bytes(c for c in range(128) if chr(c).isalnum() or chr(c).isspace())


def _is_errorish(row: Mapping[str, float]) -> bool:
    return bool(row.get("err_start") or row.get("err_prefix") or row.get("level_err") or row.get("exc_name")
                or (row.get("err_word") and not row.get("negated") and not row.get("warn")))


def find_end(texts: Mapping[int, str], total: int, step_error_line: int | None) -> int:
    """The line where the failing step or job ended: the GitHub step's exit marker, else the last exit trailer of
    another CI system among the candidates, else the last line."""
    if step_error_line:
        return step_error_line
    ends = [n for n, t in texts.items() if t[:1] in _EXIT_STARTS and _EXIT_MARKER.search(t)]
    return max(ends) if ends else total


def feature_rows(texts: Mapping[int, str], *, end: int, shape: str, step_start: int | None = None
                 ) -> dict[int, dict[str, float]]:
    """Features of every candidate line (`texts`: line number -> display text)."""
    order = sorted(texts)
    rows = {n: _line_row(texts[n]) for n in order}
    templates = {n: _template(texts[n]) for n in order}
    counts = Counter(templates.values())
    first_seen: set[str] = set()
    commands = [n for n in order if rows[n]["command"] and n <= end]
    last_command = commands[-1] if commands else 0
    errorish = {n for n in order if _is_errorish(rows[n])}
    paths = {n for n in order if rows[n]["path_line"]}
    headings = {n for n in order if texts[n].rstrip().endswith(":") and _HEADING.search(texts[n])}
    warned = _under_warning(order, texts, rows)
    shape_key = f"shape_{shape}"
    for i, n in enumerate(order):
        row = rows[n]
        c = counts[templates[n]]
        row["rare"] = float(c == 1)
        row["template_log"] = math.log1p(c) / 5.0
        row["first_of_template"] = float(templates[n] not in first_seen)
        first_seen.add(templates[n])
        dist = end - n
        row["after_end"] = float(dist < 0)
        if dist >= 0:
            key = ("end_le5" if dist <= 5 else "end_le20" if dist <= 20 else "end_le60" if dist <= 60
                   else "end_le200" if dist <= 200 else "end_far")
            row[key] = 1.0
        row["in_step"] = float(step_start is not None and step_start <= n <= end)
        row["after_command"] = float(last_command > 0 and last_command < n <= end)
        row["prev_err"] = float(n - 1 in errorish)
        row["next_err"] = float(n + 1 in errorish)
        above = n - 3 in errorish or n - 2 in errorish or n - 1 in errorish
        row["cont_of_err"] = float(above and bool(_CONT.search(texts[n])) and n not in errorish)
        # The others of the eleven lines around it that are error-like, and that hold a path (counted by the sets).
        near = range(n - 5, n + 6)
        row["near_err_density"] = (len(errorish.intersection(near)) - (n in errorish)) / 10.0
        row["near_path_density"] = (len(paths.intersection(near)) - (n in paths)) / 10.0
        # Position inside the contiguous stretch of candidates it belongs to (a block's head carries the message).
        row["block_pos"] = float(i > 0 and order[i - 1] == n - 1 and n - 1 in errorish)
        row["after_heading"] = float(n - 1 in headings or (n - 2 in headings and not texts.get(n - 1, "x").strip()))
        row["under_warning"] = float(n in warned)
        row[shape_key] = 1.0
    return rows


def _under_warning(order: list[int], texts: Mapping[int, str], rows: Mapping[int, Mapping[str, float]]) -> set[int]:
    """Lines that continue a warning (indented under it, the next lines of its message): a warning did not fail
    the step, nor does what it goes on to say (`Warning: unable to access index…` / `  cannot open URL…`)."""
    out: set[int] = set()
    for n in order:
        prev = n - 1
        if prev not in texts or not _CONT.search(texts[n]):
            continue
        if prev in out or (rows[prev]["warn"] and not rows[prev]["err_start"] and not rows[prev]["level_err"]):
            out.add(n)
    return out


MAX_CANDIDATES = 3000


# The last result's candidates, made once: the locator, the verdict and the lines they add each ask for them (a
# 50 MB log's 3,000 took about 1 ms to gather each time). A scan's result is not changed once the scan returns it;
# the sizes it was made from are checked all the same. Each caller gets a copy of its own to change.
_MADE: list[tuple[weakref.ref[ScanResult], int, tuple[int, int, int], dict[int, str]]] = []


def _forget(ref: weakref.ref[ScanResult]) -> None:
    if _MADE and _MADE[0][0] is ref:
        _MADE.clear()


def candidates(res: ScanResult, limit: int = MAX_CANDIDATES) -> dict[int, str]:
    """The lines the locator scores: the lines the scan kept text for (rule blocks and their context, the lines
    before exit markers, the tail) and the keyword lines near the end; at most `limit`, the last ones (a log
    with many thousands of weak hits costs no more than an ordinary one)."""
    sizes = (len(res.text), len(res.tail), len(res.keywords))
    made = _MADE[0] if _MADE else None
    if made is not None and made[0]() is res and made[1] == limit and made[2] == sizes:
        return dict(made[3])
    texts = _gathered(res, limit)
    _MADE[:] = [(weakref.ref(res, _forget), limit, sizes, texts)]
    return dict(texts)


def _gathered(res: ScanResult, limit: int) -> dict[int, str]:
    texts = dict(res.text)
    for m in res.tail:
        texts.setdefault(m.line, m.text)
    for m in res.keywords:
        texts.setdefault(m.line, m.text)
    if len(texts) > limit:
        keep = sorted(texts)[-limit:]
        texts = {n: texts[n] for n in keep}
    return texts


def score_lines(texts: Mapping[int, str], *, total: int, model: LocatorModel, step_start: int | None = None,
                step_error_line: int | None = None, exclude: Iterable[int] = (), shape: str | None = None
                ) -> tuple[list[Scored], str, int, int]:
    """Every candidate line scored (in line order), the log's shape, the line where the failing step or job ended
    and how many candidates there were."""
    skip = set(exclude)
    cand = {n: t for n, t in texts.items() if n not in skip}
    shape = shape or detect_shape(cand.values())
    end = find_end(cand, total, step_error_line)
    rows = feature_rows(cand, end=end, shape=shape, step_start=step_start)
    scored = []
    features = model.features
    for n, row in rows.items():
        values = model.contribution_values(row)
        z = model.bias + sum(values)
        p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
        get = row.get
        why = sorted(((name, v) for name, v in zip(features, values, strict=True) if v > 0.05 and get(name, 0.0)),
                     key=lambda c: -c[1])[:4]
        scored.append(Scored(n, p, [(k, round(v, 2)) for k, v in why]))
    return scored, shape, end, len(cand)


def locate(texts: Mapping[int, str], *, total: int, model: LocatorModel, step_start: int | None = None,
           step_error_line: int | None = None, exclude: Iterable[int] = (), shape: str | None = None) -> Located:
    """Score every candidate line and choose the causal ones: those at or above the model's threshold (else the
    likeliest one), at most `max_lines` (the likeliest), grown into blocks by their likely neighbours."""
    scored, shape, end, count = score_lines(texts, total=total, model=model, step_start=step_start,
                                            step_error_line=step_error_line, exclude=exclude, shape=shape)
    chosen = [s for s in scored if s.probability >= model.threshold]
    if not chosen and scored:
        # The job failed, so something in it says why: the likeliest line, however unsure (a linter that
        # prints only file names, a tool whose errors read like warnings).
        chosen = [max(scored, key=lambda s: (s.probability, s.line))]
    if len(chosen) > model.max_lines:
        chosen = sorted(chosen, key=lambda s: (-s.probability, -s.line))[:model.max_lines]
    by_line = {s.line: s for s in scored}
    picked = extend_picked({s.line for s in chosen}, {n: s.probability for n, s in by_line.items()},
                           model.threshold * model.extend)
    chosen = [by_line[n] for n in picked]
    chosen.sort(key=lambda s: -s.probability)
    return Located(lines=chosen, blocks=_blocks(sorted(picked)), shape=shape, end=end, candidates=count)


GROW_LINES = 5  # how far a chosen line's block may grow each way over neighbours that score at the floor


def extend_picked(picked: set[int], probability: Mapping[int, float], floor: float) -> set[int]:
    """Chosen lines grown into blocks: neighbours scoring at least `floor` join, one after another up to
    GROW_LINES each way (the lines under an error message that carry its content: the expected/actual pair, the
    quoted source, the location), as does a single line between two chosen ones."""
    out = set(picked)
    for n in sorted(picked):
        for step in (-1, 1):
            k = n + step
            while abs(k - n) <= GROW_LINES and probability.get(k, 0.0) >= floor:
                out.add(k)
                k += step
    for n in sorted(out):
        if n + 2 in out and n + 1 not in out and n + 1 in probability:
            out.add(n + 1)
    return out


def _blocks(lines: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for n in lines:
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out
