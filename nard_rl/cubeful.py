"""A bot's cube decisions: lookahead pre-roll probabilities fed to the cube model.

``nard_rl.cube`` turns five cubeless probabilities into a cube action; this module decides
*which* probabilities.  A cube decision is about a position before the roll, which the
networks never see in training (they learn afterstates).  The 0-ply answer (the position
read as the opponent's afterstate) is the net's least reliable one, so the default looks
one roll ahead: the average over the 21 rolls of the roller's best play
(``nard_rl.search.Search.pre_roll_probs`` at ply 1), which the net has been trained on.
On the shared 3,000-decision reference file this cuts the equity lost per decision from
10.5 to 7.8 millipoints (``scripts/bench_cube.py --net default``).

``CubeAdvisor`` is what the CLI, ``nard play``, the environments and the server ask:
``decide`` for the player on roll, ``takes`` for the receiver of a double (through the
one shared ``nard_rl.cube.take_decision``, always from the doubler's view).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nard_rl.cube import (
    DOUBLE_PASS,
    DOUBLE_TAKE,
    CubeDecision,
    CubeState,
    Utility,
    cube_decision,
    cube_efficiency,
    take_decision,
)
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.evaluator import Evaluator
from nard_rl.met import MatchEquityTable, MatchScore

DEFAULT_CUBE_PLY = 1
"""Lookahead of the pre-roll probabilities behind cube decisions (see the module docstring)."""

_CHUNK = (100_000, 1_000, 16, 1)
"""Positions per search call at ply 0, 1, 2, 3 (bounds memory, see ``probabilities``)."""

Efficiency = Callable[[Sequence[int] | np.ndarray], float]


class CubeAdvisor:
    """Cube decisions of one evaluator at one ply (0, 1 or 2).

    ``efficiency`` maps a board (the side on roll's view) to Janowski's cube efficiency;
    the default is ``nard_rl.cube.cube_efficiency``.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        ply: int = DEFAULT_CUBE_PLY,
        rules: RuleSet | str | None = None,
        met: MatchEquityTable | None = None,
        efficiency: Efficiency | None = None,
    ) -> None:
        from nard_rl.search import MAX_PLY, Search

        if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= MAX_PLY:
            raise ValueError(f"cube ply must be an integer in 0..{MAX_PLY}, got {ply!r}")
        self.evaluator = evaluator
        self.ply = ply
        self.rules = get_rules(rules or getattr(evaluator, "rules", None))
        self.met = met or MatchEquityTable.default()
        self.efficiency: Efficiency = efficiency or cube_efficiency
        self.search = Search(evaluator)

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """``(N, 5)`` pre-roll probabilities of the side on roll of ``(N, 26)`` boards.

        Sent to the search in chunks: each ply multiplies the afterstates of one batch by
        about 400 (21 rolls, some 20 plays each), and encoded afterstates take ~1 KB each.
        """
        arr = np.asarray(boards, dtype=np.int8).reshape(-1, 26)
        step = _CHUNK[min(self.ply, len(_CHUNK) - 1)]
        out = np.empty((arr.shape[0], 5), dtype=np.float64)
        for lo in range(0, arr.shape[0], step):
            part = arr[lo : lo + step]
            out[lo : lo + step] = self.search.pre_roll_probs(part, ply=self.ply)
        return out

    def decide_batch(
        self,
        boards: np.ndarray,
        cubes: Sequence[CubeState],
        matches: Sequence[MatchScore | None],
        *,
        probs: np.ndarray | None = None,
    ) -> list[CubeDecision]:
        """The cube decision of the side on roll of each board (one lookahead batch)."""
        arr = np.asarray(boards, dtype=np.int8).reshape(-1, 26)
        if not len(cubes) == len(matches) == arr.shape[0]:
            raise ValueError(
                f"need one cube and one match score per board, got {arr.shape[0]} boards, "
                f"{len(cubes)} cubes and {len(matches)} scores"
            )
        p = self.probabilities(arr) if probs is None else probs
        return [
            cube_decision(
                np.clip(p[i], 0.0, 1.0),
                cubes[i],
                matches[i],
                x=self.efficiency(arr[i]),
                rules=self.rules,
                met=self.met,
            )
            for i in range(arr.shape[0])
        ]

    def decide(
        self, board: Sequence[int] | np.ndarray, cube: CubeState, match: MatchScore | None = None
    ) -> CubeDecision:
        """The cube decision of the side on roll of ``board`` (its view), before rolling."""
        return self.decide_batch(np.asarray(board)[None, :], [cube], [match])[0]

    def doubles(
        self, board: Sequence[int] | np.ndarray, cube: CubeState, match: MatchScore | None = None
    ) -> bool:
        """Whether the side on roll doubles (``too_good`` plays on for the gammon)."""
        return self.decide(board, cube, match).decision in (DOUBLE_TAKE, DOUBLE_PASS)

    def takes(
        self,
        doubler_board: Sequence[int] | np.ndarray,
        cube: CubeState,
        match: MatchScore | None = None,
    ) -> bool:
        """The receiver's answer to a double, everything given from the DOUBLER's view
        (its board, the cube before the double, its score): see ``take_decision``."""
        arr = np.asarray(doubler_board, dtype=np.int8)
        probs = np.clip(self.probabilities(arr[None, :])[0], 0.0, 1.0)
        return take_decision(
            probs, cube, match, x=self.efficiency(arr), rules=self.rules, met=self.met
        )


def score_aware_choice(
    player: object,
    boards: np.ndarray,
    dice: np.ndarray,
    afterstates: np.ndarray,
    offsets: np.ndarray,
    utilities: Sequence[Utility],
) -> np.ndarray:
    """Each position's play chosen for its own cube and score (``utilities[i]``, from
    ``nard_rl.cube.score_utility``): the local index, -1 where there is no play.

    A search player (``default:1``) searches with the utility at the root; a network
    player ranks its 0-ply probabilities by it; any other player (gnubg, pubeval, random)
    has no outcome probabilities to weigh and plays its own choice.
    """
    from nard_rl.search import SearchPlayer

    n = offsets.shape[0] - 1
    if len(utilities) != n:
        raise ValueError(f"need one utility per position, got {len(utilities)} for {n}")
    if isinstance(player, SearchPlayer):
        out = np.full(n, -1, dtype=np.int64)
        for i in range(n):
            lo, hi = int(offsets[i]), int(offsets[i + 1])
            if hi > lo:
                out[i] = player.search.choose_batch(
                    boards[i : i + 1],
                    dice[i : i + 1],
                    afterstates[lo:hi],
                    np.array([0, hi - lo], dtype=np.int64),
                    player.ply,
                    utility=utilities[i],
                )[0]
        return out
    probabilities = getattr(player, "probabilities", None)
    if probabilities is None:
        return np.asarray(player.choose_batch(boards, dice, afterstates, offsets))  # type: ignore[attr-defined]
    probs = np.asarray(probabilities(afterstates), dtype=np.float64) if len(afterstates) else None
    out = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        lo, hi = int(offsets[i]), int(offsets[i + 1])
        if hi > lo:
            assert probs is not None
            out[i] = int(np.argmax(utilities[i](probs[lo:hi])))
    return out
