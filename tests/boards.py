"""The tests' one way to write a board: a compact text or two point-to-count mappings.

Every board is from the mover's view (the side on roll, or the side that just moved for an
afterstate), in the engine's layout: ``board[1..24]`` the points by the mover's numbering
(its home board is 1..6), the mover's checkers positive, the opponent's negative;
``board[25]`` the mover's bar, ``board[0]`` minus the opponent's bar.  Checkers not placed
are borne off.

Text: sections separated by ``;``, each ``mover:`` or ``opp:`` followed by ``POINT:COUNT``
pairs (``bar:COUNT`` for the bar), the opponent's points numbered as the mover's; a section
``start`` begins from the opening position (later sections overwrite its points)::

    board("mover: 6:4; opp: 24:2")              # a short race
    board("mover: 13:14 bar:1; opp: 20:1 12:14")
    board("start; mover: 6:40")                 # deliberately no position (50 checkers)

The same with mappings: ``board({6: 4}, {24: 2})``, ``board({13: 14}, {20: 1, 12: 14},
mover_bar=1)``.  Nothing is validated unless ``validate=True`` (tests of refusals need
impossible boards); a negative count in a section puts the other side's checkers there.
"""

from __future__ import annotations

from collections.abc import Mapping

from nard_rl.engine.position import START_BOARD, Position

Board = tuple[int, ...]


def board(
    mover: str | Mapping[int, int] | None = None,
    opp: Mapping[int, int] | None = None,
    *,
    mover_bar: int = 0,
    opp_bar: int = 0,
    validate: bool = False,
) -> Board:
    """A board from a text (see the module docstring) or from mappings of points to counts."""
    if isinstance(mover, str):
        if opp is not None or mover_bar or opp_bar:
            raise ValueError("a board text says everything: no mappings or bars beside it")
        b = _parse(mover)
    else:
        b = [0] * 26
        _place(b, dict(mover or {}), 1)
        _place(b, dict(opp or {}), -1)
        b[25] += mover_bar
        b[0] -= opp_bar
    return Position(b).board if validate else tuple(b)


def _place(b: list[int], points: Mapping[int | str, int], sign: int) -> None:
    for point, count in points.items():
        if point == "bar":
            b[25 if sign > 0 else 0] = sign * count
        elif isinstance(point, int) and 1 <= point <= 24:
            b[point] = sign * count
        else:
            raise ValueError(f"a point is 1..24 or 'bar', got {point!r}")


def _parse(text: str) -> list[int]:
    b = [0] * 26
    for section in filter(None, (s.strip() for s in text.split(";"))):
        if section == "start":
            b = list(START_BOARD)
            continue
        side, sep, rest = section.partition(":")
        if not sep or side.strip() not in ("mover", "opp"):
            raise ValueError(f"a section is 'start', 'mover: ...' or 'opp: ...', got {section!r}")
        points: dict[int | str, int] = {}
        for pair in rest.split():
            where, sep, count = pair.partition(":")
            if not sep:
                raise ValueError(f"expected POINT:COUNT, got {pair!r} in {section!r}")
            points["bar" if where == "bar" else int(where)] = int(count)
        _place(b, points, 1 if side.strip() == "mover" else -1)
    return b
