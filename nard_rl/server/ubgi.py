"""The Universal Backgammon Interface (UBGI): nard-rl as an engine behind a host's pipe.

UBGI is a UCI-like line protocol for backgammon engines (the public draft 0.01 by
Øystein Schønning-Johansen, ``oysteijo/Universal-Backgammon-Interface``).  The host
(a GUI, a tournament manager, a match server) starts ``nard ubgi`` and writes one
command per line to its stdin; every answer is one or more lines on stdout.  The full
command list, the notation and where this engine goes beyond the draft are in
``docs/integrations/ubgi.md``; in short:

* ``ubgi``: load the network, then ``id name|author|version``, the ``option`` lines and
  ``readyok`` (nothing is loaded before it, as the draft asks);
* a position, bare (the draft) or after ``position``: an XGID (``XGID=...``) or a FIBS
  ``board:...`` line; a bare one is answered with the best action: the play (``8/5 6/5``,
  every single-die step written out, no hit marks, ``25`` the bar, ``0`` off), ``double``
  or ``roll`` before the roll, ``take`` or ``drop`` when doubled, a blank line when the
  roll cannot be played;
* ``go`` (best action of the set position), ``eval`` (its analysis, ``info`` lines),
  ``rollout [trials N]`` (``info rollout`` reports every ``RolloutReport`` trials until
  done or ``stop``), ``status``, ``isready``, ``setoption name N value V``, ``stop``,
  ``quit``.

Every line gets an answer: what cannot be read or done is answered ``sorry <reason>``
(the draft's polite refusal, with the reason added), never silence or a crash.  The
decisions are the project's own: plays by ``Analyzer.rank`` (``nard_rl.search.nply`` above
0-ply), cube actions by the shared cube advisor (``Analyzer.should_double`` /
``should_take``), rollouts by ``nard_rl.search.rollout``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any, TextIO

import numpy as np

from nard_rl.cube.model import score_utility
from nard_rl.engine.ids import XGIDInfo, decode_xgid, encode_xgid
from nard_rl.engine.movegen import legal_afterstates
from nard_rl.engine.position import PositionError, apply_steps
from nard_rl.engine.rules import PROB_NAMES, cubeless_equity, get_rules
from nard_rl.server.analysis import Analyzer, doubler_state
from nard_rl.server.gnubg_external import parse_board_line
from nard_rl.server.state import DecisionState, state_from_request

SPEC_VERSION = "0.01"
"""The draft of the protocol this module follows."""
MAX_LINE = 4096
ROLLOUT_CHUNK = 36
"""Trials per rollout chunk: one stratified block of first rolls (``nard_rl.search.rollout``)."""

PROB_WORDS = ("win", "wingammon", "winbackgammon", "losegammon", "losebackgammon")
"""The five cumulative probabilities (``PROB_NAMES``) as words of an ``info`` line."""
assert len(PROB_WORDS) == len(PROB_NAMES)


class UbgiError(ValueError):
    """A command that cannot be carried out; the message becomes ``sorry <message>``."""


@dataclass(frozen=True)
class Option:
    """One engine option, announced after ``ubgi`` and set with ``setoption``."""

    name: str
    kind: str  # "spin" or "combo"
    default: Any
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()

    def line(self, value: Any) -> str:
        """The ``option`` line announcing it, ``value`` (the current one) as its default."""
        head = f"option name {self.name} type {self.kind} default {value}"
        if self.kind == "spin":
            return f"{head} min {self.low} max {self.high}"
        return head + "".join(f" var {c}" for c in self.choices)

    def parse(self, text: str) -> Any:
        if self.kind == "combo":
            value = text.strip().lower()
            if value not in self.choices:
                raise UbgiError(
                    f"{self.name} must be one of {', '.join(self.choices)}, got {text!r}"
                )
            return value
        try:
            number = int(text)
        except ValueError:
            raise UbgiError(f"{self.name} must be a whole number, got {text!r}") from None
        if not self.low <= number <= self.high:
            raise UbgiError(f"{self.name} must be in {self.low}..{self.high}, got {number}")
        return number


OPTIONS = (
    Option("Ply", "spin", 0, 0, 3),
    Option("CubePly", "spin", 1, 0, 2),
    Option("Rules", "combo", "standard", choices=("standard", "mars")),
    Option("AnalysisPlays", "spin", 5, 1, 50),
    Option("RolloutTrials", "spin", 1296, ROLLOUT_CHUNK, 1_000_000),
    Option("RolloutReport", "spin", 144, ROLLOUT_CHUNK, 1_000_000),
    Option("RolloutPlays", "spin", 3, 1, 20),
    Option("Seed", "spin", 0, 0, 2**31 - 1),
)
"""Every option, UCI-style (``spin`` integers, ``combo`` words), with its default."""
_OPTIONS = {o.name.lower(): o for o in OPTIONS}


@dataclass(frozen=True)
class Decision:
    """A position as the host sent it: the state of the side the engine acts for."""

    state: DecisionState
    """The engine side's view: on roll, or (``doubled``) the receiver with the doubler on
    roll, as ``Analyzer.should_take`` takes it."""
    doubled: bool
    may_double: bool
    text: str


def _version() -> str:
    try:
        return metadata.version("nard-rl")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare tree
        return "0"


def parse_position(text: str, rules: str) -> Decision:
    """Read an XGID or a FIBS ``board:`` line (``UbgiError`` says what is wrong)."""
    text = text.strip()
    ruleset = get_rules(rules)
    try:
        if text.startswith("board:"):
            line = parse_board_line(text)
            state = dataclasses.replace(line.state(), rules=ruleset.with_options(jacoby=False))
            may = line.may_double and ruleset.cube and not _crawford(state)
            return Decision(state, line.doubled, may and not line.doubled, text)
        info = decode_xgid(text)
        if info.cube_action in ("B", "R"):
            raise UbgiError("beavers and raccoons are not played here (R24)")
        state = state_from_request({"xgid": text, "rules": ruleset.name})
        doubled = info.cube_action == "D"
        if doubled and not ruleset.cube:
            raise UbgiError(f"the {ruleset.name} rule set has no doubling cube (R28)")
        may = (
            ruleset.cube
            and not doubled
            and state.dice is None
            and state.cube.owner != "opponent"
            and state.cube.value * 2 <= info.max_cube
            and not _crawford(state)
        )
        if doubled:
            state = doubler_state(state)
        return Decision(state, doubled, bool(may), text)
    except UbgiError:
        raise
    except (ValueError, KeyError) as exc:  # PositionError, ProtocolError, MatchScore's
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UbgiError(f"bad position: {message}") from None


def _crawford(state: DecisionState) -> bool:
    return state.match is not None and state.match.crawford


def play_steps(board: tuple[int, ...], dice: tuple[int, int], after: list[int], waste: bool) -> str:
    """The UBGI move string of the play from ``board`` to ``after``: every single-die step
    as ``from/to`` (25 the bar, 0 off), highest source first, no hit marks; checked by
    replaying the steps on the board."""
    afters, steps = legal_afterstates(np.asarray(board, dtype=np.int8), dice[0], dice[1], waste)
    rows = np.flatnonzero((afters == np.asarray(after, dtype=np.int8)).all(axis=1))
    if rows.size == 0:
        raise UbgiError("internal error: the chosen play is not a legal afterstate")
    raw = [(int(s), int(d)) for s, d in steps[rows[0]] if s >= 0]
    ordered, result = apply_steps(board, raw)
    if list(result) != list(after):
        raise UbgiError("internal error: the steps do not lead to the chosen play")
    return " ".join(f"{s}/{max(d, 0)}" for s, d, _ in ordered)


def _probs_words(probs: np.ndarray | list[float]) -> str:
    return " ".join(f"{w} {float(p):.4f}" for w, p in zip(PROB_WORDS, probs, strict=True))


class UbgiEngine:
    """One engine session: reads command lines, writes answers to ``out``.

    ``analyzer_factory`` builds the ``Analyzer`` when ``ubgi`` arrives (the draft: no
    initialisation before it); tests pass a factory around a shared one.
    """

    def __init__(
        self,
        out: TextIO,
        analyzer_factory: Callable[[], Analyzer] | None = None,
        *,
        net: str = "default",
        options: dict[str, Any] | None = None,
    ) -> None:
        self.out = out
        self._factory = analyzer_factory or (lambda: Analyzer(net))
        self.analyzer: Analyzer | None = None
        self.options: dict[str, Any] = {o.name: o.default for o in OPTIONS}
        for name, value in (options or {}).items():
            option = _OPTIONS[name.lower()]
            self.options[option.name] = option.parse(str(value))
        self.position: Decision | None = None
        self._write_lock = threading.Lock()
        self._rollout: threading.Thread | None = None
        self._stop = threading.Event()
        self._progress = (0, 0)  # trials done, trials asked, of the running rollout
        self._quiet = False

    # -- I/O ------------------------------------------------------------------------------
    def send(self, line: str) -> None:
        if self._quiet:
            return
        with self._write_lock:
            self.out.write(line + "\n")
            self.out.flush()

    def serve(self, inp: TextIO) -> None:
        """Answer lines from ``inp`` until ``quit`` or the end of input."""
        while True:
            line = inp.readline()
            if not line:
                self._shutdown()
                return
            if not self.handle(line):
                return

    def handle(self, line: str) -> bool:
        """Answer one input line; False after ``quit``."""
        text = line.strip()
        try:
            if len(text) > MAX_LINE:
                raise UbgiError(f"line longer than {MAX_LINE} characters")
            return self._dispatch(text)
        except UbgiError as exc:
            self.send(f"sorry {exc}")
        except Exception as exc:  # a bug must not cost the host its engine
            self.send(f"sorry internal error ({type(exc).__name__}: {exc})")
        return True

    # -- commands -------------------------------------------------------------------------
    def _dispatch(self, text: str) -> bool:
        if not text:
            raise UbgiError("empty line")
        word, _, rest = text.partition(" ")
        cmd = word.lower()
        if cmd == "quit":
            self._shutdown()
            return False
        if cmd == "ubgi":
            self._init()
            return True
        if cmd == "isready":
            self.send("readyok")
            return True
        if self.analyzer is None:
            raise UbgiError("send 'ubgi' first")
        if cmd == "stop":
            self._stop_rollout()
            return True
        if cmd == "status":
            self.send(self._status())
            return True
        if self._busy():
            raise UbgiError("busy: a rollout is running (send 'stop')")
        if cmd == "setoption":
            self._setoption(rest)
        elif cmd == "position":
            self.position = parse_position(rest, self.options["Rules"])
            self.send("readyok")
        elif text.startswith(("XGID=", "board:")):
            self.position = parse_position(text, self.options["Rules"])
            self.send(self.best_action(self.position))
        elif cmd == "go":
            self.send(self.best_action(self._current()))
        elif cmd in ("eval", "analyse", "analyze"):
            for out_line in self.analyse(self._current()):
                self.send(out_line)
            self.send("readyok")
        elif cmd == "rollout":
            self._start_rollout(self._current(), rest)
        else:
            raise UbgiError(f"unknown command {word!r}")
        return True

    def _init(self) -> None:
        if self.analyzer is None:
            try:
                analyzer = self._factory()
                analyzer.evaluator(self.options["Rules"])
            except (ValueError, OSError) as exc:
                raise UbgiError(f"cannot load the network: {exc}") from None
            self.analyzer = analyzer
        self.send("id name nard-rl")
        self.send("id author nard-rl developers")
        self.send(f"id version {_version()} (UBGI draft {SPEC_VERSION})")
        for option in OPTIONS:
            self.send(option.line(self.options[option.name]))
        self.send("readyok")

    def _setoption(self, rest: str) -> None:
        words = rest.split()
        if (
            len(words) < 4
            or words[0].lower() != "name"
            or "value" not in [w.lower() for w in words]
        ):
            raise UbgiError("usage: setoption name <Name> value <value>")
        at = [w.lower() for w in words].index("value")
        name = " ".join(words[1:at])
        value = " ".join(words[at + 1 :])
        option = _OPTIONS.get(name.lower())
        if option is None:
            raise UbgiError(
                f"unknown option {name!r}; options: {', '.join(o.name for o in OPTIONS)}"
            )
        parsed = option.parse(value)
        if option.name == "Rules":
            assert self.analyzer is not None
            self.analyzer.evaluator(parsed)  # load it now, so a bad net fails here
            if self.position is not None:  # the same position under the new rules
                self.position = parse_position(self.position.text, parsed)
        self.options[option.name] = parsed
        self.send("readyok")

    def _current(self) -> Decision:
        if self.position is None:
            raise UbgiError("no position: send 'position <XGID or board line>' first")
        return self.position

    def _status(self) -> str:
        if self._busy():
            done, asked = self._progress
            return f"status rollout trials {done} of {asked}"
        pos = "none" if self.position is None else self.position.text
        return f"status idle ply {self.options['Ply']} rules {self.options['Rules']} position {pos}"

    # -- decisions ------------------------------------------------------------------------
    def best_action(self, d: Decision) -> str:
        """``take``/``drop``, ``double``/``roll``, the play, or ``""`` (no legal play)."""
        assert self.analyzer is not None
        a = self.analyzer
        cube_ply = self.options["CubePly"]
        if d.doubled:
            return "take" if a.should_take(d.state, cube_ply) else "drop"
        if d.state.dice is None:
            return "double" if d.may_double and a.should_double(d.state, cube_ply) else "roll"
        ranked = a.rank(d.state, self.options["Ply"], top=1)["plays"]
        if not ranked:
            return ""
        board = d.state.position.board
        return play_steps(board, d.state.dice, ranked[0]["board"], d.state.rules.waste_rule)

    def analyse(self, d: Decision) -> list[str]:
        """The ``info`` lines of ``eval``: the ranked plays with dice, else the side on
        roll's probabilities and (with a usable cube) its cube analysis."""
        assert self.analyzer is not None
        a = self.analyzer
        state = doubler_state(d.state) if d.doubled else d.state
        measure = "mwc" if state.match is not None else "equity"
        if state.dice is not None:
            ranked = a.rank(state, self.options["Ply"], top=self.options["AnalysisPlays"])
            board = state.position.board
            lines = []
            for k, row in enumerate(ranked["plays"], start=1):
                move = play_steps(board, state.dice, row["board"], state.rules.waste_rule)
                probs = [row["probs"][n] for n in PROB_NAMES]
                lines.append(
                    f"info play {k} ply {row['ply']} {measure} {row['equity']:.4f} "
                    f"{_probs_words(probs)} move {move}"
                )
            return lines or ["info play none"]
        ply = self.options["Ply"]
        probs = a.pre_roll_probs(state.position.array(), state.rules, ply)[0]
        if state.match is None:
            value = float(cubeless_equity(probs[None, :], state.rules)[0])
        else:
            utility = score_utility(state.rules, state.cube, state.match)
            value = float(np.asarray(utility(probs[None, :]))[0])
        lines = [f"info eval ply {ply} {measure} {value:.4f} {_probs_words(probs)}"]
        if state.rules.cube and (d.may_double or d.doubled):
            c = a.cube_analysis(state, self.options["CubePly"])
            lines.append(
                f"info cube ply {c['ply']} nodouble {c['no_double']:.4f} "
                f"doubletake {c['double_take']:.4f} doublepass {c['double_pass']:.4f} "
                f"action {c['decision'].replace('_', '')} "
                f"response {'take' if c['take'] else 'drop'}"
            )
        return lines

    # -- rollouts -------------------------------------------------------------------------
    def _busy(self) -> bool:
        return self._rollout is not None and self._rollout.is_alive()

    def _start_rollout(self, d: Decision, rest: str) -> None:
        words = rest.split()
        trials = self.options["RolloutTrials"]
        if words:
            if len(words) != 2 or words[0].lower() != "trials":
                raise UbgiError("usage: rollout [trials N]")
            trials = _OPTIONS["rollouttrials"].parse(words[1])
        state = doubler_state(d.state) if d.doubled else d.state
        self._stop.clear()
        self._progress = (0, trials)
        self._rollout = threading.Thread(
            target=self._run_rollout, args=(state, trials), name="ubgi-rollout", daemon=True
        )
        self._rollout.start()

    def _run_rollout(self, state: DecisionState, trials: int) -> None:
        from nard_rl.search.rollout import board_groups, pre_roll_rollout, rollout

        assert self.analyzer is not None
        a = self.analyzer
        evaluator = a.evaluator(state.rules)
        seed = self.options["Seed"]
        report = self.options["RolloutReport"]
        board = state.position.array()
        if state.dice is not None:
            ranked = a.rank(state, 0, top=self.options["RolloutPlays"])["plays"]
            afters = np.array([r["board"] for r in ranked], dtype=np.int8).reshape(-1, 26)
            labels = [
                play_steps(state.position.board, state.dice, r["board"], state.rules.waste_rule)
                for r in ranked
            ]
        else:
            afters = np.zeros((0, 26), dtype=np.int8)
            labels = [""]
        if state.dice is not None and afters.shape[0] == 0:
            self.send("info rollout none (the roll cannot be played)")
            self.send("readyok")
            return
        groups = np.repeat(board_groups(board[None, :]), max(afters.shape[0], 1))
        chunks: list[np.ndarray] = []
        done = 0
        try:
            while done < trials and not self._stop.is_set():
                k = len(chunks)
                with a.lock:
                    if state.dice is None:
                        p = pre_roll_rollout(
                            evaluator, board[None, :], trials=ROLLOUT_CHUNK, seed=seed + k
                        )
                    else:
                        p = rollout(
                            evaluator,
                            afters,
                            trials=ROLLOUT_CHUNK,
                            seed=seed + k,
                            groups=groups,
                            stop_at_race=True,
                            stratify=True,
                        )
                chunks.append(np.asarray(p, dtype=np.float64))
                done += ROLLOUT_CHUNK
                self._progress = (done, trials)
                if done % report < ROLLOUT_CHUNK and done < trials and not self._stop.is_set():
                    self._report("info rollout", chunks, labels, state)
            self._report("info rollout done", chunks, labels, state)
        except Exception as exc:  # reported to the host; the engine lives on
            self.send(f"sorry rollout failed ({type(exc).__name__}: {exc})")
        self.send("readyok")

    def _report(
        self, head: str, chunks: list[np.ndarray], labels: list[str], state: DecisionState
    ) -> None:
        if not chunks:
            self.send(f"{head} trials 0")
            return
        stack = np.stack(chunks)  # (chunks, candidates, 5)
        mean = stack.mean(axis=0)
        eq = np.stack([cubeless_equity(c, state.rules) for c in chunks])  # (chunks, cand)
        se = (
            eq.std(axis=0, ddof=1) / np.sqrt(len(chunks))
            if len(chunks) > 1
            else np.full(eq.shape[1], np.nan)
        )
        trials = len(chunks) * ROLLOUT_CHUNK
        for i, label in enumerate(labels):
            move = f" move {label}" if label else ""
            self.send(
                f"{head} trials {trials} equity {eq[:, i].mean():.4f} se {se[i]:.4f} "
                f"{_probs_words(mean[i])}{move}"
            )

    def _stop_rollout(self) -> None:
        if not self._busy():
            self.send("readyok")
            return
        self._stop.set()
        assert self._rollout is not None
        self._rollout.join()  # its last report and readyok are the answer to stop

    def _shutdown(self) -> None:
        if self._busy():
            self._quiet = True
            self._stop.set()
            assert self._rollout is not None
            self._rollout.join()


def xgid_of(state: DecisionState, *, doubled: bool = False) -> str:
    """The XGID of a decision state (the side on roll at the bottom), for hosts and tests."""
    m = state.match
    info = XGIDInfo(
        board=state.position.board,
        cube_value=state.cube.value,
        cube_owner=state.cube.owner,
        turn=1,
        dice=state.dice or (0, 0),
        cube_action="D" if doubled else "",
        score=(m.score_me, m.score_opp) if m else (0, 0),
        match_length=m.length if m else 0,
        crawford=m.crawford if m else False,
        jacoby=state.rules.jacoby and m is None,
    )
    return encode_xgid(info)


def serve(
    inp: TextIO, out: TextIO, *, net: str = "default", options: dict[str, Any] | None = None
) -> None:
    """Run one UBGI session on a pair of text streams (``nard ubgi``: stdin and stdout)."""
    UbgiEngine(out, net=net, options=options).serve(inp)


__all__ = [
    "OPTIONS",
    "SPEC_VERSION",
    "Decision",
    "PositionError",
    "UbgiEngine",
    "UbgiError",
    "parse_position",
    "play_steps",
    "serve",
    "xgid_of",
]
