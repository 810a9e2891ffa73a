"""Head-to-head matches between players, with luck cancelled by duplicate dice.

Each seeded dice stream is played twice, with the sides swapped: game ``k`` and game
``k + K`` see the same rolls ply by ply, once with A moving first and once with B.  The
per-pair average cancels most of the dice luck, so the confidence interval (computed
over pairs, which are independent) is much tighter than over single games.
All games advance together; each player sees one batch per ply.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from nard_rl.engine.batch import GameBatch, gather_slices
from nard_rl.engine.dice import pair_dice
from nard_rl.engine.rules import RuleSet, get_rules

MAX_PLIES = 2000  # a game far longer than any real one is a bug, not a result


@dataclass
class MatchResult:
    """Outcome of a duplicate-dice match, all from player A's side."""

    player_a: str
    player_b: str
    games: int
    ppg: float
    """Mean points per game for A (cubeless, gammons and backgammons counted)."""
    ci95: float
    """Half-width of the 95% confidence interval of ``ppg`` (normal approx. over pairs)."""
    win_rate: float
    gammon_rate: float
    """Fraction of all games A won with a gammon (or better)."""
    backgammon_rate: float
    lose_gammon_rate: float
    lose_backgammon_rate: float
    games_per_second: float
    seed: int
    rules: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def summary(self) -> str:
        return (
            f"{self.player_a} vs {self.player_b}: {self.ppg:+.3f} ppg "
            f"(95% CI {self.ppg - self.ci95:+.3f} .. {self.ppg + self.ci95:+.3f}) over "
            f"{self.games} games; wins {self.win_rate:.1%}, gammons {self.gammon_rate:.1%}, "
            f"backgammons {self.backgammon_rate:.1%}; lost gammons {self.lose_gammon_rate:.1%}; "
            f"{self.games_per_second:,.0f} games/s"
        )


def play_match(
    player_a: object,
    player_b: object,
    games: int,
    *,
    seed: int = 0,
    rules: RuleSet | str = "standard",
    batch_pairs: int = 512,
    progress: Callable[[int], None] | None = None,
    name_a: str | None = None,
    name_b: str | None = None,
    shard: bool = False,
) -> MatchResult:
    """Play ``games`` (rounded up to an even number) cubeless games between two players.

    ``player_a``/``player_b`` implement ``choose_batch(boards, dice, afterstates, offsets)``.
    ``progress`` is called with the number of games finished so far.  ``shard=True``
    splits the pairs across the ranks of a ``torch.distributed`` job (every rank calls
    this with its own copy of the players; all get the same, single-process result).
    """
    r = get_rules(rules)
    pairs = max(1, math.ceil(games / 2))
    t0 = time.perf_counter()
    play = functools.partial(
        play_pairs, player_a, player_b, seed=seed, rules=r, batch_pairs=batch_pairs
    )
    if shard:
        points = play_pairs_sharded(play, pairs, batch_pairs=batch_pairs, progress=progress)
    else:
        points = play(0, pairs, progress=progress)
    return match_result(
        points,
        name_a=name_a or getattr(player_a, "name", "A"),
        name_b=name_b or getattr(player_b, "name", "B"),
        seed=seed,
        rules=r,
        elapsed=time.perf_counter() - t0,
    )


