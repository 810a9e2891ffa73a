"""``nard play``: a game (or match) against the bot in the terminal.

The bot is a network (the shipped net by default) that chooses its plays by the
score-aware ``nard_rl.cube.model.score_utility`` (money equity, or match-winning chances at the
score), searched ``--ply`` plies deep (``nard_rl.search.nply``, 0 by default), and its cube
actions with ``nard_rl.cube.cubeful.CubeAdvisor``; it answers the human's doubles with the shared
``nard_rl.cube.model.take_decision``, from the doubler's view.  The game flow, legality and scoring
are the engine's ``Match``/``Game``, so nothing here re-implements a rule.

What the human sees: the board from their own side all game long
(``nard_rl.engine.ascii.render_table``), drawn again whenever it changed before they
decide (after the bot's move, with its dice and play named; after their own roll; at a
double), with the cube, the match score and the Crawford game, both pip counts and both
clocks under mars (R30).  ``hint`` answers the decision at hand: the best plays, the
cube analysis before a roll, take or pass at a double.  With ``--confirm`` (the default
at a terminal) a play waits on the board until Enter commits it; ``undo`` takes it back.
``save FILE`` writes the match so far as ``.mat`` text (``nard_rl.engine.matfile``), and
the match is saved by itself after every game (``--autosave``).

Input is read line by line, which also makes the command scriptable
(``nard play < moves.txt``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from nard_rl.engine.ascii import HOME_SIDES

if TYPE_CHECKING:
    import numpy as np

    from nard_rl.cube.met import MatchScore
    from nard_rl.cube.model import CubeDecision, CubeState
    from nard_rl.engine.game import Clock, Game, GameResult, Play
    from nard_rl.engine.rules import RuleSet
    from nard_rl.search.nply import RankedPlay

NAME = "play"
HELP = "Play against the bot in the terminal (moves like 24/18 13/11; 'help' for commands)."
HUMAN = 0
BOT = 1
MAX_BOT_PLY = 3
COMMANDS = (
    "commands: a move (e.g. 24/18 13/11), roll, double, take, drop (or pass), "
    "resign [gammon|backgammon], hint, undo, board, save FILE, help, quit"
)
NO_CUBE_COMMANDS = (
    "commands: a move (e.g. 24/18 13/11), roll, resign, hint, undo, board, save FILE, help, quit"
)
"""Under mars (R28) there is no cube, and a resignation's value is fixed (R30)."""
CONFIRM_HELP = "a play waits on the board: Enter (or ok) commits it, undo takes it back"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--net", default="default", help="bot: checkpoint path or 'default'")
    parser.add_argument("--match", type=int, default=0, help="match length (0: one money game)")
    parser.add_argument("--rules", default="standard", help="rule set: standard or mars")
    parser.add_argument("--seed", type=int, default=None, help="dice seed (default: random)")
    parser.add_argument(
        "--ply",
        type=int,
        default=0,
        help=f"the bot's strength: plies searched for its plays, 0-{MAX_BOT_PLY} (default 0; "
        "1 and more also read its cube one ply deeper); hints use the same depth",
    )
    parser.add_argument(
        "--home", choices=HOME_SIDES, default="right", help="side of your home board (display)"
    )
    parser.add_argument(
        "--confirm",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show each play before committing it (Enter commits, undo takes it back); "
        "default: on at a terminal, off for piped input",
    )
    parser.add_argument(
        "--autosave",
        default=None,
        metavar="FILE",
        help="where the match is saved after every game and on quit, as .mat text "
        "(default: nard-play-<UTC time>.mat here; '' for none)",
    )


