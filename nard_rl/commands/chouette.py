"""``nard chouette``: a chouette session (R35-R37) of humans at the prompt and bots.

The session, the roll-off, every game's decisions, the ledger and the rotation are the
engine's (``nard_rl.engine.chouette``); this command only seats the players.  Seats
``P1 .. PH`` are humans (moves in gnubg notation, e.g. ``24/18 13/11``), the rest bots.
A bot advises itself with the net: its plays from ``--player`` (the net at 0-ply by
default), its cube actions from the net's shared cube advisor (``nard_rl.cube.cubeful``,
the one ``nard play`` and the server use: 1-ply pre-roll probabilities through
``nard_rl.cube.model``'s ``cube_decision`` to double and ``take_decision`` to answer).

``--bots N --games G --seed S --json`` plays a whole session of bots and prints one JSON
line per game (see ``ChouetteGame.summary``: box, captain, team, doubles, winner,
settlement, ...), then nothing else, so a script can check every game.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

import numpy as np

from nard_rl.engine.ascii import HOME_SIDES

if TYPE_CHECKING:  # the engine's game (numba kernels) is imported where it is used
    from nard_rl.cube.model import CubeDecision, CubeState
    from nard_rl.engine.chouette import Chouette, ChouetteGame, Seat
    from nard_rl.players.base import Player
    from nard_rl.players.net import NetworkPlayer

NAME = "chouette"
HELP = "Chouette (R35-R37): one box against a team of humans and bots."
DEFAULT_HUMANS = 1
DEFAULT_BOTS = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bots", type=int, default=None, help=f"bot seats (default {DEFAULT_BOTS})"
    )
    parser.add_argument(
        "--humans",
        type=int,
        default=None,
        help=f"human seats P1.. (default {DEFAULT_HUMANS}, or 0 when --bots is given)",
    )
    parser.add_argument("--games", type=int, default=1, help="games to play (default 1)")
    parser.add_argument("--seed", type=int, default=None, help="dice seed (default: random)")
    parser.add_argument("--json", action="store_true", help="one JSON line per game")
    parser.add_argument("--net", default="default", help="bots' net: checkpoint or 'default'")
    parser.add_argument(
        "--player", default=None, help="bots' checker play (a player spec; default: --net)"
    )
    parser.add_argument("--stake", type=int, default=1, help="points per cube unit (default 1)")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (one position at a time: 1)"
    )
    parser.add_argument(
        "--home", choices=HOME_SIDES, default="right", help="side of your home board (display)"
    )


class Advisor:
    """The net's advice, shared by every bot seat (and ``hint`` for humans): one
    evaluation per decision point however many seats ask."""

    def __init__(self, checker: Player, net: NetworkPlayer) -> None:
        self.checker = checker
        self.net = net
        self._cache: dict[tuple[str, int, int], object] = {}

    def _cached(self, kind: str, game: ChouetteGame, compute: Callable[[], object]) -> object:
        key = (kind, id(game), len(game.game.record))
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = compute()
        return self._cache[key]

    def best_play(self, game: ChouetteGame) -> tuple[int, ...]:
        def compute() -> tuple[int, ...]:
            g = game.game
            plays = g.legal_plays()
            afters = np.array([p.board for p in plays], dtype=np.int8)
            assert g.dice is not None
            return plays[
                self.checker.choose(np.array(g.position.board), np.array(g.dice), afters)
            ].board

        return self._cached("play", game, compute)  # type: ignore[return-value]

    def ranking(self, game: ChouetteGame, top: int = 5) -> list[tuple[str, float]]:
        plays = game.game.legal_plays()
        eq = self.net.equities(np.array([p.board for p in plays], dtype=np.int8))
        return [(plays[i].move, float(eq[i])) for i in np.argsort(-eq, kind="stable")[:top]]

    def _cube_view(self, game: ChouetteGame) -> tuple[np.ndarray, CubeState, float]:
        """The side on roll's board, cube (before any pending double) and efficiency."""
        from nard_rl.cube.model import CubeState, cube_efficiency

        g = game.game
        owner = "centered"
        if g.cube_owner is not None:
            owner = "mover" if g.cube_owner == g.player_on_roll else "opponent"
        board = np.array(g.position.board, dtype=np.int8)
        return board, CubeState(g.cube_value, owner), cube_efficiency(board)  # type: ignore[arg-type]

    def cube(self, game: ChouetteGame) -> CubeDecision:
        """The cube action of the side on roll before it rolls."""

        def compute() -> CubeDecision:
            board, cube, _ = self._cube_view(game)
            return self.net.cube_action(board, cube, None, rules=game.rules)

        return self._cached("cube", game, compute)  # type: ignore[return-value]

    def take(self, game: ChouetteGame) -> bool:
        """The receivers' answer to the pending double (the doubler is on roll), by the
        net's shared cube advisor, as its doubles are."""

        def compute() -> bool:
            board, cube, _ = self._cube_view(game)
            return self.net.takes(board, cube, None, rules=game.rules)

        return bool(self._cached("take", game, compute))


