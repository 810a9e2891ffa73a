"""Move and cube analysis shared by every front end (HTTP, gnubg's protocol, JSON lines).

Nothing here evaluates positions on its own: probabilities come from the shared
evaluator (``nard_rl.nets.evaluator.load_evaluator``) and, above 0-ply, from the lookahead
``nard_rl.search.nply.Search``; cube actions from ``nard_rl.cube.model``; legal plays from the
engine.  What this module adds is the glue every front end needs: one evaluator per rule
set, the utility for the cube and score, the ranking as JSON-ready dicts, the bot's
decisions (roll or double, take or pass, the play, a resignation answer).

The split between ``plays`` (move generation), the evaluation (``probabilities``, batched
by the server across requests) and ``ranking`` (pure post-processing) is what lets the
HTTP server evaluate the positions of many concurrent requests in one forward pass.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from nard_rl.cube.cubeful import CubeAdvisor
from nard_rl.cube.met import MatchScore
from nard_rl.cube.model import (
    PROB_NAMES,
    CubeDecision,
    CubeState,
    resignation_answer,
    score_utility,
)
from nard_rl.engine.movegen import legal_afterstates
from nard_rl.engine.movetext import format_plays
from nard_rl.engine.position import Position, PositionError
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.nets.evaluator import Evaluator, load_evaluator
from nard_rl.search.nply import MAX_PLY, Search
from nard_rl.server.jsonl import shown
from nard_rl.server.state import DecisionState

Utility = Callable[[np.ndarray], np.ndarray]

RESIGN_VALUES = {"single": 1, "gammon": 2, "backgammon": 3}


def probs_dict(p: np.ndarray | list[float]) -> dict[str, float]:
    """Five cumulative probabilities as a JSON object in ``PROB_NAMES`` order."""
    return {k: round(float(v), 5) for k, v in zip(PROB_NAMES, p, strict=True)}


@dataclass(frozen=True)
class Plays:
    """The legal plays of one position and roll, before evaluation."""

    afters: np.ndarray
    steps: np.ndarray


class Analyzer:
    """Evaluators per rule set and every decision the server, gnubg and the CLI ask for.

    ``net`` is an evaluator spec (``default`` or a checkpoint path), ``ply`` the default
    lookahead of hints, ``cube_ply`` that of cube decisions (one roll ahead by default,
    see ``nard_rl.cube.cubeful``), ``cube_rollout`` the games rolled out per close cube
    decision (0: none).  Evaluators, searches and cube advisors are built on first
    use and kept (their caches then serve every request).

    Two locks: ``eval_lock`` is held for each forward pass (a torch module is not meant
    to run from several threads at once) and is shared by every ``fork``; ``lock``
    guards this analyzer's own search and cube caches for the length of a search.  A
    fork shares the nets but has its own caches and ``lock``, so work on another thread
    (the server's game sessions) waits for at most one forward pass of a long search,
    never for the whole search.
    """

    def __init__(
        self,
        net: str = "default",
        *,
        ply: int = 0,
        cube_ply: int = 1,
        cube_rollout: int = 0,
        device: str = "cpu",
        evaluator: Evaluator | None = None,
    ) -> None:
        self.net = net
        self.ply = check_ply(ply)
        self.cube_ply = check_ply(cube_ply)
        if isinstance(cube_rollout, bool) or not isinstance(cube_rollout, int) or cube_rollout < 0:
            raise ValueError(f"cube_rollout must be an integer >= 0, got {cube_rollout!r}")
        self.cube_rollout = cube_rollout
        self.device = device
        self.eval_lock = threading.RLock()
        self._evaluators: dict[str, Evaluator] = {}
        if evaluator is not None:  # a player's own evaluator (``nard agent``)
            self._evaluators[get_rules(evaluator.rules).name] = self._serialised(evaluator)
        self._searches: dict[str, Search] = {}
        self._advisors: dict[tuple[str, int], CubeAdvisor] = {}
        self.lock = threading.RLock()

    def fork(self) -> Analyzer:
        """An analyzer on the same nets (and ``eval_lock``) with its own caches and
        ``lock``: for work on another thread that must not wait behind searches."""
        twin = Analyzer(
            self.net,
            ply=self.ply,
            cube_ply=self.cube_ply,
            cube_rollout=self.cube_rollout,
            device=self.device,
        )
        twin.eval_lock = self.eval_lock
        twin._evaluators = self._evaluators
        return twin

    def _serialised(self, ev: Evaluator) -> Evaluator:
        """``ev`` with its ``probabilities`` run under ``eval_lock`` (each forward pass,
        whoever calls it: the micro-batcher, a search, a cube advisor)."""
        if getattr(ev, "_nard_eval_lock", None) is not None:
            self.eval_lock = ev._nard_eval_lock  # type: ignore[attr-defined]
            return ev
        inner = ev.probabilities
        lock = self.eval_lock

        def probabilities(afterstates: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
            with lock:
                return inner(afterstates, *args, **kwargs)

        ev.probabilities = probabilities  # type: ignore[method-assign]
        ev._nard_eval_lock = lock  # type: ignore[attr-defined]
        return ev

    # evaluation ---------------------------------------------------------------------------
    def evaluator(self, rules: RuleSet | str) -> Evaluator:
        name = get_rules(rules).name
        ev = self._evaluators.get(name)
        if ev is None:
            ev = self._serialised(load_evaluator(self.net, rules=name, device=self.device))
            self._evaluators[name] = ev
        return ev

    def search(self, rules: RuleSet | str) -> Search:
        """The shared lookahead search of a rule set (its cache serves every request)."""
        name = get_rules(rules).name
        s = self._searches.get(name)
        if s is None:
            s = Search(self.evaluator(name))
            self._searches[name] = s
        return s

    def advisor(self, rules: RuleSet | str, ply: int | None = None) -> CubeAdvisor:
        """The shared cube advisor of a rule set and ply (its search cache is kept)."""
        key = (get_rules(rules).name, self.cube_ply if ply is None else check_ply(ply))
        adv = self._advisors.get(key)
        if adv is None:
            adv = CubeAdvisor(
                self.evaluator(key[0]),
                ply=key[1],
                rules=key[0],
                rollout_trials=self.cube_rollout,
            )
            self._advisors[key] = adv
        return adv

    def probabilities(self, afters: np.ndarray, rules: RuleSet | str) -> np.ndarray:
        """0-ply probabilities of afterstates (mover's view): one forward pass."""
        if afters.shape[0] == 0:
            return np.zeros((0, 5), dtype=np.float64)
        return np.asarray(self.evaluator(rules).probabilities(afters), dtype=np.float64)

    def probabilities_if_free(self, afters: np.ndarray, rules: RuleSet | str) -> np.ndarray | None:
        """``probabilities`` when no other thread is evaluating, else None (never waits:
        the event loop uses it for small batches and must not block)."""
        if not self.eval_lock.acquire(blocking=False):
            return None
        try:
            return self.probabilities(afters, rules)
        finally:
            self.eval_lock.release()

    def pre_roll_probs(self, boards: np.ndarray, rules: RuleSet | str, ply: int) -> np.ndarray:
        """Probabilities of the side on roll before rolling (the search's pre-roll
        convention: the opponent's afterstate, sides swapped)."""
        boards = np.asarray(boards, dtype=np.int8).reshape(-1, 26)
        with self.lock:
            return np.asarray(self.search(rules).pre_roll_probs(boards, ply=ply), np.float64)

    # utilities ----------------------------------------------------------------------------
    @staticmethod
    def utility(state: DecisionState) -> tuple[Utility, str]:
        """What plays are ranked by (``nard_rl.cube.model.score_utility``: money equity times
        the cube, or the match-winning chance at the score), with its name."""
        name = "match_winning_chance" if state.match is not None else "money_equity"
        return score_utility(state.rules, state.cube, state.match), name

    # moves ---------------------------------------------------------------------------------
    @staticmethod
    def plays(state: DecisionState) -> Plays:
        if state.dice is None:
            raise PositionError('"dice" are needed to choose a play')
        board = state.position.array()
        afters, steps = legal_afterstates(board, *state.dice, state.rules.waste_rule)
        return Plays(afters, steps)

    def ranking(
        self, state: DecisionState, plays: Plays, probs: np.ndarray, top: int | None = None
    ) -> dict[str, Any]:
        """JSON-ready ranking of plays already evaluated at 0-ply, best first."""
        utility, name = self.utility(state)
        if plays.afters.shape[0] == 0:
            return {"equity": name, "ply": 0, "plays": []}
        eq = np.asarray(utility(probs), dtype=np.float64)
        order = np.argsort(-eq, kind="stable")[:top]
        moves = format_plays(state.position.board, plays.steps[order])
        # round whole arrays at once: per-value rounding dominated the cost of a hint
        eqs = np.round(eq[order], 5).tolist()
        diffs = np.round(eq[order] - eq[order[0]], 5).tolist()
        pr = np.round(probs[order], 5).tolist()
        afters = plays.afters[order].tolist()
        rows = []
        for k in range(len(order)):
            row = {
                "move": moves[k],
                "equity": eqs[k],
                "diff": diffs[k],
                "probs": dict(zip(PROB_NAMES, pr[k], strict=True)),
                "ply": 0,
                "board": afters[k],
            }
            if k < ID_PLAYS:
                row["position_id"] = _next_id(afters[k])
            rows.append(row)
        return {"equity": name, "ply": 0, "plays": rows}

    def rank(
        self, state: DecisionState, ply: int | None = None, top: int | None = None
    ) -> dict[str, Any]:
        """Every legal play ranked, synchronously (CLI and thread-pool use)."""
        ply = self.ply if ply is None else check_ply(ply)
        if ply == 0:
            plays = self.plays(state)
            return self.ranking(state, plays, self.probabilities(plays.afters, state.rules), top)
        if state.dice is None:
            raise PositionError('"dice" are needed to choose a play')
        utility, name = self.utility(state)
        with self.lock:
            ranked = self.search(state.rules).rank(
                state.position.array(), state.dice, ply=ply, utility=utility
            )
        rows = [
            _play_json(r.move, list(r.board), np.asarray(r.probs), r.equity, r.diff, r.ply, k)
            for k, r in enumerate(ranked[:top])
        ]
        return {"equity": name, "ply": ply, "plays": rows}

    def best_play(self, state: DecisionState, ply: int | None = None) -> tuple[str, list[int]]:
        """The play the bot makes: notation and resulting board (``""`` and the unchanged
        board when the roll cannot be played, R16)."""
        ranked = self.rank(state, ply, top=1)["plays"]
        if not ranked:
            return "", list(state.position.board)
        return ranked[0]["move"], ranked[0]["board"]

    # cube ----------------------------------------------------------------------------------
    def cube_analysis(self, state: DecisionState, ply: int | None = None) -> dict[str, Any]:
        """The pre-roll cube analysis (no double / double-take / double-pass and the
        proper action) of the side on roll, by the shared cube advisor (which looks one
        ply deeper at close decisions), synchronously."""
        adv = self.advisor(state.rules, ply)
        with self.lock:
            probs, decisions, plies = adv.analyse_batch(
                state.position.array()[None, :], [state.cube], [state.match], rules=state.rules
            )
        return cube_json(state, probs[0], decisions[0], int(plies[0]))

    def should_double(self, state: DecisionState, ply: int | None = None) -> bool:
        """Whether the side on roll doubles (``too_good`` plays on for the gammon)."""
        return self.cube_analysis(state, ply)["decision"] in ("double_take", "double_pass")

    def should_take(self, state: DecisionState, ply: int | None = None) -> bool:
        """Whether the side whose view ``state`` is takes the opponent's double.

        ``state.position`` is the receiver's view with the doubler on roll; the cube
        (value before the double, owner from the receiver's view) likewise.  Answered by
        the shared ``take_decision`` from the doubler's view.
        """
        doubler = doubler_state(state)
        with self.lock:
            return self.advisor(state.rules, ply).takes(
                doubler.position.array(), doubler.cube, doubler.match
            )

    def accept_resignation(self, state: DecisionState, kind: str) -> bool:
        """Whether the bot (``state.position`` its view, the resigner on roll) accepts a
        resignation of ``kind``: when what it is offered is worth at least what it
        expects from playing on (at 0-ply, the bot having just moved)."""
        if kind not in RESIGN_VALUES:
            raise PositionError(f"resignation must be one of {', '.join(RESIGN_VALUES)}")
        probs = self.probabilities(state.position.array()[None, :], state.rules)
        level = RESIGN_VALUES[kind]
        answer = resignation_answer(
            probs[0], level >= 2, level >= 3, state.rules, state.cube, state.match
        )
        return answer.accept

    def action(
        self,
        state: DecisionState,
        *,
        doubled: bool = False,
        resignation: str | None = None,
        may_double: bool = True,
        ply: int | None = None,
    ) -> dict[str, Any]:
        """The bot's decision in a game state seen from the bot (``/v1/action``, ``nard
        agent``): answer a double or a resignation, play the dice, or roll or double."""
        if doubled + (resignation is not None) + (state.dice is not None) > 1:
            raise PositionError("give at most one of doubled, resignation and dice")
        if doubled:
            if state.cube.owner == "mover":
                raise PositionError("the bot owns the cube: the opponent cannot double (R23)")
            return {"action": "take" if self.should_take(state) else "pass"}
        if resignation is not None:
            ok = self.accept_resignation(state, resignation)
            return {"action": "accept" if ok else "reject"}
        if state.dice is not None:
            move, board = self.best_play(state, ply)
            return {"action": "move", "move": move, "board": board}
        if not may_double or not state.rules.cube:
            return {"action": "roll"}
        analysis = self.cube_analysis(state)
        double = analysis["decision"] in ("double_take", "double_pass")
        return {"action": "double" if double else "roll", "analysis": analysis}


ID_PLAYS = 3
"""Plays that get the Position ID of their result (the best ones: encoding an ID costs
more than ranking a play)."""


def _play_json(
    move: str,
    board: list[int],
    probs: np.ndarray,
    equity: float,
    diff: float,
    ply: int,
    rank: int,
) -> dict[str, Any]:
    out = {
        "move": move,
        "equity": round(equity, 5),
        "diff": round(diff, 5),
        "probs": probs_dict(probs),
        "ply": ply,
        "board": board,
    }
    if rank < ID_PLAYS:
        out["position_id"] = _next_id(board)
    return out


def _next_id(after: list[int]) -> str:
    """Position ID of an afterstate seen by the player who rolls next."""
    return Position(after, validate=False).flip().position_id()


def check_ply(ply: object) -> int:
    if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= MAX_PLY:
        raise PositionError(f'"ply" must be an integer in 0..{MAX_PLY}, got {shown(ply)}')
    return ply


def doubler_state(state: DecisionState) -> DecisionState:
    """The receiver's decision state seen by the doubler (on roll): board flipped, cube
    owner and score swapped."""
    owner = {"centered": "centered", "mover": "opponent", "opponent": "mover"}[state.cube.owner]
    m = state.match
    match = None if m is None else MatchScore(m.length, m.score_opp, m.score_me, m.crawford)
    return DecisionState(
        state.position.flip(), state.rules, None, CubeState(state.cube.value, owner), match
    )


def cube_json(state: DecisionState, probs: np.ndarray, d: CubeDecision, ply: int) -> dict[str, Any]:
    """A cube decision as JSON, with the probabilities behind it."""
    out: dict[str, Any] = {
        "decision": d.decision,
        "take": d.take,
        "no_double": _round(d.no_double),
        "double_take": _round(d.double_take),
        "double_pass": _round(d.double_pass),
        "optimal": _round(d.optimal),
        "cubeless": _round(d.cubeless),
        "x": round(d.x, 4),
        "ply": ply,
        "probs": probs_dict(probs),
        "cube": {"value": state.cube.value, "owner": state.cube.owner},
        "match": state.match_dict,
    }
    if d.match_equities is not None:
        out["match_equities"] = {k: _round(v) for k, v in d.match_equities.items()}
    return out


def _round(v: float | None) -> float | None:
    return None if v is None else round(float(v), 5)
