"""Sharded work: the items ``[0, n)`` cut into contiguous ranges run by ranks or worker
processes, results in order.

Below every layer that plays or labels many independent items (duplicate-dice matches,
labelling, analysis), and torch-free itself: it joins a ``torch.distributed`` job only when
one has been initialised (the trainer's ``nard_rl.training.distributed``), and sets torch's
thread count only in the worker processes it spawns.
"""

from __future__ import annotations

import functools
import math
import multiprocessing
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def shard_bounds(n: int, shards: int) -> list[tuple[int, int]]:
    """``[0, n)`` as ``shards`` contiguous ranges in order, sizes differing by at most 1."""
    if n < 0:
        raise ValueError(f"number of items must be non-negative, got {n}")
    if shards < 1:
        raise ValueError(f"number of shards must be at least 1, got {shards}")
    q, r = divmod(n, shards)
    out = []
    lo = 0
    for s in range(shards):
        hi = lo + q + (1 if s < r else 0)
        out.append((lo, hi))
        lo = hi
    return out


def _chunks(lo: int, hi: int, chunk: int) -> list[tuple[int, int]]:
    return [(a, min(a + chunk, hi)) for a in range(lo, hi, chunk)]


def _init_worker(threads: int) -> None:
    import torch  # each worker's share of the cores for its forward passes

    torch.set_num_threads(threads)


def _call(fn: Callable[[int, int], T], bounds: tuple[int, int]) -> T:
    return fn(*bounds)


def map_shards(
    fn: Callable[[int, int], T],
    n: int,
    *,
    workers: int = 1,
    chunk: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[T]:
    """Run ``fn(lo, hi)`` over ``[0, n)`` cut into contiguous ranges; results in order.

    The items must be independent and ``fn`` deterministic in them (match pairs on
    counter-based dice, positions to label): then the caller's merge, a concatenation of
    the returned list, gives what one ``fn(0, n)`` would.

    * Inside a ``torch.distributed`` job of several ranks, rank r takes the r-th of
      ``world_size`` ranges and the results are all-gathered: every rank returns the full
      list (rank 0 usually writes it).
    * Otherwise, with ``workers > 1``, a pool of that many fresh (spawned) processes shares
      the chunks; ``fn`` must then be picklable (a module-level function or a
      ``functools.partial`` of one) and each worker uses ``cores / workers`` torch threads.
    * Otherwise the chunks run here, one after the other.

    Ranges are cut into chunks of ``chunk`` items (default: one per rank or worker, more
    when ``progress`` is given so it moves); ``progress(k)`` is called with this process's
    items done so far.  ``fn`` sees chunk boundaries only, so callers whose results depend
    on grouping (batched network forward passes) pass a ``chunk`` that is a multiple of
    their batch and get the same groups as a single process.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if chunk is not None and chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    dist = sys.modules.get("torch.distributed")  # no torch imported: no distributed job
    distributed = (
        dist is not None
        and dist.is_available()
        and dist.is_initialized()
        and dist.get_world_size() > 1
    )
    if distributed:
        lo, hi = shard_bounds(n, dist.get_world_size())[dist.get_rank()]
    else:
        lo, hi = 0, n
    size = hi - lo
    parallel = workers if not distributed else 1
    if chunk is None:
        pieces = parallel * (8 if progress is not None else 1)
        chunk = max(1, math.ceil(size / pieces))
    bounds = _chunks(lo, hi, chunk)
    results: list[T] = []
    done = 0
    if parallel > 1 and len(bounds) > 1:
        threads = max(1, (os.cpu_count() or 1) // parallel)
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            max_workers=min(parallel, len(bounds)),
            mp_context=ctx,
            initializer=_init_worker,
            initargs=(threads,),
        ) as pool:
            outputs = pool.map(functools.partial(_call, fn), bounds)
            for (a, b), res in zip(bounds, outputs, strict=True):
                results.append(res)
                done += b - a
                if progress is not None:
                    progress(done)
    else:
        for a, b in bounds:
            results.append(fn(a, b))
            done += b - a
            if progress is not None:
                progress(done)
    if distributed:
        gathered: list[Any] = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, results)  # type: ignore[union-attr]
        return [r for part in gathered for r in part]
    return results