class BotSeat:
    """A seat the net plays: it doubles, agrees and takes as the net's cube model says."""

    def __init__(self, advisor: Advisor) -> None:
        self.advisor = advisor

    def choose_play(self, game: ChouetteGame, player: int) -> Sequence[int]:
        return self.advisor.best_play(game)

    def wants_double(self, game: ChouetteGame, player: int) -> bool:
        from nard_rl.cube.model import DOUBLE_PASS, DOUBLE_TAKE

        return self.advisor.cube(game).decision in (DOUBLE_TAKE, DOUBLE_PASS)

    def agrees_double(self, game: ChouetteGame, player: int) -> bool:
        return self.wants_double(game, player)

    def takes(self, game: ChouetteGame, player: int) -> bool:
        return self.advisor.take(game)


class EndOfInput(Exception):
    """The human's input ended (or the human typed ``quit``): the session stops."""


HUMAN_COMMANDS = (
    "at every prompt: hint (the bots' advice on this decision), board, help, quit; "
    "plays in gnubg notation (24/18 13/11); roll or double; yes or no; take or pass"
)


class HumanSeat:
    """A person at the prompt.  As box or captain they roll or double and commit plays;
    as a member they suggest plays, vote on team doubles and answer the box's doubles.
    At every prompt ``hint`` gives the net's advice on that decision (the ranking of the
    plays, the cube analysis before a roll, take or pass at a double), ``board`` draws the
    position, ``help`` lists the commands and ``quit`` ends the session."""

    def __init__(
        self, stdin: TextIO, out: TextIO, advisor: Advisor | None, home: str = "right"
    ) -> None:
        self.stdin = stdin
        self.out = out
        self.advisor = advisor
        self.home = home
        self._shown: tuple[int, int, int] | None = None
        self._since: list[str] = []
        """The table's actions since this seat's board was last drawn (its header)."""

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def note(self, action: str) -> None:
        """Hear one action at the table (``drive``'s log line): the next board names it."""
        self._since.append(action)

    def ask(
        self,
        prompt: str,
        game: ChouetteGame | None = None,
        player: int | None = None,
        hint: Callable[[], list[str]] | None = None,
    ) -> str:
        """One answer to ``prompt``; ``help``, ``board``, ``hint`` and ``quit`` are
        handled here, at every prompt, and the prompt is asked again."""
        while True:
            self.out.write(prompt)
            self.out.flush()
            line = self.stdin.readline()
            if not line:
                raise EndOfInput("end of input")
            text = line.strip()
            low = text.lower()
            if low in ("quit", "exit"):
                raise EndOfInput("quit")
            if low in ("help", "?"):
                self.say(HUMAN_COMMANDS)
            elif low == "board" and game is not None and player is not None:
                self._shown = None
                self.show(game, player)
            elif low == "hint":
                if self.advisor is None or hint is None:
                    self.say("  no advice here (no net loaded)")
                else:
                    for row in hint():
                        self.say(row)
            else:
                return text

    def _role(self, game: ChouetteGame, player: int) -> str:
        if player == game.box:
            return "box"
        return "captain" if player == game.captain else "member"

    def show(self, game: ChouetteGame, player: int) -> None:
        from dataclasses import replace

        from nard_rl.engine.ascii import render_table, table_view
        from nard_rl.engine.chouette import BOX, TEAM

        key = (id(game), hash((game.game.position.board, game.game.dice, game.phase)), player)
        if self._shown == key:
            return
        self._shown = key
        mine = "box" if player == game.box else "team"
        names = (mine, "team" if mine == "box" else "box")
        last = "; ".join(self._since[-4:]) or None  # e.g. "P2 rolls 5-3; P2 (box) plays 13/8"
        self._since = []
        table = table_view(game.game, BOX if player == game.box else TEAM, last=last)
        if player != game.box:  # every member has his own cube (R35)
            table = replace(table, cube_value=game.cubes[player])
        self.say(render_table(table, names=names, home=self.home))

    def _cube_hint(self, game: ChouetteGame) -> list[str]:
        from nard_rl.commands.advice import cube_lines

        assert self.advisor is not None
        return cube_lines(self.advisor.cube(game), 0)

    def _take_hint(self, game: ChouetteGame) -> list[str]:
        from nard_rl.commands.advice import take_lines

        assert self.advisor is not None
        return take_lines(self.advisor.cube(game))  # the doubler is on roll: its view

    def _play_hint(self, game: ChouetteGame) -> list[str]:
        assert self.advisor is not None
        return [f"  {move:<24} {eq:+.3f}" for move, eq in self.advisor.ranking(game)]

    def choose_play(self, game: ChouetteGame, player: int) -> str:
        from nard_rl.engine.game import IllegalActionError

        name, role = game.names[player], self._role(game, player)
        self.show(game, player)
        dice = game.game.dice
        assert dice is not None
        if role == "captain" and game.suggestions:
            shown = "; ".join(f"{game.names[m]} {mv}" for m, mv in game.suggestions.items())
            self.say(f"suggestions: {shown}")
        verb = "suggest a play" if role == "member" else "your play"
        while True:
            text = self.ask(
                f"{name} ({role}) {verb} with {dice[0]}-{dice[1]}: ",
                game,
                player,
                lambda: self._play_hint(game),
            )
            try:
                return game.game.find_play(text).move
            except IllegalActionError as exc:
                self.say(f"not possible: {exc}")

    def _yes_no(
        self,
        prompt: str,
        yes: tuple[str, ...],
        no: tuple[str, ...],
        game: ChouetteGame,
        player: int,
        hint: Callable[[], list[str]],
    ) -> bool:
        while True:
            text = self.ask(prompt, game, player, hint).lower()
            if text in yes:
                return True
            if text in no:
                return False
            self.say(f"answer {' or '.join((yes[0], no[0]))} (or hint, board, help, quit)")

    def wants_double(self, game: ChouetteGame, player: int) -> bool:
        role = self._role(game, player)
        if role == "member":  # members vote on the captain's (or a bot's) proposals
            return False
        self.show(game, player)
        what = "double" if role == "box" else "propose a team double"
        return self._yes_no(
            f"{game.names[player]} ({role}) roll or {what}? ",
            ("double", "d"),
            ("roll", "r"),
            game,
            player,
            lambda: self._cube_hint(game),
        )

    def agrees_double(self, game: ChouetteGame, player: int) -> bool:
        action = game.pending_double
        assert action is not None
        return self._yes_no(
            f"{game.names[player]}: {game.names[action.by]} proposes a team double to "
            f"{action.cube}; agree? (yes/no) ",
            ("yes", "y"),
            ("no", "n"),
            game,
            player,
            lambda: self._cube_hint(game),
        )

    def takes(self, game: ChouetteGame, player: int) -> bool:
        action = game.pending_double
        assert action is not None
        who = "the box" if action.side == "box" else "the team"
        self.show(game, player)
        return self._yes_no(
            f"{game.names[player]}: {who} doubles to {action.cube}: take or pass? ",
            ("take", "t"),
            ("pass", "p", "drop"),
            game,
            player,
            lambda: self._take_hint(game),
        )


