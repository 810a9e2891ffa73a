"""Match equity tables (MET): the chance of winning a match from a given score.

Match play (R33, R34) turns every game result into a change of match-winning chances, so
cube decisions in matches are made in match equity, not in points.  A MET holds:

* the pre-Crawford table ``pre[i, j]``: the chance that a player who needs ``i + 1``
  points wins against one who needs ``j + 1``, at the start of a game in which doubling is
  allowed.  Its row ``i = 0`` is the value at the start of the Crawford game (R34), the
  game right after a player first reaches N-1 points;
* the post-Crawford row ``post[j]``: the chance of the trailer who needs ``j + 1`` points
  against a leader who needs 1, once the Crawford game has been played.

The shipped table is Kazaross-XG2 (25 points), read from GNU Backgammon's XML format with
the standard library.  Scores are always given as "points away" (points still needed), so
the same table serves every match length up to its size.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

DEFAULT_MET = "Kazaross-XG2.xml"


@dataclass(frozen=True)
class MatchScore:
    """A match state seen from the player on roll ("me"): length, both scores, Crawford.

    ``crawford`` marks the Crawford game itself (R34: nobody may double in it); a game
    with a player at N-1 that is not the Crawford game is post-Crawford.
    """

    length: int
    score_me: int = 0
    score_opp: int = 0
    crawford: bool = False

    def __post_init__(self) -> None:
        if self.length < 1:
            raise ValueError(f"match length must be at least 1, got {self.length}")
        for s in (self.score_me, self.score_opp):
            if not 0 <= s < self.length:
                raise ValueError(f"scores must be in 0..{self.length - 1}, got {s}")
        if self.crawford and min(self.away_me, self.away_opp) != 1:
            raise ValueError("the Crawford game needs a player at N-1 (R34)")
        if self.crawford and self.away_me == self.away_opp == 1:
            raise ValueError("at 1-away/1-away the Crawford game is over (R34)")

    @property
    def away_me(self) -> int:
        return self.length - self.score_me

    @property
    def away_opp(self) -> int:
        return self.length - self.score_opp

    @property
    def post_crawford(self) -> bool:
        """A player is at N-1 and the Crawford game has been played."""
        return min(self.away_me, self.away_opp) == 1 and not self.crawford

    @property
    def doubling_allowed(self) -> bool:
        """R34: no doubling in the Crawford game."""
        return not self.crawford


class MatchEquityTable:
    """Pre- and post-Crawford match winning chances, indexed by points away."""

    def __init__(self, pre: np.ndarray, post: np.ndarray, name: str = "") -> None:
        pre = np.asarray(pre, dtype=np.float64)
        post = np.asarray(post, dtype=np.float64)
        n = pre.shape[0]
        if pre.shape != (n, n) or post.shape != (n,) or n == 0:
            raise ValueError(
                f"MET needs an (n, n) table and an (n,) row, got {pre.shape}, {post.shape}"
            )
        if not (np.all((pre >= 0) & (pre <= 1)) and np.all((post >= 0) & (post <= 1))):
            raise ValueError("match equities must lie in [0, 1]")
        self.pre = pre
        self.post = post
        self.size = n
        self.name = name

    # ------------------------------------------------------------------ loading

    @classmethod
    def from_xml(cls, source: str | Path) -> MatchEquityTable:
        """Parse GNU Backgammon's MET XML format.

        Only explicit tables are read (a full square pre-Crawford table and one
        post-Crawford row shared by both players, as Kazaross-XG2 has); the format's
        formula-generated tables are refused rather than guessed at.
        """
        root = ET.parse(source).getroot()
        name = (root.findtext("info/name") or Path(source).stem).strip()
        pre_el = root.find("pre-crawford-table")
        post_el = root.find("post-crawford-table")
        if pre_el is None or post_el is None:
            raise ValueError(f"{source}: missing pre- or post-Crawford table")
        for el in (pre_el, post_el):
            if el.get("type", "explicit") != "explicit":
                raise ValueError(f"{source}: only explicit tables are supported")
        if post_el.get("player", "both") != "both":
            raise ValueError(f"{source}: only a post-Crawford table for both players is supported")
        pre = [[float(me.text or "") for me in row.findall("me")] for row in pre_el.findall("row")]
        post_rows = [[float(me.text or "") for me in row.findall("me")] for row in post_el]
        if len(post_rows) != 1:
            raise ValueError(f"{source}: expected one post-Crawford row, got {len(post_rows)}")
        n = len(pre)
        if any(len(r) != n for r in pre) or len(post_rows[0]) != n:
            raise ValueError(f"{source}: tables are not {n} x {n} and {n}")
        return cls(np.array(pre), np.array(post_rows[0]), name=name)

    @classmethod
    def default(cls) -> MatchEquityTable:
        """The shipped Kazaross-XG2 table (parsed once per process)."""
        return _default_met()

    # ---------------------------------------------------------------- look-ups

    def equity(self, away_me: int, away_opp: int, *, post_crawford: bool = False) -> float:
        """Chance that "me" wins the match at the start of a game.

        A player at 0 or fewer points away has won (R33: the score is capped at the
        match length, so overshooting changes nothing).  ``post_crawford`` only matters
        when exactly one player is 1-away: it selects the post-Crawford row instead of
        the Crawford-game value (R34).
        """
        if away_me <= 0:
            return 1.0
        if away_opp <= 0:
            return 0.0
        self._check(away_me, away_opp)
        if post_crawford and away_me == 1 and away_opp > 1:
            return 1.0 - float(self.post[away_opp - 1])
        if post_crawford and away_opp == 1 and away_me > 1:
            return float(self.post[away_me - 1])
        return float(self.pre[away_me - 1, away_opp - 1])

    def post_crawford_equity(self, away_trailer: int) -> float:
        """Chance of the trailer (``away_trailer`` away) against a 1-away leader, post-Crawford."""
        return self.equity(away_trailer, 1, post_crawford=True)

    def after_game(self, away_me: int, away_opp: int, points: int) -> float:
        """Match equity after a game in which "me" wins ``points`` (lose if negative).

        Capped at the match (R33).  Crawford bookkeeping (R34) follows from the scores:
        if a player is already 1-away now, this game is the Crawford game or later, so any
        next game with a 1-away player is post-Crawford; otherwise a player reaching
        1-away now makes the next game the Crawford game (the pre-Crawford row 1).
        """
        post = min(away_me, away_opp) == 1
        if points >= 0:
            return self.equity(away_me - points, away_opp, post_crawford=post)
        return self.equity(away_me, away_opp + points, post_crawford=post)

    def win_equity(self, away_me: int, away_opp: int, points: int) -> float:
        """Match equity after winning ``points`` (>= 0)."""
        return self.after_game(away_me, away_opp, abs(points))

    def lose_equity(self, away_me: int, away_opp: int, points: int) -> float:
        """Match equity after losing ``points`` (>= 0)."""
        return self.after_game(away_me, away_opp, -abs(points))

    def _check(self, away_me: int, away_opp: int) -> None:
        if away_me > self.size or away_opp > self.size:
            raise ValueError(
                f"the MET {self.name!r} covers matches up to {self.size} points away, "
                f"got {away_me}-away/{away_opp}-away"
            )


@lru_cache(maxsize=1)
def _default_met() -> MatchEquityTable:
    with resources.as_file(resources.files("nard_rl.data").joinpath(DEFAULT_MET)) as path:
        return MatchEquityTable.from_xml(path)
