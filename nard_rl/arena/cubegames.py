"""Cubeful games between two bots: money sessions with the cube and whole matches,
duplicate dice, every game of a batch advancing together.

A ``CubeBot`` is a checker player (any ``nard_rl.players`` spec) plus a cube policy:
``CubeAdvisor`` for networks (lookahead pre-roll probabilities through Janowski's model
and the MET), GNU Backgammon's own cubeful analysis for ``gnubg:PLY``, and the fixed
*never double, always take* for players that know no equity (pubeval, random).

Duplicate dice: games ``i`` and ``i + k`` of a block form a pair that shares one dice
stream (a pure function of seed, pair, game number within the match and roll number, as
``nard_rl.engine.dice.pair_dice``), with the seats swapped: the side with the first die of
the opening roll is A in one and B in the other.  Cube actions do not consume dice, so
the two games stay on the same rolls until their plays differ.  Confidence intervals are
computed over pairs, which are independent.

Rules: R22-R25 (cube, stake, drop scores the cube before the double, gammons), R32
Jacoby when the rule set has it (money), R33 (points capped at the match, no Jacoby), R34
(Crawford game without doubling, post-Crawford doubling).  Automatic doubles (R31) need
a tied opening roll, which the opening dice here never give (R5 rolls again), so they
never occur.  In matches the checker play is score-aware for players with outcome
probabilities (``nard_rl.cube.cubeful.score_aware_choice``) and for gnubg (its own, given the
cube and the score).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

from nard_rl.cube.cubeful import DEFAULT_REFINE_MARGIN, CubeAdvisor, score_aware_choice
from nard_rl.cube.met import MatchScore
from nard_rl.cube.model import DOUBLE_PASS, DOUBLE_TAKE, CubeState, score_utility
from nard_rl.engine.batch import GameBatch, gather_slices
from nard_rl.engine.dice import pair_dice
from nard_rl.engine.rules import RuleSet, get_rules, result_points
from nard_rl.players.base import Player, make_player, parse_player_spec

MAX_TURNS = 4000
"""Turns of one block beyond which something is wrong (a match of 25 points lasts far
fewer)."""
_GAME_STRIDE = 1 << 12  # dice stream ids: pair * stride + game number within the match


class CubePolicy(Protocol):
    """Batched cube decisions, every board from the side on roll's (the doubler's) view."""

    def double_batch(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray: ...

    def take_batch(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray: ...


class AdvisorPolicy:
    """``CubeAdvisor`` as a batched policy.

    ``prefilter``: a lookahead costs ~400 evaluations a position, so positions whose
    0-ply no-double equity beats doubling by more than this margin (normalised) are
    answered "no double" without it; 0 turns the shortcut off.
    """

    def __init__(self, advisor: CubeAdvisor, *, prefilter: float = 0.3) -> None:
        self.advisor = advisor
        self.prefilter = float(prefilter)
        self._zero = (
            CubeAdvisor(
                advisor.evaluator,
                ply=0,
                rules=advisor.rules,
                met=advisor.met,
                efficiency=advisor.efficiency,
                refine_margin=0.0,
            )
            if advisor.ply > 0 and prefilter > 0
            else None
        )

    def double_batch(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray:
        n = len(cubes)
        out = np.zeros(n, dtype=np.bool_)
        if n == 0:
            return out
        todo = np.arange(n)
        if self._zero is not None:
            quick = self._zero.decide_batch(boards, cubes, matches)
            clear = np.array(
                [
                    d.double_take is not None
                    and d.no_double - min(d.double_take, d.double_pass or 1.0) > self.prefilter
                    for d in quick
                ]
            )
            todo = np.flatnonzero(~clear)
        if todo.size:
            decisions = self.advisor.decide_batch(
                boards[todo], [cubes[i] for i in todo], [matches[i] for i in todo]
            )
            out[todo] = [d.decision in (DOUBLE_TAKE, DOUBLE_PASS) for d in decisions]
        return out

    def take_batch(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray:
        if len(cubes) == 0:
            return np.zeros(0, dtype=np.bool_)
        decisions = self.advisor.decide_batch(boards, cubes, matches)
        return np.array([d.take is not False for d in decisions], dtype=np.bool_)


_GNUBG_OWNER = {"centered": -1, "mover": 1, "opponent": 0}
"""gnubg's cube owner codes with the side on roll as its player 1."""


