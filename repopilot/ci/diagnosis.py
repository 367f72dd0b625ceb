"""From scan hits to a diagnosis: failures ranked by likely cause, the causal `error_lines`, and the reasons for
every decision (which rules fired, with what confidence, why others lost)."""

from __future__ import annotations

import bisect
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .blocks import Hit
from .scanner import JOB_START, Marker, ScanResult

__all__ = [
    "CONFIDENT",
    "Diagnosis",
    "Failure",
    "StepInfo",
    "build_diagnosis",
    "failing_region",
    "is_trailer",
    "job_starts",
]

CONFIDENT = 0.6  # below this the top failure is "not confident" and may be escalated
_INCLUDE = 0.5  # failures at or above this count towards error_lines
_MAX_REPEATS = 3  # identical failures beyond this many are left out
_MAX_FAILURES = 50
# Lines that only say that something earlier failed: never causal on their own.
_TRAILERS = re.compile(
    # Exit 137 (SIGKILL, usually the OOM killer) and 143 (SIGTERM) say more than "it failed".
    r"^(?:##\[error\])?(?:Error: )?Process completed with exit code (?!137\b|143\b)\d+\.?\s*$"
    r"|^Build step '.*' marked build as failure"
    r"|^Finished: (?:FAILURE|ABORTED|UNSTABLE)\s*$"
    r"|^ERROR: Job failed: exit code \d+\s*$"
    r"|^The command .* exited with \d+\.?\s*$"
    r"|^ERROR: script returned exit code \d+\s*$"
    # Azure Pipelines' task trailer (`##[error]Bash exited with code '1'.`, `Cmd.exe exited with code '2'.`).
    r"|^(?:##\[error\])?[\w.]+ exited with code '?\d+'?\.?\s*$"
    # What a task or a JavaScript action says when the process it ran failed (Azure, actions/toolkit's exec).
    r"|^(?:##\[error\])?(?:Error: )?The process '[^']+' failed with exit code \d+\.?\s*$"
)
_ERROR_MARKER = re.compile(r"^##\[error\](?P<message>.*)$")
_PROCESS_EXIT = re.compile(r"^##\[error\]Process completed with exit code (\d+)")


@lru_cache(maxsize=8192)
def is_trailer(text: str) -> bool:
    # Remembered: a diagnosis asks it of the same lines several times (each hit's line, again when it looks for the
    # last hit before the failure, each causal line, the locator's candidates).
    return bool(_TRAILERS.search(text.strip()))


@dataclass
class StepInfo:
    """The GitHub Actions step that failed, when the log has step markers."""

    header_line: int
    name: str
    error_line: int  # the runner's `##[error]Process completed ...` line (Azure: the task's last `##[error]`)
    exit_code: int | None = None
    command: str | None = None  # the script, when the log prints it apart from the step's name (Azure)


@dataclass
class Failure:
    """One failure found in a log: the rule (or the locator) that found it, its lines and its message."""

    rule: str
    category: str
    confidence: float
    message: str
    first: int  # the trigger's block
    last: int
    trigger: int
    subcategory: str | None = None
    tool: str | None = None
    ecosystem: str | None = None
    file: str | None = None
    line: int | None = None
    column: int | None = None
    test: str | None = None
    package: str | None = None
    hint: str | None = None
    score: float = 0.0
    repeats: int = 1
    in_failing_step: bool = False
    causal: bool = False
    outside: float = 0.0  # weakened from this score: outside the failing step, which no rule explained
    note: str = ""
    extra_ranges: list[tuple[int, int]] = field(default_factory=list)  # the first repeats' blocks (causal)
    more_ranges: list[tuple[int, int]] = field(default_factory=list)  # later repeats: only folded in excerpts

    def ranges(self) -> list[tuple[int, int]]:
        """The failure's blocks in line order, overlapping or touching ones joined."""
        merged: list[tuple[int, int]] = []
        for a, b in sorted([(self.first, self.last), *self.extra_ranges]):
            if merged and a <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        return merged


