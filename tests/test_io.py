"""``nard_rl.io.atomic_write``: the file is the old one or the whole new one, never half."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from nard_rl.io import atomic_write


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