def gnubg_cube_specs(
    cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
) -> list[list[int]]:
    """``GnubgPlayer`` cube rows: value, owner code, length, scores, Crawford."""
    return [
        [c.value, _GNUBG_OWNER[c.owner]]
        + ([0, 0, 0, 0] if m is None else [m.length, m.score_me, m.score_opp, int(m.crawford)])
        for c, m in zip(cubes, matches, strict=True)
    ]


class GnubgPolicy:
    """GNU Backgammon's own cubeful analysis at its ply (``GnubgPlayer.cube_equities``)."""

    def __init__(self, gnubg: Any) -> None:
        self.gnubg = gnubg

    def _analyse(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray:
        return np.asarray(self.gnubg.cube_equities(boards, gnubg_cube_specs(cubes, matches)))

    def double_batch(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray:
        if len(cubes) == 0:
            return np.zeros(0, dtype=np.bool_)
        e = self._analyse(boards, cubes, matches)  # optimal, no double, take, pass
        return np.minimum(e[:, 2], e[:, 3]) > e[:, 1] + 1e-9

    def take_batch(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray:
        if len(cubes) == 0:
            return np.zeros(0, dtype=np.bool_)
        e = self._analyse(boards, cubes, matches)
        return e[:, 2] <= e[:, 3] + 1e-9


class FixedPolicy:
    """Never double, always take: for players without an equity estimate."""

    def double_batch(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray:
        return np.zeros(len(cubes), dtype=np.bool_)

    def take_batch(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray:
        return np.ones(len(cubes), dtype=np.bool_)


@dataclass
class CubeBot:
    """One seat of cubeful games: checker play and cube policy."""

    name: str
    player: Player
    cube: CubePolicy

    def close(self) -> None:
        self.player.close()


def make_cube_bot(
    spec: str,
    *,
    rules: RuleSet | str = "standard",
    cube_ply: int = 1,
    seed: int | None = None,
    efficiency: Callable[[Any], float] | None = None,
    refine: float = DEFAULT_REFINE_MARGIN,
) -> CubeBot:
    """The bot a player spec names (``default``, ``x.pt:1``, ``gnubg:0``, ``pubeval``...).

    Networks decide the cube with a ``CubeAdvisor`` at ``cube_ply`` over their evaluator
    (``efficiency``: the cube efficiency model, default ``nard_rl.cube.model.cube_efficiency``;
    ``refine``: the advisor's margin for reading close decisions one ply deeper);
    gnubg with its own cubeful analysis at its ply; others never double and always take.
    """
    r = get_rules(rules)
    if not r.cube:
        raise ValueError(f"the {r.name} rule set has no doubling cube (R28)")
    player = make_player(spec, rules=r, seed=seed)
    name = getattr(player, "name", spec)
    parsed = parse_player_spec(spec)
    if parsed.name == "gnubg":
        return CubeBot(name, player, GnubgPolicy(player))
    if parsed.is_network:
        policy = cube_policy(spec, rules=r, cube_ply=cube_ply, efficiency=efficiency, refine=refine)
        return CubeBot(name, player, policy)
    return CubeBot(name, player, FixedPolicy())


def cube_policy(
    spec: str,
    *,
    rules: RuleSet | str = "standard",
    cube_ply: int = 1,
    efficiency: Callable[[Any], float] | None = None,
    refine: float = DEFAULT_REFINE_MARGIN,
) -> AdvisorPolicy:
    """The ``CubeAdvisor`` policy of a network spec (``default``, ``x.pt``; a ``:PLY``
    suffix, the checker-play depth, is ignored)."""
    from nard_rl.nets.evaluator import load_evaluator

    parsed = parse_player_spec(spec)
    if not parsed.is_network:
        raise ValueError(f"cube decisions need a network ('default' or a .pt), got {spec!r}")
    r = get_rules(rules)
    advisor = CubeAdvisor(
        load_evaluator(parsed.name, rules=r),
        ply=cube_ply,
        rules=r,
        efficiency=efficiency,
        refine_margin=refine,
    )
    return AdvisorPolicy(advisor)


@dataclass
class CubeSample:
    """One pre-roll cube decision met in play and how that game ended for the decider."""

    pair: int
    game: int
    """Index of the game within its block (games ``i`` and ``i + k`` share dice)."""
    side: int
    board: np.ndarray
    """The position, the decider's view (on roll)."""
    cube: CubeState
    doubled: bool
    outcome: float = 0.0
    """The game's final points for the decider divided by the cube value at the decision."""


# --------------------------------------------------------------------------------------
# results


@dataclass
class CubefulResult:
    """A cubeful money session or a set of matches, everything from A's side."""

    player_a: str
    player_b: str
    kind: str
    """``money`` or ``match``."""
    games: int
    """Money games, or matches."""
    match_length: int
    mean: float
    """Money: points per game.  Match: the fraction of matches A won."""
    ci95: float
    """Half-width of the 95% confidence interval of ``mean`` (normal, over dice pairs)."""
    doubles: float
    """Doubles offered per game (both sides)."""
    drops: float
    """Fraction of doubles dropped."""
    mean_cube: float
    """Mean final cube value of games played to the end (money)."""
    seconds: float
    seed: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def summary(self) -> str:
        lo, hi = self.mean - self.ci95, self.mean + self.ci95
        if self.kind == "money":
            head = f"ppg {self.mean:+.3f} (95% CI {lo:+.3f} .. {hi:+.3f})"
            unit = f"{self.games} games"
        else:
            head = f"match win rate {self.mean:.1%} (95% CI {lo:.1%} .. {hi:.1%})"
            unit = f"{self.games} {self.match_length}-point matches"
        return (
            f"{self.player_a} vs {self.player_b} with the cube: {head} over "
            f"{unit}; {self.doubles:.2f} doubles a game, {self.drops:.0%} dropped, mean cube "
            f"{self.mean_cube:.2f}; {self.seconds:.0f} s"
        )


# --------------------------------------------------------------------------------------
# the batched game loop


def _play_block(
    bots: tuple[CubeBot, CubeBot],
    pair_ids: np.ndarray,
    seed: int,
    rules: RuleSet,
    match_length: int,
    trace: list[CubeSample] | None = None,
) -> tuple[np.ndarray, dict[str, float]]:
    """``2k`` games (money) or matches: result for A per game (points, or 1/0 for a match
    won/lost), games ``i`` and ``i + k`` sharing dice with swapped seats.

    The games run on the engine's batch stepper (``GameBatch``), its seat the side on roll (0 =
    A) and its turn counter the roll number of the dice streams; the cube actions come
    before each play (the roll is drawn already, but counter-based dice do not depend
    on it and no cube policy sees it), a pass ends the game at once (``end``) and a
    match goes on with its next game (``restart``).  A roll without a legal play is a
    null play (``pass_as_play``) so that the next side meets its cube action too.
    """
    k = pair_ids.shape[0]
    n = 2 * k
    pair_of = np.concatenate([pair_ids, pair_ids]).astype(np.int64)
    seat0_is_a = np.arange(n) < k
    cube_value = np.ones(n, dtype=np.int64)
    cube_owner = np.full(n, -1, dtype=np.int64)  # -1 centered, else the owning side
    game_no = np.zeros(n, dtype=np.int64)
    result = np.zeros(n, dtype=np.float64)
    score = np.zeros((n, 2), dtype=np.int64)
    crawford_game = np.zeros(n, dtype=np.bool_)
    crawford_done = np.zeros(n, dtype=np.bool_)
    stats = {"doubles": 0.0, "drops": 0.0, "games": 0.0, "cube_sum": 0.0}
    money = match_length == 0

    def streams(lanes: np.ndarray) -> np.ndarray:
        return (pair_of[lanes] * _GAME_STRIDE + game_no[lanes]).astype(np.uint64)

    def dice_fn(lanes: np.ndarray, turns: np.ndarray) -> np.ndarray:
        return pair_dice(seed, streams(lanes), turns)

    def first_seat(lanes: np.ndarray) -> np.ndarray:
        """Seat 0 holds the first die of the opening roll: the higher die moves first,
        with both dice (R5)."""
        dice = pair_dice(seed, streams(lanes), 0)
        a_starts = (dice[:, 0] > dice[:, 1]) == seat0_is_a[lanes]
        return np.where(a_starts, 0, 1).astype(np.int8)

    games = GameBatch(
        n, rules, dice_fn=dice_fn, autoreset=False, pass_as_play=True, invalid_action="raise"
    )
    games.reset(seat=first_seat(np.arange(n)))

    def view(g: int, side: int) -> tuple[CubeState, MatchScore | None]:
        owner = int(cube_owner[g])
        cube = CubeState.from_seats(int(cube_value[g]), None if owner < 0 else owner, side)
        if money:
            return cube, None
        s = score[g]
        return cube, MatchScore(
            match_length, int(s[side]), int(s[1 - side]), bool(crawford_game[g])
        )

    def end_game(g: int, winner: int, points: int, dropped: bool) -> bool:
        """Score a finished game; True when its match goes on with another game."""
        stats["games"] += 1
        if not dropped:
            stats["cube_sum"] += float(cube_value[g])
        if money:
            result[g] = points if winner == 0 else -points
            return False
        score[g, winner] = min(match_length, score[g, winner] + points)
        if score[g, winner] >= match_length:
            result[g] = 1.0 if winner == 0 else 0.0
            return False
        if crawford_game[g]:
            crawford_game[g] = False
            crawford_done[g] = True
        elif not crawford_done[g] and score[g].max() == match_length - 1:
            crawford_game[g] = True
        cube_value[g], cube_owner[g] = 1, -1
        game_no[g] += 1
        return True

    def next_games(lanes: list[int]) -> None:
        if lanes:
            nxt = np.array(lanes, dtype=np.int64)
            games.restart(nxt, seat=first_seat(nxt))

    for _turn in range(MAX_TURNS):
        idx = np.flatnonzero(~games.over)
        if idx.size == 0:
            break
        # -- cube: the side on roll may double before its roll (R23, R24, R34) -----------
        pre = idx[games.turn[idx] > 0]
        may = pre[
            ((cube_owner[pre] < 0) | (cube_owner[pre] == games.seat[pre]))
            & (2 * cube_value[pre] <= rules.cube_max)
            & ~crawford_game[pre]
        ]
        for side in (0, 1):
            g_side = may[games.seat[may] == side]
            if g_side.size == 0:
                continue
            views = [view(int(g), side) for g in g_side]
            cubes = [v[0] for v in views]
            matches = [v[1] for v in views]
            doubled = bots[side].cube.double_batch(games.boards[g_side], cubes, matches)
            if trace is not None and money:
                trace.extend(
                    CubeSample(
                        int(pair_of[g]), int(g), side, games.boards[g].copy(), cubes[i], bool(d)
                    )
                    for i, (g, d) in enumerate(zip(g_side, doubled, strict=True))
                )
            if not doubled.any():
                continue
            dg = g_side[doubled]
            stats["doubles"] += dg.size
            takes = bots[1 - side].cube.take_batch(
                games.boards[dg],
                [cubes[i] for i in np.flatnonzero(doubled)],
                [matches[i] for i in np.flatnonzero(doubled)],
            )
            dropped: list[int] = []
            for g, take in zip(dg, takes, strict=True):
                if take:
                    cube_value[g] *= 2
                    cube_owner[g] = 1 - side
                else:
                    stats["drops"] += 1
                    dropped.append(int(g))
            if dropped:
                games.end(np.array(dropped, dtype=np.int64))
                # a dropped game's next game starts with its opening roll in this turn
                next_games([g for g in dropped if end_game(g, side, int(cube_value[g]), True)])
        idx = np.flatnonzero(~games.over)
        if idx.size == 0:
            break
        # -- move (a pass is the null play, never asked of the player) ----------------------
        actions = np.zeros(n, dtype=np.int64)
        passing = games.must_pass
        for side in (0, 1):
            g_side = idx[games.seat[idx] == side]
            if g_side.size == 0:
                continue
            boards, d_side = games.boards[g_side], games.dice[g_side]
            afters, offsets = _plays(games, g_side, passing[g_side])
            player = bots[side].player
            if money:
                picks = np.asarray(player.choose_batch(boards, d_side, afters, offsets))
            elif isinstance(bots[side].cube, GnubgPolicy):  # gnubg plays for the score itself
                views = [view(int(g), side) for g in g_side]
                specs = gnubg_cube_specs([v[0] for v in views], [v[1] for v in views])
                picks = player.choose_batch(  # type: ignore[call-arg]
                    boards, d_side, afters, offsets, cubes=specs
                )
            else:
                utilities = [score_utility(rules, *view(int(g), side)) for g in g_side]
                picks = score_aware_choice(player, boards, d_side, afters, offsets, utilities)
            picks = np.asarray(picks, dtype=np.int64).reshape(-1)
            actions[g_side] = np.where(passing[g_side], 0, picks)
        outcome = games.step(actions)
        again: list[int] = []
        for g in np.flatnonzero(outcome.finished):
            turned = cube_owner[g] >= 0 or not money
            pts = int(
                result_points(
                    rules, bool(outcome.gammon[g]), bool(outcome.backgammon[g]), cube_turned=turned
                )
            )
            if end_game(int(g), int(outcome.winner[g]), pts * int(cube_value[g]), dropped=False):
                again.append(int(g))
        next_games(again)
    else:
        raise RuntimeError(f"cubeful games did not finish within {MAX_TURNS} turns")
    return result, stats


def _plays(
    games: GameBatch, lanes: np.ndarray, passing: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The candidates of ``lanes`` as a player is asked them: a game that must pass has
    none (R16), as ``legal_afterstates_batch`` gives it."""
    sub, sub_off = gather_slices(games.afters, games.offsets, lanes[~passing])
    counts = np.zeros(lanes.shape[0], dtype=np.int64)
    counts[~passing] = np.diff(sub_off)
    offsets = np.zeros(lanes.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return sub, offsets


def play_cubeful(
    bot_a: CubeBot,
    bot_b: CubeBot,
    games: int,
    *,
    match_length: int = 0,
    seed: int = 0,
    rules: RuleSet | str = "standard",
    batch_pairs: int = 128,
    progress: Callable[[int], None] | None = None,
    trace: list[CubeSample] | None = None,
) -> CubefulResult:
    """``games`` money games (``match_length`` 0) or matches, rounded up to whole pairs.

    ``trace`` (money only) collects every cube decision of the side on roll with its
    game's final result in units of the cube at that moment (``CubeSample``): the data a
    cube model is fitted to."""
    r = get_rules(rules)
    if not r.cube:
        raise ValueError(f"the {r.name} rule set has no doubling cube (R28)")
    if games < 2:
        raise ValueError(f"need at least 2 games (one duplicate pair), got {games}")
    if match_length < 0:
        raise ValueError(f"match length must be 0 (money) or positive, got {match_length}")
    pairs = math.ceil(games / 2)
    pair_result = np.zeros(pairs)
    totals = {"doubles": 0.0, "drops": 0.0, "games": 0.0, "cube_sum": 0.0}
    t0 = time.perf_counter()
    for lo in range(0, pairs, batch_pairs):
        hi = min(pairs, lo + batch_pairs)
        ids = np.arange(lo, hi, dtype=np.int64)
        block_trace: list[CubeSample] | None = None if trace is None else []
        res, stats = _play_block((bot_a, bot_b), ids, seed, r, match_length, block_trace)
        if trace is not None and block_trace is not None:
            for sample in block_trace:
                a_points = float(res[sample.game])
                mine = a_points if sample.side == 0 else -a_points
                sample.outcome = mine / sample.cube.value
            trace.extend(block_trace)
        k = hi - lo
        pair_result[lo:hi] = (res[:k] + res[k:]) / 2.0
        for key, v in stats.items():
            totals[key] += v
        if progress is not None:
            progress(2 * hi)
    ci = 1.96 * float(pair_result.std(ddof=1)) / math.sqrt(pairs) if pairs > 1 else math.inf
    played = max(totals["games"], 1.0)
    return CubefulResult(
        player_a=bot_a.name,
        player_b=bot_b.name,
        kind="money" if match_length == 0 else "match",
        games=2 * pairs,
        match_length=match_length,
        mean=float(pair_result.mean()),
        ci95=ci,
        doubles=totals["doubles"] / played,
        drops=totals["drops"] / max(totals["doubles"], 1.0),
        mean_cube=totals["cube_sum"] / max(totals["games"] - totals["drops"], 1.0),
        seconds=time.perf_counter() - t0,
        seed=seed,
    )
