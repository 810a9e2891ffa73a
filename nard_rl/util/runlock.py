"""One writer per run directory: the lock file, and the refusal to start afresh over a run.

Two mistakes overwrite a run: starting a new one under a name that already holds one (the
new run's first checkpoint replaces the old ``last.pt``), and starting two processes on
one name at once.  ``refuse_existing`` stops the first (unless the user asks to resume),
``RunLock`` the second: a file ``run.lock`` in the run directory names its owner (pid, host,
the process's start time, the command line) and is created atomically (a hard link of a
complete file, ``nard_rl.util.io.create_new``: no reader ever sees a half-written lock).  A
lock whose owner is gone (a ``kill -9``, a crash, a reboot) is stale: a process on the same
host sees that the pid is not alive (or is another process now) and takes the lock over; a
lock of another host cannot be judged from here and is refused with the way to clear it.

``nard train`` and ``nard pipeline`` claim their run through ``claim`` functions that run
both checks; the Hydra app runs them before Hydra writes its own files into the run
directory (``hydra_run_guard``), so a refused start changes no byte of the existing run.
Torch-free and engine-free, like ``nard_rl.util.io``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nard_rl.util.io import create_new, pid_alive

LOCK_NAME = "run.lock"

__all__ = [
    "LOCK_NAME",
    "LockOwner",
    "RunExistsError",
    "RunLock",
    "RunLockedError",
    "refuse_existing",
]


class RunExistsError(RuntimeError):
    """A fresh start was asked for on a run directory that already holds a run."""


class RunLockedError(RuntimeError):
    """Another live process (or one on another host) holds the run directory's lock."""


def refuse_existing(run: str | Path, state: str | Path, *, how_to_resume: str) -> None:
    """Raise ``RunExistsError`` when ``state`` (the file whose presence means the run has
    begun: a checkpoint) exists; the message names the run and how to continue it."""
    state = Path(state)
    if state.exists():
        raise RunExistsError(
            f"{run} already holds a run ({state} exists): pass {how_to_resume} to continue "
            f"it, or choose another name=... (or delete the folder) to start afresh"
        )


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _process_start(pid: int) -> str | None:
    """Start time of ``pid`` in clock ticks since boot (``/proc/PID/stat`` field 22): with
    the pid it names one process, even after the pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


@dataclass(frozen=True)
class LockOwner:
    """Who holds a lock, as its file says."""

    pid: int
    host: str
    started: float
    boot: str | None = None
    process_start: str | None = None
    command: str = ""

    @classmethod
    def me(cls) -> LockOwner:
        pid = os.getpid()
        return cls(
            pid=pid,
            host=socket.gethostname(),
            started=time.time(),
            boot=_boot_id(),
            process_start=_process_start(pid),
            command=" ".join(sys.argv)[:500],
        )

    def to_json(self) -> bytes:
        return json.dumps(self.__dict__, indent=1).encode()

    @classmethod
    def read(cls, path: Path) -> LockOwner | None:
        """The owner in ``path``; None when the file is gone.  A file that is not a lock
        raises ``RunLockedError`` (it is never taken over on a guess)."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            d = json.loads(raw)
            return cls(
                pid=int(d["pid"]),
                host=str(d["host"]),
                started=float(d["started"]),
                boot=d.get("boot"),
                process_start=d.get("process_start"),
                command=str(d.get("command", "")),
            )
        except (ValueError, KeyError, TypeError):
            raise RunLockedError(
                f"{path} is not a lock file this program wrote; if no process uses the run, "
                f"delete it"
            ) from None

    def alive(self) -> bool | None:
        """Whether the owner still runs: None when it is on another host (unknowable)."""
        if self.host != socket.gethostname():
            return None
        if self.boot is not None and self.boot != _boot_id():
            return False  # the host has rebooted since
        if not pid_alive(self.pid):
            return False
        start = _process_start(self.pid)
        return not (self.process_start and start and start != self.process_start)

    def describe(self) -> str:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started))
        return f"pid {self.pid} on {self.host}, since {since} ({self.command or '?'})"


_HELD: dict[tuple[int, str], int] = {}
"""Locks this process holds: (pid, lock path) -> how many ``acquire`` calls are open.  The
pid is in the key so a forked child never believes it holds its parent's lock."""


