"""`repopilot serve` against a real PostgreSQL: signatures, idempotent enqueueing, health and metrics."""

from __future__ import annotations

import time

from tests.service.conftest import Service

PAYLOAD_REPO = "octo/demo"


def _failed_run(service: Service, run_id: int = 1) -> dict[str, object]:
    service.github.add_repo(PAYLOAD_REPO, 7)
    return service.github.add_run(PAYLOAD_REPO, run_id, head_sha="ab" * 20, pull_request=12)


def _jobs(service: Service) -> list[tuple[object, ...]]:
    return service.sql("SELECT task_name, lock, status::text FROM procrastinate_jobs ORDER BY id")


def test_a_signed_failed_run_is_queued_once_even_when_replayed(service: Service) -> None:
    payload = _failed_run(service)
    first = service.deliver("workflow_run", payload, delivery="d-1")
    assert first.status_code == 202 and first.json()["status"] == "queued"
    for _ in range(3):
        again = service.deliver("workflow_run", payload, delivery="d-1")
        assert again.status_code == 200 and again.json() == {"status": "duplicate"}
    assert _jobs(service) == [("repopilot:diagnose", "octo/demo#12", "todo")]
    assert service.sql("SELECT delivery_id, kind FROM repopilot_deliveries") == [("d-1", "diagnose")]


def test_bad_or_missing_signatures_get_401_and_nothing_else(service: Service) -> None:
    payload = _failed_run(service)
    for signature in ("", "sha256=" + "0" * 64, "sha1=deadbeef"):
        answer = service.deliver("workflow_run", payload, delivery="forged", signature=signature)
        assert answer.status_code == 401
        assert answer.content == b""
    assert _jobs(service) == []
    assert service.sql("SELECT count(*) FROM repopilot_deliveries") == [(0,)]
    # The forged attempts did not use up the delivery id: the genuine delivery is still accepted.
    assert service.deliver("workflow_run", payload, delivery="forged").status_code == 202


def test_events_without_work_are_acknowledged_and_recorded(service: Service) -> None:
    answer = service.deliver("ping", {"zen": "Design for failure.", "hook_id": 1}, delivery="p-1")
    assert answer.status_code == 202 and answer.json()["status"] == "ignored"
    assert service.deliver("ping", {"zen": "x"}, delivery="p-1").json()["status"] == "duplicate"
    assert _jobs(service) == []


def test_malformed_requests_are_refused_with_400(service: Service) -> None:
    from repopilot.service import sign
    from tests.service.conftest import SECRET

    body = b"not json"
    answer = service.client.post("/webhook", content=body, headers={
        "X-GitHub-Event": "push", "X-GitHub-Delivery": "m-1", "X-Hub-Signature-256": sign(SECRET, body)})
    assert answer.status_code == 400
    unsigned_headers = service.client.post("/webhook", content=b"{}", headers={
        "X-Hub-Signature-256": sign(SECRET, b"{}")})
    assert unsigned_headers.status_code == 400  # signed, but no delivery id or event


def test_the_answer_is_fast(service: Service) -> None:
    payload = _failed_run(service)
    took = []
    for i in range(30):
        started = time.perf_counter()
        assert service.deliver("workflow_run", payload, delivery=f"fast-{i}").status_code == 202
        took.append(time.perf_counter() - started)
    # Generous for a loaded CI machine; bench/service_load.py measures the real p95.
    assert sorted(took)[len(took) // 2] < 0.25


def test_healthz_and_metrics(service: Service) -> None:
    payload = _failed_run(service)
    service.deliver("workflow_run", payload, delivery="m-1")
    service.deliver("workflow_run", payload, delivery="m-1")
    service.deliver("workflow_run", payload, delivery="m-2", signature="sha256=bad")
    assert service.client.get("/healthz").json() == {"status": "ok"}
    text = service.client.get("/metrics").text
    assert 'repopilot_webhook_answers_total{outcome="queued"} 1' in text
    assert 'repopilot_webhook_answers_total{outcome="duplicate"} 1' in text
    assert 'repopilot_webhook_answers_total{outcome="refused"} 1' in text
    assert 'repopilot_deliveries_total{event="workflow_run",kind="diagnose"} 1' in text
    assert 'repopilot_queue_jobs{queue="github",status="todo"} 1' in text
    for name in ("repopilot_job_queued_seconds", "repopilot_job_run_seconds", "repopilot_model_tokens_total",
                 "repopilot_model_cost_usd_total"):
        assert f"# TYPE {name}" in text


def test_concurrent_copies_of_one_delivery_queue_one_job(service: Service) -> None:
    from concurrent.futures import ThreadPoolExecutor

    payload = _failed_run(service)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: service.deliver("workflow_run", payload, delivery="same").json()["status"],
                                range(16)))
    assert sorted(answers) == ["duplicate"] * 15 + ["queued"]
    assert len(_jobs(service)) == 1
    assert service.sql("SELECT job_id IS NOT NULL FROM repopilot_deliveries") == [(True,)]