@dataclass
class Diagnosis:
    """What the rules and the locator found in one log, before it becomes a report."""

    name: str
    source: str
    run_id: str | None
    job: str | None
    lines: int
    size: int
    engine: str
    catalog_version: str
    category: str = "unknown"
    decided_by: str = "none"
    confident: bool = False
    failures: list[Failure] = field(default_factory=list)
    error_lines: list[int] = field(default_factory=list)
    step: StepInfo | None = None
    decisions: list[dict[str, Any]] = field(default_factory=list)
    escalation_reason: str | None = None
    texts: dict[int, str] = field(default_factory=dict)  # display text of the lines the output may show
    tail: list[Marker] = field(default_factory=list)
    keywords: list[Marker] = field(default_factory=list)
    baseline_dropped: int = 0
    llm_summary: str | None = None
    llm_hint: str | None = None
    confidence: float = 0.0  # how sure the category is: the one confidence reported and acted on
    located: bool = False  # the causal lines were chosen by the locator (no rule fired confidently)
    model_note: str | None = None  # why the model's reply was not used
    step_name: str | None = None  # the failing step's name as GitHub shows it, when the source said so
    region: tuple[int, int] | None = None  # the failing step or command, when the log's own markers say where
    # Where the diagnosed job begins in a log of several jobs (0: one job): the other jobs' lines are not read.
    job_first: int = 0
    job_last: int = 0  # where it ends (0: at the log's end)

    def in_job(self, n: int) -> bool:
        """Whether line `n` belongs to the job diagnosed (always, in a log of one job)."""
        return n >= self.job_first and (not self.job_last or n <= self.job_last)


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


_TRAILING = 3  # lines a CI system may print after a job's end marker
_PREAMBLE = 2  # lines a job's log may hold before its banner (a BOM, a tool's header)
_SAME_JOB = 15  # start markers this close together begin one job (GitHub prints several in its set-up)


# The end of a failed job of another CI system than GitHub Actions (its exit markers are kept in the tail).
_OTHER_END = re.compile(r"^(?:Finished: (?:FAILURE|ABORTED|UNSTABLE)\s*$|ERROR: Job failed\b|"
                        r"Done\. Your build exited with [1-9])")


# The end of a job that passed (a log of several jobs may end with one).
_PASSED_END = re.compile(r"^(?:Finished: SUCCESS|Job succeeded|Done\. Your build exited with 0\.?)\s*$")


def job_starts(res: ScanResult) -> list[int]:
    """The lines where a job's log begins, when the log shows more than one job (else empty): a job's first line
    (its CI system's banner), the line after a job's last one (`Finished: FAILURE`, `Cleaning up orphan
    processes`: what follows is another job's, banner or not), and line 1 when the first banner comes later (the
    lines before it are another job's). A job of another CI system that ends the log after a failed GitHub job
    begins after that job's exit marker."""
    found = set(res.jobs)
    found |= {m.line for m in res.tail if JOB_START.match(m.text)}
    # After a job's end the next line is another job's, however close (a banner there begins the same job).
    after_end = {n + 1 for n in res.job_ends if n + _TRAILING < res.lines}
    exits = [m.line for m in res.errors if _PROCESS_EXIT.match(m.text)]
    if exits and any(m.line > exits[-1] and _OTHER_END.match(m.text) for m in res.tail):
        after_end.add(exits[-1] + 1)
    starts: list[int] = []
    for n in sorted(found | after_end):
        if not starts or n - starts[-1] > _SAME_JOB or (n in after_end and n != starts[-1]):
            starts.append(n)
    if starts and starts[0] > _PREAMBLE:
        starts.insert(0, 1)
    return starts if len(starts) > 1 else []


def _github_job_after(res: ScanResult, start: int) -> bool:
    """Whether the job that begins at `start` is a GitHub Actions job (then, without an exit marker, it passed)."""
    return any(g.line > start for g in res.groups) or any(
        m.line > start and m.text.startswith(("##[group]", "Cleaning up orphan processes")) for m in res.tail)


