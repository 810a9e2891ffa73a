"""GNU Backgammon as an opponent: one long-lived gnubg process per player.

gnubg is driven through its own Python scripting (``gnubg -t -q -r -p
gnubg_script.py``); requests and answers are JSON lines over two dedicated pipes, since
gnubg writes freely to its stdout.  A whole batch of positions goes out as one request.

gnubg picks a play at the chosen ply (cubeless money evaluation, no noise); the play is
mapped back to one of OUR afterstates by applying its steps to the board, so the game
always continues with the engine's own legal plays.  Under the pip-waste rule (R29),
which gnubg does not know, its choice may be illegal for us; then every legal
afterstate is evaluated by gnubg at the same ply and the best is played.  Anywhere else a
choice that is not among our plays raises, because it means the two engines disagree
about the rules.

Speed: gnubg's main thread waits for its evaluation workers by sleeping 10 ms between
polls, so every scripted evaluation would cost >= 10 ms.  ``gusleep_shim.c`` (shipped
with this package) shortens that poll; it is compiled once into the user cache directory
and preloaded (``LD_PRELOAD``).  Without a C compiler gnubg runs unshimmed, just slower.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from nard_rl.engine.position import PositionError, flip_boards
from nard_rl.engine.position import apply_steps as engine_apply_steps
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.players.base import Player

DEFAULT_GNUBG = "/usr/games/gnubg"
START_TIMEOUT_S = 60.0


class GnubgError(RuntimeError):
    """gnubg could not be started, died, or answered something unusable."""


def find_gnubg(executable: str | None = None) -> str | None:
    """Path of the gnubg executable (``executable``, the default place, then PATH)."""
    for candidate in (executable, DEFAULT_GNUBG, shutil.which("gnubg")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def gnubg_available() -> bool:
    return find_gnubg() is not None


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nard-rl"


def build_shim() -> Path | None:
    """Compile the g_usleep shim into the cache once; None when that is impossible.

    The library name carries a hash of the source, so an updated shim is rebuilt and a
    half-written file is never loaded (it is compiled elsewhere, then renamed).
    """
    source = resources.files("nard_rl.players").joinpath("gusleep_shim.c").read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    target = cache_dir() / f"gusleep_shim-{digest}.so"
    if target.is_file():
        return target
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        return None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            src = Path(tmp) / "gusleep_shim.c"
            src.write_bytes(source)
            out = Path(tmp) / target.name
            result = subprocess.run(
                [compiler, "-O2", "-shared", "-fPIC", "-o", str(out), str(src)],
                capture_output=True,
                timeout=60,
                check=False,
            )
            if result.returncode != 0 or not out.is_file():
                return None
            os.replace(out, target)
    except (OSError, subprocess.SubprocessError):
        return None
    return target


def apply_steps(board: np.ndarray, steps: list[int]) -> np.ndarray:
    """The board after gnubg's per-die steps ``(from, to)...`` (25 bar, 0 off, 0/0 unused),
    played by the engine's ``apply_steps`` (hits included, R10)."""
    pairs = [
        (int(steps[k]), int(steps[k + 1]))
        for k in range(0, len(steps) - 1, 2)
        if int(steps[k]) != 0
    ]
    try:
        after = engine_apply_steps(board, pairs)[1]
    except PositionError as exc:
        raise GnubgError(f"gnubg's play cannot be played here: {exc}") from None
    return np.array(after, dtype=np.int8)


def _all_off(afters: np.ndarray) -> np.ndarray:
    on = np.where(afters[:, 1:25] > 0, afters[:, 1:25], 0).sum(axis=1) + afters[:, 25]
    return on == 0


