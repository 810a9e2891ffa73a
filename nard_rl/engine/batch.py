"""The one batch stepper (``GameBatch``) and the array helpers it is built from.

Self-play training, the vector and single environments, duplicate-dice matches, cubeful
games and matches, rollouts (cubeless and cubeful), the labeller's self-play and the
race net's position collection all advance their games through ``GameBatch``, so the
rules they meet cannot drift apart:
the opening roll (R4, R5), legal afterstates (R8-R20, R29), a roll without a legal play
(R16), the end of a game and its points (R21, R25/R26, R28, R32 through
``rules.result_points``), the hand-over (a flip) and the restart.  Everything works on
whole arrays of games at once (no Python per game), with a handful of compiled calls
per ply.

Each game's position is kept from the view of the side to move (the JSON board of
``nard_rl.engine.position``) together with its seat (0 or 1), so handing the turn over
is a flip and a seat toggle.  A step is:

1. the chosen afterstates become the new positions (one row gather);
2. finished games are scored and, with ``autoreset``, restarted from the opening;
3. every other game is flipped to the next side and rolled for;
4. one ``legal_afterstates_batch`` call generates every game's plays; games without a
   legal play pass (R16) and games where the ``opponent`` is to move get its choice
   (one ``choose_batch`` call for all of them), both looping until every game waits on
   the caller again.  The loop runs over the few games concerned, never per game in
   Python, and finishes in a handful of rounds.

With ``pass_as_play`` a game without a legal play gets its unchanged board as its only
candidate instead of passing by itself (R16 as a "null play"), which keeps the sides
strictly alternating: what TD learning on afterstates needs.

Callers with rules of their own on top (the cube, a rollout's horizon) steer chosen
games: ``end`` stops them (a passed double, a trial cut at a race, a resignation),
``restart`` starts them anew from the opening or a given position while the others go
on, ``index_of`` turns a chosen afterstate into its action and ``must_pass`` shows the
null plays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
from numba import njit

from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import BOARD_SIZE, START_BOARD, flip_boards, validate_boards
from nard_rl.engine.rules import RuleSet, get_rules, result_points

START = np.array(START_BOARD, dtype=np.int8)

ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], dtype=np.int8)
"""The 21 distinct rolls (lower die first)."""
ROLL_WEIGHTS = np.where(ROLLS[:, 0] == ROLLS[:, 1], 1.0 / 36.0, 2.0 / 36.0)
"""Chance of each of ``ROLLS``: 1/36 for a double, 2/36 for the others (sum 1)."""


@njit(cache=True)
def _segment_argmax(values: np.ndarray, offsets: np.ndarray, out: np.ndarray) -> None:
    for i in range(offsets.shape[0] - 1):
        lo = offsets[i]
        hi = offsets[i + 1]
        if hi <= lo:
            out[i] = -1
            continue
        best = lo
        bv = values[lo]
        for k in range(lo + 1, hi):
            if values[k] > bv:
                bv = values[k]
                best = k
        out[i] = best - lo


def segment_argmax(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per position, the local index of the best of its candidates (-1 if it has none)."""
    out = np.empty(offsets.shape[0] - 1, dtype=np.int64)
    _segment_argmax(np.ascontiguousarray(values), np.ascontiguousarray(offsets), out)
    return out


@njit(cache=True)
def _outcomes(boards: np.ndarray, done: np.ndarray, gammon: np.ndarray, bg: np.ndarray) -> None:
    for i in range(boards.shape[0]):
        mover_left = 0
        opp_left = 0
        opp_back = False
        for p in range(1, 25):
            v = boards[i, p]
            if v > 0:
                mover_left += v
            elif v < 0:
                opp_left -= v
                if p <= 6:
                    opp_back = True
        mover_left += boards[i, 25]
        opp_left -= boards[i, 0]
        if boards[i, 0] < 0:
            opp_back = True
        d = mover_left == 0
        done[i] = d
        gammon[i] = d and opp_left == 15
        bg[i] = d and opp_left == 15 and opp_back