def _failing_step(res: ScanResult, starts: list[int] | None = None) -> StepInfo | None:
    """The failing GitHub step: the first whose exit marker says it failed, in the last job of the log that has
    one (a log of several jobs is read from its end: the last failing job is the one diagnosed). Without GitHub's
    exit markers, the failing Azure Pipelines task. `starts`: `job_starts(res)`, when the caller has it."""
    markers = [m for m in res.errors if _PROCESS_EXIT.match(m.text)]
    if starts is None:
        starts = job_starts(res)
    if not markers and res.sections:
        return _azure_step(res, starts)
    last_job = 0
    if starts and markers:
        if starts[-1] > markers[-1].line and not _github_job_after(res, starts[-1]):
            return None  # the last job's failure is not a GitHub step
        last_job = max((s for s in starts if s < markers[-1].line), default=0)
        markers = [m for m in markers if m.line > last_job]
    for marker in markers:
        m = _PROCESS_EXIT.match(marker.text)
        if m is None:
            continue
        header = None
        for g in res.groups:
            if g.line >= marker.line:
                break
            if g.line > last_job and g.text.startswith("##[group]Run "):  # not another job's step
                header = g
        if header is None:
            return StepInfo(header_line=0, name="", error_line=marker.line, exit_code=int(m.group(1)))
        return StepInfo(header_line=header.line, name=header.text[len("##[group]Run "):].strip(),
                        error_line=marker.line, exit_code=int(m.group(1)))
    return None


_SECTION_START = re.compile(r"^##\[section\]Starting: (?P<name>.*?)\s*$")
_SECTION_END = re.compile(r"^##\[section\]Finishing: (?P<name>.*?)\s*$")
# How Azure tasks say a process failed: `Bash exited with code '1'.`, `The process '/usr/bin/dotnet' failed with
# exit code 1`, `Script failed with exit code: 2`.
_AZURE_EXIT = re.compile(r"exited with code '?(\d+)'?|failed with exit code:? (\d+)|failed with error code (\d+)")


def _sections(res: ScanResult) -> list[tuple[int, int, str]]:
    """Azure Pipelines' sections as (start, end, name), nested ones included: the job's own section holds its
    tasks. A section the log cut off ends at the last line."""
    spans: list[tuple[int, int, str]] = []
    open_: list[tuple[int, str]] = []
    for m in res.sections:
        if (st := _SECTION_START.match(m.text)) is not None:
            open_.append((m.line, st.group("name")))
        elif (end := _SECTION_END.match(m.text)) is not None:
            # Closed by name: a Finishing line whose Starting the log lost closes nothing.
            k = next((i for i in range(len(open_) - 1, -1, -1) if open_[i][1] == end.group("name")), None)
            if k is not None:
                spans += [(a, m.line - 1 if i > k else m.line, name) for i, (a, name) in enumerate(open_[k:], k)]
                del open_[k:]
    spans += [(a, res.lines, name) for a, name in open_]
    return spans


def _azure_step(res: ScanResult, starts: list[int]) -> StepInfo | None:
    """The failing Azure Pipelines task: the innermost section holding the first `##[error]` line of the last job,
    up to its last `##[error]` line (the task's own `Bash exited with code '1'.`)."""
    since = starts[-1] if starts else 0
    errors = [m for m in res.errors if m.line >= since]
    spans = [s for s in _sections(res) if s[1] >= since]
    if not errors or not spans:
        return None
    first = errors[0].line
    holding = [s for s in spans if s[0] < first <= s[1]]
    if not holding:
        return None
    start, end, name = max(holding, key=lambda s: s[0])
    inside = [m for m in errors if start < m.line <= end]
    code = None
    for m in reversed(inside):
        if (got := _AZURE_EXIT.search(m.text)) is not None:
            code = int(next(g for g in got.groups() if g is not None))
            break
    head = res.scripts.get(start)
    return StepInfo(header_line=start, name=name, error_line=inside[-1].line, exit_code=code,
                    command=head.text if head is not None and head.text else None)


