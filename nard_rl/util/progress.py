"""The one progress bar of every long command (training, evaluation, labelling).

On a terminal it redraws as usual.  When the output is a file or a pipe (a log, a batch
job, CI) redrawing means a new line per update, so a long run would write thousands of
them: there it updates at most once a minute (plus the final state), which keeps logs
readable and still shows that a job is alive.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from tqdm import tqdm

LOG_INTERVAL_S = 60.0
"""Seconds between updates when the output is not a terminal."""


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an interactive terminal (closed or odd streams are not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def progress_bar(
    total: int | None = None,
    *,
    desc: str | None = None,
    unit: str = "it",
    initial: int = 0,
    disable: bool = False,
    file: TextIO | None = None,
    **kwargs: Any,
) -> tqdm:
    """A ``tqdm`` bar on ``file`` (stderr by default), quiet when it is not a terminal."""
    stream = sys.stderr if file is None else file
    if is_terminal(stream):
        kwargs.setdefault("dynamic_ncols", True)
    else:
        kwargs.setdefault("mininterval", LOG_INTERVAL_S)
        kwargs.setdefault("maxinterval", max(LOG_INTERVAL_S, 10.0))
        kwargs.setdefault("ncols", 100)
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        initial=initial,
        disable=disable,
        file=stream,
        **kwargs,
    )
