"""Whole-match analysis: every checker play and cube decision of a replayed match judged
at a chosen ply, the luck of every roll, and per-player error rates.

Definitions (GNU Backgammon's, so that figures compare with what players know):

* **Units.**  Every equity is *normalised* (EMG): in money play points per unit of the
  cube in play, in a match the match-winning chance mapped linearly so that losing or
  winning the current cube is -1 and +1 (``2 * dMWC / (MWC(win c) - MWC(lose c))``);
  reports show millipoints (mEMG), a thousandth of that.  So an error is as big at
  2-away/2-away on a 2-cube as in a money game.
* **Checker play.**  The legal plays are ranked at ``ply`` for the cube and score
  (``nard_rl.search.nply.Search.rank`` with ``nard_rl.cube.model.score_utility``: money equity or
  match-winning chance); the play made, when the move filter stopped it earlier, is read
  at the best play's ply.  The error is the best play's value minus the played one's.
  A move with more than one distinct legal play (by resulting position) is *unforced*;
  only those are checker decisions.
* **Cube.**  At every turn where the player on roll may double, the cube advisor
  (``nard_rl.cube.cubeful.CubeAdvisor``, the one ``nard cube`` uses, at ``cube_ply``, close
  decisions one ply deeper; the match score through the MET) gives no double,
  double/take and double/pass.  Doubling is worth ``min(DT, DP)``, holding ``ND``; the
  error is the better of the two minus the one chosen.  A decision counts when the player
  doubled, when doubling was right (a missed double), or when a favourite (no double
  above 0) held with doubling within ``CLOSE_CUBE`` of holding: on the bench's 24
  gnubg-analysed player-matches this matches gnubg's count of "close or actual" cube
  decisions best (41 decisions off in all, against 55 without the favourite condition).
  The receiver's answer to every double counts: the error of a wrong take is
  ``DT - DP``, of a wrong pass ``DP - DT`` (from the doubler's view).
* **Marks** by the error: ``doubtful`` from 0.04, ``bad`` from 0.08, ``very bad`` from
  0.16 EMG (gnubg's default thresholds).
* **Luck** of a roll: the value of the best play of the roll thrown minus the average
  over the 21 rolls (the 15 non-doubles for the opening roll, R5) of their best plays,
  at 0-ply, normalised as above.
* **Per player**: checker error rate = checker error / unforced moves, cube error rate =
  cube error / counted cube decisions, overall = both errors / both counts, in mEMG per
  decision; luck rate = luck / rolls, in mEMG per roll; the rating word by the overall
  rate on gnubg's scale (``RATINGS``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from nard_rl.cube.met import MatchScore
from nard_rl.cube.model import DOUBLE_PASS, DOUBLE_TAKE, CubeState, score_utility
from nard_rl.engine.batch import ROLL_WEIGHTS, ROLLS, with_passes
from nard_rl.engine.game import (
    Double,
    Drop,
    Event,
    Game,
    GameOver,
    Move,
    NoPlay,
    OpeningRoll,
    Phase,
    Roll,
    Take,
)
from nard_rl.engine.ids import MatchInfo, encode_match_id
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import Position
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.records.model import ReplayedGame, ReplayedMatch, event_numbers

MARKS = (("very bad", 0.16), ("bad", 0.08), ("doubtful", 0.04))
"""Error thresholds in EMG, largest first (gnubg's defaults)."""
CLOSE_CUBE = 0.16
"""A favourite's no-double counts as a cube decision when doubling is within this (EMG)
of holding."""
RATINGS = (
    (2.0, "Supernatural"),
    (5.0, "World class"),
    (8.0, "Expert"),
    (12.0, "Advanced"),
    (18.0, "Intermediate"),
    (26.0, "Casual player"),
    (35.0, "Beginner"),
    (float("inf"), "Awful!"),
)
"""Upper bounds of the overall error rate (mEMG per decision) of each rating word."""
_WIN = np.array([[1.0, 0.0, 0.0, 0.0, 0.0]])
_LOSE = np.zeros((1, 5))


def mark(error: float) -> str | None:
    """The mark of an error in EMG (None: unmarked)."""
    for name, threshold in MARKS:
        if error >= threshold - 1e-12:
            return name
    return None


def rating(rate_memg: float | None) -> str | None:
    """gnubg's rating word for an overall error rate in mEMG per decision."""
    if rate_memg is None:
        return None
    for bound, word in RATINGS:
        if rate_memg < bound:
            return word
    return RATINGS[-1][1]


@dataclass
class Decision:
    """One analysed decision (JSON-ready through ``to_dict``); equities in EMG here,
    ``equity_lost`` and ``luck`` in mEMG in the JSON."""

    game: int
    move_number: int
    player: int
    kind: str
    """``checker``, ``double`` (the player on roll's double or no double) or ``take``
    (the receiver's take or pass)."""
    dice: tuple[int, int] | None
    board: tuple[int, ...]
    """The position before the decision, from the deciding player's view (for ``take``:
    the doubler's view, the doubler on roll)."""
    position_id: str
    match_id: str
    cube: dict[str, Any]
    played: str
    best: str
    error: float
    luck: float | None
    win_before: float
    win_after: float
    mwc_before: float | None = None
    mwc_after: float | None = None
    alternatives: list[dict[str, Any]] = field(default_factory=list)
    cube_equities: dict[str, float | None] | None = None
    ply: int = 0
    match: dict[str, Any] | None = None
    """The score from the deciding player's view (``board``'s side on roll): ``length``,
    ``score`` [on roll, other] and ``crawford``, as ``/v1/hint`` reads it; None in money
    play."""

    @property
    def mark(self) -> str | None:
        return mark(self.error)


@dataclass
class Turn:
    """One roll of a game, for the luck and the chart (forced moves included)."""

    game: int
    move_number: int
    player: int
    dice: tuple[int, int]
    luck: float
    win_after: float
    """Player 0's cubeless winning chance after the move."""
    mwc_after: float | None
    """Player 0's match-winning chance after the move (match play)."""


@dataclass
class GameAnalysis:
    number: int
    decisions: list[Decision]
    turns: list[Turn]
    score: tuple[int, int]
    crawford: bool
    winner: int | None
    points: int | None


@dataclass(frozen=True)
class Settings:
    ply: int = 1
    cube_ply: int | None = None
    """The cube advisor's ply; None: as ``ply`` (at least 1: 0-ply cube reads are poor)."""

    @property
    def cube(self) -> int:
        return max(1, self.ply) if self.cube_ply is None else self.cube_ply


# --------------------------------------------------------------------------------------
# walking a game's record


@dataclass
class _Point:
    """The state of a game before one of its events."""

    board: tuple[int, ...]
    player: int
    cube_value: int
    cube_owner: int | None
    can_double: bool
    plays: int


def _states(game: Game) -> list[_Point]:
    """The state before each event of ``game.record``, by replaying it on a fresh game."""
    g = Game(game.rules, match_length=game.match_length, crawford=game.crawford)
    out: list[_Point] = []
    for event in game.record:
        plays = len(g.legal_plays()) if g.phase is Phase.MOVE else 0
        out.append(
            _Point(
                g.position.board,
                g.player_on_roll,
                g.cube_value,
                g.cube_owner,
                g.can_double(),
                plays,
            )
        )
        if not isinstance(event, GameOver):
            g.apply(event)
    return out


class _Context:
    """Cube, score and utilities of one turn, from the player on roll's view."""

    def __init__(self, rg: ReplayedGame, length: int, rules: RuleSet, point: _Point) -> None:
        me = point.player
        self.player = me
        self.cube = CubeState.from_seats(point.cube_value, point.cube_owner, me)
        self.match = (
            MatchScore(length, rg.score[me], rg.score[1 - me], rg.crawford) if length else None
        )
        self.utility = score_utility(rules, self.cube, self.match)
        win = float(self.utility(_WIN)[0])
        lose = float(self.utility(_LOSE)[0])
        self.half = (win - lose) / 2.0
        self.mid = (win + lose) / 2.0
        self.mwc = None if self.match is None else score_utility(rules, self.cube, self.match)

    def match_dict(self) -> dict[str, Any] | None:
        m = self.match
        if m is None:
            return None
        return {"length": m.length, "score": [m.score_me, m.score_opp], "crawford": m.crawford}

    def norm(self, values: np.ndarray | float) -> np.ndarray:
        return (np.asarray(values, dtype=np.float64) - self.mid) / self.half

    def match_id(self, dice: tuple[int, int] | None, length: int) -> str:
        m = self.match
        info = MatchInfo(
            cube_value=self.cube.value,
            cube_owner=self.cube.owner,
            player_on_roll=1,
            crawford=bool(m and m.crawford),
            dice=dice or (0, 0),
            match_length=length,
            score=(m.score_me, m.score_opp) if m else (0, 0),
        )
        return encode_match_id(info)


# --------------------------------------------------------------------------------------
# the analyser


class MatchAnalyser:
    """Analyses games with one evaluator (see the module docstring for the figures).

    Built once per process (``--workers`` builds one per worker): its searches keep
    their caches across games."""

    def __init__(self, evaluator: Any, settings: Settings | None = None) -> None:
        from nard_rl.cube.cubeful import CubeAdvisor
        from nard_rl.search.nply import Search

        self.settings = settings or Settings()
        self.evaluator = evaluator
        self.rules = get_rules(getattr(evaluator, "rules", None))
        self.search = Search(evaluator)
        self.advisor = CubeAdvisor(evaluator, ply=self.settings.cube, rules=self.rules)

    @classmethod
    def load(cls, net: str = "default", settings: Settings | None = None) -> MatchAnalyser:
        from nard_rl.nets.evaluator import load_evaluator

        return cls(load_evaluator(net), settings)

    # luck and pre-roll chances ---------------------------------------------------------
    def _roll_values(
        self, boards: np.ndarray, contexts: Sequence[_Context]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each pre-roll board and each of the 21 rolls: the best play's normalised
        value and its probabilities at 0-ply: ``(N, 21)`` values, ``(N, 21, 5)`` probs
        and the ``(N, 21)`` index of the best play's afterstate."""
        n, k = boards.shape[0], ROLLS.shape[0]
        rep = np.repeat(boards, k, axis=0)
        dice = np.tile(ROLLS, (n, 1))
        afters, offsets = legal_afterstates_batch(rep, dice, self.rules.waste_rule)
        afters, offsets = with_passes(afters, offsets, rep)
        probs = np.asarray(self.evaluator.probabilities(afters), dtype=np.float64)
        values = np.empty((n, k))
        best_probs = np.empty((n, k, 5))
        for i, ctx in enumerate(contexts):
            lo, hi = offsets[i * k], offsets[(i + 1) * k]
            v = ctx.norm(ctx.utility(probs[lo:hi]))
            for r in range(k):
                a, b = offsets[i * k + r] - lo, offsets[i * k + r + 1] - lo
                j = a + int(np.argmax(v[a:b]))
                values[i, r] = v[j]
                best_probs[i, r] = probs[lo + j]
        return values, best_probs, offsets

    # one game ----------------------------------------------------------------------------
    def analyse_game(self, rg: ReplayedGame, length: int) -> GameAnalysis:
        game = rg.game
        rules = game.rules
        record = game.record
        states = _states(game)
        numbers = event_numbers(record)
        decisions: list[Decision] = []

        # turns: a roll followed by its move or pass
        turn_idx: list[int] = []  # index of the Move/NoPlay event
        for i, ev in enumerate(record):
            if isinstance(ev, (Move, NoPlay)):
                turn_idx.append(i)
        roll_state = {}
        for i in turn_idx:
            j = i - 1
            while j >= 0 and not isinstance(record[j], (Roll, OpeningRoll)):
                j -= 1
            before = states[j]  # the opening throw's state has player 0 on roll
            point = _Point(
                before.board,
                record[i].player,
                before.cube_value,
                before.cube_owner,
                before.can_double,
                before.plays,
            )
            roll_state[i] = (point, isinstance(record[j], OpeningRoll))
        contexts = [_Context(rg, length, rules, roll_state[i][0]) for i in turn_idx]
        boards = np.array([roll_state[i][0].board for i in turn_idx], dtype=np.int8).reshape(-1, 26)
        turns: list[Turn] = []
        pre_win = np.zeros(len(turn_idx))
        pre_mwc: list[float | None] = [None] * len(turn_idx)
        lucks = np.zeros(len(turn_idx))
        if turn_idx:
            values, best_probs, _ = self._roll_values(boards, contexts)
            for t, i in enumerate(turn_idx):
                ev = record[i]
                opening = roll_state[i][1]
                weights = ROLL_WEIGHTS.copy()
                if opening:
                    weights = np.where(ROLLS[:, 0] == ROLLS[:, 1], 0.0, 1.0 / 15.0)
                lo_d, hi_d = sorted(ev.dice)
                r = int(np.flatnonzero((ROLLS[:, 0] == lo_d) & (ROLLS[:, 1] == hi_d))[0])
                lucks[t] = values[t, r] - float(weights @ values[t])
                mean_probs = np.einsum("k,kf->f", weights, best_probs[t])
                pre_win[t] = mean_probs[0]
                if contexts[t].match is not None:
                    pre_mwc[t] = float(contexts[t].utility(mean_probs[None, :])[0])

        # checker decisions: one ranked search per unforced move
        ply = self.settings.ply
        for t, i in enumerate(turn_idx):
            ev = record[i]
            ctx = contexts[t]
            point = states[i]
            after_probs = None
            if isinstance(ev, Move) and point.plays > 1:
                ranked = self.search.rank(
                    np.array(point.board, np.int8), ev.dice, ply, utility=ctx.utility
                )
                best = ranked[0]
                played = next(p for p in ranked if p.board == ev.board)
                played_probs = np.asarray(played.probs)
                played_value = played.equity
                if played.ply < best.ply:
                    played_probs = self.search.afterstate_probs(
                        np.array(ev.board, np.int8)[None, :], best.ply
                    )[0].astype(np.float64)
                    played_value = float(ctx.utility(played_probs[None, :])[0])
                error = max(0.0, float((best.equity - played_value) / ctx.half))
                after_probs = played_probs
                alts = [
                    {
                        "move": p.move,
                        "equity": round(float(ctx.norm(p.equity)), 4),
                        "diff": round(float(p.diff / ctx.half), 4),
                        "ply": p.ply,
                    }
                    for p in ranked[:5]
                ]
                decisions.append(
                    Decision(
                        game=rg.number,
                        move_number=numbers[i] or 0,
                        player=ctx.player,
                        kind="checker",
                        dice=(ev.dice[0], ev.dice[1]),
                        board=point.board,
                        position_id=Position(point.board, validate=False).position_id(),
                        match_id=ctx.match_id(ev.dice, length),
                        cube={"value": ctx.cube.value, "owner": ctx.cube.owner},
                        played=ev.move,
                        best=best.move,
                        error=error,
                        luck=float(lucks[t]),
                        win_before=float(pre_win[t]),
                        win_after=float(played_probs[0]),
                        mwc_before=pre_mwc[t],
                        mwc_after=None
                        if ctx.match is None
                        else float(ctx.utility(played_probs[None, :])[0]),
                        alternatives=alts,
                        ply=best.ply,
                        match=ctx.match_dict(),
                    )
                )
            if after_probs is None:  # forced or no play: 0-ply of the result
                pre = roll_state[i][0].board
                after = np.array(ev.board if isinstance(ev, Move) else pre, np.int8)
                after_probs = self.search.afterstate_probs(after[None, :], 0)[0].astype(np.float64)
                result = game.result
                if isinstance(ev, Move) and Position(ev.board, validate=False).winner() == 0:
                    kind = 1 if result is None else result.kind.value  # the game's last move
                    after_probs = np.array([1.0, kind >= 2, kind >= 3, 0.0, 0.0])
            win0 = after_probs[0] if ctx.player == 0 else 1.0 - after_probs[0]
            mwc0 = None
            if ctx.match is not None:
                m = float(ctx.utility(after_probs[None, :])[0])
                mwc0 = m if ctx.player == 0 else 1.0 - m
            turns.append(
                Turn(
                    rg.number,
                    numbers[i] or 0,
                    ctx.player,
                    (ev.dice[0], ev.dice[1]),
                    float(lucks[t]),
                    float(win0),
                    mwc0,
                )
            )

        decisions.extend(self._cube_decisions(rg, length, states, numbers))
        decisions.sort(key=lambda d: (d.move_number, d.kind != "double", d.kind == "checker"))
        result = game.result
        return GameAnalysis(
            rg.number,
            decisions,
            turns,
            rg.score,
            rg.crawford,
            None if result is None else result.winner,
            None if result is None else result.points,
        )

    def _cube_decisions(
        self,
        rg: ReplayedGame,
        length: int,
        states: list[_Point],
        numbers: list[int | None],
    ) -> list[Decision]:
        record: list[Event] = rg.game.record
        rules = rg.game.rules
        points: list[int] = []  # events before which the player on roll could double
        for i, ev in enumerate(record):
            if isinstance(ev, (Roll, Double)) and states[i].can_double:
                points.append(i)
        if not points:
            return []
        contexts = [_Context(rg, length, rules, states[i]) for i in points]
        boards = np.array([states[i].board for i in points], dtype=np.int8)
        probs, cube_decisions, plies = self.advisor.analyse_batch(
            boards, [c.cube for c in contexts], [c.match for c in contexts], rules=rules
        )
        out: list[Decision] = []
        for k, i in enumerate(points):
            d = cube_decisions[k]
            ctx = contexts[k]
            if d.double_take is None or d.double_pass is None:
                continue
            nd, dt, dp = d.no_double, d.double_take, d.double_pass
            double_value = min(dt, dp)
            doubled = isinstance(record[i], Double)
            proper_double = d.decision in (DOUBLE_TAKE, DOUBLE_PASS)
            best_value = max(nd, double_value)
            error = best_value - (double_value if doubled else nd)
            # a double, a missed double, or a hold of a favourite near its doubling point;
            # a side behind in the game holds without a decision (gnubg counts alike)
            close = doubled or double_value > nd or (nd > 0.0 and double_value > nd - CLOSE_CUBE)
            p = probs[k]
            mwc = None if ctx.match is None else float(ctx.utility(p[None, :])[0])
            eqs = {"no_double": nd, "double_take": dt, "double_pass": dp}
            common = dict(
                game=rg.number,
                board=states[i].board,
                position_id=Position(states[i].board, validate=False).position_id(),
                cube={"value": ctx.cube.value, "owner": ctx.cube.owner},
                luck=None,
                win_before=float(p[0]),
                win_after=float(p[0]),
                mwc_before=mwc,
                mwc_after=mwc,
                cube_equities={k2: round(float(v), 4) for k2, v in eqs.items()},
                ply=int(plies[k]),
                dice=None,
                match=ctx.match_dict(),
            )
            if close:
                out.append(
                    Decision(
                        move_number=numbers[i] or (numbers[i + 1] or 0),
                        player=ctx.player,
                        kind="double",
                        match_id=ctx.match_id(None, length),
                        played="double" if doubled else "no double",
                        best="double" if proper_double else "no double",
                        error=max(0.0, float(error)),
                        **common,  # type: ignore[arg-type]
                    )
                )
            if doubled and i + 1 < len(record) and isinstance(record[i + 1], (Take, Drop)):
                took = isinstance(record[i + 1], Take)
                take_right = bool(d.take)
                err = 0.0 if took == take_right else abs(dt - dp)
                out.append(
                    Decision(
                        move_number=numbers[i + 1] or 0,
                        player=1 - ctx.player,
                        kind="take",
                        match_id=ctx.match_id(None, length),
                        played="take" if took else "pass",
                        best="take" if take_right else "pass",
                        error=float(err),
                        **common,  # type: ignore[arg-type]
                    )
                )
        return out


# --------------------------------------------------------------------------------------
# the whole match


@dataclass
class MatchAnalysis:
    source: str
    length: int
    names: tuple[str, str]
    games: list[GameAnalysis]
    settings: Settings
    net: str = "default"

    def decisions(self) -> list[Decision]:
        return [d for g in self.games for d in g.decisions]

    def turns(self) -> list[Turn]:
        return [t for g in self.games for t in g.turns]

    def player_names(self) -> tuple[str, str]:
        """The names as JSON keys: distinct even when the file gives both the same name."""
        a, b = self.names
        if a == b:
            return f"{a} (1)", f"{b} (2)"
        return a, b

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per-player figures keyed by name (see the module docstring)."""
        out: dict[str, dict[str, Any]] = {}
        decisions = self.decisions()
        turns = self.turns()
        for player, name in enumerate(self.player_names()):
            mine = [d for d in decisions if d.player == player]
            checker = [d for d in mine if d.kind == "checker"]
            cube = [d for d in mine if d.kind != "checker"]
            rolls = [t for t in turns if t.player == player]
            luck_total = sum(t.luck for t in rolls)
            luck_rate = 1000.0 * luck_total / len(rolls) if rolls else 0.0

            def block(items: list[Decision], luck_rate: float = luck_rate) -> dict[str, Any]:
                total = sum(d.error for d in items)
                rate = 1000.0 * total / len(items) if items else 0.0
                marks = {name: 0 for name, _ in MARKS}
                for d in items:
                    if d.mark:
                        marks[d.mark] += 1
                return {
                    "decisions": len(items),
                    "error_total": round(total, 4),
                    "error_rate": round(rate, 2),
                    "luck_rate": round(luck_rate, 2),
                    "marks": marks,
                    "rating": rating(rate) if items else None,
                }

            overall = block(checker + cube)
            out[name] = {
                "player": player,
                "checker": {**block(checker), "moves": len(rolls)},
                "cube": {
                    **block(cube),
                    "doubles": sum(1 for d in cube if d.kind == "double" and d.played == "double"),
                    "takes": sum(1 for d in cube if d.kind == "take" and d.played == "take"),
                    "passes": sum(1 for d in cube if d.kind == "take" and d.played == "pass"),
                },
                "overall": overall,
                "luck_total": round(1000.0 * luck_total, 1),
                "luck_rate": round(luck_rate, 2),
                "rating": overall["rating"],
            }
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``nard analyze --json`` object (and ``POST /v1/analyze``'s answer)."""
        names = self.player_names()
        return {
            "source": self.source,
            "match_length": self.length,
            "names": list(names),
            "ply": self.settings.ply,
            "cube_ply": self.settings.cube,
            "net": self.net,
            "units": "equity_lost, luck, error_rate and luck_rate in mEMG (millipoints of "
            "normalised equity); error_rate per decision, luck_rate per roll",
            "players": self.stats(),
            "games": [
                {
                    "game": g.number,
                    "score": list(g.score),
                    "crawford": g.crawford,
                    "winner": None if g.winner is None else names[g.winner],
                    "points": g.points,
                }
                for g in self.games
            ],
            "decisions": [decision_dict(d, names) for d in self.decisions()],
            "timeline": [
                {
                    "game": t.game,
                    "move_number": t.move_number,
                    "player": names[t.player],
                    "dice": list(t.dice),
                    "luck": round(1000.0 * t.luck, 1),
                    "win": round(t.win_after, 4),
                    "mwc": None if t.mwc_after is None else round(t.mwc_after, 4),
                }
                for t in self.turns()
            ],
        }


def decision_dict(d: Decision, names: Sequence[str]) -> dict[str, Any]:
    out = asdict(d)
    out.pop("error")
    out["player"] = names[d.player]
    out["player_index"] = d.player
    out["dice"] = None if d.dice is None else list(d.dice)
    out["board"] = list(d.board)
    out["equity_lost"] = round(1000.0 * d.error, 1)
    out["mark"] = d.mark
    out["luck"] = None if d.luck is None else round(1000.0 * d.luck, 1)
    for key in ("win_before", "win_after", "mwc_before", "mwc_after"):
        if out[key] is not None:
            out[key] = round(out[key], 4)
    return out


Progress = Callable[[int], None]


def analyse(
    match: ReplayedMatch,
    analyser: MatchAnalyser,
    *,
    progress: Progress | None = None,
    net: str = "default",
) -> MatchAnalysis:
    """Analyse every game of a replayed match with one analyser (``progress(1)`` after
    each game)."""
    games = []
    for rg in match.games:
        games.append(analyser.analyse_game(rg, match.length))
        if progress is not None:
            progress(1)
    return MatchAnalysis(match.source, match.length, match.names, games, analyser.settings, net)
