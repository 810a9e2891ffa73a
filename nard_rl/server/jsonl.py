"""The one JSON-lines loop of every streaming front end: ``nard moves --jsonl``, ``nard
hint --jsonl``, ``nard cube --jsonl`` and ``nard agent``.

Every line gets exactly one answer line, whatever it holds, and the stream goes on: the
input is read as bytes and each line decoded on its own (invalid UTF-8 under a strict
locale is that line's error, not the end of the stream); a line over ``LINE_LIMIT`` bytes
is answered once and skipped; JSON nested too deeply (``RecursionError``), an integer of
more digits than Python converts (``ValueError``) and anything but an object are errors
that say what was expected.  Only failures the command declares fatal (``nard agent``'s
player dying twice) leave the loop.

Light on purpose (no numpy, no torch): ``nard moves`` imports it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import IO, Any

LINE_LIMIT = 1 << 20
"""Longest request line in bytes (a position request is a few hundred)."""

LINE_ERRORS = (ValueError, KeyError, TypeError, RecursionError)
"""What a malformed or impossible request raises: answered as ``{"error": ...}``."""


def error_text(exc: BaseException, limit: int = 500) -> str:
    """A one-line message for ``exc`` (its type when it has none), at most ``limit`` chars."""
    if isinstance(exc, RecursionError):
        return "the request nests too deeply"
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown(value: object, limit: int = 40) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters (an integer too long to
    print, which ``repr`` refuses, is named by its size)."""
    try:
        text = repr(value)
    except ValueError:
        return "an integer of thousands of digits"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _raw_lines(stream: IO[Any], limit: int) -> Iterator[bytes | str | None]:
    """The lines of ``stream`` (bytes from a binary stream, str from a text one); None
    for each line over ``limit``, whose rest is read and dropped."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and line[-1:] not in (b"\n", "\n"):
            while True:  # skip to the end of the over-long line
                rest = stream.readline(limit)
                if not rest or rest[-1:] in (b"\n", "\n"):
                    break
            yield None
            continue
        yield line


def requests(
    stream: IO[Any], expected: str, limit: int = LINE_LIMIT
) -> Iterator[tuple[dict[str, Any] | None, str | None]]:
    """``(request, None)`` for each readable request line, ``(None, error)`` for each
    unreadable one; blank lines are skipped.  ``stream`` may be binary (``sys.stdin``
    is read through its ``buffer``) or text."""
    stream = getattr(stream, "buffer", stream)
    for raw in _raw_lines(stream, limit):
        if raw is None:
            yield None, f"the line is longer than {limit} bytes; expected {expected}"
            continue
        if isinstance(raw, bytes):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield (
                    None,
                    (
                        f"the line is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                        f"{exc.start}); expected {expected}"
                    ),
                )
                continue
        else:
            text = raw
        if not text.strip():
            continue
        try:
            request = json.loads(text.strip())
        except RecursionError:
            yield None, f"the line nests JSON too deeply; expected {expected}"
            continue
        except ValueError as exc:  # JSONDecodeError, or an integer too long to convert
            yield None, f"the line is not valid JSON ({error_text(exc, 200)}); expected {expected}"
            continue
        if not isinstance(request, dict):
            kind = {list: "an array", str: "a string", bool: "a boolean"}.get(
                type(request), "a number" if isinstance(request, (int, float)) else "null"
            )
            yield None, f"expected {expected}, got {kind}"
            continue
        yield request, None


def write_answer(stdout: IO[str], answer: dict[str, Any]) -> None:
    stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
    stdout.flush()


def serve_lines(
    stdin: IO[Any],
    stdout: IO[str],
    answer: Callable[[dict[str, Any]], dict[str, Any]],
    expected: str,
    limit: int = LINE_LIMIT,
    fatal: tuple[type[BaseException], ...] = (),
) -> None:
    """Answer every request line of ``stdin`` on ``stdout`` (one flushed line each) with
    ``answer(request)`` until ``stdin`` closes.  ``LINE_ERRORS`` it raises become
    ``{"error": ...}``; any other exception too (``internal error``: a bug must not cost
    the later lines their answers), except the ``fatal`` ones, which end the loop."""
    for request, error in requests(stdin, expected, limit):
        if request is not None:
            try:
                out = answer(request)
            except LINE_ERRORS as exc:  # first: a RecursionError is the line's, never fatal
                out = {"error": error_text(exc)}
            except fatal:
                raise
            except Exception as exc:
                out = {"error": f"internal error ({type(exc).__name__}: {error_text(exc, 200)})"}
        else:
            out = {"error": error}
        write_answer(stdout, out)
