"""``nard play``: a game (or match) against the bot in the terminal.

The bot is a network (the shipped net by default) that chooses its plays at 0-ply and
its cube actions with ``NetworkPlayer.cube_action``; the game flow, legality and scoring
are the engine's ``Match``/``Game``, so nothing here re-implements a rule.  Input is read
line by line, which also makes the command scriptable (``nard play < moves.txt``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import numpy as np

from nard_rl.cube import DOUBLE_PASS, DOUBLE_TAKE, CubeDecision, CubeState
from nard_rl.engine.ascii import render_board
from nard_rl.engine.game import Game, IllegalActionError, Match, Phase
from nard_rl.engine.rules import get_rules
from nard_rl.met import MatchScore

NAME = "play"
HELP = "Play against the bot in the terminal (moves like 24/18 13/11; 'help' for commands)."
HUMAN = 0
BOT = 1
COMMANDS = "commands: a move (e.g. 24/18 13/11), roll, double, take, drop, hint, board, quit"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--net", default="default", help="bot: checkpoint path or 'default'")
    parser.add_argument("--match", type=int, default=0, help="match length (0: one money game)")
    parser.add_argument("--rules", default="standard", help="rule set: standard or mars")
    parser.add_argument("--seed", type=int, default=None, help="dice seed (default: random)")


class Session:
    """One human against one bot, reading commands from ``stdin``."""

    def __init__(
        self, net: str, match_length: int, rules: str, seed: int | None, out: TextIO
    ) -> None:
        from nard_rl.net_player import NetworkPlayer, default_checkpoint_path

        path = default_checkpoint_path() if net == "default" else net
        self.rules = get_rules(rules)
        self.bot = NetworkPlayer.from_checkpoint(path, rules=self.rules)
        self.match = Match(match_length, self.rules, seed=seed)
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

    def _bot_cube(self, game: Game) -> CubeDecision:
        owner = "centered"
        if game.cube_owner is not None:
            owner = "mover" if game.cube_owner == game.player_on_roll else "opponent"
        me = game.player_on_roll
        return self.bot.cube_action(
            game.position.board, CubeState(game.cube_value, owner), self._score_for(me)
        )

    def bot_turn(self, game: Game) -> None:
        if game.phase is Phase.ROLL_OR_DOUBLE:
            if game.can_double() and self._bot_cube(game).decision in (DOUBLE_TAKE, DOUBLE_PASS):
                game.double()
                self.say(f"bot doubles to {game.cube_value * 2}")
                return
            dice = game.roll()
            self.say(f"bot rolls {dice[0]}-{dice[1]}")
        elif game.phase is Phase.TAKE_OR_DROP:
            # the bot answers the human's double from its own side, as if it were on roll
            flipped = game.position.flip()
            owner = "centered" if game.cube_owner is None else "mover"
            decision = self.bot.cube_action(
                flipped.board,
                CubeState(game.cube_value, owner),
                self._score_for(BOT),
            )
            if decision.take is not False:
                game.take()
                self.say("bot takes")
            else:
                game.drop()
                self.say("bot drops")
        elif game.phase is Phase.MOVE:
            plays = game.legal_plays()
            afters = np.array([p.board for p in plays], dtype=np.int8)
            pick = int(np.argmax(self.bot.equities(afters)))
            game.play(plays[pick].board)
            self.say(f"bot plays {plays[pick].move}")

    # the human's turn ---------------------------------------------------------------------
    def show(self, game: Game) -> None:
        self.say(render_board(game.position_for(HUMAN).board, names=("you", "bot")))

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
            eq = self.bot.equities(np.array([p.board for p in plays], dtype=np.int8))
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
        else:
            move = game.play(cmd)
            self.say(f"you play {move.move}")
        return True

    def prompt(self, game: Game) -> str:
        if game.phase is Phase.TAKE_OR_DROP:
            return "bot doubles: take or drop? "
        if game.phase is Phase.ROLL_OR_DOUBLE:
            return "roll or double? " if game.can_double() else "roll? "
        dice = game.dice
        return f"your move with {dice[0]}-{dice[1]}: " if dice else "> "

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
            who = "you win" if res.winner == HUMAN else "bot wins"
            self.say(f"{who} {res.points} point{'s' if res.points != 1 else ''} ({res.kind.name})")
            if not self.length:
                return 0
            self.say(f"score: you {self.match.score[HUMAN]}, bot {self.match.score[BOT]}")
            if not self.match.is_over:
                self.match.next_game()
        self.say("match over: " + ("you win" if self.match.winner == HUMAN else "bot wins"))
        return 0


def run(args: argparse.Namespace) -> int:
    try:
        session = Session(args.net, args.match, args.rules, args.seed, sys.stdout)
    except (ValueError, FileNotFoundError) as exc:
        print(f"nard play: error: {exc}", file=sys.stderr)
        return 2
    session.say(COMMANDS)
    return session.run(sys.stdin)
