"""Atomic file writes, the one implementation every writer of checkpoints, shards, caches
and pipeline state uses.

Torch-free and engine-free, so the engine's caches and the network's checkpoints share it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def atomic_write(
    path: str | Path, write: Callable[[BinaryIO], object], *, mode: int = 0o644
) -> None:
    """Create ``path``'s folder, let ``write`` fill a temporary file beside ``path``, fsync
    it and rename it over ``path``.

    A crash (or an exception from ``write``) leaves whatever was at ``path`` before intact
    and no temporary file behind: readers see the old file or the whole new one, never a
    half-written one, because a rename within one folder is atomic on POSIX.  ``mode``
    replaces ``mkstemp``'s owner-only permissions: the files are meant to be shared.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