class GnubgPlayer(Player):
    """Plays GNU Backgammon's choice at ``ply`` (0, 1, 2, ...: gnubg's own numbering).

    gnubg evaluates deterministically (no noise), so ``seed`` is accepted only for the
    common ``make_player`` signature.  ``threads`` is gnubg's evaluation thread count.
    Raises ``GnubgError`` when gnubg is missing or does not start.
    """

    def __init__(
        self,
        ply: int = 0,
        *,
        rules: RuleSet | str = "standard",
        seed: int | None = None,
        executable: str | None = None,
        threads: int = 1,
        shim: bool = True,
    ) -> None:
        if ply < 0:
            raise ValueError(f"gnubg ply must be >= 0, got {ply}")
        path = find_gnubg(executable)
        if path is None:
            raise GnubgError("GNU Backgammon is not installed (no gnubg executable found)")
        self.ply = int(ply)
        self.rules = get_rules(rules)
        self.name = f"gnubg:{self.ply}"
        self.shim_path = build_shim() if shim else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._start(path, threads)

    # process ---------------------------------------------------------------------------
    def _start(self, path: str, threads: int) -> None:
        script = resources.files("nard_rl.players").joinpath("gnubg_script.py")
        req_r, req_w = os.pipe()
        ans_r, ans_w = os.pipe()
        env = dict(os.environ)
        env["NARD_GNUBG_FDS"] = f"{req_r},{ans_w}"
        env["NARD_GNUBG_THREADS"] = str(int(threads))
        if self.shim_path is not None:
            env["LD_PRELOAD"] = " ".join(
                p for p in (str(self.shim_path), env.get("LD_PRELOAD", "")) if p
            )
        # Kept open for the process's lifetime (closed in close()), so not a with-block.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        with resources.as_file(script) as script_path:
            try:
                proc = subprocess.Popen(
                    [path, "-t", "-q", "-r", "-p", str(script_path)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=self._stderr,
                    env=env,
                    pass_fds=(req_r, ans_w),
                    close_fds=True,
                )
            except OSError as exc:
                for fd in (req_w, ans_r):
                    os.close(fd)
                self._stderr.close()
                raise GnubgError(f"cannot start {path}: {exc}") from exc
            finally:
                os.close(req_r)
                os.close(ans_w)
            self._proc = proc
            self._requests = os.fdopen(req_w, "w")
            self._answers = os.fdopen(ans_r, "r")
            hello = self._read()  # the script file must outlive gnubg's start-up
        if not hello.get("ready"):
            raise GnubgError(f"gnubg did not start: {hello}")

    def _read(self) -> dict[str, Any]:
        line = self._answers.readline()
        if not line:
            self._stderr.seek(0)
            err = self._stderr.read().decode(errors="replace").strip()[-2000:]
            self.close()
            raise GnubgError(f"gnubg exited unexpectedly; its stderr: {err or '(empty)'}")
        answer = json.loads(line)
        if "error" in answer:
            raise GnubgError(f"gnubg script error: {answer['error']}")
        return answer

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._proc is None:
            raise GnubgError("this gnubg player is closed")
        self._requests.write(json.dumps(request, separators=(",", ":")) + "\n")
        self._requests.flush()
        return self._read()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError, ValueError):
            self._requests.write('{"op":"quit"}\n')
            self._requests.flush()
        for stream in (self._requests, self._answers):
            with contextlib.suppress(OSError):
                stream.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        self._stderr.close()

    def __del__(self) -> None:
        if getattr(self, "_proc", None) is not None:
            self.close()

    # choosing --------------------------------------------------------------------------
    def best_steps(
        self, boards: np.ndarray, dice: np.ndarray, cubes: list[list[int]] | None = None
    ) -> list[list[int]]:
        """gnubg's chosen play for each position, as its raw per-die steps; ``cubes``
        (rows as in ``cube_equities``) plays each for that cube and match score."""
        if len(boards) == 0:
            return []
        request: dict[str, Any] = {
            "op": "best",
            "plies": self.ply,
            "boards": np.asarray(boards).tolist(),
            "dice": np.asarray(dice).tolist(),
        }
        if cubes is not None:
            request["cubes"] = [[int(v) for v in c] for c in cubes]
        return self._ask(request)["moves"]

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """gnubg's cubeless equity for the side on roll of each board, at this ply."""
        if len(boards) == 0:
            return np.zeros(0, dtype=np.float64)
        answer = self._ask(
            {"op": "evaluate", "plies": self.ply, "boards": np.asarray(boards).tolist()}
        )
        return np.asarray(answer["equities"], dtype=np.float64)

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """gnubg's cubeless outcome probabilities ``(N, 5)`` for the side on roll of each
        board (win, win gammon, win backgammon, lose gammon, lose backgammon), this ply."""
        if len(boards) == 0:
            return np.zeros((0, 5), dtype=np.float64)
        answer = self._ask(
            {"op": "probabilities", "plies": self.ply, "boards": np.asarray(boards).tolist()}
        )
        return np.asarray(answer["probs"], dtype=np.float64).reshape(-1, 5)

    def cube_equities(self, boards: np.ndarray, cubes: list[list[int]]) -> np.ndarray:
        """gnubg's cubeful cube analysis at this ply for the side on roll of each board:
        ``(N, 4)`` = optimal, no double, double/take, double/pass, normalised to the cube.
        ``cubes`` rows: value, owner (1 side on roll, 0 opponent, -1 centered), match
        length (0 money), score of the side on roll, of the opponent, Crawford (0/1)."""
        if len(boards) == 0:
            return np.zeros((0, 4), dtype=np.float64)
        answer = self._ask(
            {
                "op": "cube",
                "plies": self.ply,
                "boards": np.asarray(boards).tolist(),
                "cubes": [[int(v) for v in c] for c in cubes],
            }
        )
        return np.asarray(answer["cube"], dtype=np.float64).reshape(-1, 4)

    def choose_batch(
        self,
        boards: np.ndarray,
        dice: np.ndarray,
        afterstates: np.ndarray,
        offsets: np.ndarray,
        cubes: list[list[int]] | None = None,
    ) -> np.ndarray:
        """gnubg's choices mapped to our afterstates; ``cubes`` as in ``best_steps``."""
        boards = np.asarray(boards, dtype=np.int8).reshape(-1, 26)
        dice = np.asarray(dice, dtype=np.int8).reshape(-1, 2)
        afters = np.asarray(afterstates, dtype=np.int8).reshape(-1, 26)
        offsets = np.asarray(offsets, dtype=np.int64)
        n = boards.shape[0]
        picks = np.full(n, -1, dtype=np.int64)
        ask: list[int] = []
        for i in range(n):
            count = offsets[i + 1] - offsets[i]
            if count == 1:
                picks[i] = 0
            elif count > 1:
                finishing = np.flatnonzero(_all_off(afters[offsets[i] : offsets[i + 1]]))
                if finishing.size:  # bearing off the last checker wins (R21)
                    picks[i] = finishing[0]
                else:
                    ask.append(i)
        steps = self.best_steps(
            boards[ask], dice[ask], None if cubes is None else [cubes[i] for i in ask]
        )
        for i, mv in zip(ask, steps, strict=True):
            chosen = apply_steps(boards[i], mv)
            plays = afters[offsets[i] : offsets[i + 1]]
            match = np.flatnonzero((plays == chosen).all(axis=1))
            if match.size:
                picks[i] = match[0]
            elif self.rules.waste_rule:
                # R29 ruled out gnubg's play: rank our legal plays with gnubg instead.
                theirs = self.evaluate(flip_boards(plays))
                picks[i] = int(np.argmin(theirs))
            else:
                raise GnubgError(
                    f"gnubg's play {mv} for board {boards[i].tolist()} and roll "
                    f"{dice[i].tolist()} is not among the engine's legal plays"
                )
        return picks
