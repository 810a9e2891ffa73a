"""Data-parallel training and sharded work across processes, on ``torch.distributed``.

One process per device (``torchrun --nproc_per_node=N``, or several nodes with the
rendezvous flags) is PyTorch's own way to use many GPUs or machines; this module is the
thin layer the trainer needs on top of it:

* ``init_distributed`` reads the ``torchrun`` environment (``RANK``, ``WORLD_SIZE``,
  ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``/``MASTER_PORT``), picks NCCL on
  CUDA and Gloo on CPU, binds each rank to its own GPU and, on CPU, splits the cores
  between the ranks of a node.  Without those variables it returns a one-process context
  whose collectives are no-ops, so single-process training pays nothing.
* Each rank plays its own games with its own dice (``rank_rng``); gradients are averaged
  across ranks with one all-reduce per update, weighted by the number of rows each rank
  trained on, so N ranks with B games each learn exactly what one process with N*B games
  would (``DistContext.sync_gradients``).  An explicit all-reduce rather than DDP because
  a rank may have nothing to learn on a ply (TD(lambda) before any of its games ends):
  it still takes part with zero weight instead of leaving the others waiting.
* Game counts and logged losses are summed over ranks; rank 0 alone writes TensorBoard
  logs and checkpoints (``DistContext.summary_writer``, ``DistContext.is_main``).
* Sharded work over independent items (``nard_rl.util.shards.map_shards``) joins the
  process group this module initialises: each rank takes its range of the items.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import torch
import torch.distributed as dist

T = TypeVar("T")

__all__ = [
    "DistContext",
    "init_distributed",
    "rank_rng",
    "torchrun_env",
]


def _env_int(env: dict[str, str], name: str, default: int | None = None) -> int | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {raw!r}") from None


def torchrun_env(env: dict[str, str] | None = None) -> tuple[int, int, int, int]:
    """``(rank, world_size, local_rank, local_world_size)`` as set by ``torchrun``.

    ``(0, 1, 0, 1)`` when not launched by it.  Inconsistent values fail here, naming the
    variable, rather than as a hang in the first collective.
    """
    env = dict(os.environ if env is None else env)
    world = _env_int(env, "WORLD_SIZE", 1)
    rank = _env_int(env, "RANK", 0)
    local_rank = _env_int(env, "LOCAL_RANK", rank)
    local_world = _env_int(env, "LOCAL_WORLD_SIZE", world)
    assert world is not None and rank is not None
    assert local_rank is not None and local_world is not None
    if world < 1:
        raise ValueError(f"WORLD_SIZE must be at least 1, got {world}")
    if not 0 <= rank < world:
        raise ValueError(f"RANK must be in [0, WORLD_SIZE={world}), got {rank}")
    if not 1 <= local_world <= world:
        raise ValueError(f"LOCAL_WORLD_SIZE must be in [1, {world}], got {local_world}")
    if not 0 <= local_rank < local_world:
        raise ValueError(
            f"LOCAL_RANK must be in [0, LOCAL_WORLD_SIZE={local_world}), got {local_rank}"
        )
    return rank, world, local_rank, local_world


def free_port() -> int:
    """A free TCP port on this host, for a single-machine rendezvous."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def local_rank_env(rank: int, world: int, port: int) -> dict[str, str]:
    """The variables ``torchrun --standalone`` would set for ``rank`` of ``world`` on this
    host: for processes started by other means (``torch.multiprocessing.spawn``)."""
    if not 0 <= rank < world:
        raise ValueError(f"need 0 <= rank < world, got rank={rank}, world={world}")
    return {
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "RANK": str(rank),
        "WORLD_SIZE": str(world),
        "LOCAL_RANK": str(rank),
        "LOCAL_WORLD_SIZE": str(world),
    }


def rank_rng(seed: int, rank: int = 0, games: int | None = None) -> np.random.Generator:
    """The dice and exploration stream of one rank.

    Rank 0 gets ``default_rng(seed)``, exactly the stream of a single-process run, so a
    one-process run is unchanged; rank r > 0 gets the r-th child of the seed's
    ``SeedSequence`` (independent streams, numpy's recipe for parallel work).  ``games``
    gives a rank that joins a resumed run without a saved stream a fresh one that no
    earlier rank has played.
    """
    if seed < 0 or rank < 0:
        raise ValueError(f"seed and rank must be non-negative, got seed={seed}, rank={rank}")
    if games is not None:
        return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(rank, games)))
    if rank == 0:
        return np.random.default_rng(seed)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(rank,)))