def _failure(hit: Hit) -> Failure:
    r = hit.rule
    f = hit.fields
    return Failure(
        rule=r.id, category=r.category, confidence=r.confidence, message=hit.message, first=hit.first,
        last=hit.last, trigger=hit.line, subcategory=r.subcategory, tool=r.tool, ecosystem=r.ecosystem,
        file=f.get("file"), line=_int(f.get("line")), column=_int(f.get("column")), test=f.get("test"),
        package=f.get("package"), hint=r.hint,
    )


def build_diagnosis(res: ScanResult, *, name: str, source: str, run_id: str | None, job: str | None,
                    catalog_version: str, dropped: set[int] | None = None) -> Diagnosis:
    """Rank the hits of one scan into failures and pick the causal lines. `dropped` are lines a baseline
    (passing) log also has: hits on them are not candidates."""
    diag = Diagnosis(name=name, source=source, run_id=run_id, job=job, lines=res.lines, size=res.size,
                     engine=res.engine, catalog_version=catalog_version, texts=res.text, tail=res.tail,
                     keywords=res.keywords)
    # In a log of several jobs, the job that failed last: what failed in an earlier job (a disk that filled on
    # another machine included) does not explain it. Its starts are found once: the failing step, the failing
    # section and the job diagnosed all read them.
    starts = job_starts(res)
    step = _failing_step(res, starts)
    diag.step = step
    decisions = diag.decisions
    dropped = dropped or set()

    # The region where the job failed: the failing step; in a plain log, what follows the last "BUILD
    # SUCCESS" before the last failure (errors a build survived did not fail the job).
    region = (1, res.lines)
    if step is not None:
        region = (step.header_line or 1, step.error_line)
    # Whether the failing step or command is known from the log's own markers; where the last command began.
    explicit = step is not None and step.header_line > 0
    last_echo = 0
    if step is None:
        region, explicit, last_echo = _failing_section(res, starts)

    if explicit:
        diag.region = region
    failures: list[Failure] = []
    seen: dict[tuple[str, str], Failure] = {}
    group_lines = [g.line for g in res.groups]
    for hit in res.hits:
        text = res.text.get(hit.line, "")
        if hit.line in dropped:
            decisions.append({"rule": hit.rule.id, "line": hit.line, "decision": "dropped",
                              "why": "the line also occurs in the baseline (passing) log"})
            diag.baseline_dropped += 1
            continue
        if is_trailer(text):
            decisions.append({"rule": hit.rule.id, "line": hit.line, "decision": "dropped",
                              "why": "a generic trailer, not a cause"})
            continue
        key = (hit.rule.id, _norm(text))
        if key in seen:
            dup = seen[key]
            dup.repeats += 1
            if dup.repeats <= _MAX_REPEATS:
                dup.extra_ranges.append((hit.first, hit.last))
            elif len(dup.more_ranges) < 10000:
                dup.more_ranges.append((hit.first, hit.last))
            continue
        f = _failure(hit)
        seen[key] = f
        f.score = f.confidence
        if hit.line in res.in_script and _group_closes(hit.line, res.endgroups, group_lines):
            f.score -= 0.5
            f.note = "inside a step's script header (the command, not its output)"
        elif f.category != "infrastructure" and _in_passed_class(hit.first, hit.last, res.passed_classes):
            f.score -= 0.5
            f.note = "output of a test class that passed (its summary reports no failures or errors)"
        if step is not None and region[0] <= hit.line <= region[1]:
            f.in_failing_step = True
        if region[0] <= hit.line <= region[1]:
            f.score += 0.05
        failures.append(f)

    for loser in res.losers:
        decisions.append({"rule": loser.rule_id, "line": loser.line, "decision": "lost",
                          "why": f"{loser.winner} also matched this line with higher confidence"})

    # `##[error]` annotations no rule explained: weak evidence, used when nothing better exists.
    covered: set[int] = set()
    for f in failures:
        for a, b in f.ranges():
            covered.update(range(a, b + 1))
    for marker in res.errors:
        if marker.line in covered or marker.line in dropped or is_trailer(marker.text):
            continue
        msg = _ERROR_MARKER.match(marker.text)
        failures.append(Failure(
            rule="github.error-annotation", category="unknown", confidence=0.45,
            message=(msg.group("message") if msg else marker.text).strip()[:300], first=marker.line,
            last=marker.line, trigger=marker.line, tool="github-actions", ecosystem="ci",
            hint="Read the annotated error; the step's output above it usually shows the cause.",
            score=0.45 + (0.05 if region[0] <= marker.line <= region[1] else 0.0),
            in_failing_step=step is not None and region[0] <= marker.line <= region[1]))

    _rank(failures)
    failures = _merge_same_failure(failures, decisions)
    strong = [f for f in failures if f.score >= _INCLUDE]
    in_region = [f for f in strong if region[0] <= f.trigger <= region[1]]
    # An earlier failure stays causal when a failure in the region names it again (a test summary listing the
    # test that failed before an inner build printed BUILD SUCCESS).
    region_text = " ".join(res.text.get(n, "") for f in in_region for a, b in f.ranges()
                           for n in range(a, min(b, a + 400) + 1))
    # The failing step's exit marker places the job even when its header was not kept.
    known = explicit or step is not None
    last_job = _last_job(starts, region if known else None, strong, res)
    anchor = region[1] if known else res.lines
    diag.job_first = last_job or max((s for s in starts if s <= anchor), default=0)
    diag.job_last = next((s - 1 for s in starts if s > diag.job_first), 0)
    for f in strong:
        if not diag.in_job(f.trigger):
            # Also when the diagnosed job has no rule hit of its own: the locator reads that job, not another's.
            decisions.append({"rule": f.rule, "line": f.trigger, "decision": "not causal",
                              "why": f"in another job of the log; the job diagnosed is lines {diag.job_first}-"
                                     f"{diag.job_last or res.lines}"})
            continue
        # A machine failure explains what follows it, but not when the job went on to run the commands of the
        # region where it failed (a cache step that hit a full disk and carried on).
        survived = f.category != "infrastructure"
        if f.category == "infrastructure" and f.trigger < last_echo and any(
                g.trigger > last_echo and g.category != "infrastructure" for g in strong):
            decisions.append({"rule": f.rule, "line": f.trigger, "decision": "not causal",
                              "why": "the job ran another command after it, which failed on its own"})
            continue
        if in_region and f not in in_region and survived and not _named_in(f, res, region_text):
            decisions.append({"rule": f.rule, "line": f.trigger, "decision": "not causal",
                              "why": "before the region where the job failed, which has its own failures"})
            continue
        if not in_region and explicit and not region[0] <= f.trigger <= region[1]:
            # The failing step printed nothing a rule knows (a tool no rule covers); what a rule found in another
            # step or job did not fail this one: weak evidence, so the locator reads the failing step.
            f.outside = f.score
            f.score = min(f.score, _INCLUDE - 0.05)
            decisions.append({"rule": f.rule, "line": f.trigger, "decision": "weakened",
                              "why": "outside the failing step, which has no rule hit of its own"})
            continue
        f.causal = True
    if not any(f.causal for f in failures):
        # The diagnosed job's own failures first: another job's failure explains nothing of it.
        weak = [f for f in failures if diag.in_job(f.trigger)][:5]
        for f in weak:
            f.causal = True
            decisions.append({"rule": f.rule, "line": f.trigger, "decision": "weak evidence used",
                              "why": f"no failure with score >= {_INCLUDE}; best available"})
    # Causal failures first (in rank order), then the others for the record.
    failures.sort(key=lambda f: not f.causal)
    diag.failures = failures[:_MAX_FAILURES]

    lines: set[int] = set()
    for f in failures:
        if f.causal:
            for a, b in f.ranges():
                lines.update(range(a, b + 1))
    lines = {n for n in lines if n not in dropped and not is_trailer(res.text.get(n) or "")}
    if not lines:
        lines = _heuristic_lines(res, step, dropped, diag)
        if lines:
            decisions.append({"decision": "heuristic lines", "why": "no rule fired; keyword lines near the "
                              "failure point are the best guess", "lines": len(lines)})
    diag.error_lines = sorted(lines)

    top = diag.failures[0] if diag.failures else None
    if top is not None and top.score >= CONFIDENT:
        diag.category = top.category
        diag.decided_by = "rules"
        diag.confident = True
        rivals = [f for f in diag.failures[1:] if f.causal and f.category not in (top.category, "unknown")
                  and f.score >= top.score - 0.05]
        if rivals:
            diag.confident = False
            diag.escalation_reason = (f"rules conflict: {top.rule} ({top.category}, {top.score:.2f}) vs "
                                      f"{rivals[0].rule} ({rivals[0].category}, {rivals[0].score:.2f})")
        decisions.insert(0, {"decision": "category", "rule": top.rule, "category": top.category,
                             "score": round(top.score, 3), "why": "highest-ranked failure"})
    else:
        diag.escalation_reason = ("no rule fired" if top is None else
                                  f"no confident rule: best {top.rule} scored {top.score:.2f} < {CONFIDENT}")
    return diag