def outcomes(afterstates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For boards just after the mover's play: (game over, gammon, backgammon) flags.

    R21: the mover wins by bearing off all 15; R25: a gammon when the loser has borne off
    none, a backgammon when the loser also still has a checker on the bar or in the
    winner's home board (points 1-6 from the winner's view).
    """
    n = afterstates.shape[0]
    done = np.empty(n, dtype=np.bool_)
    gammon = np.empty(n, dtype=np.bool_)
    bg = np.empty(n, dtype=np.bool_)
    _outcomes(np.ascontiguousarray(afterstates, dtype=np.int8), done, gammon, bg)
    return done, gammon, bg


def roll_dice(rng: np.random.Generator, n: int, opening: np.ndarray | None = None) -> np.ndarray:
    """``(n, 2)`` int8 rolls; rows flagged ``opening`` get no doubles (R5: the opening
    roll is one die per player, ties rolled again, so its distribution is the 30
    non-double rolls)."""
    dice = rng.integers(1, 7, size=(n, 2), dtype=np.int8)
    if opening is not None and opening.any():
        idx = np.flatnonzero(opening)
        d1 = rng.integers(1, 7, size=idx.size)
        d2 = (d1 - 1 + rng.integers(1, 6, size=idx.size)) % 6 + 1
        dice[idx, 0] = d1
        dice[idx, 1] = d2
    return dice


def start_boards(n: int) -> np.ndarray:
    return np.tile(START, (n, 1))


# --------------------------------------------------------------------------------------
# the stepper


class Chooser(Protocol):
    """What ``GameBatch`` asks an opponent: the players' ``choose_batch``."""

    def choose_batch(
        self, boards: np.ndarray, dice: np.ndarray, afterstates: np.ndarray, offsets: np.ndarray
    ) -> np.ndarray: ...


DiceSource = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``dice_fn(lanes, turns) -> (k, 2)`` rolls for the games ``lanes`` at their turn numbers
(turn 0 is the opening roll, R5: no doubles): counter-based dice (duplicate evaluation)."""

InvalidAction = Literal["wrap", "raise"]

MAX_ROUNDS = 10_000
"""Passes/opponent turns in one call beyond which the position is taken as a deadlock
(both sides closed out with checkers on the bar, which no game from the start reaches)."""


def gather_slices(
    afters: np.ndarray, offsets: np.ndarray, idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The flat candidate list ``(afterstates, offsets)`` of the positions ``idx`` only."""
    idx = np.asarray(idx, dtype=np.int64)
    counts = offsets[idx + 1] - offsets[idx]
    sub_off = np.zeros(idx.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=sub_off[1:])
    sub = np.empty((int(sub_off[-1]), afters.shape[1]), dtype=afters.dtype)
    _scatter(afters, offsets, idx, np.arange(idx.shape[0]), sub, sub_off)
    return sub, sub_off


