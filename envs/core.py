"""Game flow shared by the single and the vectorised environments: N games in flat arrays.

Both environments are thin views of one ``GameBatch``: the single environment is a batch
of one that does not restart by itself, the vector environment a batch of N that does.
Keeping the game flow here once means the rules the agent meets (opening roll, automatic
passes, the opponent's turns, scoring) cannot drift apart between the two.

Each game's position is kept from the view of the side to move (the JSON board of
``nard_rl.engine.position``) together with its seat (0 or 1), so handing the turn over
is a flip and a seat toggle.  A step is:

1. the agent's chosen afterstates become the new positions (one row gather);
2. finished games are scored (R21, R25/R26, R28, R32) and, with ``autoreset``, restarted
   from the opening (R4, R5);
3. every other game is flipped to the next side and rolled for;
4. one ``legal_afterstates_batch`` call generates every game's plays; games without a
   legal play pass (R16) and games where the opponent player is to move get its choice
   (one ``choose_batch`` call for all of them), both looping until every game waits on
   the agent again.  The loop runs over the few games concerned, never per game in
   Python, and finishes in a handful of rounds.

Capacity of a candidate list, ``MAX_CANDIDATES = 3060``: a proven upper bound on the
distinct legal plays of any position and roll.  Label the mover's 15 checkers; a play
of a double moves checker i by k_i steps of the die (bar entry being one step) with
``sum k_i = m <= 4`` equal for all legal plays (R14); every step touches down on a fixed
point, so the hits and the resulting board depend on ``(k_1..k_15)`` alone, giving at
most ``C(m + 14, 14) <= C(18, 4) = 3060`` afterstates.  A non-double gives at most
15 * 14 + 2 * 15 = 240.  ``scripts/max_plays_search.py`` (simulated annealing with the
batch move generator) found at most 2226 plays (roll 1-1, checkers spread in pairs of
adjacent points, no opponent blocks), so the bound is not attained but the list size
never needs a fallback.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb
from typing import Literal

import numpy as np
from numba import njit

from nard_rl.encoding import Encoding
from nard_rl.engine.batch import START, outcomes, roll_dice
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import BOARD_SIZE, flip_boards
from nard_rl.engine.rules import RuleSet
from nard_rl.players import Player

MAX_CANDIDATES = comb(18, 4)
"""Capacity of a candidate list: the proven bound on distinct plays (module docstring)."""

DICE_FEATURES = 12
"""Observation tail: two one-hot(6) blocks, the higher die first, then the lower one."""

InvalidAction = Literal["wrap", "raise"]

_MAX_ROUNDS = 10_000
"""Passes/opponent turns in one step beyond which the position is taken as a deadlock
(both sides closed out with checkers on the bar, which no game from the start reaches)."""


def gather_slices(
    afters: np.ndarray, offsets: np.ndarray, idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The flat candidate list ``(afterstates, offsets)`` of the positions ``idx`` only."""
    counts = offsets[idx + 1] - offsets[idx]
    sub_off = np.zeros(idx.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=sub_off[1:])
    sub = np.empty((int(sub_off[-1]), afters.shape[1]), dtype=afters.dtype)
    idx = idx.astype(np.int64)
    _scatter(afters, offsets, idx, np.arange(idx.shape[0]), sub, sub_off)
    return sub, sub_off


