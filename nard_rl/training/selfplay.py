"""Batched self-play with one-step TD updates on afterstates (TD-Gammon, batched).

All games in flight advance one ply together through the engine's one batch stepper
(``nard_rl.engine.batch.GameBatch``: rolls, legal afterstates, R16 as a null play so the
sides strictly alternate, results, hand-over and restart), with one encoding call and one
forward pass over every candidate afterstate, a segment argmax for the greedy play of
each game, and one gradient step in which every game's previous
afterstate learns towards the value of the afterstate that followed it (seen from the
other side, since the players alternate), or towards the final result when the game
ended.  Nothing here steps games one by one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from nard_rl.engine.batch import GameBatch, segment_argmax
from nard_rl.engine.rules import RuleSet, cubeless_equity, swap_sides
from nard_rl.nets.encoding import Encoding
from nard_rl.nets.network import EquityNet


@dataclass
class PlyStats:
    """What one batched ply did (for logging)."""

    loss: float
    updates: int
    finished: int
    candidates: int
    points: float


def outcome_probs(gammon: np.ndarray, bg: np.ndarray) -> np.ndarray:
    """The five probabilities of a finished game, from the winner's (the mover's) view."""
    out = np.zeros((gammon.shape[0], 5), dtype=np.float32)
    out[:, 0] = 1.0
    out[:, 1] = gammon
    out[:, 2] = bg
    return out


class SelfPlay:
    """N self-play games in flight, learning by TD as they go."""

    def __init__(
        self,
        n_games: int,
        encoding: Encoding,
        rules: RuleSet,
        rng: np.random.Generator,
        device: torch.device,
        explore: float = 0.0,
        loss: str = "mse",
        td_lambda: float = 0.0,
        grad_sync: Callable[[torch.nn.Module, int], int] | None = None,
    ) -> None:
        """``grad_sync(net, rows)`` averages gradients across data-parallel ranks (see
        ``nard_rl.training.distributed.DistContext.sync_gradients``); it is called on every ply,
        also when this rank has nothing to learn, and returns the rows of all ranks."""
        if not 0.0 <= td_lambda <= 1.0:
            raise ValueError(f"td_lambda must be in [0, 1], got {td_lambda}")
        self.n = n_games
        self.td_lambda = td_lambda
        self.grad_sync = grad_sync
        # TD(lambda > 0): each game's afterstates and their values, kept until it ends
        self._traj_x: list[list[torch.Tensor]] = [[] for _ in range(n_games)]
        self._traj_v: list[list[np.ndarray]] = [[] for _ in range(n_games)]
        self.enc = encoding
        self.rules = rules
        self.rng = rng
        self.device = device
        self.explore = explore
        self.loss_kind = loss
        # every game from the opening, seat 0 first (seats do not matter in self-play)
        self.games = GameBatch(n_games, rules, rng, autoreset=True, pass_as_play=True)
        self.games.reset(seat=0)
        self.prev_x = torch.zeros((n_games, encoding.size), dtype=torch.float32, device=device)
        self.has_prev = torch.zeros(n_games, dtype=torch.bool, device=device)
        self.games_finished = 0
        self._enc_buf = np.empty((0, encoding.size), dtype=np.float32)

    def _evaluate(self, net: EquityNet, boards: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        # one encoding buffer, grown as needed and reused every ply (rows that outlive the
        # ply are copied out by indexing before the next call)
        m = boards.shape[0]
        if self._enc_buf.shape[0] < m:
            self._enc_buf = np.empty(
                (max(m, 2 * self._enc_buf.shape[0]), self.enc.size), np.float32
            )
        enc = self.enc.encode(boards, out=self._enc_buf[:m])
        x = torch.from_numpy(enc).to(self.device, non_blocking=True)
        with torch.no_grad():
            p = net(x)
        return x, p

    @property
    def boards(self) -> np.ndarray:
        """Each game's position, from the view of its side to move."""
        return self.games.boards

    def step(self, net: EquityNet, optimizer: torch.optim.Optimizer) -> PlyStats:
        n = self.n
        games = self.games
        # R16: a game without a legal play has its unchanged board as the only candidate
        afters, offsets = games.afters, games.offsets
        x_all, p_all = self._evaluate(net, afters)
        eq = cubeless_equity(p_all, self.rules).float().cpu().numpy()
        local = segment_argmax(eq, offsets)
        if self.explore > 0:
            flip = self.rng.random(n) < self.explore
            if flip.any():
                counts = np.diff(offsets)
                local[flip] = (self.rng.random(int(flip.sum())) * counts[flip]).astype(np.int64)
        rows = offsets[:-1] + local
        n_candidates = int(afters.shape[0])
        rows_t = torch.from_numpy(rows).to(self.device)
        x_chosen = x_all[rows_t]
        p_chosen = p_all[rows_t]
        # the stepper plays the choices: results, hand-over, finished games restarted
        result = games.step(local)
        done, gammon, bg = result.finished, result.gammon, result.backgammon
        done_t = torch.from_numpy(done).to(self.device)
        final = torch.from_numpy(outcome_probs(gammon, bg)).to(self.device)
        value_now = torch.where(done_t[:, None], final, p_chosen)

        if self.td_lambda > 0:
            x_upd, t_upd = self._lambda_targets(x_chosen, value_now, done)
        else:
            # TD(0), online: the previous afterstate of each game (the opponent's) learns
            # towards the value now, seen from its side; a finished game's last afterstate
            # learns the result itself.
            xs = [self.prev_x[self.has_prev], x_chosen[done_t]]
            ts = [swap_sides(value_now[self.has_prev]), final[done_t]]
            x_upd = torch.cat(xs)
            t_upd = torch.cat(ts)
        loss_value = 0.0
        rows = int(x_upd.shape[0])
        if rows or self.grad_sync is not None:
            optimizer.zero_grad(set_to_none=True)
            if rows:
                pred = net(x_upd)
                if self.loss_kind == "bce":
                    loss = F.binary_cross_entropy(pred.clamp(1e-6, 1 - 1e-6), t_upd)
                else:
                    loss = F.mse_loss(pred, t_upd, reduction="sum") / rows
                loss.backward()
                loss_value = float(loss.detach())
            if self.grad_sync is None or self.grad_sync(net, rows):
                optimizer.step()

        # bookkeeping (the stepper already restarted finished games, R4/R5)
        points = float(result.points.sum(dtype=np.int64))
        self.prev_x = x_chosen
        self.has_prev = ~done_t
        finished = int(done.sum())
        self.games_finished += finished
        return PlyStats(loss_value, int(x_upd.shape[0]), finished, n_candidates, points)

    def _lambda_targets(
        self, x_chosen: torch.Tensor, value_now: torch.Tensor, done: np.ndarray
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """TD(lambda), forward view: every afterstate of a game that just ended learns its
        lambda-return.  Values were taken when the afterstates were chosen (offline
        lambda-return); the update batch is all finished games' afterstates at once."""
        values = value_now.detach().float().cpu().numpy()
        for g in range(self.n):
            self._traj_x[g].append(x_chosen[g])
            self._traj_v[g].append(values[g])
        xs: list[torch.Tensor] = []
        ts: list[np.ndarray] = []
        for g in np.flatnonzero(done):
            xs.append(torch.stack(self._traj_x[g]))
            ts.append(lambda_returns(np.stack(self._traj_v[g]), self.td_lambda))
            self._traj_x[g] = []
            self._traj_v[g] = []
        if not xs:
            empty = torch.zeros((0, x_chosen.shape[1]), device=self.device)
            return empty, torch.zeros((0, 5), device=self.device)
        return torch.cat(xs), torch.from_numpy(np.concatenate(ts)).to(self.device)


def lambda_returns(values: np.ndarray, lam: float) -> np.ndarray:
    """Lambda-returns of one finished game's afterstates ``(T, 5)``.

    ``values[t]`` is the value of afterstate t from its mover's view; the last row is the
    result.  Movers alternate, so each step looks at the next one from the other side:
    ``G[T-1] = values[T-1]`` and ``G[t] = swap((1 - lam) * values[t+1] + lam * G[t+1])``.
    ``lam = 0`` gives one-step TD targets, ``lam = 1`` the final result (Monte Carlo).
    """
    out = np.empty_like(values, dtype=np.float32)
    out[-1] = values[-1]
    for t in range(values.shape[0] - 2, -1, -1):
        out[t] = swap_sides((1.0 - lam) * values[t + 1] + lam * out[t + 1])
    return out