def _seat_counts(args: argparse.Namespace) -> tuple[int, int]:
    humans = args.humans
    bots = args.bots
    if humans is None:
        humans = 0 if bots is not None else DEFAULT_HUMANS
    if bots is None:
        bots = DEFAULT_BOTS
    if humans < 0 or bots < 0:
        raise ValueError("--humans and --bots must be >= 0")
    if humans + bots < 3:
        raise ValueError(f"a chouette needs at least 3 players (R35), got {humans + bots}")
    if args.games < 1:
        raise ValueError(f"--games must be >= 1, got {args.games}")
    if args.stake < 1:
        raise ValueError(f"--stake must be >= 1, got {args.stake}")
    return humans, bots


def build_advisor(net: str = "default", player: str | None = None) -> Advisor:
    """The bots' advisor: checker play from ``player`` (default: the net), cube from ``net``."""
    from nard_rl.commands.common import load_net_player
    from nard_rl.players import make_player

    cube_net = load_net_player(net, rules="standard")
    checker = cube_net if player is None else make_player(player, rules="standard")
    return Advisor(checker, cube_net)


def game_line(index: int, game: ChouetteGame) -> str:
    """One human-readable line for a finished game."""
    s = game.summary()
    team = ", ".join(
        f"{m}{' (captain)' if i == 0 else ''}"
        for i, m in enumerate(s["team"])  # type: ignore[arg-type]
    )
    pay = " ".join(f"{k} {v:+d}" for k, v in s["settlement"].items())  # type: ignore[attr-defined]
    return (
        f"game {index}: box {s['box']} vs {team}: {s['winner']} wins "
        f"({s['result']}, {s['reason']}); {len(s['doubles'])} cube actions; {pay}"  # type: ignore[arg-type]
    )