def default_autosave_path(now: datetime | None = None) -> Path:
    """``nard-play-20261204-184200.mat`` in the current directory (UTC, to the second)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return Path(f"nard-play-{stamp}.mat")


class Quit(Exception):
    """The human typed ``quit``: the session ends."""


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
        ply: int = 0,
        confirm: bool = False,
        autosave: Path | None = None,
    ) -> None:
        if home not in HOME_SIDES:
            raise ValueError(f"home must be one of {', '.join(HOME_SIDES)}, got {home!r}")
        if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= MAX_BOT_PLY:
            raise ValueError(f"--ply must be an integer in 0..{MAX_BOT_PLY}, got {ply!r}")
        self.home = home
        self.ply = ply
        self.confirm = confirm
        self.autosave = autosave
        from nard_rl.commands.common import load_net_player
        from nard_rl.cube.cubeful import DEFAULT_CUBE_PLY, CubeAdvisor
        from nard_rl.engine.game import Match
        from nard_rl.engine.rules import get_rules
        from nard_rl.nets.evaluator import NetEvaluator
        from nard_rl.search.nply import Search

        self.rules = get_rules(rules)
        self.bot = load_net_player(net, rules=self.rules)
        # finished games exact, the net elsewhere
        self.evaluator = NetEvaluator(self.bot.net, self.bot.spec, rules=self.rules)
        self.search = Search(self.evaluator)
        self.cube_ply = max(DEFAULT_CUBE_PLY, min(ply, 2))
        self.cube = (
            CubeAdvisor(self.evaluator, rules=self.rules, ply=self.cube_ply)
            if self.rules.cube
            else None
        )
        self.match = Match(match_length, self.rules, seed=seed, clock=clock)
        self.length = match_length
        self.out = out
        self.pending: Play | None = None
        """The human's play on the board, not yet committed (``--confirm``)."""
        self._drawn: tuple[int, int, object] | None = None
        self._last = ""
        """What the bot did since the human's last decision (the board's header line)."""

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    # the bot's decisions ------------------------------------------------------------------
    def _score_for(self, me: int) -> MatchScore | None:
        from nard_rl.cube.met import MatchScore

        if not self.length:
            return None
        s = self.match.score
        crawford = self.match.crawford_game == len(self.match.games) - 1
        return MatchScore(self.length, s[me], s[1 - me], crawford)

    def _utility(self, game: Game, me: int) -> Callable[[np.ndarray], np.ndarray]:
        from nard_rl.cube.model import CubeState, score_utility

        cube = CubeState.from_seats(game.cube_value, game.cube_owner, me)
        return score_utility(self.rules, cube, self._score_for(me))

    def ranked(self, game: Game) -> list[RankedPlay]:
        """The legal plays of the side on roll, best first, at the session's ply."""
        assert game.dice is not None
        me = game.player_on_roll
        return self.search.rank(game.position.board, game.dice, self.ply, self._utility(game, me))

    def bot_turn(self, game: Game) -> None:
        from nard_rl.cube.model import CubeState
        from nard_rl.engine.game import Phase

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
                self.say(f"bot doubles to {game.cube_value * 2}")  # the board says it too
                return
            dice = game.roll()
            self.say(f"bot rolls {dice[0]}-{dice[1]}")
            if game.player_on_roll != me or game.is_over:  # no legal play (R16)
                self.say("bot cannot move (R16)")
                self._last = f"bot rolled {dice[0]}-{dice[1]} and cannot move (R16)"
        elif game.phase is Phase.TAKE_OR_DROP:
            # the human doubled: the answer is judged from the doubler's (human's) side
            assert self.cube is not None
            doubler = game.player_on_roll
            cube = CubeState.from_seats(game.cube_value, game.cube_owner, doubler)
            if self.cube.takes(game.position.board, cube, self._score_for(doubler)):
                game.take()
                self.say("bot takes")
                self._last = "bot takes"
            else:
                game.drop()
                self.say("bot drops")
        elif game.phase is Phase.RESIGN_PENDING:
            self.answer_resignation(game)
        elif game.phase is Phase.MOVE:
            dice = game.dice
            assert dice is not None
            best = self.ranked(game)[0]
            game.play(best.board)
            self.say(f"bot plays {best.move}")
            self._last = f"bot rolled {dice[0]}-{dice[1]} and played {best.move}"

    def answer_resignation(self, game: Game) -> None:
        """Accept when the resignation is worth at least playing on, by the shared
        ``nard_rl.cube.model.resignation_answer`` (the score utility: points at money, the
        match-winning chance in a match).

        The human is on roll, so the board from the bot's side is the bot's afterstate
        with the human to roll: what the evaluator reads (R27; R30 fixes the value under
        mars)."""
        import numpy as np

        from nard_rl.cube.model import CubeState, resignation_answer
        from nard_rl.engine.game import ResultKind

        pending = game.pending_resignation
        assert pending is not None
        kind = pending[1]
        board = np.array([game.position_for(BOT).board], dtype=np.int8)
        answer = resignation_answer(
            self.evaluator.probabilities(board)[0],
            kind is not ResultKind.SINGLE,
            kind is ResultKind.BACKGAMMON,
            self.rules,
            CubeState.from_seats(game.cube_value, game.cube_owner, BOT),
            self._score_for(BOT),
        )
        if answer.accept:
            game.accept_resignation()
            self.say("bot accepts")
            return
        game.decline_resignation()
        if self.length:
            self.say(f"bot declines (it expects a {answer.expected:.1%} match-winning chance)")
        else:
            self.say(f"bot declines (it expects {answer.expected:+.2f} points)")

    # the board -------------------------------------------------------------------------------
    def show(self, game: Game) -> None:
        """Draw the board from the human's side (a pending play drawn as if made)."""
        from dataclasses import replace

        from nard_rl.engine.ascii import render_table, table_view

        score = self.match.score if self.length else (0, 0)
        table = table_view(game, HUMAN, score=score, last=self._last or None)
        if self.pending is not None:
            table = replace(
                table, board=self.pending.board, last=f"your play: {self.pending.move} (pending)"
            )
        self.say(render_table(table, names=("you", "bot"), home=self.home))
        self._drawn = self._state_key(game)

    def _state_key(self, game: Game) -> tuple[int, int, object]:
        return (id(game), len(game.record), None if self.pending is None else self.pending.board)

    # the human's turn ---------------------------------------------------------------------
    def hint(self, game: Game) -> None:
        """The bot's advice on the decision the human faces now."""
        from nard_rl.commands.advice import cube_lines, play_lines, take_lines
        from nard_rl.cube.model import CubeState
        from nard_rl.engine.game import Phase

        match = self.length > 0
        if game.phase is Phase.MOVE:
            kind = "match-winning chance" if match else "money equity"
            self.say(f"best plays at {self.ply}-ply (by {kind}):")
            for line in play_lines(self.ranked(game)):
                self.say(line)
        elif game.phase is Phase.ROLL_OR_DOUBLE:
            refusal = game.double_refusal()
            if self.cube is None or refusal is not None:
                self.say(f"  roll: {refusal}")
                return
            me = game.player_on_roll
            cube = CubeState.from_seats(game.cube_value, game.cube_owner, me)
            decision, ply = self._cube_decision(game.position.board, cube, self._score_for(me))
            for line in cube_lines(decision, ply, match=match):
                self.say(line)
        elif game.phase is Phase.TAKE_OR_DROP:
            assert self.cube is not None
            doubler = game.player_on_roll  # the bot: its view, its cube, its score
            cube = CubeState.from_seats(game.cube_value, game.cube_owner, doubler)
            decision, _ = self._cube_decision(game.position.board, cube, self._score_for(doubler))
            for line in take_lines(decision, match=match):
                self.say(line)
        else:
            self.say("  nothing to advise here")

    def _cube_decision(
        self, board: tuple[int, ...], cube: CubeState, score: MatchScore | None
    ) -> tuple[CubeDecision, int]:
        """The cube decision of the side on roll of ``board`` (its view) and its ply."""
        import numpy as np

        assert self.cube is not None
        _, decisions, plies = self.cube.analyse_batch(
            np.array([board], dtype=np.int8), [cube], [score]
        )
        return decisions[0], int(plies[0])

    def save(self, path: Path) -> Path:
        """Write the match so far (every game, the current one as far as it went) as
        ``.mat`` text; ``.sgf`` is refused (no writer in the project yet)."""
        from nard_rl.engine.matfile import export_mat

        if path.suffix.lower() != ".mat":
            raise ValueError(f"save writes .mat files (Jellyfish match text), not {path.name!r}")
        path.write_text(export_mat(self.match, names=("you", "bot")))
        return path

    def _autosave(self) -> None:
        if self.autosave is None:
            return
        try:
            self.say(f"match saved to {self.save(self.autosave)}")
        except OSError as exc:
            self.say(f"could not save the match to {self.autosave}: {exc}")

    def human_command(self, game: Game, line: str) -> bool:
        """Carry out one command; False when the human quits."""
        from nard_rl.engine.game import EndReason, GameResult, Phase, ResultKind, result_name

        cmd = line.strip()
        low = cmd.lower()
        if low in ("quit", "exit", "q"):
            return False
        if low in ("help", "?", "h"):
            self.say(COMMANDS if self.rules.cube else NO_CUBE_COMMANDS)
            if self.confirm:
                self.say(CONFIRM_HELP)
        elif low == "board":
            self.show(game)
        elif low == "hint":
            self.hint(game)
        elif low.split()[:1] == ["save"]:
            if len(cmd.split()) != 2:
                raise ValueError("save FILE (a .mat file)")
            self.say(f"match saved to {self.save(Path(cmd.split()[1]))}")
        elif low == "undo":
            if self.pending is None:
                raise ValueError(
                    "no pending play to take back"
                    + (
                        ""
                        if self.confirm
                        else " (plays commit at once; --confirm shows them first)"
                    )
                )
            self.say(f"you take back {self.pending.move}")
            self.pending = None
        elif self.pending is not None and low in ("", "ok", "commit", "y", "yes"):
            move = game.play(self.pending.board)
            self.pending = None
            self.say(f"you play {move.move}")
            self._last = ""
        elif low == "":
            return True
        elif low == "roll":
            me = game.player_on_roll
            dice = game.roll()
            self.say(f"you roll {dice[0]}-{dice[1]}")
            if game.player_on_roll != me or game.is_over:
                self.say("you cannot move (R16)")
            self._last = ""
        elif low == "double":
            game.double()
            self.say(f"you double to {game.cube_value * 2}")
        elif low == "take":
            game.take()
            self.say("you take")
            self._last = ""
        elif low in ("drop", "pass"):
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
        elif self.confirm and game.phase is Phase.MOVE:
            self.pending = game.find_play(cmd)  # the engine's reason when illegal
        else:
            move = game.play(cmd)
            self.pending = None
            self.say(f"you play {move.move}")
            self._last = ""
        return True

    def prompt(self, game: Game) -> str:
        from nard_rl.engine.game import Phase

        if game.phase is Phase.TAKE_OR_DROP:
            return f"bot doubles to {2 * game.cube_value}: take or drop? "
        if game.phase is Phase.ROLL_OR_DOUBLE:
            if game.can_double():
                return "roll or double? "
            return f"roll{self._clock_text(game)}? "
        if self.pending is not None:
            return f"commit {self.pending.move} (Enter), or undo{self._clock_text(game)}: "
        dice = game.dice
        text = f"your move with {dice[0]}-{dice[1]}" if dice else ""
        return f"{text}{self._clock_text(game)}: " if text else "> "

    def _clock_text(self, game: Game) -> str:
        """The human's time left (R30): turn time, then the reserve."""
        from nard_rl.engine.ascii import clock_text

        if not game.has_clock:
            return ""
        return f" [{clock_text(*game.time_left(HUMAN))}]"

    def _play_game(self, game: Game, lines: Iterator[str]) -> None:
        """Play ``game`` to its end; raises ``Quit`` (or ``EOFError`` at end of input)."""
        from nard_rl.engine.game import IllegalActionError, Phase

        self._last = ""
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
            if self._drawn != self._state_key(game):
                self.show(game)
            self.out.write(self.prompt(game))
            self.out.flush()
            line = next(lines, None)
            if line is None:
                raise EOFError
            try:
                if not self.human_command(game, line):
                    raise Quit
            except (IllegalActionError, ValueError) as exc:
                self.say(f"not possible: {exc}")
        self.show(game)  # the final position

    def run(self, stdin: TextIO | Iterator[str]) -> int:
        lines = iter(stdin)
        try:
            while not self.match.is_over:
                game = self.match.game
                self._play_game(game, lines)
                res = game.result
                assert res is not None
                self.say(result_text(res, self.rules))
                if self.length:
                    self.say(f"score: you {self.match.score[HUMAN]}, bot {self.match.score[BOT]}")
                self._autosave()
                if not self.length:
                    return 0
                if not self.match.is_over:
                    self.match.next_game()
        except (Quit, EOFError) as stop:
            if isinstance(stop, EOFError):
                self.say("\nend of input")
            if any(len(g.record) > 1 for g in self.match.games):
                self._autosave()
            return 0
        self.say("match over: " + ("you win" if self.match.winner == HUMAN else "bot wins"))
        return 0


