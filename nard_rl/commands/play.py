"""``nard play``: a game (or match) against the bot in the terminal.

The bot is a network (the shipped net by default) that chooses its plays at 0-ply by the
score-aware ``nard_rl.cube.score_utility`` (money equity, or match-winning chances at the
score) and its cube actions with ``nard_rl.cubeful.CubeAdvisor`` (1-ply pre-roll
probabilities); it answers the human's doubles with the shared
``nard_rl.cube.take_decision``, from the doubler's view.  The game flow, legality and scoring
are the engine's ``Match``/``Game``, so nothing here re-implements a rule.  Input is read
line by line, which also makes the command scriptable (``nard play < moves.txt``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TextIO

import numpy as np

from nard_rl.cube import CubeState, score_utility
from nard_rl.engine.ascii import HOME_SIDES, render_board
from nard_rl.engine.game import (
    Clock,
    EndReason,
    Game,
    GameResult,
    IllegalActionError,
    Match,
    Phase,
    ResultKind,
    result_name,
)
from nard_rl.engine.rules import RuleSet, cubeless_equity, get_rules
from nard_rl.met import MatchScore

NAME = "play"
HELP = "Play against the bot in the terminal (moves like 24/18 13/11; 'help' for commands)."
HUMAN = 0
BOT = 1
COMMANDS = (
    "commands: a move (e.g. 24/18 13/11), roll, double, take, drop, resign [gammon|backgammon],"
    " hint, board, quit"
)
NO_CUBE_COMMANDS = "commands: a move (e.g. 24/18 13/11), roll, resign, hint, board, quit"
"""Under mars (R28) there is no cube, and a resignation's value is fixed (R30)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--net", default="default", help="bot: checkpoint path or 'default'")
    parser.add_argument("--match", type=int, default=0, help="match length (0: one money game)")
    parser.add_argument("--rules", default="standard", help="rule set: standard or mars")
    parser.add_argument("--seed", type=int, default=None, help="dice seed (default: random)")
    parser.add_argument(
        "--home", choices=HOME_SIDES, default="right", help="side of your home board (display)"
    )