def _last_job(starts: list[int], region: tuple[int, int] | None, strong: list[Failure], res: ScanResult) -> int:
    """Where the job being diagnosed begins in a log of several (0: one job): the job holding the failing step
    when the log's markers say which, the last job unless its own end says it passed (what a log was cut for is
    at its end), else the job holding the last strong failure."""
    if not starts or not strong:
        return 0
    if region is None and not any(m.line > starts[-1] and _PASSED_END.match(m.text) for m in res.tail):
        return starts[-1]
    anchor = region[1] if region is not None else max(f.trigger for f in strong)
    return max((s for s in starts if s <= anchor), default=0)


_TRAVIS_EXIT = re.compile(r'^The command "(?P<cmd>.+)" exited with [1-9]\d*\.?\s*$')


def failing_region(res: ScanResult) -> tuple[int | None, int] | None:
    """The failing step or command where the log's own markers say so: GitHub's step (its header may be missing),
    Travis's named command, GitLab's last command, Jenkins's failing stage. The locator's place features and
    its training read it, as the diagnosis does."""
    step = _failing_step(res)
    if step is not None:
        return (step.header_line or None, step.error_line)
    region, explicit, _ = _failing_section(res)
    return region if explicit else None


def _travis_command(res: ScanResult, since: int) -> tuple[int, int] | None:
    """Travis names the command that failed (`The command "X" exited with 1.`): the echo that began it and the
    marker's line, when both are among the lines the scan kept."""
    marker = next((m for m in reversed(res.tail) if m.line >= since and _TRAVIS_EXIT.match(m.text)), None)
    if marker is None:
        return None
    cmd = _TRAVIS_EXIT.match(marker.text).group("cmd")  # type: ignore[union-attr]
    echo = next((c.line for c in reversed(res.commands) if since <= c.line < marker.line and f"$ {cmd}" in c.text),
                None)
    return (echo, marker.line) if echo is not None else None


