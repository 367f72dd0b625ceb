"""`/metrics` in Prometheus' text format. The counts come from the database, not from one process's memory, so
every receiver replica and every worker adds up: deliveries by outcome, queue depth, job latency (time queued and
time running), model tokens and cost per installation. Only refused signatures, which are never recorded, are
counted in this process."""

from __future__ import annotations

from collections import Counter
from typing import Any

import psycopg_pool

__all__ = ["Counters", "render_metrics"]


class Counters:
    """This process's answers by outcome (queued, duplicate, ignored, refused, unavailable …)."""

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()

    def count(self, outcome: str) -> None:
        self.outcomes[outcome] += 1


_QUERIES = {
    "deliveries": "SELECT event, coalesce(kind, 'ignored'), count(*) FROM repopilot_deliveries GROUP BY 1, 2",
    "depth": "SELECT queue_name, status::text, count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing') "
             "GROUP BY 1, 2",
    "jobs": "SELECT kind, coalesce(outcome, 'running'), count(*), coalesce(sum(queued_s), 0), "
            "coalesce(sum(extract(epoch FROM finished_at - started_at)), 0) FROM repopilot_job_runs GROUP BY 1, 2",
    "rate": "SELECT installation_id, remaining, quota, reset_at, deferred FROM repopilot_rate_limits",
    "usage": "SELECT installation_id, sum(calls), sum(input_tokens), sum(output_tokens), sum(cost_usd) "
             "FROM repopilot_model_usage GROUP BY 1",
}


def _labels(**labels: Any) -> str:
    inner = ",".join(f'{k}="{str(v).replace(chr(92), "").replace(chr(34), "")}"' for k, v in labels.items())
    return "{" + inner + "}"


async def render_metrics(pool: psycopg_pool.AsyncConnectionPool[Any], counters: Counters) -> str:
    rows: dict[str, list[tuple[Any, ...]]] = {}
    async with pool.connection(timeout=2.0) as conn:
        for name, sql in _QUERIES.items():
            rows[name] = list(await (await conn.execute(sql)).fetchall())
    out = ["# HELP repopilot_webhook_answers_total Webhook requests this receiver answered, by outcome.",
           "# TYPE repopilot_webhook_answers_total counter"]
    out += [f"repopilot_webhook_answers_total{_labels(outcome=k)} {v}" for k, v in sorted(counters.outcomes.items())]
    out += ["# HELP repopilot_deliveries_total Distinct deliveries recorded, by event and job kind.",
            "# TYPE repopilot_deliveries_total counter"]
    out += [f"repopilot_deliveries_total{_labels(event=e, kind=k)} {n}" for e, k, n in rows["deliveries"]]
    out += ["# HELP repopilot_queue_jobs Jobs waiting (todo) or running (doing), by queue.",
            "# TYPE repopilot_queue_jobs gauge"]
    out += [f"repopilot_queue_jobs{_labels(queue=q, status=s)} {n}" for q, s, n in rows["depth"]]
    out += ["# HELP repopilot_job_queued_seconds Time from delivery to a job's start.",
            "# TYPE repopilot_job_queued_seconds summary",
            "# HELP repopilot_job_run_seconds Time a job ran.", "# TYPE repopilot_job_run_seconds summary"]
    for kind, outcome, n, queued, ran in rows["jobs"]:
        labels = _labels(kind=kind, outcome=outcome)
        out += [f"repopilot_job_queued_seconds_count{labels} {n}",
                f"repopilot_job_queued_seconds_sum{labels} {float(queued):.6f}",
                f"repopilot_job_run_seconds_count{labels} {n}",
                f"repopilot_job_run_seconds_sum{labels} {float(ran):.6f}"]
    out += ["# HELP repopilot_model_calls_total Model calls, by installation.",
            "# TYPE repopilot_model_calls_total counter",
            "# HELP repopilot_model_tokens_total Model tokens, by installation and direction.",
            "# TYPE repopilot_model_tokens_total counter",
            "# HELP repopilot_model_cost_usd_total Model spend in US dollars, by installation.",
            "# TYPE repopilot_model_cost_usd_total counter"]
    for inst, calls, tin, tout, cost in rows["usage"]:
        out += [f"repopilot_model_calls_total{_labels(installation=inst)} {calls}",
                f"repopilot_model_tokens_total{_labels(installation=inst, direction='input')} {tin}",
                f"repopilot_model_tokens_total{_labels(installation=inst, direction='output')} {tout}",
                f"repopilot_model_cost_usd_total{_labels(installation=inst)} {float(cost):.6f}"]
    out += _rate_lines(rows["rate"])
    return "\n".join(out) + "\n"


def _rate_lines(rows: list[tuple[Any, ...]]) -> list[str]:
    out = ["# HELP repopilot_github_rate_remaining GitHub API calls the installation's token had left, last seen.",
           "# TYPE repopilot_github_rate_remaining gauge",
           "# HELP repopilot_github_rate_limit The installation's GitHub API calls per window, last seen.",
           "# TYPE repopilot_github_rate_limit gauge",
           "# HELP repopilot_github_rate_reset_timestamp_seconds When the installation's window resets.",
           "# TYPE repopilot_github_rate_reset_timestamp_seconds gauge",
           "# HELP repopilot_github_rate_deferrals_total Jobs put off until the installation's limit reset.",
           "# TYPE repopilot_github_rate_deferrals_total counter"]
    for inst, remaining, limit, reset, deferred in rows:
        labels = _labels(installation=inst)
        out += [f"repopilot_github_rate_remaining{labels} {remaining}", f"repopilot_github_rate_limit{labels} {limit}",
                f"repopilot_github_rate_reset_timestamp_seconds{labels} {float(reset):.0f}",
                f"repopilot_github_rate_deferrals_total{labels} {deferred}"]
    return out
