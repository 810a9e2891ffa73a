"""Lookahead search: n-ply evaluation of afterstates and pre-roll positions, and n-ply
choice of plays, over any ``nard_rl.nets.evaluator.Evaluator``.

Definitions (all probabilities are the five cumulative cubeless outcomes of
``nard_rl.nets.evaluator``, from the view named):

* 0-ply of an afterstate ``A`` (mover's view, opponent to roll) is the evaluator's
  answer; a finished game (the mover bore off its last checker, R21) is exact.
* n-ply of ``A`` (n >= 1) is the mean over the 21 distinct rolls (a double weighs 1/36,
  any other roll 2/36) of the opponent's reply to that roll evaluated at (n-1)-ply and
  seen back from the mover.  The reply is the opponent's best play at 0-ply (highest
  cubeless money equity of the rule set, as GNU Backgammon picks replies inside its
  tree); a roll the opponent cannot play (R16) leaves the board as it is.
* n-ply of a position *before* the roll (side on roll to move) follows the pre-roll
  convention: it is the opponent's afterstate (the flipped board) at n-ply, seen from
  the side on roll.  So 1-ply of a pre-roll position averages the roller's 21 best
  plays at 0-ply.

Choosing a play at n-ply (``Search.rank``, ``Search.choose_batch``) ranks every legal
play at 0-ply, then, level by level, keeps the best few within an equity window
(``MoveFilter``, as gnubg's move filters) and evaluates only those one ply deeper.  The
ranking at the root uses a ``Utility`` (probabilities -> value to maximise; cubeless
money equity by default, a score- or cube-aware value from ``nard_rl.cube.model`` in match
play); inside the tree replies are picked by cubeless money equity, so the
probabilities a level returns do not depend on the utility and one cache serves all.

Blending at the root.  The n-ply value of a candidate is biased by the search's own
choices: at 1-ply the opponent's reply is the best of many by a noisy 0-ply net, so the
candidates with the most (and most misjudged) replies look worse than they are; at 2-ply
the bias turns the other way.  Choosing a play (``rank``, ``choose_batch``) therefore
ranks the candidates a level reached by ``(1 - w) * n-ply + w * (n-1)-ply`` (``blend``,
one ``w`` per level), which cancels much of it: on our own 12,000 gnubg-judged decisions
``w = 0.4`` at 1-ply lost 0.28 mp a decision less than plain 1-ply, and ``w = 0.2`` at
2-ply 0.15 less (``docs/search.md``).  ``afterstate_probs`` and ``pre_roll_probs``, the
values labels and cube decisions read, stay plain n-ply as defined above.

Batching: every level is one move-generation call and one evaluator call over all
candidates of all positions and all 21 rolls, whatever the number of positions, split
into chunks of whole afterstates of about ``max_rows`` replies (which bounds memory, and
on a CPU is faster than one huge call: see ``DEFAULT_MAX_ROWS``); the deeper levels run
on the replies chosen at the level above.  Results at 1-ply and deeper
are cached (bounded, least recently used first out) under the board's bytes and the ply;
0-ply is not cached, since the evaluator answers a board faster than a dictionary would.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from nard_rl.engine.batch import ROLL_WEIGHTS, ROLLS, segment_argmax, with_passes
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.movetext import format_plays
from nard_rl.engine.position import flip_boards
from nard_rl.engine.rules import RuleSet, cubeless_equity, get_rules, swap_sides
from nard_rl.nets.evaluator import (
    Evaluator,
    check_afterstates,
    exact_finished,
    pre_roll_probabilities,
)
from nard_rl.nets.pruning import Pruner
from nard_rl.players.base import Player

__all__ = [
    "MAX_PLY",
    "ROLLS",
    "ROLL_WEIGHTS",
    "MoveFilter",
    "RankedPlay",
    "Search",
    "SearchPlayer",
    "Utility",
    "money_utility",
]

Utility = Callable[[np.ndarray], np.ndarray]
"""``(N, 5)`` probabilities from the mover's view -> ``(N,)`` value the mover maximises."""

MAX_PLY = 3
"""Deepest search offered: 3-ply costs about 21 times 2-ply (seconds a decision on a CPU)."""