def play_pairs(
    player_a: object,
    player_b: object,
    lo: int,
    hi: int,
    *,
    seed: int,
    rules: RuleSet | str = "standard",
    batch_pairs: int = 512,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Points for A of the duplicate pairs ``lo..hi-1``: ``(2, hi - lo)``, row 0 with A
    moving first, row 1 with B first.

    Pairs are played in blocks of ``batch_pairs`` counted from pair 0, so a range starting
    on a block boundary batches its games exactly as the whole match does: network
    players then see the same batches and choose bit for bit the same plays.
    """
    if not 0 <= lo <= hi:
        raise ValueError(f"pair range must satisfy 0 <= lo <= hi, got {lo}..{hi}")
    if batch_pairs < 1 or lo % batch_pairs:
        raise ValueError(f"lo={lo} must be a multiple of batch_pairs={batch_pairs} (>= 1)")
    r = get_rules(rules)
    out = np.zeros((2, hi - lo), dtype=np.float64)
    for b in range(lo, hi, batch_pairs):
        k = min(batch_pairs, hi - b)
        pts = _play_block(player_a, player_b, np.arange(b, b + k, dtype=np.uint64), seed, r)
        out[0, b - lo : b - lo + k] = pts[:k]
        out[1, b - lo : b - lo + k] = pts[k:]
        if progress is not None:
            progress(2 * (b - lo + k))
    return out


def _play_blocks(
    play: Callable[[int, int], np.ndarray], pairs: int, batch_pairs: int, lo: int, hi: int
) -> np.ndarray:
    return play(lo * batch_pairs, min(hi * batch_pairs, pairs))


def play_pairs_sharded(
    play: Callable[[int, int], np.ndarray],
    pairs: int,
    *,
    batch_pairs: int,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """``play(lo, hi)`` (``play_pairs`` with its players bound) over pairs ``0..pairs-1``,
    split in whole blocks across the ranks of a ``torch.distributed`` job or ``workers``
    local processes (``play`` picklable then), merged in pair order: the same array as
    ``play(0, pairs)`` in one process.  ``progress`` gets this process's games done."""
    from nard_rl.util.shards import map_shards

    blocks = math.ceil(pairs / batch_pairs)
    parts = map_shards(
        functools.partial(_play_blocks, play, pairs, batch_pairs),
        blocks,
        workers=workers,
        progress=None if progress is None else lambda k: progress(2 * min(pairs, k * batch_pairs)),
    )
    return np.concatenate(parts, axis=1)


def match_result(
    points: np.ndarray,
    *,
    name_a: str,
    name_b: str,
    seed: int,
    rules: RuleSet | str,
    elapsed: float,
) -> MatchResult:
    """The statistics of a match from its ``(2, pairs)`` points (see ``play_pairs``)."""
    r = get_rules(rules)
    pairs = points.shape[1]
    pair_points = (points[0] + points[1]) / 2.0
    allp = points.reshape(-1)
    n = allp.size
    ci = 1.96 * float(pair_points.std(ddof=1)) / math.sqrt(pairs) if pairs > 1 else float("inf")
    return MatchResult(
        player_a=name_a,
        player_b=name_b,
        games=n,
        ppg=float(allp.mean()),
        ci95=ci,
        win_rate=float((allp > 0).mean()),
        gammon_rate=float((allp >= 2).mean()),
        backgammon_rate=float((allp >= 3).mean()),
        lose_gammon_rate=float((allp <= -2).mean()),
        lose_backgammon_rate=float((allp <= -3).mean()),
        games_per_second=n / elapsed if elapsed > 0 else float("inf"),
        seed=seed,
        rules=r.name,
    )


class _Checked:
    """A player as ``GameBatch``'s opponent, its answers checked and errors named."""

    def __init__(self, player: object) -> None:
        self.player = player
        self.name = getattr(player, "name", repr(player))

    def choose_batch(
        self, boards: np.ndarray, dice: np.ndarray, afterstates: np.ndarray, offsets: np.ndarray
    ) -> np.ndarray:
        local = np.asarray(
            self.player.choose_batch(boards, dice, afterstates, offsets),  # type: ignore[attr-defined]
            dtype=np.int64,
        ).reshape(-1)
        counts = np.diff(offsets)
        if local.shape != counts.shape or np.any((local < 0) | (local >= counts)):
            # every slice it sees has a legal play (R16 passes happen in the stepper)
            raise RuntimeError(f"{self.name} chose an illegal index")
        return local

    def __repr__(self) -> str:
        return self.name


def _play_block(
    player_a: object, player_b: object, pair_ids: np.ndarray, seed: int, rules: RuleSet
) -> np.ndarray:
    """2k games: 0..k-1 with A first, k..2k-1 with B first; pair i shares its dice.

    The games run on the engine's batch stepper with A in seat 0 and B as its opponent in
    seat 1; the stepper's turn counter is the ply of the dice streams.
    """
    k = pair_ids.shape[0]
    n = 2 * k
    lane_pairs = np.concatenate([pair_ids, pair_ids]).astype(np.uint64)

    def dice_fn(lanes: np.ndarray, turns: np.ndarray) -> np.ndarray:
        return pair_dice(seed, lane_pairs[lanes], turns)

    games = GameBatch(n, rules, opponent=_Checked(player_b), autoreset=False, dice_fn=dice_fn)
    a = _Checked(player_a)
    points = np.zeros(n, dtype=np.float64)
    outcome = games.reset(seat=np.repeat(np.array([0, 1], dtype=np.int8), k))
    for _ in range(MAX_PLIES):
        fin = outcome.finished
        if fin.any():
            pts = outcome.points[fin].astype(np.float64)
            points[fin] = np.where(outcome.winner[fin] == 0, pts, -pts)
        live = np.flatnonzero(~games.over)
        if live.size == 0:
            break
        actions = np.zeros(n, dtype=np.int64)
        sub, sub_off = gather_slices(games.afters, games.offsets, live)
        actions[live] = a.choose_batch(games.boards[live], games.dice[live], sub, sub_off)
        outcome = games.step(actions)
    else:
        raise RuntimeError(f"games still running after {MAX_PLIES} plies")
    return points
