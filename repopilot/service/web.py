"""`repopilot serve`: the webhook receiver. It checks the signature, records the delivery id and queues the job,
and answers: nothing slow happens here (GitHub expects an answer within seconds; the work is the worker's).

- A missing or wrong `X-Hub-Signature-256`: 401 with an empty body, nothing recorded.
- A delivery id seen before (GitHub's redelivery, a replay): 200 `duplicate`, nothing queued. The job and the
  delivery id are written in one statement (`queue.DEFER_SQL`): both or neither.
- An event we do not act on: 202 `ignored` (recorded, so a replay of it is a duplicate too).
- The database unreachable: 503, so GitHub shows the delivery as failed and it can be redelivered.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import psycopg_pool
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..app import ServiceSettings
from .events import route
from .metrics import Counters, render_metrics
from .queue import DEFER_SQL, defer_params
from .signature import verify

__all__ = ["create_app"]

_MAX_BODY = 25 * 1024 * 1024  # GitHub caps payloads at 25 MB
_IGNORED = ("INSERT INTO repopilot_deliveries (delivery_id, event) VALUES (%s, %s) "
            "ON CONFLICT (delivery_id) DO NOTHING RETURNING delivery_id")


@dataclass
class _State:
    settings: ServiceSettings
    counters: Counters
    pool: psycopg_pool.AsyncConnectionPool[Any] | None = None


def _answer(state: _State, status: int, outcome: str, **extra: Any) -> Response:
    state.counters.count(outcome)
    return JSONResponse({"status": outcome, **extra}, status_code=status)


async def _webhook(request: Request) -> Response:
    state: _State = request.app.state.service
    if int(request.headers.get("content-length") or 0) > _MAX_BODY:
        return _answer(state, 413, "too_large")
    body = await request.body()
    if not verify(state.settings.webhook_secret, body, request.headers.get("x-hub-signature-256")):
        state.counters.count("refused")
        return Response(status_code=401)
    delivery = request.headers.get("x-github-delivery", "").strip()
    event = request.headers.get("x-github-event", "").strip()
    if not delivery or len(delivery) > 200 or not event:
        return _answer(state, 400, "bad_request", error="X-GitHub-Delivery and X-GitHub-Event are required")
    try:
        payload = json.loads(body)
    except ValueError:
        return _answer(state, 400, "bad_request", error="the body is not JSON")
    work = route(event, payload) if isinstance(payload, dict) else None
    assert state.pool is not None
    try:
        async with state.pool.connection() as conn:
            if work is None:
                cursor = await conn.execute(_IGNORED, (delivery, event))
                if await cursor.fetchone() is None:
                    return _answer(state, 200, "duplicate")
                return _answer(state, 202, "ignored")
            try:
                cursor = await conn.execute(DEFER_SQL, defer_params(work, delivery=delivery, event=event))
            except psycopg.errors.UniqueViolation:
                return _answer(state, 200, "duplicate")
            row = await cursor.fetchone()
    except (psycopg.OperationalError, psycopg_pool.PoolTimeout):
        return _answer(state, 503, "unavailable")
    return _answer(state, 202, "queued", job=row[0] if row else None, kind=work.kind)


async def _healthz(request: Request) -> Response:
    state: _State = request.app.state.service
    assert state.pool is not None
    try:
        async with state.pool.connection(timeout=2.0) as conn:
            await conn.execute("SELECT 1")
    except (psycopg.OperationalError, psycopg_pool.PoolTimeout):
        return JSONResponse({"status": "database unavailable"}, status_code=503)
    return JSONResponse({"status": "ok"})


async def _metrics(request: Request) -> Response:
    state: _State = request.app.state.service
    assert state.pool is not None
    try:
        text = await render_metrics(state.pool, state.counters)
    except (psycopg.OperationalError, psycopg_pool.PoolTimeout):
        return PlainTextResponse("# database unavailable\n", status_code=503)
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4")


def create_app(settings: ServiceSettings) -> Starlette:
    """The ASGI app; the schema must exist (`prepare_database`)."""
    state = _State(settings, Counters())

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        pool = psycopg_pool.AsyncConnectionPool(settings.database_url, min_size=2, max_size=16, open=False,
                                                kwargs={"autocommit": True}, timeout=5.0)
        await pool.open()
        state.pool = pool
        try:
            yield
        finally:
            await pool.close()

    app = Starlette(routes=[Route("/webhook", _webhook, methods=["POST"]), Route("/", _webhook, methods=["POST"]),
                            Route("/healthz", _healthz), Route("/metrics", _metrics)], lifespan=lifespan)
    app.state.service = state
    return app