DEFAULT_CACHE_SIZE = 200_000
DEFAULT_MAX_ROWS = 1 << 14
"""Replies per evaluator call.  Bigger is not faster on a CPU: past about 16k rows the
level's arrays (an encoded row is about 1 KB) are too large for the allocator's heap, so
each call maps fresh memory and page-faults it in (at 131k rows a 2-ply search spent as
much time in the kernel as in the net); a GPU evaluator may want ``max_rows`` larger."""
_REPLIES_PER_ROLL = 32  # a generous mean number of legal plays per roll, for chunking
_LEVEL_STEP = 16.0  # larger than any equity spread: "evaluated deeper" outranks "better"
DEFAULT_PRUNE_MARGIN = 0.08
"""Inside a 1-ply choice, the replies of a roll that the pruning net puts more than this
(cubeless equity) below its favourite are not scored in full, even among its ``keep``
best.  On our own 12,000 gnubg-judged decisions it cut the full-net rows of a 1-ply
choice by 29% at no cost (-0.009 +- 0.009 mp); at 2-ply the same cut cost +0.036 +- 0.018,
so deeper choices, and the values that labels and cube decisions read, do without it."""
DEFAULT_BLEND = (0.4, 0.2)
"""Weight of the (n-1)-ply value in a candidate's n-ply value at the root, for n = 1, 2
(the module doc); deeper levels are not blended (no measurement says how much)."""


def check_blend(blend: Sequence[float]) -> tuple[float, ...]:
    """Blend weights as a tuple, each in [0, 1) (1 would drop the deeper ply)."""
    weights = tuple(float(w) for w in blend)
    if any(not 0.0 <= w < 1.0 for w in weights):
        raise ValueError(f"blend weights must lie in [0, 1), got {weights}")
    return weights


def blend_weight(blend: Sequence[float], ply: int) -> float:
    """The weight of the (ply-1)-ply value in a ply-deep one (0 where none is given)."""
    return float(blend[ply - 1]) if 1 <= ply <= len(blend) else 0.0


def money_utility(rules: RuleSet | str = "standard") -> Utility:
    """Cubeless money equity of the rule set (R25/R26/R28 weights): the default utility."""
    return partial(cubeless_equity, rules=get_rules(rules))


@dataclass(frozen=True)
class MoveFilter:
    """Which candidates go one ply deeper, per level (gnubg's move filters).

    Before evaluating at ply ``L`` (1, 2, ...), the candidates ranked at ply ``L - 1``
    are cut to the best ``keep[L - 1]`` that lie within ``window[L - 1]`` (equity) of the
    best; the last entry serves deeper levels.  The best candidate always survives.
    Defaults follow gnubg's usual setting (8 within 0.16 after 0-ply), then narrow the
    field because each further ply costs about 21 times more: 4 within 0.08 after 1-ply,
    2 within 0.04 after that.
    """

    keep: tuple[int, ...] = (8, 4, 2)
    window: tuple[float, ...] = (0.16, 0.08, 0.04)

    def __post_init__(self) -> None:
        if not self.keep or len(self.keep) != len(self.window):
            raise ValueError(
                f"MoveFilter needs one window per keep entry (at least one), got keep="
                f"{self.keep} and window={self.window}"
            )
        if any(int(k) < 1 for k in self.keep):
            raise ValueError(f"MoveFilter keep counts must be >= 1, got {self.keep}")
        if any(not np.isfinite(w) or w < 0 for w in self.window):
            raise ValueError(f"MoveFilter windows must be finite and >= 0, got {self.window}")

    def at(self, level: int) -> tuple[int, float]:
        """``(keep, window)`` applied before evaluating at ply ``level`` (>= 1)."""
        i = min(level - 1, len(self.keep) - 1)
        return int(self.keep[i]), float(self.window[i])


@dataclass(frozen=True)
class RankedPlay:
    """One legal play as ``Search.rank`` judged it."""

    board: tuple[int, ...]
    """The afterstate, mover's view (flip it to hand over the turn)."""
    move: str
    """gnubg notation, e.g. ``24/18 13/11``."""
    probs: tuple[float, float, float, float, float]
    """Outcome probabilities at ``ply``, mover's view, blended with the ply below as the
    search ranked them (``Search.blend``)."""
    equity: float
    """The utility of ``probs``."""
    diff: float
    """``equity`` minus the best play's (0 for the best; <= 0 among plays of equal ply)."""
    ply: int
    """How deep this play was evaluated (the move filter stops weaker plays earlier)."""


def _segments(offsets: np.ndarray) -> np.ndarray:
    """Segment id of every row of a ragged batch."""
    return np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))