def with_passes(
    afters: np.ndarray, offsets: np.ndarray, boards: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Give each position without a legal play its unchanged board as the only candidate
    (R16 as a null play); the other slices are kept as they are."""
    counts = np.diff(offsets)
    nomove = counts == 0
    if not nomove.any():
        return afters, offsets
    counts2 = np.where(nomove, 1, counts)
    new_offsets = np.zeros_like(offsets)
    np.cumsum(counts2, out=new_offsets[1:])
    out = np.empty((int(new_offsets[-1]), afters.shape[1]), dtype=afters.dtype)
    src_rows = np.repeat(offsets[:-1] - new_offsets[:-1], counts2) + np.arange(out.shape[0])
    has = np.repeat(~nomove, counts2)
    out[has] = afters[src_rows[has]]
    out[new_offsets[:-1][nomove]] = boards[nomove]
    return out, new_offsets


@dataclass
class StepOutcome:
    """What happened in the games during one ``GameBatch`` call, one entry per game.

    ``winner`` is the seat that won a game finished during the call (-1 otherwise),
    ``gammon``/``backgammon`` its kind (R25) and ``points`` its value
    (``rules.result_points``: R25/R26/R28, singles under Jacoby R32 as the cube is never
    turned here; 0 while the game goes on).  At most one game per lane ends in a call (a
    fresh game cannot end before the caller's next turn).  ``passes`` counts the turns
    passed automatically (R16), ``opponent_plies`` the opponent's moves and ``wrapped``
    flags actions taken modulo the number of plays.
    """

    winner: np.ndarray
    gammon: np.ndarray
    backgammon: np.ndarray
    points: np.ndarray
    passes: np.ndarray
    opponent_plies: np.ndarray
    wrapped: np.ndarray

    @property
    def finished(self) -> np.ndarray:
        """Games that ended during the call."""
        return self.winner >= 0


class GameBatch:
    """N games waiting on the caller, with their flat candidate lists (module docstring).

    ``opponent`` is None when the caller moves for both seats (self-play) or a
    ``choose_batch`` player that moves for seat 1 while the caller holds seat 0.  Dice
    come from ``rng`` or, for counter-based streams, from ``dice_fn``.  With
    ``autoreset`` a finished game restarts within the same call; without it the game
    stays over (``over``, no candidates, skipped by ``step``) until ``reset``, holding
    its final board from the view of the loser (no opponent) or of seat 0.
    """

    def __init__(
        self,
        n: int,
        rules: RuleSet | str,
        rng: np.random.Generator | None = None,
        *,
        opponent: Chooser | None = None,
        autoreset: bool = True,
        invalid_action: InvalidAction = "wrap",
        pass_as_play: bool = False,
        dice_fn: DiceSource | None = None,
    ) -> None:
        if int(n) < 1:
            raise ValueError(f"need at least one game, got {n}")
        if invalid_action not in ("wrap", "raise"):
            raise ValueError(f"invalid_action must be 'wrap' or 'raise', got {invalid_action!r}")
        if rng is None and dice_fn is None:
            raise ValueError("GameBatch needs an rng or a dice_fn for its rolls")
        if pass_as_play and opponent is not None:
            raise ValueError("pass_as_play is for callers that move for both seats")
        self.n = int(n)
        self.rules = get_rules(rules)
        self.rng = rng
        self.dice_fn = dice_fn
        self.opponent = opponent
        self.autoreset = autoreset
        self.invalid_action = invalid_action
        self.pass_as_play = pass_as_play
        self.boards = np.tile(START, (self.n, 1))
        self.dice = np.zeros((self.n, 2), dtype=np.int8)
        self.seat = np.zeros(self.n, dtype=np.int8)
        self.turn = np.zeros(self.n, dtype=np.int64)
        """Turns taken so far in each game (moves and passes): 0 is the opening roll."""
        self.over = np.zeros(self.n, dtype=np.bool_)
        self.afters = np.empty((0, BOARD_SIZE), dtype=np.int8)
        self.offsets = np.zeros(self.n + 1, dtype=np.int64)
        self._lanes = np.arange(self.n)

    # -- public -------------------------------------------------------------------------
    @property
    def counts(self) -> np.ndarray:
        """Legal plays per game (0 only for a game that is over)."""
        return np.diff(self.offsets)

    @property
    def must_pass(self) -> np.ndarray:
        """Games whose only candidate is the pass (``pass_as_play``, R16): their board
        unchanged.  A real play always moves a checker, so the board tells them apart."""
        out = np.zeros(self.n, dtype=np.bool_)
        if not self.pass_as_play:
            return out
        one = np.flatnonzero(self.counts == 1)
        out[one] = (self.afters[self.offsets[one]] == self.boards[one]).all(axis=1)
        return out

    def reset(
        self,
        boards: np.ndarray | None = None,
        dice: np.ndarray | None = None,
        seat: np.ndarray | int | None = None,
    ) -> StepOutcome:
        """Start every game: the opening (R4, R5) unless positions are given.

        ``boards`` (N, 26) are from the view of the side to move (validated: a malformed
        board raises ``PositionError`` naming it), ``dice`` (N, 2) its roll (drawn when
        omitted) and ``seat`` (N,) its seat (0 when omitted; with the opening, a random
        seat unless given).  Games where the opponent is to move advance to the caller's
        turn first.
        """
        outcome = self._new_outcome()
        lanes = np.arange(self.n)
        self._begin(lanes, boards, dice, seat)
        self._settle(lanes, outcome)
        return outcome

    def restart(
        self,
        lanes: np.ndarray,
        boards: np.ndarray | None = None,
        dice: np.ndarray | None = None,
        seat: np.ndarray | int | None = None,
    ) -> StepOutcome:
        """Start the games ``lanes`` anew while the others go on where they are: the next
        game of a match, a rollout trial from a given position.  ``boards``, ``dice`` and
        ``seat`` are ``reset``'s, one row per lane; the other games keep their positions
        and candidates untouched."""
        lanes = self._check_lanes(lanes)
        outcome = self._new_outcome()
        if lanes.size:
            self._begin(lanes, boards, dice, seat)
            self._settle(lanes, outcome, keep=self._others(lanes))
        return outcome

    def end(self, lanes: np.ndarray) -> StepOutcome:
        """End the games ``lanes`` now, by the caller's decision rather than the board's:
        a double passed, a rollout trial cut (by a horizon, at a race), a resignation.

        The caller scores them: the outcome names no winner for them.  With ``autoreset``
        they restart from the opening at once (the outcome holds what the restart did:
        an opponent's first play, passes); without it they are over (no candidates,
        skipped by ``step``) until ``reset`` or ``restart``, keeping their board, seat
        and turn as they stood."""
        lanes = self._check_lanes(lanes)
        outcome = self._new_outcome()
        if lanes.size == 0:
            return outcome
        if self.over[lanes].any():
            i = int(lanes[self.over[lanes]][0])
            raise ValueError(f"game {i} is over already: it cannot be ended again")
        if self.autoreset:
            self._start(lanes)
            self._settle(lanes, outcome, keep=self._others(lanes))
        else:
            self.over[lanes] = True
            self.dice[lanes] = 0
            self._settle(lanes[:0], outcome, keep=self._others(lanes))
        return outcome

    def index_of(self, afterstates: np.ndarray, lanes: np.ndarray | None = None) -> np.ndarray:
        """Each game's local index of the given afterstate among its candidates (-1 where
        it is none of them): the action that plays it, for choosers that answer with
        boards rather than indices.  ``afterstates`` has a row per game of ``lanes``
        (default: every game)."""
        lanes = self._lanes if lanes is None else self._check_lanes(lanes)
        want = np.asarray(afterstates, dtype=np.int8).reshape(-1, BOARD_SIZE)
        if want.shape[0] != lanes.shape[0]:
            raise ValueError(f"expected {lanes.shape[0]} afterstates, got {want.shape[0]}")
        sub, sub_off = gather_slices(self.afters, self.offsets, lanes)
        hit = (sub == np.repeat(want, np.diff(sub_off), axis=0)).all(axis=1)
        local = segment_argmax(hit.astype(np.float64), sub_off)
        found = local >= 0
        found[found] = hit[sub_off[:-1][found] + local[found]]
        return np.where(found, local, -1)

    def step(self, actions: np.ndarray) -> StepOutcome:
        """Play each game's chosen candidate (local index into its slice) and move on;
        games that are over (``autoreset`` off) are skipped, their action ignored."""
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        if actions.shape[0] != self.n:
            raise ValueError(f"expected {self.n} actions, got {actions.shape[0]}")
        all_live = self.autoreset or not self.over.any()
        if not all_live and self.over.all():
            raise RuntimeError("every game is over: reset before stepping (autoreset is off)")
        counts = self.counts
        outcome = self._new_outcome()
        bad = (actions < 0) | (actions >= counts)
        if not all_live:
            bad &= ~self.over
        if bad.any():
            if self.invalid_action == "raise":
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"action {int(actions[i])} is not a legal play in game {i}: it has "
                    f"{int(counts[i])} legal plays, indices 0..{int(counts[i]) - 1} "
                    "(see the action mask)"
                )
            actions = np.where(bad, actions % np.maximum(counts, 1), actions)
            outcome.wrapped[:] = bad
        lanes = self._lanes if all_live else np.flatnonzero(~self.over)
        rows = self.offsets[lanes] + actions[lanes]
        self._apply(lanes, self.afters[rows], outcome)
        self._settle(lanes[~self.over[lanes]], outcome)
        return outcome

    # -- game flow ----------------------------------------------------------------------
    def _check_lanes(self, lanes: object) -> np.ndarray:
        arr = np.asarray(lanes)
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise ValueError(f"lanes must be a 1-D array of game indices, got shape {arr.shape}")
        arr = arr.astype(np.int64)
        if arr.size and (arr.min() < 0 or arr.max() >= self.n):
            raise ValueError(f"game indices must lie in 0..{self.n - 1}")
        if np.unique(arr).size != arr.size:
            raise ValueError("each game may be named once")
        return arr

    def _others(self, lanes: np.ndarray) -> np.ndarray:
        """The live games outside ``lanes``, whose candidates stay as they are."""
        keep = ~self.over
        keep[lanes] = False
        return np.flatnonzero(keep)

    def _begin(
        self,
        lanes: np.ndarray,
        boards: np.ndarray | None,
        dice: np.ndarray | None,
        seat: np.ndarray | int | None,
    ) -> None:
        """Put ``lanes`` at the start of a game (``reset``'s arguments), not yet settled."""
        k = lanes.shape[0]
        self.turn[lanes] = 0
        if boards is None:
            self._start(lanes, seat)
        else:
            self.boards[lanes] = validate_boards(boards, k)
            self.seat[lanes] = 0 if seat is None else np.asarray(seat, dtype=np.int8)
            if dice is None:
                self.turn[lanes] = 1  # a position in play: an ordinary roll
                self._roll(lanes)
            else:
                self.dice[lanes] = _check_dice(dice, k)
        self.over[lanes] = False

    def _new_outcome(self) -> StepOutcome:
        n = self.n
        return StepOutcome(
            winner=np.full(n, -1, dtype=np.int8),
            gammon=np.zeros(n, dtype=np.bool_),
            backgammon=np.zeros(n, dtype=np.bool_),
            points=np.zeros(n, dtype=np.int8),
            passes=np.zeros(n, dtype=np.int32),
            opponent_plies=np.zeros(n, dtype=np.int32),
            wrapped=np.zeros(n, dtype=np.bool_),
        )

    def _roll(self, lanes: np.ndarray, *, opening: bool | None = None) -> None:
        """Dice for ``lanes`` at their current turn (turn 0: the opening roll, R5).
        ``opening`` True/False says all or none of them are at turn 0 (saves a look)."""
        if self.dice_fn is not None:
            self.dice[lanes] = self.dice_fn(lanes, self.turn[lanes])
            return
        assert self.rng is not None
        if opening is None:
            first = self.turn[lanes] == 0
            mask = first if first.any() else None
        else:
            mask = np.ones(lanes.shape[0], dtype=np.bool_) if opening else None
        self.dice[lanes] = roll_dice(self.rng, lanes.shape[0], mask)

    def _start(self, lanes: np.ndarray, seat: np.ndarray | int | None = None) -> None:
        """The opening (R4, R5): start position, a non-double roll, a random first seat
        unless ``seat`` gives it."""
        self.boards[lanes] = START
        self.turn[lanes] = 0
        self._roll(lanes, opening=True)
        if seat is not None:
            self.seat[lanes] = np.asarray(seat, dtype=np.int8)
        elif self.rng is not None:
            self.seat[lanes] = self.rng.integers(0, 2, size=lanes.shape[0], dtype=np.int8)
        else:
            self.seat[lanes] = 0

    def _apply(self, lanes: np.ndarray, new: np.ndarray, outcome: StepOutcome) -> None:
        """Make the afterstates ``new`` (movers' views) the positions of ``lanes``."""
        done, gammon, backgammon = outcomes(new)
        self.boards[lanes] = flip_boards(new)
        self.turn[lanes] += 1
        fin = lanes[done]
        if fin.size:
            outcome.winner[fin] = self.seat[fin]
            outcome.gammon[fin] = gammon[done]
            outcome.backgammon[fin] = backgammon[done]
            outcome.points[fin] = result_points(self.rules, gammon[done], backgammon[done])
        cont = lanes[~done] if fin.size else lanes
        self.seat[cont] ^= 1
        self._roll(cont, opening=False)
        if fin.size:
            if self.autoreset:
                self._start(fin)
            else:
                # Over: the final board stays for the observation, from the loser's view
                # without an opponent and from seat 0's against one.
                self.over[fin] = True
                self.seat[fin] ^= 1
                self.dice[fin] = 0
                if self.opponent is not None:
                    theirs = fin[self.seat[fin] == 1]
                    self.boards[theirs] = flip_boards(self.boards[theirs])
                    self.seat[theirs] = 0

    def _pass(self, lanes: np.ndarray, outcome: StepOutcome) -> None:
        """R16: no legal play, the turn passes to the other side with a new roll."""
        outcome.passes[lanes] += 1
        self.boards[lanes] = flip_boards(self.boards[lanes])
        self.seat[lanes] ^= 1
        self.turn[lanes] += 1
        self._roll(lanes, opening=False)

    def _settle(
        self, lanes: np.ndarray, outcome: StepOutcome, keep: np.ndarray | None = None
    ) -> None:
        """Generate plays for ``lanes`` until each waits on the caller with a candidate;
        the games ``keep`` keep the candidates they have (every other game gets none)."""
        n = self.n
        counts = np.zeros(n, dtype=np.int64)
        pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        if keep is not None and keep.size:
            counts[keep] = np.diff(self.offsets)[keep]
            pieces.append((self.afters, self.offsets, keep, keep))
        mars = self.rules.waste_rule
        opp = self.opponent
        for _ in range(MAX_ROUNDS):
            if lanes.size == 0:
                break
            afters, offsets = legal_afterstates_batch(self.boards[lanes], self.dice[lanes], mars)
            if self.pass_as_play:
                afters, offsets = with_passes(afters, offsets, self.boards[lanes])
            c = np.diff(offsets)
            empty = c == 0
            theirs = ~empty & (self.seat[lanes] == 1) if opp is not None else None
            ready = ~empty if theirs is None else ~empty & ~theirs
            if ready.all() and not pieces:
                counts[lanes] = c
                pieces.append((afters, offsets, np.arange(lanes.size), lanes))
                break
            idx = np.flatnonzero(ready)
            counts[lanes[idx]] = c[idx]
            pieces.append((afters, offsets, idx, lanes[idx]))
            nxt = [lanes[empty]]
            if empty.any():
                self._pass(lanes[empty], outcome)
            if theirs is not None and theirs.any():
                assert opp is not None
                t_idx = np.flatnonzero(theirs)
                t_lanes = lanes[t_idx]
                sub, sub_off = gather_slices(afters, offsets, t_idx)
                pick = np.asarray(
                    opp.choose_batch(self.boards[t_lanes], self.dice[t_lanes], sub, sub_off),
                    dtype=np.int64,
                )
                sub_counts = np.diff(sub_off)
                if pick.shape != sub_counts.shape or ((pick < 0) | (pick >= sub_counts)).any():
                    raise RuntimeError(f"opponent {opp!r} chose an illegal play index")
                outcome.opponent_plies[t_lanes] += 1
                self._apply(t_lanes, sub[sub_off[:-1] + pick], outcome)
                nxt.append(t_lanes[~self.over[t_lanes]])
            lanes = np.concatenate(nxt) if len(nxt) > 1 else nxt[0]
        else:
            raise RuntimeError(
                "no game progress after many passes: both sides closed out with checkers "
                "on the bar (a position no game from the start reaches)"
            )
        self._assemble(counts, pieces)

    def _assemble(
        self,
        counts: np.ndarray,
        pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    ) -> None:
        """Build the flat candidate list of all games from the rounds' partial lists."""
        offsets = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        if len(pieces) == 1 and pieces[0][3].shape[0] == self.n:
            afters, _, idx, lanes = pieces[0]
            if idx.shape[0] == self.n and np.array_equal(lanes, np.arange(self.n)):
                self.afters, self.offsets = afters, offsets
                return
        out = np.empty((int(offsets[-1]), BOARD_SIZE), dtype=np.int8)
        for afters, src_off, idx, lanes in pieces:
            _scatter(afters, src_off, idx.astype(np.int64), lanes.astype(np.int64), out, offsets)
        self.afters, self.offsets = out, offsets


def _check_dice(dice: object, n: int) -> np.ndarray:
    arr = np.asarray(dice)
    if arr.shape != (n, 2) or arr.dtype.kind not in "iu":
        raise ValueError(f"dice must be {n} pairs of integers, got shape {arr.shape}")
    if arr.size and (arr.min() < 1 or arr.max() > 6):
        raise ValueError("dice values must be in 1..6")
    return arr.astype(np.int8)


@njit(cache=True)
def _scatter(
    src: np.ndarray,
    src_off: np.ndarray,
    idx: np.ndarray,
    lanes: np.ndarray,
    dst: np.ndarray,
    dst_off: np.ndarray,
) -> None:
    """Copy slice ``idx[j]`` of ``src`` to game ``lanes[j]``'s place in ``dst``."""
    for j in range(idx.shape[0]):
        lo = src_off[idx[j]]
        hi = src_off[idx[j] + 1]
        base = dst_off[lanes[j]] - lo
        for r in range(lo, hi):
            for c in range(src.shape[1]):
                dst[base + r, c] = src[r, c]
