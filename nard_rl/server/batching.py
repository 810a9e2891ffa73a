"""Micro-batching: the positions of concurrent requests go through one forward pass.

A request hands its afterstates to ``MicroBatcher.submit`` and awaits the result.  One
worker task takes the first waiting request, then keeps collecting until ``max_wait``
seconds have passed or ``max_rows`` rows are queued, concatenates the rows of each rule
set and evaluates them in a single call on a one-thread executor (so the event loop keeps
accepting requests meanwhile, and torch is never entered from two threads).  While one
batch is being evaluated the next one fills up, so under load batches grow by themselves;
it waits (at most ``max_wait``) only while other requests are being served, so a lone
client pays no wait at all.  A small batch may be evaluated on the event loop itself
(``inline``, when the evaluator is free): a forward pass over a few dozen rows costs less
than handing it to a thread and back.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

EvalFn = Callable[[np.ndarray, str], np.ndarray]


@dataclass
class _Item:
    rows: np.ndarray
    key: str
    future: asyncio.Future[np.ndarray] = field(repr=False)


@dataclass
class BatchStats:
    batches: int = 0
    rows: int = 0
    requests: int = 0
    largest: int = 0


class MicroBatcher:
    """Collects ``(rows, key)`` requests and evaluates them in batches with ``fn``."""

    def __init__(
        self,
        fn: EvalFn,
        *,
        max_rows: int = 8192,
        max_wait: float = 0.001,
        executor: ThreadPoolExecutor | None = None,
        inline: Callable[[np.ndarray, str], np.ndarray | None] | None = None,
        inline_rows: int = 256,
    ) -> None:
        if max_rows < 1 or max_wait < 0:
            raise ValueError("max_rows must be >= 1 and max_wait >= 0")
        self.fn = fn
        self.max_rows = max_rows
        self.max_wait = max_wait
        self.executor = executor or ThreadPoolExecutor(1, thread_name_prefix="nard-eval")
        self.inline = inline
        self.inline_rows = inline_rows
        self.stats = BatchStats()
        self.active = 1 << 30
        """Requests being served now (the app counts them); the batcher waits for more
        rows only while more requests are active than it has collected.  Without a
        counter it always waits up to ``max_wait``."""
        self._queue: asyncio.Queue[_Item] | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._queue = asyncio.Queue()
        self._task = asyncio.create_task(self._run(), name="nard-micro-batcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def run_sync(self, fn: Callable[..., object], *args: object) -> object:
        """Run other evaluation work (searches, cube analyses) on the same thread."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    async def submit(self, rows: np.ndarray, key: str) -> np.ndarray:
        """The evaluation of ``rows`` (evaluated together with whatever else is queued)."""
        if rows.shape[0] == 0:
            return np.zeros((0, 5), dtype=np.float64)
        if self._queue is None:  # not started (e.g. used outside the app): no batching
            return np.asarray(await self.run_sync(self.fn, rows, key))
        fut: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Item(rows, key, fut))
        return await fut

    async def _collect(self) -> list[_Item]:
        assert self._queue is not None
        first = await self._queue.get()
        batch = [first]
        n = first.rows.shape[0]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.max_wait
        while n < self.max_rows:
            try:
                item = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                left = deadline - loop.time()
                if left <= 0 or self.active <= len(batch):
                    break  # nobody else is on the way: waiting would only add latency
                try:
                    item = await asyncio.wait_for(self._queue.get(), left)
                except asyncio.TimeoutError:  # noqa: UP041 (the builtin only from Python 3.11)
                    break
            batch.append(item)
            n += item.rows.shape[0]
        return batch

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = await self._collect()
            by_key: dict[str, list[_Item]] = {}
            for item in batch:
                by_key.setdefault(item.key, []).append(item)
            for key, items in by_key.items():
                rows = np.concatenate([it.rows for it in items])
                try:
                    out = None
                    if self.inline is not None and rows.shape[0] <= self.inline_rows:
                        out = self.inline(rows, key)  # small: cheaper than two thread hops
                    if out is None:
                        out = await loop.run_in_executor(self.executor, self.fn, rows, key)
                except Exception as exc:  # hand the failure to every waiting request
                    for it in items:
                        if not it.future.done():
                            it.future.set_exception(exc)
                    continue
                self.stats.batches += 1
                self.stats.rows += rows.shape[0]
                self.stats.requests += len(items)
                self.stats.largest = max(self.stats.largest, rows.shape[0])
                start = 0
                for it in items:
                    stop = start + it.rows.shape[0]
                    if not it.future.done():
                        it.future.set_result(out[start:stop])
                    start = stop


class ServerBusy(RuntimeError):
    """A work queue is full: the request is refused (503) rather than left waiting."""


class WorkQueue:
    """One thread for one kind of blocking work (searches, session actions), with at most
    ``max_pending`` jobs running or waiting (None: unbounded).

    A job whose caller went away (the client disconnected) before it started is dropped;
    a running one finishes, and its slot is freed when it does, so the bound counts the
    work the thread really has.
    """

    def __init__(
        self,
        name: str,
        max_pending: int | None = None,
        executor: ThreadPoolExecutor | None = None,
    ) -> None:
        if max_pending is not None and max_pending < 1:
            raise ValueError(f"max_pending must be >= 1, got {max_pending}")
        self.name = name
        self.max_pending = max_pending
        self.executor = executor or ThreadPoolExecutor(1, thread_name_prefix=f"nard-{name}")
        self.pending = 0
        self._lock = threading.Lock()

    def _done(self, _: object) -> None:
        with self._lock:
            self.pending -= 1

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        with self._lock:
            if self.max_pending is not None and self.pending >= self.max_pending:
                raise ServerBusy(
                    f"the server is busy: {self.pending} {self.name} jobs are queued "
                    f"(at most {self.max_pending}); try again shortly"
                )
            self.pending += 1
        try:
            job = self.executor.submit(fn, *args)
        except BaseException:
            self._done(None)
            raise
        job.add_done_callback(self._done)
        return await asyncio.wrap_future(job)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