# Where the steps that run after a failure begin: GitLab's after_script, Jenkins's post actions, Travis's
# after_failure (their commands did not fail the job).
_POST = re.compile(r"^(?:section_start:\d+:after_script|\[Pipeline\] \{ \(Declarative: Post Actions\)|"
                   r"travis_fold:start:after_failure)")


_GITLAB_END = re.compile(r"^(?:section_end:\d+:step_script|ERROR: Job failed)")


def _failing_section(res: ScanResult, starts: list[int] | None = None) -> tuple[tuple[int, int], bool, int]:
    """Where a log without GitHub step markers failed, whether its own markers say so, and where its last command
    began. Travis names the failing command; GitLab stops its script at the failing command, so that is the last
    echo before the after_script section. Elsewhere (Jenkins, plain output, where steps may go on after a
    failure) the region is what follows the last "BUILD SUCCESS" before the last failure (errors a build survived
    did not fail the job)."""
    # In a log of several jobs, only the last job's markers say where it failed (the tail may end an earlier one).
    if starts is None:
        starts = job_starts(res)
    since = starts[-1] if starts else 0
    post = next((m.line for m in res.tail if m.line >= since and _POST.match(m.text)), res.lines + 1)
    echoes = [c.line for c in res.commands if since <= c.line < post and not c.text.startswith("[Pipeline]")]
    last_echo = echoes[-1] if echoes else 0
    travis = _travis_command(res, since)
    if travis is not None:
        return travis, True, last_echo
    if last_echo and any(m.line >= since and _GITLAB_END.match(m.text) for m in res.tail):
        return (last_echo, post - 1), True, last_echo
    stage = _jenkins_stage(res, post, since)
    if stage is not None:
        return stage, True, last_echo
    region = (1, res.lines)
    if res.successes and res.hits:
        last_hit = max(h.line for h in res.hits if not is_trailer(res.text.get(h.line, "")))
        before = [n for n in res.successes if n < last_hit]
        if before:
            region = (before[-1] + 1, res.lines)
    return region, False, last_echo


