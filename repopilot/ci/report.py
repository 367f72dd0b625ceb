"""The diagnosis report: the project's central contract, one per job log, as a type.

`DiagnosisReport.contract()` is the JSON that `diagnose --format json` prints and the trace records (see README
"Diagnose a failing run"); `docs/diagnosis-report.schema.json` is generated from these models. Optional fields
that are empty are left out of the JSON, as they always were. Old traces stay readable: unknown keys are
ignored and fields added later have defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from ..core import Record
from .fingerprint import CONSEQUENCES, identifies
from .fingerprint import fingerprint as failure_fingerprint

__all__ = ["Attribution", "AttributionLabel", "Category", "DecidedBy", "DiagnosisReport", "Evidence", "ExcerptInfo",
           "FailingStep", "ReportFailure", "ReportLine", "SeenBefore", "read_report", "report_schema"]

# The one list of categories (the rule catalog and the escalation prompt use it too).
Category = Literal["test", "build", "typecheck", "lint", "dependency", "infrastructure", "network", "config",
                   "unknown"]
# Who decided the category: a rule, the locator's lines, the failing step's command, the model, or nobody.
DecidedBy = Literal["rules", "locator", "command", "llm", "none"]

_CATEGORIES = frozenset(get_args(Category))
_DECIDERS = frozenset(get_args(DecidedBy))


class _Report(Record):
    """Reading ignores unknown keys (old and newer traces); the published schema marks every field the JSON always
    has as required."""

    __slots__ = ()
    __pydantic_config__ = {"extra": "ignore", "json_schema_serialization_defaults_required": True}


def _check_category(category: str) -> None:
    # The type says so to mypy; this says so when a report is built from a rule's or a model's word.
    if category not in _CATEGORIES:
        raise ValueError(f"not a category: {category!r} (one of {', '.join(sorted(_CATEGORIES))})")


def _omit(data: dict[str, Any], empty: Mapping[str, Any]) -> dict[str, Any]:
    """Leave out optional keys holding their empty value: the JSON contract never printed them."""
    return {k: v for k, v in data.items() if not (k in empty and v == empty[k])}


@dataclass(slots=True, kw_only=True)
class ReportLine(_Report):
    """One causal log line: its 1-based number (counting `\\n`) and its display text."""

    line: int
    text: str = ""


@dataclass(slots=True, kw_only=True)
class SeenBefore(_Report):
    """What the failure history holds of this fingerprint (filled in by the application layer)."""

    count: int  # recorded diagnoses with this failure, this one included
    first_seen: str  # ISO 8601, UTC
    last_seen: str
    first_commit: str | None = None
    branches: list[str] = field(default_factory=list)
    flake_rate: float | None = None  # of the commits it failed on, the share where the same job also passed

    def text(self) -> str:
        """`seen 4 times since 2026-11-02, first on 1a2b3c4` ("" for a failure seen only now)."""
        if self.count <= 1:
            return ""
        text = f"seen {self.count} times since {self.first_seen[:10]}"
        if self.first_commit:
            text += f", first on {self.first_commit[:7]}"
        if self.flake_rate:
            text += f"; passed on a re-run on {self.flake_rate:.0%} of the commits it failed on"
        return text


AttributionLabel = Literal["new", "inherited", "flaky", "infra", "unknown"]


@dataclass(slots=True, kw_only=True)
class Evidence(_Report):
    """One fact an attribution rests on: a run (with its URL) or a row of the local failure history."""

    kind: Literal["run", "history"]
    text: str
    url: str | None = None
    row: int | None = None  # the history row's id


@dataclass(slots=True, kw_only=True)
class Attribution(_Report):
    """Whose failure this is: NEW (the change's), INHERITED (the base branch fails the same way), FLAKY (the same
    commit and job also passed), INFRA (the runner or the network), or UNKNOWN: not enough evidence."""

    label: AttributionLabel
    why: str
    evidence: list[Evidence] = field(default_factory=list)

    def headline(self) -> str:
        """`NEW`, `INHERITED`, …, or `NOT ENOUGH EVIDENCE`."""
        return "NOT ENOUGH EVIDENCE" if self.label == "unknown" else self.label.upper()

    def links(self) -> list[str]:
        """Where the evidence is: run URLs, or `history row N`."""
        return [e.url or (f"history row {e.row}" if e.row is not None else e.text) for e in self.evidence]


@dataclass(slots=True, kw_only=True)
class ReportFailure(_Report):
    """One failure in a log: the rule that found it, its causal lines and what to do about it."""

    rule: str
    category: Category = "unknown"
    confidence: float = 0.0
    message: str = ""
    lines: list[ReportLine] = field(default_factory=list)
    causal: bool = False
    score: float = 0.0
    subcategory: str | None = None
    tool: str | None = None
    file: str | None = None
    line: int | None = None
    column: int | None = None
    test: str | None = None
    package: str | None = None
    hint: str | None = None
    repeats: int = 1
    note: str = ""
    # The failure's stable identity (ci/fingerprint.py): filled in when a report is made or read, so reports
    # recorded before fingerprints existed get the same one as a fresh diagnosis of the same failure.
    fingerprint: str = ""
    history: SeenBefore | None = None
    attribution: Attribution | None = None

    def __post_init__(self) -> None:  # also run by pydantic when a report is read
        _check_category(self.category)
        self.confidence, self.score = float(self.confidence), float(self.score)  # `1.0` in the JSON, never `1`
        if not self.fingerprint:
            self.fingerprint = failure_fingerprint(rule=self.rule, category=self.category, message=self.message,
                                                   file=self.file, test=self.test,
                                                   lines=[item.text for item in self.lines])

    def where(self) -> str:
        """`file:line`, `file`, or "" when the failure names no file."""
        if not self.file:
            return ""
        return f"{self.file}:{self.line}" if self.line is not None else self.file


_FAILURE_EMPTY: dict[str, Any] = {k: None for k in ("subcategory", "tool", "file", "line", "column", "test",
                                                      "package", "hint", "history", "attribution")} | {
                                                          "repeats": 1, "note": ""}


@dataclass(slots=True, kw_only=True)
class ExcerptInfo(_Report):
    """What a model is given instead of the log: numbered lines within a token budget."""

    ranges: list[tuple[int, int]] = field(default_factory=list)
    tokens: int = 0
    text: str = ""
    folded: list[tuple[int, int]] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class FailingStep(_Report):
    """The CI step that failed: its name, where it starts and its error line, and its exit code."""

    name: str = ""
    line: int | None = None
    error_line: int | None = None
    exit_code: int | None = None


@dataclass(slots=True, kw_only=True)
class DiagnosisReport(_Report):
    """The diagnosis of one job log."""

    category: Category = "unknown"
    decided_by: DecidedBy = "none"
    error_lines: list[int] = field(default_factory=list)
    failures: list[ReportFailure] = field(default_factory=list)
    excerpt: ExcerptInfo = field(default_factory=ExcerptInfo)
    source: str | None = None
    run_id: str | None = None  # the CI run (from a run URL)
    log: str | None = None  # the log's display name
    job: str | None = None
    lines: int = 0
    bytes: int = 0
    engine: str = ""
    catalog_version: str = ""
    # Derived from `confidence` and the one threshold (0.6): below it a model may be asked.
    confident: bool = False
    # How sure the category is (0-1): the one confidence that decided it and that is printed; below 0.5 the
    # category is `unknown`.
    confidence: float = 0.0
    failing_step: FailingStep | None = None
    escalation_reason: str | None = None
    summary: str | None = None  # the model's one sentence, when it decided
    hint: str | None = None  # the model's hint, when it decided
    model_note: str | None = None  # why a model's reply was not used (rejected, or the call failed)
    baseline_dropped: int = 0
    trace_run_id: str | None = None  # the diagnosis's own trace (set by the application layer)
    # Where the log comes from, when known (a run URL through the API, or the GitHub Actions environment).
    repository: str | None = None
    branch: str | None = None
    commit: str | None = None

    def __post_init__(self) -> None:
        _check_category(self.category)
        self.confidence = float(self.confidence)
        if self.decided_by not in _DECIDERS:
            raise ValueError(f"not a decider: {self.decided_by!r} (one of {', '.join(sorted(_DECIDERS))})")

    def contract(self) -> dict[str, Any]:
        """The report as the JSON contract (what `--format json` prints and a trace records)."""
        data = _omit(self.model_dump(mode="json"), _REPORT_EMPTY)
        data["failures"] = [_omit(f, _FAILURE_EMPTY) for f in data["failures"]]
        return data

    def name(self) -> str:
        # `log` is the engine's display name; a report holding only the documented contract has `source`.
        return self.log or self.source or "log"

    def causal_failures(self) -> list[ReportFailure]:
        """The failures that explain the job, or the best one when none is causal."""
        return [f for f in self.failures if f.causal] or self.failures[:1]

    def identifying_failures(self) -> list[ReportFailure]:
        """The causal failures that say what failed, for history and attribution: not the runner's "exit code 1"
        trailer, nor a caret line, nor a consequence (make's "recipe failed") when something more specific is."""
        causal = [f for f in self.causal_failures() if identifies(f.message)] or self.causal_failures()
        return [f for f in causal if f.rule not in CONSEQUENCES] or causal


_REPORT_EMPTY: dict[str, Any] = {"failing_step": None, "escalation_reason": None, "summary": None, "hint": None,
                                 "model_note": None, "baseline_dropped": 0, "trace_run_id": None, "repository": None,
                                 "branch": None, "commit": None}


def read_report(data: object) -> DiagnosisReport | None:
    """A report as recorded in a trace (of any version), or None when it is not one."""
    try:
        return DiagnosisReport.model_validate(data)
    except ValueError:  # pydantic's ValidationError
        return None


def report_schema() -> dict[str, Any]:
    """The JSON schema of one report, as published in `docs/diagnosis-report.schema.json`."""
    schema = DiagnosisReport.model_json_schema(mode="serialization")
    for name, empty in (("ReportFailure", _FAILURE_EMPTY), ("DiagnosisReport", _REPORT_EMPTY)):
        part = schema if name == "DiagnosisReport" else schema["$defs"][name]
        part["required"] = [k for k in part.get("required", []) if k not in empty]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["description"] = ("One RepoPilot diagnosis report per job log (`repopilot diagnose --format json` prints "
                             "one object, or an array for several logs). Optional fields holding their empty value "
                             "are left out.")
    return schema