class Session:
    """One human against one bot, reading commands from ``stdin``."""

    def __init__(
        self,
        net: str,
        match_length: int,
        rules: str,
        seed: int | None,
        out: TextIO,
        *,
        clock: Clock = time.monotonic,
        home: str = "right",
    ) -> None:
        if home not in HOME_SIDES:
            raise ValueError(f"home must be one of {', '.join(HOME_SIDES)}, got {home!r}")
        self.home = home
        from nard_rl.commands.common import load_net_player

        self.rules = get_rules(rules)
        self.bot = load_net_player(net, rules=self.rules)
        from nard_rl.cubeful import CubeAdvisor
        from nard_rl.evaluator import NetEvaluator

        # finished games exact, the net elsewhere
        self.evaluator = NetEvaluator(self.bot.net, self.bot.spec, rules=self.rules)
        self.cube = CubeAdvisor(self.evaluator, rules=self.rules) if self.rules.cube else None
        self.match = Match(match_length, self.rules, seed=seed, clock=clock)
        self.length = match_length
        self.out = out
        self._shown: tuple[int, int] | None = None

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    # the bot's decisions ------------------------------------------------------------------
    def _score_for(self, me: int) -> MatchScore | None:
        if not self.length:
            return None
        s = self.match.score
        crawford = self.match.crawford_game == len(self.match.games) - 1
        return MatchScore(self.length, s[me], s[1 - me], crawford)

    def _utility(self, game: Game, me: int) -> Callable[[np.ndarray], np.ndarray]:
        cube = CubeState.from_seats(game.cube_value, game.cube_owner, me)
        return score_utility(self.rules, cube, self._score_for(me))

    def bot_turn(self, game: Game) -> None:
        if game.phase is Phase.ROLL_OR_DOUBLE:
            me = game.player_on_roll
            cube = CubeState.from_seats(game.cube_value, game.cube_owner, me)
            board = game.position.board
            if (
                self.cube is not None
                and game.can_double()
                and self.cube.doubles(board, cube, self._score_for(me))
            ):
                game.double()
                self.say(f"bot doubles to {game.cube_value * 2}")
                return
            dice = game.roll()
            self.say(f"bot rolls {dice[0]}-{dice[1]}")
        elif game.phase is Phase.TAKE_OR_DROP:
            # the human doubled: the answer is judged from the doubler's (human's) side
            assert self.cube is not None
            doubler = game.player_on_roll
            cube = CubeState.from_seats(game.cube_value, game.cube_owner, doubler)
            if self.cube.takes(game.position.board, cube, self._score_for(doubler)):
                game.take()
                self.say("bot takes")
            else:
                game.drop()
                self.say("bot drops")
        elif game.phase is Phase.RESIGN_PENDING:
            self.answer_resignation(game)
        elif game.phase is Phase.MOVE:
            plays = game.legal_plays()
            afters = np.array([p.board for p in plays], dtype=np.int8)
            values = self._utility(game, game.player_on_roll)(self.evaluator.probabilities(afters))
            pick = int(np.argmax(values))
            game.play(plays[pick].board)
            self.say(f"bot plays {plays[pick].move}")

    def answer_resignation(self, game: Game) -> None:
        """Accept when the resignation gives at least the bot's cubeless expectation.

        The human is on roll, so the board from the bot's side is the bot's afterstate
        with the human to roll: what the evaluator reads (R27; R30 fixes the value under
        mars)."""
        pending = game.pending_resignation
        assert pending is not None
        kind = pending[1]
        offered = self.rules.result_value(
            kind is not ResultKind.SINGLE, kind is ResultKind.BACKGAMMON
        )
        board = np.array([game.position_for(BOT).board], dtype=np.int8)
        expected = float(cubeless_equity(self.evaluator.probabilities(board), self.rules)[0])
        if offered >= expected - 1e-9:
            game.accept_resignation()
            self.say("bot accepts")
        else:
            game.decline_resignation()
            self.say(f"bot declines (it expects {expected:+.2f} per stake)")

    # the human's turn ---------------------------------------------------------------------
    def show(self, game: Game) -> None:
        self.say(render_board(game.position_for(HUMAN).board, names=("you", "bot"), home=self.home))

    def human_command(self, game: Game, line: str) -> bool:
        """Carry out one command; False when the human quits."""
        cmd = line.strip()
        low = cmd.lower()
        if low in ("quit", "exit"):
            return False
        if low in ("help", "?"):
            self.say(COMMANDS)
        elif low == "board":
            self.show(game)
        elif low == "hint" and game.phase is Phase.MOVE:
            plays = game.legal_plays()
            probs = self.evaluator.probabilities(np.array([p.board for p in plays], dtype=np.int8))
            eq = self._utility(game, game.player_on_roll)(probs)
            for i in np.argsort(-eq)[:5]:
                self.say(f"  {plays[i].move:<24} {eq[i]:+.3f}")
        elif low == "roll":
            dice = game.roll()
            self.say(f"you roll {dice[0]}-{dice[1]}")
        elif low == "double":
            game.double()
            self.say(f"you double to {game.cube_value * 2}")
        elif low == "take":
            game.take()
            self.say("you take")
        elif low == "drop":
            game.drop()
        elif low.split()[:1] == ["resign"]:
            kinds = {"single": ResultKind.SINGLE, "gammon": ResultKind.GAMMON}
            kinds["backgammon"] = ResultKind.BACKGAMMON
            arg = low.split()[1] if len(low.split()) > 1 else None
            if arg is not None and arg not in kinds:
                raise ValueError(f"resign single, gammon or backgammon, not {arg!r}")
            event = game.resign(None if arg is None else kinds[arg], player=HUMAN)
            offered = GameResult(BOT, event.kind, EndReason.RESIGN, 1, game.cube_value)
            self.say(f"you resign {result_name(offered, self.rules)}")
        else:
            move = game.play(cmd)
            self.say(f"you play {move.move}")
        return True

    def prompt(self, game: Game) -> str:
        if game.phase is Phase.TAKE_OR_DROP:
            return "bot doubles: take or drop? "
        if game.phase is Phase.ROLL_OR_DOUBLE:
            if game.can_double():
                return "roll or double? "
            return f"roll{self._clock_text(game)}? "
        dice = game.dice
        text = f"your move with {dice[0]}-{dice[1]}" if dice else ""
        return f"{text}{self._clock_text(game)}: " if text else "> "

    def _clock_text(self, game: Game) -> str:
        """The human's time left (R30): turn time, then the reserve."""
        if not game.has_clock:
            return ""
        turn, reserve = game.time_left(HUMAN)
        return f" [{turn:.0f}s + {int(max(reserve, 0.0)) // 60}:{int(max(reserve, 0.0)) % 60:02d}]"

    def run(self, stdin: TextIO) -> int:
        lines = iter(stdin)
        while not self.match.is_over:
            game = self.match.game
            while not game.is_over:
                if game.phase is Phase.OPENING:
                    dice = game.roll()
                    self.say(f"opening roll: you {dice[0]}, bot {dice[1]}")
                    continue
                if game.player_to_act == BOT:
                    self.bot_turn(game)
                    continue
                if game.phase is Phase.MOVE and not game.dice:
                    continue
                if game.phase is Phase.MOVE and self._shown != (id(game), len(game.record)):
                    self._shown = (id(game), len(game.record))  # once per roll
                    self.show(game)
                self.out.write(self.prompt(game))
                self.out.flush()
                line = next(lines, None)
                if line is None:
                    self.say("\nend of input")
                    return 0
                try:
                    if not self.human_command(game, line):
                        return 0
                except (IllegalActionError, ValueError) as exc:
                    self.say(f"not possible: {exc}")
            res = game.result
            assert res is not None
            self.say(result_text(res, self.rules))
            if not self.length:
                return 0
            self.say(f"score: you {self.match.score[HUMAN]}, bot {self.match.score[BOT]}")
            if not self.match.is_over:
                self.match.next_game()
        self.say("match over: " + ("you win" if self.match.winner == HUMAN else "bot wins"))
        return 0


def run(args: argparse.Namespace) -> int:
    try:
        session = Session(args.net, args.match, args.rules, args.seed, sys.stdout, home=args.home)
    except (ValueError, FileNotFoundError) as exc:
        print(f"nard play: error: {exc}", file=sys.stderr)
        return 2
    session.say(COMMANDS if session.rules.cube else NO_CUBE_COMMANDS)
    return session.run(sys.stdin)


def result_text(result: GameResult, rules: RuleSet) -> str:
    """``you win 2 points (a mars, on time)``: points, kind and how the game ended."""
    who = "you win" if result.winner == HUMAN else "bot wins"
    how = {
        EndReason.BEAR_OFF: "",
        EndReason.DROP: ", double dropped",
        EndReason.RESIGN: ", resignation",
        EndReason.TIMEOUT: ", on time (R30)",
    }[result.reason]
    points = f"{result.points} point{'s' if result.points != 1 else ''}"
    return f"{who} {points} ({result_name(result, rules)}{how})"
