"""Load and fault runs of RepoPilot as a service, all on this machine: a PostgreSQL (started here, on a Unix
socket), `repopilot serve`, two `repopilot worker` processes, and a fake GitHub API on loopback that records
every call (tests/fixtures/github/fake_app.py).

    .venv/bin/python bench/service_load.py                      # the load run: 2,000 deliveries, 10% replays
    .venv/bin/python bench/service_load.py --faults             # then the fault runs
    .venv/bin/python bench/service_load.py --deliveries 400 --faults --json out.json
    .venv/bin/python bench/service_load.py --placement pinned   # workers niced, on the other core (PLACEMENTS)

The load run sends signed `workflow_run` deliveries for 20 repositories in bursts (10% of them replays of a
delivery already sent), waits until the queue is empty, then checks against the fake GitHub that every distinct
delivery produced exactly one check run and every pull request exactly one RepoPilot comment (no loss, no
duplicate side effect). It reports the acknowledgement latency (p50/p95/p99), the throughput, and the queue
latency (delivery to job start) from the service's own table.

The fault runs (each checks the same no-loss / no-duplicate invariants afterwards):
- kill -9 of a worker while it holds jobs (GitHub answers slowly so jobs are mid-flight): its jobs run again on
  the other worker once its heartbeat is missed;
- PostgreSQL restarted mid-run: deliveries answered 503 during the restart are sent again (as GitHub's
  redelivery would); workers that lost the database are restarted by their supervisor (here: this script);
- GitHub answering 403 rate-limit and 502: jobs back off (the spacing of retried calls is reported), no hot loop;
- forged and replayed signatures: all refused with 401, nothing recorded.
Every loop here is bounded in count and time; all traffic stays on 127.0.0.1 and a Unix socket.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import multiprocessing
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from repopilot.service import sign  # noqa: E402
from tests.fixtures.github.fake_app import FakeGitHubApp, new_private_key, start  # noqa: E402
from tests.fixtures.servers import Postgres, remove, start_postgres  # noqa: E402

SECRET = "bench-webhook-secret"
REPOS = [f"org{i % 4}/repo{i}" for i in range(20)]  # 20 repositories in 4 installations
PRS_PER_REPO = 5
STALLED_AFTER = 6.0
WORKER_THREADS = 2  # jobs each worker process runs at once
# In a deployment the workers (and GitHub) run on other machines than the receiver; on this one 2-core machine
# `--placement` says how they share it with the receiver:
#   normal: every process at normal priority, on any core (the receiver competes with the workers for CPU);
#   nice:   the workers and the fake GitHub at the lowest priority (nice 19). Each worker runs in its own session,
#           and with the kernel's autogroup scheduling (sched_autogroup_enabled=1) a process's nice value only
#           ranks it within its session: the session's autogroup is reniced too, else `nice` changes nothing;
#   pinned: as `nice`, and the receiver pinned to core 0, the workers, the fake GitHub and this load generator
#           to core 1 (PostgreSQL, which both sides use, floats).
PLACEMENTS = ("normal", "nice", "pinned")
LOW_PRIORITY = 19
RECEIVER_CPU, OTHERS_CPU = 0, 1
BURST, CONNECTIONS = 100, 8  # deliveries per burst, sent over this many connections at once


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Fake:
    """The fake GitHub, running in its own process (so its threads do not share this process's GIL with the
    load generator), controlled over HTTP."""

    def __init__(self) -> None:
        fake = FakeGitHubApp(private_key=new_private_key(), port=_free_port())
        for i, repo in enumerate(REPOS):
            fake.add_repo(repo, 100 + i % 4)
        self.app_id, self.private_key, self.url = fake.app_id, fake.private_key, f"http://127.0.0.1:{fake.port}"
        self.process = multiprocessing.get_context("fork").Process(target=_serve_fake, args=(fake,), daemon=True)
        self.process.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.state()
                return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise SystemExit("the fake GitHub did not start")

    def _call(self, path: str, body: Any = None) -> Any:
        return httpx.post(f"{self.url}/_fake/{path}", json=body, timeout=60).json()

    def state(self, since: int = 0) -> dict[str, Any]:
        result: dict[str, Any] = self._call("state", {"since": since})
        return result

    def add_runs(self, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        payloads: list[dict[str, Any]] = self._call("runs", runs)
        return payloads

    def fail(self, path: str, status: int, headers: dict[str, str] | None = None, times: int = 1) -> None:
        self._call("fail", {"path": path, "status": status, "headers": headers, "times": times})

    def slow(self, path: str | None, seconds: float = 0.0) -> None:
        self._call("slow", {"path": path, "seconds": seconds} if path else None)

    def stop(self) -> None:
        self.process.kill()


def _serve_fake(fake: FakeGitHubApp) -> None:
    start(fake)
    while True:
        time.sleep(3600)


@dataclass
class Rig:
    pg: Postgres
    fake: Fake
    db: str
    tmp: Path
    port: int
    serve: subprocess.Popen[bytes] | None = None
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    run_ids: int = 0
    placement: str = "normal"
    placement_restored: bool = False

    def env(self) -> dict[str, str]:
        return {**os.environ, "REPOPILOT_DATABASE_URL": self.db, "REPOPILOT_WEBHOOK_SECRET": SECRET,
                "REPOPILOT_APP_ID": self.fake.app_id, "REPOPILOT_APP_PRIVATE_KEY": self.fake.private_key,
                "GITHUB_API_URL": self.fake.url, "REPOPILOT_RUNS_DIR": str(self.tmp / "runs"),
                "REPOPILOT_CACHE_DIR": str(self.tmp / "cache"), "REPOPILOT_WORKDIR": str(self.tmp / "work"),
                "REPOPILOT_MODEL": ""}

    def _spawn(self, *args: str, log: str, background: bool = False) -> subprocess.Popen[bytes]:
        out = (self.tmp / log).open("ab")
        command = [str(Path(sys.executable).parent / "repopilot"), *args]
        placed = self.placement if not (background and self.placement_restored) else "normal"
        if placed == "pinned":
            command = ["taskset", "-c", str(OTHERS_CPU if background else RECEIVER_CPU), *command]
        low = background and placed != "normal"
        proc = subprocess.Popen(["nice", "-n", str(LOW_PRIORITY), *command] if low else command, env=self.env(),
                                stdout=out, stderr=out, start_new_session=True)
        if low:
            _renice_autogroup(proc.pid)
        return proc

    def start_serve(self) -> None:
        self.serve = self._spawn("serve", "--port", str(self.port), log="serve.log")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise SystemExit("repopilot serve did not start; see serve.log")

    def start_worker(self, name: str) -> None:
        self.workers[name] = self._spawn("worker", "--name", name, "--concurrency", str(WORKER_THREADS),
                                         "--stalled-after", str(STALLED_AFTER), log=f"{name}.log", background=True)

    def restore_workers(self) -> None:
        """The workers (and the fake GitHub) back to normal priority on every core."""
        every = os.sched_getaffinity(0) | {RECEIVER_CPU, OTHERS_CPU}
        for pid in [*(p.pid for p in self.workers.values()), self.fake.process.pid]:
            if pid is None:
                continue
            with contextlib.suppress(OSError):
                Path(f"/proc/{pid}/autogroup").write_text("0\n")
            _place(pid, 0, every)
        self.placement_restored = True

    def keep_workers_alive(self) -> int:
        """A supervisor's job (compose's `restart: unless-stopped`): start again a worker that exited."""
        restarted = 0
        for name, proc in list(self.workers.items()):
            if proc.poll() is not None:
                self.start_worker(name)
                restarted += 1
        return restarted

    def stop(self) -> None:
        for proc in [*self.workers.values(), *([self.serve] if self.serve else [])]:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in [*self.workers.values(), *([self.serve] if self.serve else [])]:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)

    def sql(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.db, autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(query, args)
            return list(cursor.fetchall()) if cursor.description else []

    def new_deliveries(self, count: int) -> list[tuple[str, bytes]]:
        """`count` failed runs, registered with the fake GitHub; their signed-to-be deliveries."""
        runs = []
        for _ in range(count):
            self.run_ids += 1
            runs.append({"repo": REPOS[self.run_ids % len(REPOS)], "run_id": self.run_ids,
                         "head_sha": f"{self.run_ids:040x}", "pr": 1 + (self.run_ids // len(REPOS)) % PRS_PER_REPO})
        return [(str(uuid.uuid4()), json.dumps(p).encode()) for p in self.fake.add_runs(runs)]


def _place(pid: int, nice: int, cpus: set[int] | None) -> None:
    """Priority (and cores) of every thread of `pid`: both are per thread on Linux, and threads started later
    inherit them from the thread that starts them."""
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError):
            os.setpriority(os.PRIO_PROCESS, int(task.name), nice)
            if cpus is not None:
                os.sched_setaffinity(int(task.name), cpus)


def _renice_autogroup(pid: int) -> None:
    """Lower the priority of the session `pid` leads (see PLACEMENTS): without it, autogroup scheduling gives that
    session as much CPU as the receiver's whatever its processes' nice values."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/autogroup").write_text(f"{LOW_PRIORITY}\n")


