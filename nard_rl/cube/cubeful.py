"""A bot's cube decisions: lookahead pre-roll probabilities fed to the cube model.

``nard_rl.cube.model`` turns five cubeless probabilities into a cube action; this module decides
*which* probabilities.  A cube decision is about a position before the roll, which the
networks never see in training (they learn afterstates), and the 0-ply answer (the
position read as the opponent's afterstate) is the net's least reliable one.  So the
default looks one roll ahead: the average over the 21 rolls of the roller's best play
(``nard_rl.search.nply.Search.pre_roll_probs`` at ply 1), and the decisions that come out
close to a boundary (within ``DEFAULT_REFINE_MARGIN`` of doubling vs not, or take vs
pass) are read once more at 2-ply.  On the shared 3,000-decision reference file
(``scripts/bench_cube.py --net default``), mean equity lost per decision judged by
gnubg 2-ply: 9.9 millipoints at 0-ply, 7.4 at 1-ply, 5.4 at 2-ply, and 5.4 with the
default (1-ply, 23% of the decisions refined to 2-ply) at a fraction of 2-ply's time.

Search cannot fix what the net misjudges many rolls ahead; rollouts can.  With
``rollout_trials`` (``nard cube`` rolls out 432 games by default, ``nard serve
--cube-rollout N`` on request) the close decisions with contact are also rolled out
(``nard_rl.search.rollout``) and the rollout is blended into their probabilities, weighted by
its number of games (``SEARCH_WORTH_TRIALS``): on the same file 3.61 millipoints with
144 games a close decision and 2.59 with 432, for about 0.4 and 1.1 s of one CPU core
per close decision; 2.53 since close races keep their 2-ply reading of the race net
and the bear-off database (``CubeAdvisor.rolls_out``).

``CubeAdvisor`` is what the CLI, ``nard play``, the environments and the server ask:
``decide`` for the player on roll, ``takes`` for the receiver of a double (through the
one shared ``nard_rl.cube.model.take_decision``, always from the doubler's view).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nard_rl.cube.met import MatchEquityTable, MatchScore
from nard_rl.cube.model import (
    DOUBLE_PASS,
    DOUBLE_TAKE,
    CubeDecision,
    CubeState,
    Utility,
    cube_decision,
    cube_efficiency,
    take_decision,
)
from nard_rl.engine.classify import race_flags
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.nets.evaluator import CompositeEvaluator, Evaluator

DEFAULT_CUBE_PLY = 1
"""Lookahead of the pre-roll probabilities behind cube decisions (see the module docstring)."""

_CHUNK = (100_000, 1_000, 16, 1)
"""Positions per search call at ply 0, 1, 2, 3 (bounds memory, see ``probabilities``)."""

DEFAULT_REFINE_MARGIN = 0.15
"""Decisions this close (normalised equity) to a doubling or take boundary at the
advisor's ply are read again one ply deeper."""
MAX_REFINE_PLY = 2
"""Refinement never goes beyond 2-ply (3-ply costs seconds a position on a CPU)."""
DEFAULT_CUBE_ROLLOUT = 432
"""Games rolled out per close decision by ``nard cube`` (0: off; see ``CubeAdvisor``).
The analysis command takes its time (about 1.1 s of one core per close decision; 138 ms
per decision on average over the shared cube file, on two cores) for 42% less equity
lost; the server, ``nard play`` and cubeful evaluation answer at once and leave rollouts
off unless asked."""
SEARCH_WORTH_TRIALS = 96
"""How many rollout games the refined search's estimate is worth when the two are
blended: a rollout of T games gets the weight T / (T + 96).  Measured on the net's own
close decisions of the shared cube file (no gnubg figure involved): the variance of one
rollout game's equity is 0.76, that of the 2-ply search's error against 432-game
rollouts 0.0081, a ratio of 93 (98 for the winning chance alone)."""


def _is_close(d: CubeDecision, margin: float) -> bool:
    """Whether a decision sits within ``margin`` of changing (double vs not, take vs pass)."""
    if d.double_take is None or d.double_pass is None:
        return False
    double_value = min(d.double_take, d.double_pass)
    return abs(d.no_double - double_value) < margin or abs(d.double_take - d.double_pass) < margin


Efficiency = Callable[[Sequence[int] | np.ndarray], float]


def _rollout_judge(evaluator: Evaluator) -> Evaluator:
    """The evaluator cube rollouts play with and judge their races by: the composite
    without its race net.  A rollout averages hundreds of race judgments, so what counts
    there is a judge's average bias, not its error on one position: the race net's
    gammon chances run 0.007 to 0.009 above rollouts to the end while the contact
    net's are level (on the cube reference file, 2.76 mp of cube error with the race net
    judging, 2.59 with the contact net).  Checker play keeps the race net, which ranks
    race plays better."""
    if isinstance(evaluator, CompositeEvaluator) and evaluator.race is not None:
        return CompositeEvaluator(
            evaluator.contact, bearoff=evaluator.bearoff, rules=evaluator.rules
        )
    return evaluator


