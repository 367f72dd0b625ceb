"""The two processes of the service: `serve` (uvicorn running the receiver) and `work` (a Procrastinate worker
with the stalled-job recovery beside it)."""

from __future__ import annotations

import asyncio
import contextlib

from ..app import ServiceSettings
from .database import prepare_database
from .queue import QUEUES, make_queue, recover_forever

__all__ = ["serve", "work"]


def serve(settings: ServiceSettings, *, host: str, port: int) -> None:
    import uvicorn

    from .web import create_app

    prepare_database(settings.database_url)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning", access_log=False)


def work(settings: ServiceSettings, *, name: str, concurrency: int = 1, queues: tuple[str, ...] = QUEUES,
         heartbeat: float = 5.0, stalled_after: float = 30.0, wait: bool = True) -> None:
    """Run jobs until stopped (SIGINT/SIGTERM let the running job finish), or with `wait=False` until the queues
    are empty (tests). Workers silent for `stalled_after` seconds have their jobs put back in the queue."""
    from .jobs import install_runtime

    prepare_database(settings.database_url)
    install_runtime(settings)
    queue = make_queue(settings.database_url)

    async def main() -> None:
        async with queue.open_async():
            recovery = asyncio.create_task(recover_forever(queue, after=stalled_after, every=heartbeat))
            try:
                await queue.run_worker_async(queues=list(queues), name=name, concurrency=concurrency, wait=wait,
                                             update_heartbeat_interval=heartbeat,
                                             stalled_worker_timeout=stalled_after, install_signal_handlers=wait,
                                             listen_notify=True, fetch_job_polling_interval=1.0)
            finally:
                recovery.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await recovery

    asyncio.run(main())