def _jenkins_stage(res: ScanResult, post: int, since: int) -> tuple[int, int] | None:
    """The Jenkins stage that failed: the one before the first stage "skipped due to earlier failure(s)", else the
    last stage before the post actions."""
    stages = [c.line for c in res.commands if c.text.startswith("[Pipeline] { (") and since <= c.line < post]
    if not stages:
        return None
    skipped = next((m.line for m in res.tail if m.line >= since and m.text.startswith("Stage \"")
                    and "skipped due to earlier failure" in m.text), None)
    if skipped is not None:
        opened = [n for n in stages if n < skipped]  # the skipped stage's own opening line is the last of these
        if len(opened) < 2:
            return None
        start = opened[-2]
    else:
        start = stages[-1]
    after = [n for n in stages if n > start]
    return (start, after[0] - 1 if after else post - 1)


def _group_closes(n: int, endgroups: list[int], group_lines: list[int]) -> bool:
    """Whether the `##[group]` holding line `n` is closed by an `##[endgroup]` before the next group starts. The
    runner closes a step's script header at once; a group that never closes (a log cut from `gh run view`, a
    hand-made one) holds the step's output, not its script."""
    i = bisect.bisect_right(endgroups, n)
    if i == len(endgroups):
        return False
    nxt = bisect.bisect_right(group_lines, n)
    return nxt == len(group_lines) or endgroups[i] < group_lines[nxt]


def _in_passed_class(first: int, last: int, spans: list[tuple[int, int]]) -> bool:
    # Spans are appended as classes finish, so they are sorted by their end (looked up by it alone: no tuple made
    # for each comparison).
    i = bisect.bisect_left(spans, last + 1, key=_END)
    return any(a < first for a, _ in spans[i:i + 64])


_END = operator.itemgetter(1)


def _rank(failures: list[Failure]) -> None:
    # Infrastructure failures (disk, memory, runner) explain everything after them; then by score, then the
    # earliest first: a build stops at its first real error, later ones are often consequences.
    failures.sort(key=lambda f: (-(f.category == "infrastructure" and f.score >= _INCLUDE),
                                 -round(f.score, 2), f.trigger))