def make_rig(placement: str) -> Rig:
    tmp = Path(tempfile.mkdtemp(prefix="repopilot-bench-"))
    pg = start_postgres()
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE bench")
    fake = Fake()
    pid = fake.process.pid
    if placement != "normal" and pid is not None:
        _place(pid, LOW_PRIORITY, {OTHERS_CPU} if placement == "pinned" else None)
    if placement == "pinned":
        os.sched_setaffinity(0, {OTHERS_CPU})  # this load generator: GitHub's side, not the receiver's
    return Rig(pg, fake, pg.url.replace("/postgres?", "/bench?"), tmp, _free_port(), placement=placement)


# -- sending ------------------------------------------------------------------------------------------------

@dataclass
class Sent:
    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    retry: list[tuple[str, bytes]] = field(default_factory=list)  # answered 503/connection error: redeliver


async def _post(client: httpx.AsyncClient, url: str, delivery: str, body: bytes, sent: Sent,
                signature: str | None = None) -> None:
    headers = {"X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": delivery, "Content-Type": "application/json",
               "X-Hub-Signature-256": signature or sign(SECRET, body)}
    started = time.perf_counter()
    try:
        response = await client.post(url, content=body, headers=headers)
    except httpx.HTTPError:
        sent.statuses[0] = sent.statuses.get(0, 0) + 1
        sent.retry.append((delivery, body))
        return
    sent.latencies.append(time.perf_counter() - started)
    sent.statuses[response.status_code] = sent.statuses.get(response.status_code, 0) + 1
    if response.status_code >= 500:
        sent.retry.append((delivery, body))


