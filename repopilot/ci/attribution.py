"""Whose failure is it? One label per failure, decided from facts and naming the facts that decided it.

- FLAKY: the same commit and job passed on another attempt (or another recorded run);
- INHERITED: the latest completed run of the same workflow on the base branch fails with the same fingerprint;
- INFRA: the failure is the runner's or the network's (its category), and the base branch does not fail so;
- NEW: none of these, and the base branch's latest run is known (it passed, or failed differently);
- UNKNOWN: not enough evidence (no base run found, its logs unreadable, offline with no history).

In that order: a failure that also passed on a re-run is a flake even when it is a network error. The facts come
from the GitHub API for a run URL (ci/run_facts.py) or from the local failure history (the application layer
gathers them); this module only decides, so it is the same decision whichever way the facts came.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .report import Attribution, AttributionLabel, DiagnosisReport, Evidence, ReportFailure

__all__ = ["INFRA_CATEGORIES", "LABEL_TEXT", "BaseFacts", "JobFacts", "attribute_failure", "attribute_report"]

INFRA_CATEGORIES = frozenset({"infrastructure", "network"})
# What each label tells the person who changed the code.
LABEL_TEXT: dict[AttributionLabel, str] = {
    "new": "NEW: most likely caused by this change",
    "inherited": "INHERITED: the base branch already fails this way",
    "flaky": "FLAKY: the same commit and job also passed",
    "infra": "INFRA: the runner or the network failed, not the code",
    "unknown": "not enough evidence to say whose failure this is",
}


@dataclass
class BaseFacts:
    """The base branch's latest completed run of the same workflow, as far as it could be read."""

    branch: str
    evidence: Evidence  # the run itself: "main run 41 passed" / "main run 41 failed"
    passed: bool
    # Fingerprint -> the base job that failed with it (its URL or history row).
    fingerprints: dict[str, Evidence] = field(default_factory=dict)
    complete: bool = True  # every failed job's log was read


@dataclass
class JobFacts:
    """What is known around one failing job."""

    passed_elsewhere: list[Evidence] = field(default_factory=list)  # the same job passing on the same commit
    base: BaseFacts | None = None
    why_no_base: str = "no completed run of the workflow on the base branch was found"
    own: Evidence | None = None  # the failing job itself (for INFRA, whose evidence is its own log)


def attribute_failure(failure: ReportFailure, facts: JobFacts, category: str) -> Attribution:
    """The label of one failure (`category`: its own, or the report's when the failure has none)."""
    if facts.passed_elsewhere:
        return Attribution(label="flaky", why="the same job passed on the same commit",
                           evidence=facts.passed_elsewhere[:5])
    base = facts.base
    if base is not None and failure.fingerprint in base.fingerprints:
        return Attribution(label="inherited", why=f"the latest completed run on {base.branch} fails with the "
                           f"same fingerprint {failure.fingerprint[:8]}",
                           evidence=[base.fingerprints[failure.fingerprint]])
    if category in INFRA_CATEGORIES:
        where = [e for e in (facts.own, base.evidence if base else None) if e is not None]
        not_base = f"; {base.branch} does not fail this way" if base is not None else ""
        return Attribution(label="infra", why=f"a {category} failure{not_base}", evidence=where)
    if base is not None and base.complete:
        how = "passed" if base.passed else "failed, but not with this fingerprint"
        return Attribution(label="new", why=f"the latest completed run on {base.branch} {how}, and no other "
                           "attempt of this commit passed", evidence=[base.evidence])
    why = facts.why_no_base if base is None else f"the logs of {base.branch}'s failed jobs could not all be read"
    # Every rendering puts the label (`NOT ENOUGH EVIDENCE`) before the reason: the reason alone, not said twice.
    return Attribution(label="unknown", why=why)


def attribute_report(report: DiagnosisReport, facts: JobFacts) -> DiagnosisReport:
    """The report with every failure attributed (causal ones are what people read; the rest get labels too)."""
    failures = []
    for f in report.failures:
        # The job's verdict wins when it says the runner or the network failed: the linker error beside a full
        # disk is the disk's fault.
        infra = report.category in INFRA_CATEGORIES
        category = report.category if infra or f.category == "unknown" else f.category
        failures.append(f.model_copy(update={"attribution": attribute_failure(f, facts, category)}))
    return report.model_copy(update={"failures": failures})
