"""Where each job of a concatenation of logs begins and ends is kept compactly: thousands of jobs cost 8 bytes a
line, the latest kept past the cap."""

from __future__ import annotations

import io
from array import array

from repopilot.ci import scanner
from repopilot.ci.catalog import load_catalog
from repopilot.ci.scanner import Scanner


def _jobs(count: int) -> bytes:
    job = b"Started by user admin\n[Pipeline] Start of Pipeline\n+ make test\nok\nFinished: SUCCESS\n"
    return job * count


def test_job_starts_and_ends_are_machine_integers_in_order(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(scanner, "_KEEP_JOBS", 40)
    res = Scanner(load_catalog(), engine="re", chunk_size=4096).scan(io.BytesIO(_jobs(100)))
    assert isinstance(res.jobs, array) and res.jobs.itemsize == 8 and isinstance(res.job_ends, array)
    # The latest: past the cap the older half goes.
    assert list(res.job_ends)[-1] == 500 and list(res.job_ends) == [5 * k for k in range(101 - len(res.job_ends), 101)]
    assert 20 <= len(res.job_ends) <= 40
    starts = list(res.jobs)
    assert starts == sorted(starts) and starts[-1] in (496, 497)  # `Started by` or the pipeline's start
