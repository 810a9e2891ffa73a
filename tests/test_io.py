"""``nard_rl.util.io.atomic_write``: the file is the old one or the whole new one, never half."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from nard_rl.util.io import atomic_write


def test_atomic_write_creates_folders_and_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "x.bin"
    atomic_write(path, lambda fh: fh.write(b"first"))
    atomic_write(path, lambda fh: fh.write(b"second"))
    assert path.read_bytes() == b"second"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # not mkstemp's owner-only mode
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.bin"]


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(b"old")

    def half_then_crash(fh: object) -> None:
        fh.write(b"half")  # type: ignore[attr-defined]
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        atomic_write(path, half_then_crash)
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.bin"]


KILLED_WRITER = (
    "import sys, time\n"
    "from nard_rl.util.io import atomic_write\n"
    "def slow(fh):\n"
    "    fh.write(b'new' * 1000)\n"
    "    fh.flush()\n"
    "    print('writing', flush=True)\n"
    "    time.sleep(60)\n"
    "atomic_write(sys.argv[1], slow)\n"
)


@pytest.mark.parametrize("unnamed", [True, False], ids=["unnamed-file", "named-temporary"])
def test_a_kill_during_a_save_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, unnamed: bool
) -> None:
    """``kill -9`` in the middle of a write: the old file is intact; with unnamed files
    (Linux) nothing else is in the folder, and without them the next save to the same
    path removes the dead writer's temporary."""
    import signal
    import subprocess
    import sys

    import nard_rl.util.io as io_mod

    if unnamed and io_mod._open_unnamed(tmp_path, 0o644) is None:
        pytest.skip("this filesystem makes no unnamed files")
    path = tmp_path / "ckpt.pt"
    path.write_bytes(b"old")
    prelude = "" if unnamed else "import nard_rl.util.io as m; m._open_unnamed = lambda *a: None\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", prelude + KILLED_WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert path.read_bytes() == b"old"
    left = sorted(p.name for p in tmp_path.iterdir())
    if unnamed:
        assert left == ["ckpt.pt"]
    else:
        assert len(left) == 2 and left[1].startswith("ckpt.pt.") and f".{proc.pid}." in left[1]
        assert (tmp_path / left[1]).stat().st_size == 3000
    atomic_write(path, lambda fh: fh.write(b"next"))
    assert path.read_bytes() == b"next"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]


def test_stale_temporaries_of_dead_writers_only_are_removed(tmp_path: Path) -> None:
    import os
    import socket
    import subprocess
    import sys

    from nard_rl.util.io import remove_stale_temps

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()
    names = {
        "dead": f"x.bin.{host}.{dead.pid}.ab12.tmp",
        "alive": f"x.bin.{host}.{os.getpid()}.cd34.tmp",
        "other host": f"x.bin.elsewhere.{dead.pid}.ef56.tmp",
        "other file": f"y.bin.{host}.{dead.pid}.0123.tmp",
    }
    for name in names.values():
        (tmp_path / name).write_bytes(b"")
    removed = remove_stale_temps(tmp_path / "x.bin")
    assert [p.name for p in removed] == [names["dead"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        v for k, v in names.items() if k != "dead"
    )


@pytest.mark.parametrize("unnamed", [True, False], ids=["unnamed-file", "named-temporary"])
def test_create_new_makes_a_complete_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unnamed: bool
) -> None:
    import nard_rl.util.io as io_mod

    if not unnamed:
        monkeypatch.setattr(io_mod, "_open_unnamed", lambda *a: None)
    path = tmp_path / "run.lock"
    assert io_mod.create_new(path, b"first")
    assert not io_mod.create_new(path, b"second")
    assert path.read_bytes() == b"first"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["run.lock"]
    io_mod.atomic_write(tmp_path / "x", lambda fh: fh.write(b"x"))  # the fallback path too
    assert (tmp_path / "x").read_bytes() == b"x"


def test_a_zombie_is_not_alive() -> None:
    """A killed process its parent has not reaped yet (an orphaned rank whose launcher was
    killed, under an init that does not reap) holds no lock: it will never write again."""
    import subprocess
    import sys
    import time

    from nard_rl.util.io import pid_alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.time() + 30
    while time.time() < deadline:
        with open(f"/proc/{child.pid}/stat") as fh:
            if fh.read().split(")")[-1].split()[0] == "Z":
                break
        time.sleep(0.05)
    assert not pid_alive(child.pid)  # exited, not yet reaped: a zombie
    assert pid_alive(os.getpid())
    child.wait()
    assert not pid_alive(child.pid)
