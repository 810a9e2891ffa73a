"""Head-to-head matches between players, with luck cancelled by duplicate dice.

Each seeded dice stream is played twice, with the sides swapped: game ``k`` and game
``k + K`` see the same rolls ply by ply, once with A moving first and once with B.  The
per-pair average cancels most of the dice luck, so the confidence interval (computed
over pairs, which are independent) is much tighter than over single games.
All games advance together; each player sees one batch per ply.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from nard_rl.engine.batch import outcomes, start_boards
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import flip_boards
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
) -> MatchResult:
    """Play ``games`` (rounded up to an even number) cubeless games between two players.

    ``player_a``/``player_b`` implement ``choose_batch(boards, dice, afterstates, offsets)``.
    ``progress`` is called with the number of games finished so far.
    """
    r = get_rules(rules)
    pairs = max(1, math.ceil(games / 2))
    pair_points = np.zeros(pairs, dtype=np.float64)
    points_a: list[np.ndarray] = []
    t0 = time.perf_counter()
    done_games = 0
    for lo in range(0, pairs, batch_pairs):
        k = min(batch_pairs, pairs - lo)
        pts = _play_block(player_a, player_b, np.arange(lo, lo + k, dtype=np.uint64), seed, r)
        pair_points[lo : lo + k] = (pts[:k] + pts[k:]) / 2.0
        points_a.append(pts)
        done_games += 2 * k
        if progress is not None:
            progress(done_games)
    elapsed = time.perf_counter() - t0
    allp = np.concatenate(points_a)
    n = allp.size
    ci = 1.96 * float(pair_points.std(ddof=1)) / math.sqrt(pairs) if pairs > 1 else float("inf")
    return MatchResult(
        player_a=name_a or getattr(player_a, "name", "A"),
        player_b=name_b or getattr(player_b, "name", "B"),
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


_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def pair_dice(seed: int, pairs: np.ndarray, ply: int) -> np.ndarray:
    """The roll of each dice stream at one ply, a pure function of (seed, pair, ply).

    Counter-based rather than drawn from one generator, so a match's dice do not depend on
    how its pairs are split into batches: the same seed gives the same games whatever the
    batch size.  Ply 0 is the opening roll (R5: never a double).
    """
    with np.errstate(over="ignore"):
        key = _splitmix64(np.full(pairs.shape, seed, dtype=np.uint64) & _MASK64)
        h = _splitmix64(key ^ _splitmix64(pairs * np.uint64(0x100000001B3) + np.uint64(ply)))
    dice = np.empty((pairs.shape[0], 2), dtype=np.int8)
    if ply == 0:
        r = (h % np.uint64(30)).astype(np.int64)  # the 30 non-double ordered rolls
        d1 = r // 5
        d2 = r % 5
        d2 = d2 + (d2 >= d1)
        dice[:, 0] = d1 + 1
        dice[:, 1] = d2 + 1
    else:
        r = (h % np.uint64(36)).astype(np.int64)
        dice[:, 0] = r // 6 + 1
        dice[:, 1] = r % 6 + 1
    return dice


def _play_block(
    player_a: object, player_b: object, pair_ids: np.ndarray, seed: int, rules: RuleSet
) -> np.ndarray:
    """2k games: 0..k-1 with A first, k..2k-1 with B first; pair i shares its dice."""
    k = pair_ids.shape[0]
    n = 2 * k
    boards = start_boards(n)
    # a_to_move[g]: is player A on roll in game g
    a_to_move = np.zeros(n, dtype=bool)
    a_to_move[:k] = True
    alive = np.ones(n, dtype=bool)
    points = np.zeros(n, dtype=np.float64)
    for ply in range(MAX_PLIES):
        if not alive.any():
            break
        d = pair_dice(seed, pair_ids, ply)
        dice = np.concatenate([d, d])
        idx = np.flatnonzero(alive)
        chosen = boards[idx].copy()
        for player, side in ((player_a, True), (player_b, False)):
            sel = idx[a_to_move[idx] == side]
            if sel.size == 0:
                continue
            afters, offsets = legal_afterstates_batch(boards[sel], dice[sel], rules.waste_rule)
            local = np.asarray(
                player.choose_batch(boards[sel], dice[sel], afters, offsets),  # type: ignore[attr-defined]
                dtype=np.int64,
            )
            has = local >= 0
            counts = np.diff(offsets)
            if np.any(local >= np.where(has, counts, 1)):
                raise RuntimeError(f"{getattr(player, 'name', player)} chose an illegal index")
            if np.any(~has & (counts > 0)):
                raise RuntimeError(f"{getattr(player, 'name', player)} passed with a legal play")
            pos = np.searchsorted(idx, sel)
            chosen[pos[has]] = afters[offsets[:-1][has] + local[has]]
        over, gammon, bg = outcomes(chosen)
        if over.any():
            value = np.where(
                bg, rules.backgammon_value, np.where(gammon, rules.gammon_value, 1)
            ).astype(np.float64)
            g = idx[over]
            points[g] = np.where(a_to_move[g], value[over], -value[over])
            alive[g] = False
        boards[idx] = flip_boards(chosen)
        a_to_move[idx] = ~a_to_move[idx]
    else:
        raise RuntimeError(f"games still running after {MAX_PLIES} plies")
    return points