class _NullWriter:
    """What ranks other than 0 log to: nothing (one writer per run, not per rank)."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None


@dataclass
class DistContext:
    """Where this process stands in the job, and the few collectives training needs."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int = 1
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    backend: str | None = None
    owns_group: bool = False
    """Whether ``init_distributed`` created the process group (and ``close`` ends it)."""
    _grad_buf: torch.Tensor | None = field(default=None, repr=False)

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def _comm_device(self) -> torch.device:
        # NCCL only moves CUDA tensors; Gloo moves CPU ones (and CUDA ones via the host)
        return self.device if self.backend == "nccl" else torch.device("cpu")

    def all_sum(self, values: Sequence[float]) -> list[float]:
        """Element-wise sums over ranks (float64): game counts, losses, points."""
        if not self.enabled:
            return [float(v) for v in values]
        t = torch.tensor(list(values), dtype=torch.float64, device=self._comm_device())
        dist.all_reduce(t)
        return [float(v) for v in t.cpu().tolist()]

    def broadcast_module(self, module: torch.nn.Module) -> None:
        """Rank 0's parameters and buffers on every rank (start and resume)."""
        if not self.enabled:
            return
        for t in module.state_dict().values():
            if self.backend == "nccl" or t.device.type == "cpu":
                dist.broadcast(t, src=0)
            else:  # Gloo with a CUDA tensor: through the host
                host = t.detach().cpu()
                dist.broadcast(host, src=0)
                t.copy_(host)

    def sync_gradients(self, module: torch.nn.Module, rows: int) -> int:
        """Average gradients over ranks, weighted by each rank's training rows.

        Every rank calls this once per update, also with ``rows == 0`` (it then adds
        nothing).  Afterwards each parameter's gradient is ``sum_r rows_r * grad_r /
        sum_r rows_r``, the gradient of the mean loss over all ranks' rows; returns that
        total (0: nobody had anything to learn, skip the optimiser step).  One
        all-reduce of one flat buffer, the row count riding in its last element.
        """
        if not self.enabled:
            return rows
        params = [p for p in module.parameters() if p.requires_grad]
        total = sum(p.numel() for p in params) + 1
        dev = self._comm_device()
        if self._grad_buf is None or self._grad_buf.numel() != total:
            self._grad_buf = torch.empty(total, dtype=torch.float32, device=dev)
        buf = self._grad_buf
        o = 0
        for p in params:
            n = p.numel()
            if p.grad is None or rows == 0:
                buf[o : o + n].zero_()
            else:
                buf[o : o + n].copy_(p.grad.reshape(-1)).mul_(float(rows))
            o += n
        buf[o] = float(rows)
        dist.all_reduce(buf)
        all_rows = round(float(buf[o].item()))
        if all_rows == 0:
            return 0
        buf[:o].div_(float(all_rows))
        o = 0
        for p in params:
            n = p.numel()
            g = buf[o : o + n].view_as(p)
            if p.grad is None:
                p.grad = g.to(p.device, copy=True)
            else:
                p.grad.copy_(g)
            o += n
        return all_rows

    def gather_objects(self, obj: T) -> list[T]:
        """Every rank's ``obj``, in rank order, on every rank (picklable objects)."""
        if not self.enabled:
            return [obj]
        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, obj)
        return out

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()

    def summary_writer(self, log_dir: str) -> Any:
        """A TensorBoard writer on rank 0, a silent stand-in on the other ranks."""
        if not self.is_main:
            return _NullWriter()
        from torch.utils.tensorboard import SummaryWriter

        return SummaryWriter(log_dir)

    def metadata(self) -> dict[str, Any]:
        """What a checkpoint records about the job that wrote it."""
        return {
            "world_size": self.world_size,
            "backend": self.backend or "none",
            "device_type": self.device.type,
        }

    def close(self, sync: bool = True) -> None:
        """Leave the process group.  ``sync``: wait for every rank first (a gloo rank
        whose peer tears its connections down while it still finishes the last
        collective aborts); pass False on an error path, where the others may never
        come."""
        if self.owns_group and dist.is_initialized():
            if sync and self.enabled:
                dist.barrier()
            dist.destroy_process_group()
            self.owns_group = False