def play_session(
    session: Chouette,
    seats: Sequence[Seat],
    games: int,
    emit: Callable[[int, ChouetteGame], None],
    log: Callable[[str], None] | None = None,
) -> None:
    """Play ``games`` games of ``session`` with ``seats``, calling ``emit`` after each."""
    from nard_rl.engine.chouette import drive

    for index in range(1, games + 1):
        game = session.new_game()
        if log is not None:
            team = ", ".join(session.names[m] for m in game.team)
            log(f"\ngame {index}: box {session.names[game.box]}, team {team} (captain first)")
        drive(game, seats, log=log)
        emit(index, game)


def run(args: argparse.Namespace) -> int:
    from nard_rl.engine.chouette import Chouette

    try:
        humans, bots = _seat_counts(args)
        if args.threads < 1:
            raise ValueError(f"--threads must be >= 1, got {args.threads}")
        import torch

        torch.set_num_threads(args.threads)
        advisor = build_advisor(args.net, args.player)
        session = Chouette(humans + bots, seed=args.seed, stake=args.stake)
    except (ValueError, FileNotFoundError) as exc:
        print(f"nard chouette: error: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    seats: list[Seat] = [HumanSeat(sys.stdin, out, advisor, args.home) for _ in range(humans)]
    seats += [BotSeat(advisor) for _ in range(bots)]

    def emit(index: int, game: ChouetteGame) -> None:
        if args.json:
            out.write(json.dumps({"game": index, **game.summary()}) + "\n")
        else:
            out.write(game_line(index, game) + "\n")
        out.flush()

    log = None
    if humans and not args.json:

        def log(text: str) -> None:
            print(text, file=out, flush=True)
            for seat in seats[:humans]:
                seat.note(text)  # type: ignore[attr-defined]

    if log is not None:
        log(HUMAN_COMMANDS)
        box, team = session.roll_off()
        throws = "; ".join(
            ", ".join(f"{session.names[p]} {d}" for p, d in r.throws.items())
            for r in session.roll_offs
        )
        log(f"roll-off (R35): {throws}")
        log(
            f"box {session.names[box]}, captain {session.names[team[0]]}, team "
            + ", ".join(session.names[m] for m in team)
        )
    try:
        play_session(session, seats, args.games, emit, log)
    except EndOfInput as stop:
        print(f"\n{stop}: the session ends", file=out)
    if not args.json:
        totals = " ".join(f"{k} {v:+d}" for k, v in session.totals().items())
        print(f"totals: {totals}", file=out)
    return 0


__all__ = ["Advisor", "BotSeat", "HumanSeat", "build_advisor", "play_session"]