def dice_one_hot(dice: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``(N, 12)`` float32: one-hot of the higher die, then of the lower (zeros for 0 dice).

    ``out`` (float32, ``(N, 12)``, e.g. the dice columns of an observation buffer)
    receives the result; one compiled pass replaces a handful of numpy calls per step.
    """
    if out is None:
        out = np.empty((dice.shape[0], DICE_FEATURES), dtype=np.float32)
    _dice_one_hot(np.ascontiguousarray(dice), out)
    return out


@njit(cache=True)
def _dice_one_hot(dice: np.ndarray, out: np.ndarray) -> None:
    for i in range(dice.shape[0]):
        for k in range(DICE_FEATURES):
            out[i, k] = 0.0
        hi = max(dice[i, 0], dice[i, 1])
        lo = min(dice[i, 0], dice[i, 1])
        if lo > 0:
            out[i, hi - 1] = 1.0
            out[i, 6 + lo - 1] = 1.0


@dataclass
class StepOutcome:
    """What happened in the games during one ``GameBatch`` call, one entry per game.

    ``winner`` is the seat that won a game finished during the call (-1 otherwise) and
    ``points`` its value (R25/R26/R28, 0 otherwise); at most one game per lane ends in a
    call (a fresh game cannot end before the agent's next turn).  ``passes`` counts the
    turns passed automatically (R16) and ``opponent_plies`` the opponent's moves.
    ``wrapped`` flags agent actions taken modulo the number of plays.
    """

    winner: np.ndarray
    points: np.ndarray
    passes: np.ndarray
    opponent_plies: np.ndarray
    wrapped: np.ndarray


class GameBatch:
    """N games waiting on the agent, with their flat candidate lists (module docstring).

    ``opponent`` is None for self-play (the agent moves for both seats) or a player that
    moves for seat 1 while the agent holds seat 0.  With ``autoreset`` a finished game
    restarts within the same call; without it the game stays over (``over``) until
    ``reset`` is called for it, holding the final board from the view of the loser
    (self-play) or of the agent (against an opponent).
    """

    def __init__(
        self,
        n: int,
        rules: RuleSet,
        rng: np.random.Generator,
        *,
        opponent: Player | None = None,
        autoreset: bool = True,
        invalid_action: InvalidAction = "wrap",
    ) -> None:
        if n < 1:
            raise ValueError(f"need at least one game, got {n}")
        if invalid_action not in ("wrap", "raise"):
            raise ValueError(f"invalid_action must be 'wrap' or 'raise', got {invalid_action!r}")
        self.n = n
        self.rules = rules
        self.rng = rng
        self.opponent = opponent
        self.autoreset = autoreset
        self.invalid_action = invalid_action
        self.boards = np.tile(START, (n, 1))
        self.dice = np.zeros((n, 2), dtype=np.int8)
        self.seat = np.zeros(n, dtype=np.int8)
        self.over = np.zeros(n, dtype=np.bool_)
        self.afters = np.empty((0, BOARD_SIZE), dtype=np.int8)
        self.offsets = np.zeros(n + 1, dtype=np.int64)

    # -- public -------------------------------------------------------------------------
    @property
    def counts(self) -> np.ndarray:
        """Legal plays per game (0 only for a game that is over)."""
        return np.diff(self.offsets)

    def reset(
        self,
        boards: np.ndarray | None = None,
        dice: np.ndarray | None = None,
        seat: np.ndarray | None = None,
    ) -> StepOutcome:
        """Start every game: the opening (R4, R5) unless a position is given.

        ``boards`` (N, 26) are given from the view of the side to move, ``dice`` (N, 2)
        its roll (drawn when omitted) and ``seat`` (N,) its seat (0 when omitted).  With
        an opponent, games where it is to move advance to the agent's turn first.
        """
        outcome = self._new_outcome()
        lanes = np.arange(self.n)
        if boards is None:
            self._start(lanes)
        else:
            self.boards[:] = np.asarray(boards, dtype=np.int8).reshape(self.n, BOARD_SIZE)
            self.seat[:] = 0 if seat is None else np.asarray(seat, dtype=np.int8)
            self.dice[:] = roll_dice(self.rng, self.n) if dice is None else dice
        self.over[:] = False
        self._settle(lanes, outcome)
        return outcome

    def step(self, actions: np.ndarray) -> StepOutcome:
        """Play each game's chosen candidate (local index into its slice) and move on."""
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        if actions.shape[0] != self.n:
            raise ValueError(f"expected {self.n} actions, got {actions.shape[0]}")
        if self.over.any():
            raise RuntimeError("a game is over: reset it before stepping (autoreset is off)")
        counts = self.counts
        bad = (actions < 0) | (actions >= counts)
        outcome = self._new_outcome()
        if bad.any():
            if self.invalid_action == "raise":
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"action {int(actions[i])} is not a legal play in game {i}: it has "
                    f"{int(counts[i])} legal plays, indices 0..{int(counts[i]) - 1} "
                    "(see the action mask)"
                )
            actions = actions % counts
            outcome.wrapped[:] = bad
        rows = self.offsets[:-1] + actions
        lanes = np.arange(self.n)
        self._apply(lanes, self.afters[rows], outcome)
        self._settle(lanes[~self.over], outcome)
        return outcome

    def observe(self, encoding: Encoding) -> np.ndarray:
        """``(N, size + 12)`` float32: each game's position encoded for the side to move
        (``on_roll=True``) followed by its dice (``dice_one_hot``; zeros once over)."""
        obs = np.empty((self.n, encoding.size + DICE_FEATURES), dtype=np.float32)
        encoding.encode(self.boards, on_roll=True, out=obs[:, : encoding.size])  # no copy
        dice_one_hot(self.dice, out=obs[:, encoding.size :])
        return obs

    # -- game flow ----------------------------------------------------------------------
    def _new_outcome(self) -> StepOutcome:
        n = self.n
        return StepOutcome(
            winner=np.full(n, -1, dtype=np.int8),
            points=np.zeros(n, dtype=np.int8),
            passes=np.zeros(n, dtype=np.int32),
            opponent_plies=np.zeros(n, dtype=np.int32),
            wrapped=np.zeros(n, dtype=np.bool_),
        )

    def _start(self, lanes: np.ndarray) -> None:
        """The opening (R4, R5): start position, a non-double roll, a random first seat."""
        k = lanes.shape[0]
        self.boards[lanes] = START
        self.dice[lanes] = roll_dice(self.rng, k, np.ones(k, dtype=np.bool_))
        self.seat[lanes] = self.rng.integers(0, 2, size=k, dtype=np.int8)

    def _points(self, gammon: np.ndarray, backgammon: np.ndarray) -> np.ndarray:
        """Value of each won game (R25; R26 and R28 through the rule set; R32 Jacoby:
        singles only, as the cube is never turned in a cubeless game)."""
        r = self.rules
        if r.jacoby:
            return np.ones(gammon.shape[0], dtype=np.int8)
        pts = np.where(backgammon, r.backgammon_value, np.where(gammon, r.gammon_value, 1))
        return pts.astype(np.int8)

    def _apply(self, lanes: np.ndarray, new: np.ndarray, outcome: StepOutcome) -> None:
        """Make the afterstates ``new`` (movers' views) the positions of ``lanes``."""
        done, gammon, backgammon = outcomes(new)
        flipped = flip_boards(new)
        fin = lanes[done]
        if fin.size:
            outcome.winner[fin] = self.seat[fin]
            outcome.points[fin] = self._points(gammon[done], backgammon[done])
        cont = lanes[~done]
        self.boards[lanes] = flipped
        self.seat[cont] ^= 1
        self.dice[cont] = roll_dice(self.rng, cont.shape[0])
        if fin.size:
            if self.autoreset:
                self._start(fin)
            else:
                # Over: the final board stays for the observation, from the loser's view
                # in self-play and from the agent's (seat 0) against an opponent.
                self.over[fin] = True
                self.seat[fin] ^= 1
                self.dice[fin] = 0
                if self.opponent is not None:
                    theirs = fin[self.seat[fin] == 1]
                    self.boards[theirs] = flip_boards(self.boards[theirs])
                    self.seat[theirs] = 0

    def _settle(self, lanes: np.ndarray, outcome: StepOutcome) -> None:
        """Generate plays for ``lanes`` until each waits on the agent with a legal play."""
        n = self.n
        counts = np.zeros(n, dtype=np.int64)
        pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        mars = self.rules.waste_rule
        opp = self.opponent
        for _ in range(_MAX_ROUNDS):
            if lanes.size == 0:
                break
            afters, offsets = legal_afterstates_batch(self.boards[lanes], self.dice[lanes], mars)
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
                # R16: no legal play, the turn passes to the other side with a new roll.
                p = lanes[empty]
                outcome.passes[p] += 1
                self.boards[p] = flip_boards(self.boards[p])
                self.seat[p] ^= 1
                self.dice[p] = roll_dice(self.rng, p.shape[0])
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
                if ((pick < 0) | (pick >= sub_counts)).any():
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
            afters, src_off, idx, lanes = pieces[0]
            if np.array_equal(lanes, np.arange(self.n)) and idx.shape[0] == self.n:
                self.afters, self.offsets = afters, offsets
                return
        out = np.empty((int(offsets[-1]), BOARD_SIZE), dtype=np.int8)
        for afters, src_off, idx, lanes in pieces:
            _scatter(afters, src_off, idx.astype(np.int64), lanes.astype(np.int64), out, offsets)
        self.afters, self.offsets = out, offsets


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
