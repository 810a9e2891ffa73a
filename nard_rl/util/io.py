"""Atomic file writes, the one implementation every writer of checkpoints, shards, caches
and pipeline state uses.

Torch-free and engine-free, so the engine's caches and the network's checkpoints share it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

TEMP_SUFFIX = ".tmp"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (another user's counts as alive; a zombie,
    killed but not yet reaped by its parent, does not: it will never write again)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (not Linux): existence is all that can be told
    # the state follows the parenthesised command name, which may itself hold spaces
    return stat[stat.rfind(")") + 2 : stat.rfind(")") + 3] not in ("Z", "X")


def _temp_name(path: Path) -> Path:
    """``NAME.HOST.PID.RANDOM.tmp`` beside ``path``: the writer is in the name, so a
    leftover (its writer killed) can be told from a temporary still being written."""
    host = socket.gethostname().replace(os.sep, "_")
    return path.with_name(f"{path.name}.{host}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")


def remove_stale_temps(path: str | Path) -> list[Path]:
    """Delete the temporaries of writes to ``path`` whose writer is gone (same host, pid not
    alive): what a ``kill -9`` in the middle of a save leaves when the folder's filesystem
    cannot make unnamed files.  Temporaries of live writers and other hosts are left."""
    path = Path(path)
    host = socket.gethostname().replace(os.sep, "_")
    removed = []
    for tmp in path.parent.glob(f"{path.name}.*{TEMP_SUFFIX}"):
        middle = tmp.name[len(path.name) + 1 : -len(TEMP_SUFFIX)]
        parts = middle.rsplit(".", 2)
        if len(parts) != 3 or parts[0] != host or not parts[1].isdigit():
            continue
        if not pid_alive(int(parts[1])):
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
                removed.append(tmp)
    return removed


def _open_unnamed(folder: Path, mode: int) -> int | None:
    """A file in ``folder`` with no name yet (Linux ``O_TMPFILE``): if the process dies
    before it is linked, the kernel frees it and nothing is left in the folder.  None
    where the platform or filesystem cannot make one."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not Path("/proc/self/fd").is_dir():
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY, mode)
    except OSError:  # e.g. a filesystem without O_TMPFILE support
        return None


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (the rename is atomic; this makes it survive
    a power cut too).  Not every platform can open a folder: then it is skipped."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_unnamed(
    folder: Path, data_writer: Callable[[BinaryIO], object], mode: int
) -> int | None:
    """An open, complete, fsynced unnamed file in ``folder`` holding what ``data_writer``
    wrote (its descriptor; the caller links and closes it), or None where unnamed files
    cannot be made or linked here."""
    fd = _open_unnamed(folder, mode)
    if fd is None:
        return None
    try:
        os.fchmod(fd, mode)  # whatever the umask took away
        with os.fdopen(os.dup(fd), "wb") as fh:
            data_writer(fh)
            fh.flush()
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _link_unnamed(fd: int, target: Path) -> None:
    """Give the unnamed file ``fd`` the name ``target`` (FileExistsError if taken)."""
    os.link(f"/proc/self/fd/{fd}", target, follow_symlinks=True)


def _write_named(tmp: Path, data_writer: Callable[[BinaryIO], object], mode: int) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            data_writer(fh)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(
    path: str | Path, write: Callable[[BinaryIO], object], *, mode: int = 0o644
) -> None:
    """Create ``path``'s folder, let ``write`` fill a new file beside ``path``, fsync it and
    rename it over ``path``.

    Readers see the old file or the whole new one, never a half-written one, because a
    rename within one folder is atomic on POSIX.  Nothing is left behind either: an
    exception from ``write`` removes the temporary file, and a ``kill -9`` cannot leave
    one, because on Linux the data goes to an unnamed file (``O_TMPFILE``) that gets a
    name only once complete, just before the rename.  Elsewhere a named temporary carries
    its writer's host and pid, and the next write to ``path`` deletes one whose writer is
    dead (``remove_stale_temps``).  ``mode``: the files are meant to be shared.  ``write``
    may be called twice (a filesystem that makes unnamed files but cannot link them), so
    it must only serialise.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    tmp = _temp_name(path)
    fd = _write_unnamed(path.parent, write, mode)
    try:
        if fd is not None:
            try:
                _link_unnamed(fd, tmp)
            except OSError:
                os.close(fd)
                fd = None
        if fd is None:
            _write_named(tmp, write, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        if fd is not None:
            os.close(fd)
    _fsync_folder(path.parent)


def create_new(path: str | Path, data: bytes, *, mode: int = 0o644) -> bool:
    """Create ``path`` holding ``data`` unless it exists (then False), atomically: the file
    appears complete or not at all (a hard link of a finished file, which also excludes
    over NFS).  What a lock file needs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def put(fh: BinaryIO) -> None:
        fh.write(data)

    fd = _write_unnamed(path.parent, put, mode)
    if fd is not None:
        try:
            _link_unnamed(fd, path)
            return True
        except FileExistsError:
            return False
        except OSError:
            pass  # cannot link unnamed files here: a named temporary instead
        finally:
            os.close(fd)
    tmp = _temp_name(path)
    _write_named(tmp, put, mode)
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    except OSError:  # no hard links at all: an exclusive create (written just after)
        try:
            new = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            return False
        with os.fdopen(new, "wb") as fh:
            fh.write(data)
        return True
    finally:
        tmp.unlink(missing_ok=True)