class CubeAdvisor:
    """Cube decisions of one evaluator at one ply (0, 1 or 2).

    ``efficiency`` maps a board (the side on roll's view) to Janowski's cube efficiency;
    the default is ``nard_rl.cube.model.cube_efficiency``.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        ply: int = DEFAULT_CUBE_PLY,
        rules: RuleSet | str | None = None,
        met: MatchEquityTable | None = None,
        efficiency: Efficiency | None = None,
        refine_margin: float = DEFAULT_REFINE_MARGIN,
        rollout_trials: int = 0,
        rollout_weight: float | None = None,
        blend: Sequence[float] | None = None,
    ) -> None:
        from nard_rl.search.nply import DEFAULT_BLEND, MAX_PLY, Search, check_blend

        if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= MAX_PLY:
            raise ValueError(f"cube ply must be an integer in 0..{MAX_PLY}, got {ply!r}")
        self.evaluator = evaluator
        self.ply = ply
        self.rules = get_rules(rules or getattr(evaluator, "rules", None))
        self.met = met or MatchEquityTable.default()
        self.efficiency: Efficiency = efficiency or cube_efficiency
        if not 0.0 <= refine_margin < 10.0:
            raise ValueError(f"refine_margin must be >= 0 (0: off), got {refine_margin}")
        self.refine_margin = float(refine_margin)
        if isinstance(rollout_trials, bool) or not isinstance(rollout_trials, int):
            raise ValueError(f"rollout_trials must be an integer, got {rollout_trials!r}")
        if rollout_trials < 0:
            raise ValueError(f"rollout_trials must be >= 0 (0: off), got {rollout_trials}")
        if rollout_weight is None:
            rollout_weight = rollout_trials / (rollout_trials + SEARCH_WORTH_TRIALS)
        elif not 0.0 < rollout_weight <= 1.0:
            raise ValueError(f"rollout_weight must lie in (0, 1], got {rollout_weight}")
        self.rollout_trials = rollout_trials
        self.rollout_weight = float(rollout_weight)
        self.search = Search(evaluator)
        if blend is None:  # a rollout corrects the search's bias itself (docs/cube.md)
            blend = DEFAULT_BLEND if rollout_trials == 0 else ()
        self.blend = check_blend(blend)
        self.rollout_judge = _rollout_judge(evaluator)

    def probabilities(
        self, boards: np.ndarray, ply: int | None = None, *, blended: bool = True
    ) -> np.ndarray:
        """``(N, 5)`` pre-roll probabilities of the side on roll of ``(N, 26)`` boards at
        ``ply`` (default: the advisor's).

        Sent to the search in chunks: each ply multiplies the afterstates of one batch by
        about 400 (21 rolls, some 20 plays each), and encoded afterstates take ~1 KB each.
        ``blended``: the n-ply answer is ``(1 - w) * n-ply + w * (n-1)-ply`` with
        ``w = blend[n - 1]`` (the search's root blend, ``nard_rl.search.nply``, on the
        probabilities the cube reads; by default ``DEFAULT_BLEND``, ``blend=()`` for plain
        n-ply; with ``rollout_trials`` the default is plain).  On the own cube set's first
        2,400 positions, without rollouts, it cut the error from 2.90 to 2.53 mp, nearly
        all of it at the 2-ply refinement; with 432-game rollouts of the close decisions
        it did not help (1.69 against 1.65 mp).
        """
        ply = self.ply if ply is None else ply
        arr = np.asarray(boards, dtype=np.int8).reshape(-1, 26)
        step = _CHUNK[min(ply, len(_CHUNK) - 1)]
        from nard_rl.search.nply import blend_weight

        w = blend_weight(self.blend, ply) if blended else 0.0
        out = np.empty((arr.shape[0], 5), dtype=np.float64)
        for lo in range(0, arr.shape[0], step):
            part = arr[lo : lo + step]
            out[lo : lo + step] = self.search.pre_roll_probs(part, ply=ply)
            if w:
                below = self.search.pre_roll_probs(part, ply=ply - 1)
                out[lo : lo + step] = (1.0 - w) * out[lo : lo + step] + w * below
        return out

    def _decisions(
        self,
        arr: np.ndarray,
        probs: np.ndarray,
        cubes: Sequence[CubeState],
        matches: Sequence[MatchScore | None],
        rules: RuleSet,
    ) -> list[CubeDecision]:
        return [
            cube_decision(
                np.clip(probs[i], 0.0, 1.0),
                cubes[i],
                matches[i],
                x=self.efficiency(arr[i]),
                rules=rules,
                met=self.met,
            )
            for i in range(arr.shape[0])
        ]

    def analyse_batch(
        self,
        boards: np.ndarray,
        cubes: Sequence[CubeState],
        matches: Sequence[MatchScore | None],
        *,
        rules: RuleSet | None = None,
    ) -> tuple[np.ndarray, list[CubeDecision], np.ndarray]:
        """Probabilities, cube decisions and the ply each was read at, for the side on
        roll of each board: at the advisor's ply, and one ply deeper (up to 2) for the
        close decisions (within ``refine_margin`` of a doubling or take boundary).  With
        ``rollout_trials``, the close decisions with contact (``rolls_out``) also take in
        a rollout (``nard_rl.search.rollout.pre_roll_rollout``) at ``rollout_weight`` (default:
        by the number of games, see ``SEARCH_WORTH_TRIALS``): those are the decisions
        whose reported ply is above the advisor's and that ``rolls_out``.

        ``rules`` overrides the advisor's rule set (e.g. with the Jacoby rule on).
        """
        arr = np.asarray(boards, dtype=np.int8).reshape(-1, 26)
        if not len(cubes) == len(matches) == arr.shape[0]:
            raise ValueError(
                f"need one cube and one match score per board, got {arr.shape[0]} boards, "
                f"{len(cubes)} cubes and {len(matches)} scores"
            )
        r = rules or self.rules
        probs = self.probabilities(arr)
        decisions = self._decisions(arr, probs, cubes, matches, r)
        plies = np.full(arr.shape[0], self.ply, dtype=np.int64)
        deeper = self.ply + 1
        if self.refine_margin > 0 and deeper <= MAX_REFINE_PLY and arr.shape[0]:
            close = np.flatnonzero([_is_close(d, self.refine_margin) for d in decisions])
            if close.size:
                refined = self.probabilities(arr[close], ply=deeper)
                roll = np.flatnonzero(self.rolls_out(arr[close]))
                if roll.size:
                    from nard_rl.search.rollout import pre_roll_rollout

                    rolled = pre_roll_rollout(
                        self.rollout_judge, arr[close[roll]], trials=self.rollout_trials
                    )
                    w = self.rollout_weight
                    # a rollout corrects the search's bias itself: it meets the plain
                    # reading (cached, so no second search)
                    plain = self.probabilities(arr[close[roll]], ply=deeper, blended=False)
                    refined[roll] = (1.0 - w) * plain + w * rolled
                probs[close] = refined
                redo = self._decisions(
                    arr[close], refined, [cubes[i] for i in close], [matches[i] for i in close], r
                )
                for i, d in zip(close, redo, strict=True):
                    decisions[i] = d
                plies[close] = deeper
        return probs, decisions, plies

    def rolls_out(self, boards: np.ndarray) -> np.ndarray:
        """``(N,)`` bool: which of these boards a close decision would roll out.

        Only positions with contact: a rollout stops at the race (its judge has no race
        net, see ``_rollout_judge``), so a race's "rollout" is one roll and then the
        contact net's guess at a race, where the search already reads the race net and
        the exact bear-off database.  On the shared cube file, rolling out its 118 close
        no-contact decisions cost 0.06 mp per decision over the whole file against their
        2-ply reading (2.59 -> 2.53 without)."""
        arr = np.asarray(boards, dtype=np.int8).reshape(-1, 26)
        if not self.rollout_trials:
            return np.zeros(arr.shape[0], dtype=bool)
        return ~race_flags(arr)

    def decide_batch(
        self,
        boards: np.ndarray,
        cubes: Sequence[CubeState],
        matches: Sequence[MatchScore | None],
    ) -> list[CubeDecision]:
        """The cube decision of the side on roll of each board (see ``analyse_batch``)."""
        return self.analyse_batch(boards, cubes, matches)[1]

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
        probs = self.analyse_batch(arr[None, :], [cube], [match])[0][0]
        return take_decision(
            np.clip(probs, 0.0, 1.0),
            cube,
            match,
            x=self.efficiency(arr),
            rules=self.rules,
            met=self.met,
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
    ``nard_rl.cube.model.score_utility``): the local index, -1 where there is no play.

    A search player (``default:1``) searches with the utility at the root; a network
    player ranks its 0-ply probabilities by it; any other player (gnubg, pubeval, random)
    has no outcome probabilities to weigh and plays its own choice.
    """
    from nard_rl.search.nply import SearchPlayer

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
