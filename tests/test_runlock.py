"""The run directory's lock: one owner, named in the file; stale locks taken over only when
their owner is surely gone; the refusal to start afresh over a run."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nard_rl.util.runlock import (
    LOCK_NAME,
    LockOwner,
    RunExistsError,
    RunLock,
    RunLockedError,
    refuse_existing,
)

HOLD = (
    "import sys, time\n"
    "from nard_rl.util.runlock import RunLock\n"
    "lock = RunLock(sys.argv[1]).acquire()\n"
    "print('held', flush=True)\n"
    "time.sleep(120)\n"
)


def _dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _write_lock(run: Path, **fields: object) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    owner = {"pid": 1, "host": socket.gethostname(), "started": time.time(), **fields}
    path = run / LOCK_NAME
    path.write_text(json.dumps(owner))
    return path


def test_lock_names_its_owner_is_reentrant_and_goes_on_release(tmp_path: Path) -> None:
    lock = RunLock(tmp_path / "r").acquire()
    owner = LockOwner.read(lock.path)
    assert owner is not None
    assert (owner.pid, owner.host) == (os.getpid(), socket.gethostname())
    assert owner.alive() is True
    again = RunLock(tmp_path / "r").acquire()  # the same process claims it again
    again.release()
    assert lock.path.exists()  # still held by the first claim
    lock.release()
    assert not lock.path.exists()
    assert list((tmp_path / "r").iterdir()) == []  # no temporary left behind


def test_a_live_owner_in_another_process_is_refused_by_pid_and_host(tmp_path: Path) -> None:
    run = tmp_path / "r"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLockedError, match=f"in use by pid {holder.pid} on "):
            RunLock(run).acquire()
        assert LockOwner.read(run / LOCK_NAME).pid == holder.pid  # type: ignore[union-attr]
    finally:
        holder.kill()
        holder.wait()
    # killed with SIGKILL: its lock stays behind, stale, and is taken over
    lock = RunLock(run).acquire()
    assert lock.took_over is not None and lock.took_over.pid == holder.pid
    assert LockOwner.read(lock.path).pid == os.getpid()  # type: ignore[union-attr]
    lock.release()


def test_stale_locks_dead_pid_reused_pid_and_reboot_are_taken_over(tmp_path: Path) -> None:
    me = LockOwner.me()
    cases = {
        "dead": {"pid": _dead_pid()},
        # a live pid that is another process now (its start time differs)
        "reused": {"pid": os.getppid(), "process_start": "1"},
        "rebooted": {"pid": os.getpid(), "boot": "another-boot"},
    }
    for name, fields in cases.items():
        if name == "rebooted" and me.boot is None:
            continue
        if name == "reused" and me.process_start is None:
            continue
        _write_lock(tmp_path / name, **fields)
        lock = RunLock(tmp_path / name).acquire()
        assert lock.took_over is not None and lock.took_over.pid == fields["pid"], name
        lock.release()


def test_a_lock_of_another_host_or_an_unknown_file_is_never_taken_over(tmp_path: Path) -> None:
    path = _write_lock(tmp_path / "h", pid=_dead_pid(), host="some-other-node")
    before = path.read_bytes()
    with pytest.raises(RunLockedError, match="another host"):
        RunLock(tmp_path / "h").acquire()
    assert path.read_bytes() == before
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / LOCK_NAME).write_text("not json")
    with pytest.raises(RunLockedError, match="not a lock file"):
        RunLock(tmp_path / "g").acquire()


def _race(run: str, start: object, results: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    try:
        RunLock(run).acquire()
        results.put("won")  # type: ignore[attr-defined]
        time.sleep(2)  # hold it while the others look
    except RunLockedError:
        results.put("refused")  # type: ignore[attr-defined]


def test_processes_racing_for_a_stale_lock_end_with_one_owner(tmp_path: Path) -> None:
    run = tmp_path / "r"
    _write_lock(run, pid=_dead_pid())
    ctx = mp.get_context("fork")
    start, results = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(run), start, results)) for _ in range(4)]
    for p in procs:
        p.start()
    outcomes = sorted(results.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert outcomes == ["refused", "refused", "refused", "won"]


def test_refuse_existing_names_the_run_and_the_way_to_resume(tmp_path: Path) -> None:
    state = tmp_path / "run" / "best.pt"
    refuse_existing(tmp_path / "run", state, how_to_resume="resume=auto")  # nothing yet
    state.parent.mkdir()
    state.write_bytes(b"x")
    with pytest.raises(RunExistsError, match=r"already holds a run .* pass resume=auto"):
        refuse_existing(tmp_path / "run", state, how_to_resume="resume=auto")