async def send(rig: Rig, deliveries: list[tuple[str, bytes]], *, burst: int = BURST, pause: float = 0.25,
               concurrency: int = CONNECTIONS, during: Any = None) -> Sent:
    """Send in bursts of `burst`, `concurrency` at a time; `during(i)` runs between bursts (fault injection)."""
    sent = Sent()
    url = f"http://127.0.0.1:{rig.port}/webhook"
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        gate = asyncio.Semaphore(concurrency)

        async def one(delivery: str, body: bytes) -> None:
            async with gate:
                await _post(client, url, delivery, body, sent)

        for i in range(0, len(deliveries), burst):
            await asyncio.gather(*(one(d, b) for d, b in deliveries[i:i + burst]))
            if during is not None:
                await asyncio.to_thread(during, i // burst)
            await asyncio.sleep(pause)
        for _ in range(20):  # GitHub's redelivery of what failed (bounded)
            if not sent.retry:
                break
            again, sent.retry = sent.retry, []
            await asyncio.sleep(1.0)
            await asyncio.gather(*(one(d, b) for d, b in again))
    return sent


def plan(rig: Rig, count: int, replay_share: float = 0.10, seed: int = 7) -> tuple[list[tuple[str, bytes]], int]:
    """`count` deliveries, `replay_share` of them replays of one sent earlier; returns (deliveries, distinct)."""
    rng = random.Random(seed)
    replays = int(count * replay_share)
    fresh = rig.new_deliveries(count - replays)
    out = list(fresh)
    for _ in range(replays):
        at = rng.randrange(1, len(out))
        out.insert(at, out[rng.randrange(0, at)])  # a replay comes after its original
    return out, len(fresh)


# -- checking -----------------------------------------------------------------------------------------------

def wait_for_queue(rig: Rig, timeout: float, *, supervise: bool = False) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if supervise:
            rig.keep_workers_alive()
        try:
            left = rig.sql("SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')")[0][0]
        except psycopg.OperationalError:
            left = -1
        if left == 0:
            return time.monotonic() - started
        time.sleep(0.5)
    raise SystemExit(f"the queue did not drain in {timeout:.0f} s")


def verify(rig: Rig, expected_runs: set[tuple[str, int]]) -> dict[str, Any]:
    state = rig.fake.state()
    checks = [(repo, int(run)) for repo, run in state["check_runs"]]
    comments = [(repo, int(number)) for repo, number in state["comments"]]
    lost = expected_runs - set(checks)
    duplicate_checks = len(checks) - len(set(checks))
    duplicate_comments = len(comments) - len(set(comments))
    jobs = dict(rig.sql("SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY 1"))
    return {"distinct_deliveries": len(expected_runs), "lost": len(lost), "duplicate_check_runs": duplicate_checks,
            "duplicate_comments": duplicate_comments, "jobs": jobs}


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def queue_latency(rig: Rig) -> dict[str, float]:
    rows = [r[0] for r in rig.sql("SELECT queued_s FROM repopilot_job_runs WHERE attempt = 0")]
    return {"p50_s": round(_pct(rows, 0.50), 3), "p95_s": round(_pct(rows, 0.95), 3),
            "max_s": round(max(rows, default=0.0), 3)}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summary(load: dict[str, Any]) -> str:
    ack, queued = load["ack_ms"], load["queue_latency"]
    return (f"ack p50 {ack['p50']} ms, p95 {ack['p95']} ms, p99 {ack['p99']} ms | {load['deliveries_sent']} "
            f"deliveries acknowledged at {load['ack_throughput_per_s']}/s (bursts with pauses), receiver CPU "
            f"{load['receiver_cpu_ms_per_delivery']} ms each | "
            f"{load['jobs_per_s']} jobs/s | queue latency p50 {queued['p50_s']} s, p95 {queued['p95_s']} s, "
            f"max {queued['max_s']} s | lost {load['lost']}, duplicate check runs {load['duplicate_check_runs']}, "
            f"duplicate comments {load['duplicate_comments']} | {load['shape']}")


# -- runs ---------------------------------------------------------------------------------------------------

def load_run(rig: Rig, count: int, *, start_workers: bool = False) -> dict[str, Any]:
    deliveries, distinct = plan(rig, count)
    expected = {(REPOS[i % len(REPOS)], i) for i in range(rig.run_ids - distinct + 1, rig.run_ids + 1)}
    assert rig.serve is not None
    cpu_before, started = _cpu_seconds(rig.serve.pid), time.monotonic()
    sent = asyncio.run(send(rig, deliveries))
    acked_in = time.monotonic() - started
    receiver_cpu = _cpu_seconds(rig.serve.pid) - cpu_before
    ms = [x * 1000 for x in sent.latencies]
    acks = {"ack_ms": {"p50": round(_pct(ms, 0.5), 2), "p95": round(_pct(ms, 0.95), 2),
                       "p99": round(_pct(ms, 0.99), 2), "mean": round(statistics.fmean(ms), 2)},
            "ack_throughput_per_s": round(len(deliveries) / acked_in, 1),
            # The receiver's own CPU per delivery: what the ack path costs, whatever else the machine is doing.
            "receiver_cpu_ms_per_delivery": round(receiver_cpu * 1000 / len(deliveries), 3)}
    print(json.dumps({"acknowledged": acks}), flush=True)  # before the (long) drain
    if start_workers:
        rig.start_worker("w1")
        rig.start_worker("w2")
    if rig.placement != "normal":  # the acknowledgements are measured: drain with every core, at normal priority
        rig.restore_workers()
    drained = wait_for_queue(rig, timeout=1800)
    total = time.monotonic() - started
    result = verify(rig, expected)
    result.update({
        "deliveries_sent": len(deliveries), "replays": len(deliveries) - distinct, "answers": sent.statuses, **acks,
        "shape": f"bursts of {BURST} over {CONNECTIONS} connections, 0.25 s apart; 2 workers x {WORKER_THREADS} "
                 f"jobs at once; placement {rig.placement} (see PLACEMENTS)"
                 + ("; drained at normal priority on every core" if rig.placement != "normal" else ""),
        "jobs_per_s": round(distinct / total, 1), "drain_after_last_ack_s": round(drained, 1),
        "queue_latency": queue_latency(rig)})
    return result


def kill_run(rig: Rig, count: int) -> dict[str, Any]:
    """kill -9 of worker w1 while it holds jobs; they finish once, on w2."""
    rig.fake.slow(r"/logs$", 0.3)  # jobs stay in flight long enough
    deliveries, distinct = plan(rig, count, replay_share=0.0)
    expected = {(REPOS[i % len(REPOS)], i) for i in range(rig.run_ids - distinct + 1, rig.run_ids + 1)}
    killed: dict[str, Any] = {}

    def during(burst: int) -> None:
        if burst != 0:
            return
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            doing = rig.sql("SELECT j.id FROM procrastinate_jobs j JOIN repopilot_job_runs r ON r.job_id = j.id AND "
                            "r.attempt = j.attempts WHERE j.status = 'doing' AND r.finished_at IS NULL AND "
                            "r.worker LIKE '%%/w1'")
            if doing:
                os.killpg(rig.workers["w1"].pid, signal.SIGKILL)
                killed.update(at=time.time(), jobs=[r[0] for r in doing])
                return
            time.sleep(0.05)

    asyncio.run(send(rig, deliveries, burst=max(1, count // 4), during=during))
    rig.workers["w1"].wait()
    wait_for_queue(rig, timeout=600)
    rig.fake.slow(None)
    result = verify(rig, expected)
    ids = killed.get("jobs", [])
    runs = rig.sql("SELECT job_id, count(*) FILTER (WHERE outcome = 'succeeded'), array_agg(worker ORDER BY "
                   "attempt) FROM repopilot_job_runs WHERE job_id = ANY(%s) GROUP BY job_id", ids)
    result.update({"killed_jobs": len(ids), "killed_jobs_succeeded_once": sum(1 for r in runs if r[1] == 1),
                   "killed_jobs_finished_on": sorted({r[2][-1].split("/")[-1] for r in runs})})
    rig.start_worker("w1")
    return result


def db_restart_run(rig: Rig, count: int) -> dict[str, Any]:
    deliveries, distinct = plan(rig, count, replay_share=0.05)
    expected = {(REPOS[i % len(REPOS)], i) for i in range(rig.run_ids - distinct + 1, rig.run_ids + 1)}
    timing: dict[str, float] = {}

    def during(burst: int) -> None:
        if burst == 1:
            started = time.monotonic()
            rig.pg.restart()
            timing["restart_s"] = round(time.monotonic() - started, 2)

    sent = asyncio.run(send(rig, deliveries, burst=max(1, count // 4), during=during))
    restarted = rig.keep_workers_alive()
    wait_for_queue(rig, timeout=600, supervise=True)
    result = verify(rig, expected)
    result.update({"answers": sent.statuses, "workers_restarted_by_supervisor": restarted, **timing})
    return result


def github_faults_run(rig: Rig, count: int) -> dict[str, Any]:
    """GitHub answers 502 and 403 rate-limit (resetting in 3 s) to check-run calls for a while."""
    fake = rig.fake
    reset = str(int(time.time()) + 3)
    first = fake.state()["call_count"]
    fake.fail(r"/check-runs$", 502, times=count)
    fake.fail(r"/commits/[0-9a-f]+/check-runs$", 403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
              times=count)
    deliveries, distinct = plan(rig, count, replay_share=0.0)
    expected = {(REPOS[i % len(REPOS)], i) for i in range(rig.run_ids - distinct + 1, rig.run_ids + 1)}
    asyncio.run(send(rig, deliveries, burst=count))
    wait_for_queue(rig, timeout=600)
    result = verify(rig, expected)
    calls = fake.state(since=first)["calls"]
    faulted = [(path, at) for _, path, status, at in calls if status in (403, 502)]
    # Spacing between successive faulted calls of one repository's check-run endpoints: no hot loop.
    by_repo: dict[str, list[float]] = {}
    for path, at in faulted:
        by_repo.setdefault(path.split("/")[3], []).append(at)
    gaps = [b - a for times in by_repo.values() for a, b in itertools.pairwise(times)]
    result.update({"faulted_calls": len(faulted), "faulted_calls_per_job": round(len(faulted) / max(1, distinct), 2),
                   "retry_gap_ms": {"min": round(min(gaps, default=0) * 1000, 1),
                                    "median": round(_pct(gaps, 0.5) * 1000, 1)},
                   "job_retries": rig.sql("SELECT count(*) FROM repopilot_job_runs WHERE outcome = 'retry'")[0][0]})
    return result


def forged_run(rig: Rig, count: int) -> dict[str, Any]:
    before = rig.sql("SELECT count(*) FROM repopilot_deliveries")[0][0]
    jobs_before = rig.sql("SELECT count(*) FROM procrastinate_jobs")[0][0]
    body = rig.new_deliveries(1)[0][1]
    sent = Sent()

    async def go() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            url = f"http://127.0.0.1:{rig.port}/webhook"
            for i in range(count):
                forged = ["sha256=" + "0" * 64, sign("wrong secret", body), "", "sha1=abc"][i % 4]
                await _post(client, url, f"forged-{i}", body, sent, signature=forged or "none")
            # A genuine delivery, then replays of it with a tampered body under its old signature.
            await _post(client, url, "genuine-1", body, sent)
            signature = sign(SECRET, body)
            for i in range(count // 4):
                await _post(client, url, "genuine-1", body + b" " * (i + 1), sent, signature=signature)

    asyncio.run(go())
    after = rig.sql("SELECT count(*) FROM repopilot_deliveries")[0][0]
    return {"forged_sent": count, "tampered_replays_sent": count // 4, "answers": sent.statuses,
            "deliveries_recorded": after - before,
            "jobs_queued": rig.sql("SELECT count(*) FROM procrastinate_jobs")[0][0] - jobs_before}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deliveries", type=int, default=2000)
    parser.add_argument("--faults", action="store_true", help="also run the fault runs")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--placement", choices=PLACEMENTS, default="normal",
                        help="how the workers share this machine with the receiver (see PLACEMENTS in the source)")
    parser.add_argument("--workers-after", action="store_true",
                        help="start the workers only once every delivery is acknowledged (the receiver's latency "
                             "without the workers' CPU beside it)")
    args = parser.parse_args()
    if args.placement == "pinned" and len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("--placement pinned needs two cores")
    rig = make_rig(args.placement)
    figures: dict[str, Any] = {}
    try:
        rig.start_serve()
        if not args.workers_after:
            rig.start_worker("w1")
            rig.start_worker("w2")
        figures["load"] = load_run(rig, args.deliveries, start_workers=args.workers_after)
        print(json.dumps({"load": figures["load"]}, indent=1), flush=True)
        print(summary(figures["load"]), flush=True)
        if args.faults:
            for name, run, n in (("kill_worker", kill_run, 200), ("db_restart", db_restart_run, 400),
                                 ("github_403_5xx", github_faults_run, 60), ("forged", forged_run, 200)):
                figures[name] = run(rig, n)
                print(json.dumps({name: figures[name]}, indent=1), flush=True)
    finally:
        rig.stop()
        rig.fake.stop()
        remove(rig.pg)
        if any(f.get("lost") or f.get("jobs", {}).get("failed") for f in figures.values()):
            print(f"kept the logs of a run that lost work: {rig.tmp}", file=sys.stderr)
        else:
            shutil.rmtree(rig.tmp, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