def _merge_same_failure(ranked: list[Failure], decisions: list[dict[str, Any]]) -> list[Failure]:
    """One failure per error. Tools often print an error more than once in different shapes (pytest's section,
    its location line and its summary line; a test runner's failure and its summary); when another rule's hit
    names the same test, or lies inside the block of a better-ranked failure of the same category, it is that
    failure seen again: its lines and missing fields join the better-ranked one."""
    kept: list[Failure] = []
    # A big log has thousands of failures: each is compared with the kept ones of its category only, read from
    # an entry each (`_Kept`: what the comparisons read, the ranges computed once per change), and a range is
    # looked into only when the line is between the first and the last line of all of them (the bounds: a cheap
    # test that most pairs fail).
    by_category: dict[str, list[_Kept]] = {}
    for f in ranked:
        own, low, high = _bounded(f.ranges())
        entries = by_category.setdefault(f.category, [])
        entry = _host(f, own, low, high, entries)
        if entry is None:
            kept.append(f)
            entries.append([f, f.rule, f.test, f.trigger, own, low, high])
            continue
        host = entry[0]
        host.extra_ranges += own
        entry[4:7] = _bounded(host.ranges())
        host.more_ranges += f.more_ranges
        for name in ("file", "line", "column", "test", "package"):
            if getattr(host, name) is None:
                setattr(host, name, getattr(f, name))
        entry[2] = host.test
        decisions.append({"rule": f.rule, "line": f.trigger, "decision": "merged",
                          "why": f"the same failure as {host.rule} at line {host.trigger}"})
    return kept


# A kept failure as `_merge_same_failure` compares it: [failure, rule, test, trigger, ranges, first, last].
_Kept = list[Any]


def _host(f: Failure, own: list[tuple[int, int]], low: int, high: int, kept: Sequence[_Kept]) -> _Kept | None:
    """The first of `kept` (of f's category) that `f` is seen again of: another rule's failure naming the same
    test, or whose blocks hold f's trigger, or one whose trigger is in f's blocks (`own`, within `low`..`high`).
    A loop over locals: this runs for every pair of a big log's failures of one category."""
    line, rule, test = f.trigger, f.rule, f.test
    for entry in kept:
        _, k_rule, k_test, at, ranges, first, last = entry
        if k_rule == rule:
            continue
        if k_test is not None and k_test == test:
            return entry
        if first <= line <= last and any(a <= line <= b for a, b in ranges):
            return entry
        if low <= at <= high and any(a <= at <= b for a, b in own):
            return entry
    return None


def _bounded(ranges: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], int, int]:
    """`ranges` with the first line of any and the last line of any (1, 0 when there are none: nothing is in)."""
    if not ranges:
        return ranges, 1, 0
    return ranges, min(a for a, _ in ranges), max(b for _, b in ranges)


_NAME = re.compile(r"\b[A-Za-z_][\w$]*\([\w.$]+\)")  # JUnit's `method(pkg.Class)`


def _named_in(f: Failure, res: ScanResult, region_text: str) -> bool:
    for n in range(f.first, min(f.last, f.first + 5) + 1):
        for name in _NAME.findall(res.text.get(n, "")):
            if name in region_text:
                return True
    return f.test is not None and len(f.test) > 6 and f.test in region_text


def _norm(text: str) -> str:
    # Runs of whitespace made one space: what `re.sub(r"\s+", " ", text.strip())` does (`\s` and str.split both
    # take the characters str.isspace calls whitespace), without a regex call per hit.
    return " ".join(text.split())


def _heuristic_lines(res: ScanResult, step: StepInfo | None, dropped: set[int], diag: Diagnosis) -> set[int]:
    """No rule fired: keyword lines of the failing step (or near the end), the most recent few."""
    if step is not None:
        lo, hi = step.header_line, step.error_line
    else:
        hi = diag.job_last or res.lines
        lo = max(1, diag.job_first, hi - 200)
    picked = [m for m in res.keywords if lo <= m.line <= hi and m.line not in dropped and not is_trailer(m.text)
              and not m.text.startswith("##[group]")]
    return {m.line for m in picked[-8:]}
