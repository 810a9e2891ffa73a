"""Replaying a record through the engine: every action must be legal where it stands.

The engine (``nard_rl.engine.game.Game``) is the judge: a roll is thrown with the
record's dice, the move is found among the legal plays by its resulting position (so
any notation that leads there is accepted: ``13/8``, ``13/10/8``, ``13/10 10/8``), and a
double, take or drop must be allowed in the phase the game is in.  The score before
each game, the Crawford game (R34) and each game's result come from the engine and are
checked against what the file states.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nard_rl.engine.game import (
    Game,
    IllegalActionError,
    Phase,
    ResultKind,
    running_scores,
)
from nard_rl.engine.position import PositionError, apply_steps
from nard_rl.engine.rules import get_rules
from nard_rl.records.model import (
    Action,
    GameRecord,
    MatchRecord,
    RecordError,
    ReplayedGame,
    ReplayedMatch,
)
from nard_rl.records.reader import read_match

_KINDS = {1: ResultKind.SINGLE, 2: ResultKind.GAMMON, 3: ResultKind.BACKGAMMON}


def load_match(path: str | Path) -> ReplayedMatch:
    """Read and replay a ``.sgf`` or ``.mat`` file."""
    return replay(read_match(path))


def replay(record: MatchRecord) -> ReplayedMatch:
    """Every game of ``record`` rebuilt by the engine (see the module docstring).

    A money session whose file does not say whether the Jacoby rule was on is replayed
    without it, and with it if a result only fits that way."""
    if record.length < 0:
        raise RecordError(f"{record.source}: negative match length {record.length}")
    options = [bool(record.jacoby)] if record.jacoby is not None else [False, True]
    if record.length:
        options = [False]
    first: RecordError | None = None
    for jacoby in options:
        try:
            return _replay(record, jacoby)
        except _ResultMismatch as exc:
            first = first or RecordError(str(exc))
    assert first is not None
    raise first


class _ResultMismatch(RecordError):
    pass


def _replay(record: MatchRecord, jacoby: bool) -> ReplayedMatch:
    rules = get_rules("standard").with_options(jacoby=jacoby)
    games: list[ReplayedGame] = []
    length = record.length
    crawford_done = False
    for index, grec in enumerate(record.games):
        where = f"{record.source}: game {grec.number}"
        played = [g.game for g in games]
        score = running_scores(played, length)[-1]
        if length and max(score) >= length:
            raise RecordError(f"{where}: the match was already over ({score[0]}-{score[1]})")
        if grec.score is not None and tuple(grec.score) != score:
            raise RecordError(
                f"{where}: the file gives the score {grec.score[0]}-{grec.score[1]} before "
                f"this game, the games before it give {score[0]}-{score[1]}"
            )
        # R34: the first game after a player reaches N-1 points is the Crawford game
        crawford = bool(length) and not crawford_done and length - 1 in score and index > 0
        if length and length - 1 in score:
            crawford_done = True
        game = Game(rules, match_length=length, crawford=crawford)
        _replay_game(game, grec, where)
        games.append(ReplayedGame(grec.number, game, score, crawford))
    return ReplayedMatch(length, record.names, games, record.source, jacoby)


def _fail(where: str, action: Action, why: str) -> RecordError:
    return RecordError(f"{where}, move {action.number} ({action.text!r}): {why}")


def _replay_game(game: Game, grec: GameRecord, where: str) -> None:
    for action in grec.actions:
        if game.is_over:
            if action.kind == "win":
                _check_result(game, action, where)
                continue
            raise _fail(where, action, "the game is already over")
        try:
            _apply(game, action, where)
        except IllegalActionError as exc:
            raise _fail(where, action, str(exc)) from None
        except (PositionError, ValueError) as exc:
            if isinstance(exc, RecordError):
                raise
            raise _fail(where, action, str(exc)) from None


def _apply(game: Game, action: Action, where: str) -> None:
    kind = action.kind
    if kind == "move":
        assert action.dice is not None
        if game.phase is Phase.OPENING:
            d1, d2 = action.dice
            if d1 == d2:
                raise _fail(where, action, "the opening roll cannot be a double (R5)")
            hi, lo = max(d1, d2), min(d1, d2)
            game.roll((hi, lo) if action.player == 0 else (lo, hi))
        else:
            _check_turn(game, action, where)
            if game.phase is not Phase.ROLL_OR_DOUBLE:
                raise _fail(where, action, f"a roll is not expected now ({game.phase.value})")
            game.roll(action.dice)
        if game.phase is Phase.MOVE:
            if not action.steps:
                shown = ", ".join(p.move for p in game.legal_plays()[:6])
                raise _fail(where, action, f"the roll has legal plays ({shown}), none recorded")
            try:
                after = apply_steps(game.position.board, action.steps)[1]
            except PositionError as exc:
                raise _fail(where, action, f"not a legal play: {exc}") from None
            game.play(after)
        elif action.steps:
            raise _fail(where, action, "the roll has no legal play (R16), but steps are given")
    elif kind == "double":
        _check_turn(game, action, where)
        event = game.double()
        if action.value and action.value != event.cube:
            raise _fail(where, action, f"the cube would go to {event.cube}, not {action.value}")
    elif kind in ("take", "drop"):
        if game.phase is not Phase.TAKE_OR_DROP:
            raise _fail(where, action, "there is no double to answer")
        if game.player_to_act != action.player:
            raise _fail(where, action, f"player {game.player_to_act} answers the double")
        if kind == "take":
            game.take()
        else:
            game.drop()
    elif kind == "win":
        _resign(game, action, where)
    else:  # pragma: no cover - parsers only make the kinds above
        raise _fail(where, action, f"unknown action {kind!r}")


def _check_turn(game: Game, action: Action, where: str) -> None:
    if game.player_on_roll != action.player:
        raise _fail(
            where,
            action,
            f"it is player {game.player_on_roll}'s turn, not player {action.player}'s",
        )


def _resign(game: Game, action: Action, where: str) -> None:
    """A win the board does not show: the loser resigned (or dropped without a word)."""
    if game.phase is Phase.TAKE_OR_DROP and action.player == game.player_on_roll:
        game.drop()
        _check_result(game, action, where)
        return
    if game.phase not in (Phase.ROLL_OR_DOUBLE, Phase.MOVE):
        raise _fail(where, action, f"the game cannot end here ({game.phase.value})")
    multiplier, rest = divmod(action.value, game.cube_value)
    if rest or multiplier not in _KINDS:
        raise _fail(where, action, f"{action.value} points is no result at cube {game.cube_value}")
    game.resign(_KINDS[multiplier], player=1 - action.player)
    game.accept_resignation()
    _check_result(game, action, where)


def _check_result(game: Game, action: Action, where: str) -> None:
    result = game.result
    assert result is not None
    if result.winner != action.player or result.points != action.value:
        raise _ResultMismatch(
            f"{where}, move {action.number} ({action.text!r}): the file says player "
            f"{action.player} wins {action.value}, the replay gives player {result.winner} "
            f"{result.points} point(s)"
        )


def from_games(
    games: Sequence[Game], length: int = 0, names: tuple[str, str] = ("Player 1", "Player 2")
) -> ReplayedMatch:
    """Games the engine played (a server session, ``nard play``) as a ``ReplayedMatch``,
    for the analysis: they need no replay."""
    scores = running_scores(list(games), length)
    out = [ReplayedGame(i + 1, g, scores[i], bool(g.crawford)) for i, g in enumerate(games)]
    return ReplayedMatch(
        length, names, out, "<games>", get_rules(games[0].rules).jacoby if games else False
    )