class RunLock:
    """The lock of one run directory (``with RunLock(run): ...``).

    Re-entrant within a process: the Hydra app claims the run before Hydra writes, and
    the training function claims it again; the file goes when the last holder releases
    it.  ``acquire`` raises ``RunLockedError`` naming the live owner."""

    def __init__(self, folder: str | Path, name: str = LOCK_NAME) -> None:
        self.folder = Path(folder)
        self.path = self.folder / name
        self._key = (os.getpid(), str(self.path.absolute()))
        self.took_over: LockOwner | None = None
        """The stale owner whose lock this one replaced, if any."""

    def acquire(self) -> RunLock:
        self._key = (os.getpid(), str(self.path.absolute()))
        if self._key in _HELD:
            _HELD[self._key] += 1
            return self
        self.folder.mkdir(parents=True, exist_ok=True)
        me = LockOwner.me()
        for _ in range(5):  # a lock released or cleared between two looks: look again
            if self._create(me):
                _HELD[self._key] = 1
                return self
            owner = LockOwner.read(self.path)
            if owner is None:
                continue
            alive = owner.alive()
            if alive is False:
                if self._remove_stale(owner):
                    self.took_over = owner
                    print(
                        f"{self.path}: taking over the stale lock of {owner.describe()}, "
                        f"which is no longer running",
                        file=sys.stderr,
                    )
                continue
            where = "" if alive else " (another host: this one cannot tell whether it runs)"
            raise RunLockedError(
                f"{self.folder} is in use by {owner.describe()}{where}; wait for it to end, "
                f"or choose another name=...; if it is surely gone, delete {self.path}"
            )
        raise RunLockedError(f"could not lock {self.path}: it keeps changing hands")

    def _create(self, me: LockOwner) -> bool:
        """Create the lock file with ``me`` in it, complete or not at all; False if it
        exists."""
        return create_new(self.path, me.to_json())

    def _remove_stale(self, owner: LockOwner) -> bool:
        """Delete the lock if it still names the dead ``owner``.  Processes of this host
        that find it stale at once take turns (an ``flock`` on the folder, released by the
        kernel whatever happens), so none deletes a lock another has just taken over."""
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if LockOwner.read(self.path) != owner:
                    return False  # someone was faster; look again
                self.path.unlink(missing_ok=True)
                return True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def release(self) -> None:
        count = _HELD.get(self._key, 0)
        if count > 1:
            _HELD[self._key] = count - 1
            return
        if count == 0:
            return
        del _HELD[self._key]
        with contextlib.suppress(RunLockedError):
            owner = LockOwner.read(self.path)
            if (
                owner is not None
                and owner.pid == os.getpid()
                and owner.host == socket.gethostname()
            ):
                self.path.unlink(missing_ok=True)

    @property
    def held(self) -> bool:
        return (os.getpid(), str(self.path.absolute())) in _HELD

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


Claim = Callable[[Path, Mapping[str, Any]], "RunLock | None"]


def hydra_guard_overrides(claim: str) -> list[str]:
    """The Hydra overrides that install ``hydra_run_guard(claim)`` as a callback."""
    return [
        "+hydra.callbacks.run_guard._target_=nard_rl.util.runlock.hydra_run_guard",
        f"+hydra.callbacks.run_guard.claim='{claim}'",
    ]


def hydra_run_guard(claim: str) -> Any:
    """A Hydra callback that runs ``claim`` (``"module:function"``, called with the run
    directory and the composed config) when the run starts, before Hydra saves its config
    and log into the run directory, and releases the lock it returns when the run ends.

    The commands add it as ``hydra.callbacks.run_guard``; the app's own function claims
    the run again (re-entrantly), so calling it from Python is just as safe.  A refusal
    raises ``SystemExit`` with the message: the one exception Hydra's callback runner
    does not swallow."""
    import importlib

    from hydra.experimental.callback import Callback
    from omegaconf import DictConfig

    module, _, func = claim.partition(":")
    claim_fn: Claim = getattr(importlib.import_module(module), func)

    class _RunGuard(Callback):
        lock: RunLock | None = None

        def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
            try:
                self.lock = claim_fn(Path(str(config.hydra.run.dir)), config)
            except (RunExistsError, RunLockedError) as exc:
                # Hydra turns a callback's exceptions into warnings and runs on; an exit
                # is what stops it (with the message, status 1), before any file is written
                raise SystemExit(f"{sys.argv[0]}: error: {exc}") from None

        def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
            if self.lock is not None:
                self.lock.release()
                self.lock = None

    return _RunGuard()
