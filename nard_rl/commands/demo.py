"""``nard demo``: a seeded game (or match) between two random players, move by move.

It shows the whole game flow at work (opening, cube, forced passes, scoring) and its
``transcript`` is the golden record the test suite diffs, so any change in the rules'
behaviour shows up as a readable diff.  The random players take their decisions from
their own generator, seeded from the same seed as the dice but independent of them:
uniform among the legal plays, doubling with probability ``DOUBLE_PROB`` whenever the
cube is available, taking with probability ``TAKE_PROB``.  They never resign.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from nard_rl.engine.game import (
    AutomaticDouble,
    Double,
    Drop,
    Event,
    Game,
    GameOver,
    GameResult,
    Match,
    Move,
    NoPlay,
    OpeningRoll,
    Phase,
    Take,
    result_name,
)
from nard_rl.engine.position import Position
from nard_rl.engine.rules import RuleSet, get_rules

NAME = "demo"
HELP = "Play a seeded game (or match) between two random players and print it move by move."

PLAYERS = ("X", "O")
DOUBLE_PROB = 0.05
TAKE_PROB = 0.75


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=1, help="seed of dice and decisions")
    parser.add_argument(
        "--rules", default="standard", choices=["standard", "mars"], help="rule set"
    )
    parser.add_argument(
        "--match", type=int, default=0, metavar="N", help="play a match to N points (0: one game)"
    )
    parser.add_argument(
        "--home",
        choices=("right", "left"),
        default=None,
        help="draw each game's final board (X's view), home board on this side (R30)",
    )


def decide(game: Game, rng: np.random.Generator) -> None:
    """Take one random decision for whoever the game waits for."""
    phase = game.phase
    if phase is Phase.OPENING:
        game.roll()
    elif phase is Phase.ROLL_OR_DOUBLE:
        if game.can_double() and rng.random() < DOUBLE_PROB:
            game.double()
        else:
            game.roll()
    elif phase is Phase.TAKE_OR_DROP:
        if rng.random() < TAKE_PROB:
            game.take()
        else:
            game.drop()
    elif phase is Phase.MOVE:
        plays = game.legal_plays()
        game.play(plays[int(rng.integers(len(plays)))].board)
    elif phase is Phase.RESIGN_PENDING:
        game.decline_resignation()


def decision_rng(seed: int) -> np.random.Generator:
    """The players' generator: same seed as the dice, a different stream."""
    return np.random.Generator(np.random.PCG64([seed, 1]))


def play_match(seed: int, rules: RuleSet | str = "standard", length: int = 0) -> Match:
    """A complete random match (``length`` 0: a single money game), frozen clock."""
    match = Match(length, rules, seed=seed, clock=lambda: 0.0)
    rng = decision_rng(seed)
    while True:
        while not match.game.is_over:
            decide(match.game, rng)
        if length == 0 or match.is_over:
            return match
        match.next_game()


def _result_text(result: GameResult, rules: RuleSet) -> str:
    kind = result_name(result, rules)
    how = {
        "bear_off": "",
        "drop": " (double dropped)",
        "resign": " (resignation)",
        "timeout": " (on time)",
    }[result.reason.value]
    points = f"{result.points} point{'s' if result.points != 1 else ''}"
    stake = f" ({result.multiplier} x cube {result.cube})" if rules.cube else ""
    return f"{PLAYERS[result.winner]} wins {kind}{how}: {points}{stake}"


def _event_lines(event: Event, turn: int, board0: tuple[int, ...]) -> list[str]:
    """Lines for one record event; ``board0`` is the position from player 0's view after
    it."""
    if isinstance(event, OpeningRoll):
        d0, d1 = event.dice
        text = f"Opening roll: X {d0}, O {d1}"
        if d0 == d1:
            return [text + ": tie, roll again (R5)"]
        first = PLAYERS[0 if d0 > d1 else 1]
        return [text + f": {first} moves first"]
    if isinstance(event, AutomaticDouble):
        return [f"Automatic double: the stake is {event.cube} (R31)"]
    if isinstance(event, (Move, NoPlay)):
        who = PLAYERS[event.player]
        dice = f"{max(event.dice)}{min(event.dice)}"
        move = event.move if isinstance(event, Move) else "no legal play"
        position = Position(board0, validate=False)
        pips = position.pip_counts()
        on_roll = position if event.player == 1 else position.flip()
        return [
            f"{turn:4d}  {who}  {dice}  {move:<24} pips X {pips[0]:3d} O {pips[1]:3d}"
            f"  ID {on_roll.position_id()}"
        ]
    if isinstance(event, Double):
        return [f"      {PLAYERS[event.player]}  doubles to {event.cube}"]
    if isinstance(event, Take):
        return [f"      {PLAYERS[event.player]}  takes"]
    if isinstance(event, Drop):
        return [f"      {PLAYERS[event.player]}  drops"]
    return []


def game_transcript(game: Game) -> list[str]:
    """The lines of one finished or unfinished game, from its record."""
    lines: list[str] = []
    board0 = Position.start().board
    turn = 0
    for event in game.record:
        if isinstance(event, (Move, NoPlay)):
            turn += 1
        if isinstance(event, Move):
            after = Position(event.board, validate=False)
            board0 = (after if event.player == 0 else after.flip()).board
        if isinstance(event, GameOver):
            lines.append(_result_text(event.result, game.rules))
        else:
            lines.extend(_event_lines(event, turn, board0))
    return lines


def transcript(
    seed: int = 1, rules: RuleSet | str = "standard", match: int = 0, home: str | None = None
) -> str:
    """The demo's full text for a seed, rule set and match length (0: one money game);
    with ``home`` each game ends with its final board drawn from X's view."""
    ruleset = get_rules(rules)
    result = play_match(seed, ruleset, match)
    kind = f"{match}-point match" if match else "one game"
    lines = [
        f"nard demo: seed {seed}, {ruleset.name} rules, {kind}",
        "Players: X (player 0) and O (player 1), both random; pips and Position ID after "
        "each turn, the ID from the view of the player to roll next",
    ]
    for index, game in enumerate(result.games):
        lines.append("")
        if match:
            s0, s1 = result.scores_before(index)
            crawford = (
                " (Crawford game, R34)" if ruleset.cube and index == result.crawford_game else ""
            )
            lines.append(f"Game {index + 1}: score X {s0}, O {s1}{crawford}")
        lines.extend(game_transcript(game))
        if home is not None:
            from nard_rl.engine.ascii import render_board

            lines.append(render_board(game.position_for(0), names=PLAYERS, home=home))
    if match:
        s0, s1 = result.score
        lines += ["", f"{PLAYERS[result.winner or 0]} wins the match {max(s0, s1)}-{min(s0, s1)}"]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    if args.match < 0:
        print("nard demo: error: --match must be >= 0", file=sys.stderr)
        return 2
    print(transcript(args.seed, args.rules, args.match, args.home), end="")
    return 0