def filter_mask(
    values: np.ndarray, offsets: np.ndarray, alive: np.ndarray, keep: int, window: float
) -> np.ndarray:
    """Per segment, the ``alive`` rows among the best ``keep`` within ``window`` of the
    segment's best alive value (vectorised over all segments)."""
    n_rows = values.shape[0]
    if n_rows == 0:
        return np.zeros(0, dtype=np.bool_)
    seg = _segments(offsets)
    masked = np.where(alive, values, -np.inf)
    order = np.lexsort((-masked, seg))  # by segment, best first; stable among ties
    rank = np.empty(n_rows, dtype=np.int64)
    rank[order] = np.arange(n_rows) - offsets[seg[order]]
    starts = offsets[:-1]
    nonempty = np.diff(offsets) > 0
    best = np.full(offsets.shape[0] - 1, -np.inf)
    best[nonempty] = masked[order[starts[nonempty]]]
    return alive & (rank < keep) & (masked >= best[seg] - window)


class Search:
    """n-ply evaluation and n-ply play choice over one evaluator (see the module docstring).

    ``filter`` is the move filter of ``rank``/``choose_batch``; ``cache_size`` bounds the
    number of cached (board, ply) results (0 turns the cache off); ``utility`` ranks the
    root's plays (default: cubeless money equity of the evaluator's rule set);
    ``max_rows`` bounds the replies generated and evaluated at once (memory: a level over
    more afterstates than fit is split into several evaluator calls); ``blend`` weighs the
    ply below into each level's value at the root (``DEFAULT_BLEND``; ``()`` or zeros
    for plain n-ply choices); ``prune_margin`` narrows the pruning net's cut inside 1-ply
    choices (``DEFAULT_PRUNE_MARGIN``; ``inf`` for none).  The cache is plain
    shared state: give each thread its own ``Search`` (they may share the evaluator).
    """

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        filter: MoveFilter | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
        utility: Utility | None = None,
        max_rows: int = DEFAULT_MAX_ROWS,
        pruner: Pruner | bool | None = None,
        blend: Sequence[float] = DEFAULT_BLEND,
        prune_margin: float = DEFAULT_PRUNE_MARGIN,
    ) -> None:
        if not hasattr(evaluator, "probabilities"):
            raise TypeError(f"evaluator {evaluator!r} has no probabilities() method")
        self.blend = check_blend(blend)
        if int(cache_size) < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        if int(max_rows) < 1:
            raise ValueError(f"max_rows must be >= 1, got {max_rows}")
        self.max_rows = int(max_rows)
        self.evaluator = evaluator
        self.rules = get_rules(getattr(evaluator, "rules", None))
        self.filter = filter or MoveFilter()
        self.cache_size = int(cache_size)
        self.utility = utility or money_utility(self.rules)
        self._money = money_utility(self.rules)
        # replies inside the tree are ranked by the evaluator's pruning net (if it has
        # one) and only its best few per roll are scored in full; False: score them all
        if pruner is None or pruner is True:
            pruner = getattr(evaluator, "pruner", None)
        self.pruner: Pruner | None = pruner or None
        if not float(prune_margin) >= 0:
            raise ValueError(f"prune_margin must be >= 0 (inf: off), got {prune_margin}")
        self.prune_margin = float(prune_margin)
        self._margin = np.inf  # the margin in force: prune_margin during a 1-ply choice
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.evaluated = 0  # afterstates sent to the evaluator (a cost measure for benches)

    # evaluation --------------------------------------------------------------------------
    def clear_cache(self) -> None:
        self._cache.clear()
        self.hits = self.misses = 0

    def afterstate_probs(self, afterstates: np.ndarray, ply: int = 0) -> np.ndarray:
        """``(N, 5)`` probabilities of afterstates (mover's view, opponent to roll) at
        ``ply``, in the same view as the evaluator's answer."""
        arr = check_afterstates(afterstates)
        return self._probs(arr, check_ply(ply)).astype(np.float32)

    def pre_roll_probs(self, boards: np.ndarray, ply: int = 1) -> np.ndarray:
        """``(N, 5)`` probabilities of positions before the roll, seen by the side on roll
        (the pre-roll convention: the opponent's afterstate, sides swapped)."""
        check_ply(ply)
        return pre_roll_probabilities(
            lambda opp: self._probs(opp, ply), check_afterstates(boards)
        ).astype(np.float32)

    def _eval0(self, afterstates: np.ndarray) -> np.ndarray:
        if afterstates.shape[0] == 0:
            return np.zeros((0, 5), dtype=np.float64)
        self.evaluated += afterstates.shape[0]
        return np.asarray(self.evaluator.probabilities(afterstates), dtype=np.float64)

    def _probs(self, afters: np.ndarray, ply: int) -> np.ndarray:
        """Probabilities at ``ply`` (float64), with the cache for ply >= 1."""
        if ply == 0:
            return self._eval0(afters)
        n = afters.shape[0]
        out = np.empty((n, 5), dtype=np.float64)
        if n == 0:
            return out
        if self.cache_size == 0:
            return self._expand(afters, ply)
        tag = bytes((ply, self._margin != np.inf))  # a margin's values are not exact ones
        keys = [k + tag for k in afters.view(np.dtype((np.void, 26))).ravel().tolist()]
        missing: list[int] = []
        for i, key in enumerate(keys):
            hit = self._cache.get(key)
            if hit is None:
                missing.append(i)
            else:
                self._cache.move_to_end(key)
                out[i] = hit
        self.hits += n - len(missing)
        self.misses += len(missing)
        if missing:
            idx = np.asarray(missing, dtype=np.int64)
            fresh = self._expand(afters[idx], ply)
            out[idx] = fresh
            for i, row in zip(missing, fresh, strict=True):
                self._cache[keys[i]] = row
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out

    def _expand(self, afters: np.ndarray, ply: int) -> np.ndarray:
        """One level of lookahead for afterstates not in the cache."""
        done, exact = exact_finished(afters)
        out = exact.astype(np.float64)
        live = np.flatnonzero(~done)
        if live.size == 0:
            return out
        # bounded memory: about max_rows replies (a few dozen per roll) per evaluator call
        step = max(1, self.max_rows // (ROLLS.shape[0] * _REPLIES_PER_ROLL))
        for lo in range(0, live.size, step):
            rows = live[lo : lo + step]
            out[rows] = self._expand_live(afters[rows], ply)
        return out

    def _expand_live(self, afters: np.ndarray, ply: int) -> np.ndarray:
        m = afters.shape[0]
        k = ROLLS.shape[0]
        opp = np.repeat(flip_boards(afters), k, axis=0)  # opponent to roll, its view
        dice = np.tile(ROLLS, (m, 1))
        replies, offsets = _replies(opp, dice, self.rules.waste_rule)
        if self.pruner is not None:
            kept = self.pruner.select(replies, offsets, self._margin)
            if not kept.all():
                idx = np.flatnonzero(kept)
                counts = np.bincount(_segments(offsets)[idx], minlength=offsets.shape[0] - 1)
                offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
                replies = np.ascontiguousarray(replies[idx])
        probs0 = self._eval0(replies)
        pick = offsets[:-1] + segment_argmax(self._money(probs0), offsets)
        if ply == 1:
            reply_probs = probs0[pick]
        else:
            reply_probs = self._probs(np.ascontiguousarray(replies[pick]), ply - 1)
        mine = swap_sides(reply_probs).reshape(m, k, 5)
        return np.einsum("mkf,k->mf", mine, ROLL_WEIGHTS)

    # choosing ----------------------------------------------------------------------------
    def _search(
        self, afters: np.ndarray, offsets: np.ndarray, ply: int, utility: Utility
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(probs, values, plies)`` of every candidate after the filtered search."""
        self._margin = self.prune_margin if ply == 1 else np.inf
        try:
            return self._filtered(afters, offsets, ply, utility)
        finally:
            self._margin = np.inf

    def _filtered(
        self, afters: np.ndarray, offsets: np.ndarray, ply: int, utility: Utility
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        probs = self._probs(afters, 0)
        plain = probs.copy()  # each candidate's plain value at the last level it reached
        values = np.asarray(utility(probs), dtype=np.float64)
        plies = np.zeros(afters.shape[0], dtype=np.int64)
        alive = np.ones(afters.shape[0], dtype=np.bool_)
        seg = _segments(offsets)
        for level in range(1, ply + 1):
            keep, window = self.filter.at(level)
            alive = filter_mask(values, offsets, alive, keep, window)
            # a position with one survivor is decided: no deeper look needed
            survivors = np.bincount(seg[alive], minlength=offsets.shape[0] - 1)
            alive &= survivors[seg] > 1
            idx = np.flatnonzero(alive)
            if idx.size == 0:
                break
            deeper = self._probs(np.ascontiguousarray(afters[idx]), level)
            w = blend_weight(self.blend, level)
            shown = (1.0 - w) * deeper + w * plain[idx] if w else deeper
            plain[idx] = deeper
            probs[idx] = shown
            values[idx] = np.asarray(utility(shown), dtype=np.float64)
            plies[idx] = level
        return probs, values, plies

    def choose_batch(
        self,
        boards: np.ndarray,
        dice: np.ndarray,
        afterstates: np.ndarray,
        offsets: np.ndarray,
        ply: int = 0,
        utility: Utility | None = None,
    ) -> np.ndarray:
        """For N positions, the local index of the chosen play (-1 where there is none),
        with the arguments of ``nard_rl.players.base.Player.choose_batch``."""
        ply = check_ply(ply)
        afters = check_afterstates(afterstates)
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        n = np.asarray(boards).reshape(-1, 26).shape[0]
        if offsets.shape != (n + 1,) or offsets[0] != 0 or offsets[-1] != afters.shape[0]:
            raise ValueError(
                f"offsets must run from 0 to {afters.shape[0]} with {n + 1} entries, "
                f"got shape {offsets.shape}"
            )
        if np.any(np.diff(offsets) < 0):
            raise ValueError("offsets must be non-decreasing")
        counts = np.diff(offsets)
        picks = np.where(counts > 0, 0, -1).astype(np.int64)
        many = np.flatnonzero(counts > 1)  # a forced play needs no evaluation
        if many.size == 0:
            return picks
        sub_off = np.concatenate(([0], np.cumsum(counts[many]))).astype(np.int64)
        rows = np.flatnonzero((counts > 1)[_segments(offsets)])
        _, values, plies = self._search(
            np.ascontiguousarray(afters[rows]), sub_off, ply, utility or self.utility
        )
        picks[many] = segment_argmax(plies * _LEVEL_STEP + values, sub_off)
        return picks

    def rank(
        self,
        board: Sequence[int] | np.ndarray,
        dice: Sequence[int] | np.ndarray,
        ply: int = 0,
        utility: Utility | None = None,
    ) -> list[RankedPlay]:
        """Every legal play of ``board`` (side on roll's view) and ``dice``, best first:
        plays evaluated deeper come before those the filter stopped earlier, as in
        gnubg's hint list."""
        ply = check_ply(ply)
        arr = check_afterstates(np.asarray(board).reshape(1, 26))
        roll = np.asarray(dice, dtype=np.int64).reshape(-1)
        if roll.shape != (2,) or roll.min() < 1 or roll.max() > 6:
            raise ValueError(f"dice must be two numbers in 1..6, got {np.asarray(dice).tolist()}")
        afters, offsets, steps = legal_afterstates_batch(
            arr, roll.astype(np.int8).reshape(1, 2), self.rules.waste_rule, with_moves=True
        )
        if afters.shape[0] == 0:
            return []
        probs, values, plies = self._search(
            np.ascontiguousarray(afters), offsets, ply, utility or self.utility
        )
        order = np.lexsort((-values, -plies))
        best = float(values[order[0]])
        moves = format_plays(arr[0], steps)
        return [
            RankedPlay(
                board=tuple(int(v) for v in afters[i]),
                move=moves[i],
                probs=tuple(float(v) for v in probs[i]),  # type: ignore[arg-type]
                equity=float(values[i]),
                diff=float(values[i]) - best,
                ply=int(plies[i]),
            )
            for i in order
        ]


def check_ply(ply: int) -> int:
    if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)):
        raise TypeError(f"ply must be an integer, got {ply!r}")
    if not 0 <= int(ply) <= MAX_PLY:
        raise ValueError(f"ply must be in 0..{MAX_PLY}, got {ply}")
    return int(ply)


def _replies(boards: np.ndarray, dice: np.ndarray, mars: bool) -> tuple[np.ndarray, np.ndarray]:
    """Every legal play of each (board, roll), as ``legal_afterstates_batch``, except that a
    roll with no legal play (R16) yields the board itself as its one "play"."""
    afters, offsets = legal_afterstates_batch(boards, dice, mars)
    return with_passes(afters, offsets, boards)


class SearchPlayer(Player):
    """Plays the best play of an n-ply ``Search`` (spec ``default:1``, ``x.pt:2``)."""

    def __init__(self, search: Search, ply: int = 1, *, name: str = "search") -> None:
        self.search = search
        self.ply = check_ply(ply)
        self.name = name

    def choose_batch(
        self,
        boards: np.ndarray,
        dice: np.ndarray,
        afterstates: np.ndarray,
        offsets: np.ndarray,
    ) -> np.ndarray:
        return self.search.choose_batch(boards, dice, afterstates, offsets, self.ply)
