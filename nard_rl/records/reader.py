"""Which reader a file needs: SGF starts with ``(;``, anything else is read as ``.mat``."""

from __future__ import annotations

from pathlib import Path

from nard_rl.records.mat import parse_mat
from nard_rl.records.model import MatchRecord, RecordError
from nard_rl.records.sgf import parse_sgf

MAX_FILE_BYTES = 8 << 20
"""Larger files are refused: a long money session is a few hundred kilobytes."""


def parse_match(text: str | bytes, source: str = "<text>") -> MatchRecord:
    """A match record from the text of a ``.sgf`` or ``.mat`` file (detected by content)."""
    if isinstance(text, bytes):
        if len(text) > MAX_FILE_BYTES:
            raise RecordError(f"{source}: over {MAX_FILE_BYTES} bytes: not a match file")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            text = text.decode("latin-1")
    body = text.lstrip("\ufeff")
    if not body.strip():
        raise RecordError(f"{source}: the file is empty")
    if body.lstrip().startswith("("):
        return parse_sgf(body, source)
    return parse_mat(body, source)


def read_match(path: str | Path) -> MatchRecord:
    """The match record of a ``.sgf`` or ``.mat`` file."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise RecordError(f"{p}: {size} bytes, over {MAX_FILE_BYTES}: not a match file")
        data = p.read_bytes()
    except OSError as exc:
        raise RecordError(f"{p}: cannot read the file: {exc.strerror or exc}") from None
    return parse_match(data, str(p))