def run(args: argparse.Namespace) -> int:
    confirm = sys.stdin.isatty() if args.confirm is None else args.confirm
    autosave = default_autosave_path() if args.autosave is None else args.autosave
    try:
        session = Session(
            args.net,
            args.match,
            args.rules,
            args.seed,
            sys.stdout,
            home=args.home,
            ply=args.ply,
            confirm=confirm,
            autosave=Path(autosave) if autosave else None,
        )
        if session.autosave is not None and session.autosave.suffix.lower() != ".mat":
            raise ValueError(f"--autosave writes a .mat file, not {autosave!r}")
    except (ValueError, FileNotFoundError) as exc:
        print(f"nard play: error: {exc}", file=sys.stderr)
        return 2
    session.say(COMMANDS if session.rules.cube else NO_CUBE_COMMANDS)
    if confirm:
        session.say(CONFIRM_HELP)
    return session.run(sys.stdin)


def result_text(result: GameResult, rules: RuleSet) -> str:
    """``you win 2 points (a mars, on time)``: points, kind and how the game ended."""
    from nard_rl.engine.game import EndReason, result_name

    who = "you win" if result.winner == HUMAN else "bot wins"
    how = {
        EndReason.BEAR_OFF: "",
        EndReason.DROP: ", double dropped",
        EndReason.RESIGN: ", resignation",
        EndReason.TIMEOUT: ", on time (R30)",
    }[result.reason]
    points = f"{result.points} point{'s' if result.points != 1 else ''}"
    return f"{who} {points} ({result_name(result, rules)}{how})"