def weights_digest(module: torch.nn.Module) -> str:
    """SHA-256 of a module's parameters and buffers: equal digests, equal weights."""
    h = hashlib.sha256()
    for name, t in module.state_dict().items():
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def init_distributed(device: str = "auto", env: dict[str, str] | None = None) -> DistContext:
    """Join the ``torchrun`` job this process belongs to, or stand alone.

    ``device`` is the configured device (``auto``, ``cpu``, ``cuda``, ``cuda:N``); under
    several ranks ``cuda`` means this rank's GPU, ``cuda:LOCAL_RANK``.  A process group
    that already exists (set up by the caller) is reused and left open.
    """
    from nard_rl.nets.network import resolve_device

    rank, world, local_rank, local_world = torchrun_env(env)
    if dist.is_available() and dist.is_initialized():
        rank, world = dist.get_rank(), dist.get_world_size()
        owns = False
    else:
        owns = world > 1
    dev = resolve_device(device)
    if dev.type == "cuda" and world > 1 and dev.index is None:
        if local_rank >= torch.cuda.device_count():
            raise RuntimeError(
                f"LOCAL_RANK {local_rank} has no GPU: this node has "
                f"{torch.cuda.device_count()}; start at most that many processes per node"
            )
        dev = torch.device("cuda", local_rank)
    if dev.type == "cuda":
        torch.cuda.set_device(dev)
    backend: str | None = None
    if world > 1:
        if owns:
            backend = "nccl" if dev.type == "cuda" else "gloo"
            if not dist.is_available():
                raise RuntimeError("this PyTorch build has no torch.distributed")
            dist.init_process_group(backend=backend)
        else:
            backend = str(dist.get_backend())
        if dev.type == "cpu" and local_world > 1:
            # ranks of a node share its cores: one thread pool each would oversubscribe
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // local_world))
    return DistContext(
        rank=rank,
        world_size=world,
        local_rank=local_rank,
        local_world_size=local_world,
        device=dev,
        backend=backend,
        owns_group=owns,
    )


# --- random streams in checkpoints ------------------------------------------------------


def numpy_rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """A generator's state with its 128-bit integers as strings (``weights_only``-safe)."""
    st = rng.bit_generator.state
    return json.loads(json.dumps(st, default=str), parse_int=str)


def numpy_rng_from_state(state: dict[str, Any]) -> np.random.Generator:
    def ints(o: Any) -> Any:
        if isinstance(o, dict):
            return {k: ints(v) for k, v in o.items()}
        if isinstance(o, str) and o.lstrip("-").isdigit():
            return int(o)
        return o

    rng = np.random.default_rng()
    rng.bit_generator.state = ints(state)
    return rng


def rng_checkpoint(ctx: DistContext, rng: np.random.Generator) -> dict[str, Any]:
    """Every random state a resumed run needs; a collective (all ranks call it).

    ``rng`` is rank 0's dice stream (what single-process checkpoints always held),
    ``rank_rngs`` every rank's, ``torch_rng`` the CPU generator and ``cuda_rng`` the
    generator of this rank's GPU when it trains on one.
    """
    states = ctx.gather_objects(numpy_rng_state(rng))
    out: dict[str, Any] = {
        "rng": states[0],
        "rank_rngs": states,
        "torch_rng": torch.get_rng_state(),
    }
    if ctx.device.type == "cuda":
        out["cuda_rng"] = torch.cuda.get_rng_state(ctx.device)
    return out


def restore_rngs(
    extra: dict[str, Any], ctx: DistContext, seed: int, games: int
) -> np.random.Generator:
    """This rank's dice stream from a checkpoint's ``extra``, and torch's generators.

    Works whatever device or number of ranks wrote the checkpoint: rank r continues the
    r-th saved stream, a rank beyond the saved ones starts a fresh stream of its own
    (``rank_rng(seed, r, games)``), and torch states are moved to the CPU before being set
    (``torch.set_rng_state`` takes a CPU byte tensor, whatever ``map_location`` loaded
    it on).  The CUDA state is restored only when this rank trains on a GPU.
    """
    saved = extra.get("rank_rngs") or ([extra["rng"]] if "rng" in extra else [])
    if ctx.rank < len(saved):
        rng = numpy_rng_from_state(saved[ctx.rank])
    else:
        rng = rank_rng(seed, ctx.rank, games)
    if "torch_rng" in extra:
        torch.set_rng_state(torch.as_tensor(extra["torch_rng"]).cpu())
    if "cuda_rng" in extra and ctx.device.type == "cuda":
        torch.cuda.set_rng_state(torch.as_tensor(extra["cuda_rng"]).cpu(), ctx.device)
    return rng


# --- sharding independent work ----------------------------------------------------------
