"""Move notation in GNU Backgammon's style: ``24/18 13/11``, ``bar/22*``, ``6/off``,
``8/2(2)``, ``24/20*/16``.

The generator hands back raw steps ``(from, to)``; the notation is derived from them and
the board, so the hot path never builds strings.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nard_rl.engine.position import apply_steps


def _point_name(p: int) -> str:
    if p == 25:
        return "bar"
    if p <= 0:
        return "off"
    return str(p)


def format_steps(board: Sequence[int], steps: np.ndarray | Sequence[Sequence[int]]) -> str:
    """Format one play given as up to four ``(from, to)`` steps (``from`` -1 pads).

    One checker's consecutive steps are joined (``13/5``), and a landing point is kept
    only where it hits (``13/10*/5``); identical parts are counted (``8/2(2)``).
    """
    chains: list[list[tuple[int, bool]]] = []  # each: [(start, False), (landing, hit)...]
    # Highest source first (``apply_steps``' canonical order): a checker refilling the
    # point another one just left is then seen as one checker moving on (``24/23 23/20``
    # is ``24/20``), whatever order the generator recorded.
    played, _ = apply_steps(board, [st for st in steps if int(st[0]) >= 0])
    for f, t, hit in played:
        for chain in chains:
            if chain[-1][0] == f and f > 0:
                chain.append((t, hit))
                break
        else:
            chains.append([(f, False), (t, hit)])
    parts: list[tuple[int, int, str]] = []
    for chain in chains:
        text = _point_name(chain[0][0])
        for i, (p, hit) in enumerate(chain[1:], start=1):
            last = i == len(chain) - 1
            if hit or last:
                text += "/" + _point_name(p) + ("*" if hit else "")
        parts.append((chain[0][0], chain[-1][0], text))
    parts.sort(key=lambda x: (-x[0], -x[1]))
    out: list[str] = []
    i = 0
    while i < len(parts):
        j = i
        while j + 1 < len(parts) and parts[j + 1][2] == parts[i][2]:
            j += 1
        count = j - i + 1
        out.append(parts[i][2] + (f"({count})" if count > 1 else ""))
        i = j + 1
    return " ".join(out)
