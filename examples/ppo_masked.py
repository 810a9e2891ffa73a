"""Masked PPO on Nard, in one file, in the style of CleanRL: a policy-gradient baseline.

Run (about 10 minutes on a 2-core CPU, then a short evaluation)::

    python examples/ppo_masked.py --minutes 10 --opponent random
    tensorboard --logdir runs/ppo_masked

It trains on the project's vector environment (``nard_rl.envs.vector.NardVectorEnv``, N
games stepped together against ``--opponent``) and ends by playing duplicate-dice
matches against ``random`` and ``pubeval`` with the same ``nard_rl.arena.matches.play_match``
``nard train`` reports, printing the points per game.

**Why the actor scores afterstates.**  Nard's action space is ``Discrete(3060)``: index
``a`` is the a-th legal play of this roll in the engine's order, so an index means
nothing by itself (play 5 of one roll has nothing to do with play 5 of another).  A
policy that maps the observation to 3060 logits would have to learn the move generator.
Here the actor is a small net that gives each legal afterstate (``infos["afterstates"]``,
encoded from the mover's view) one logit; the policy is the softmax over a game's legal
plays, which is exactly a masked categorical over the 3060 actions with everything
beyond ``n`` masked out.  The critic values the observation (position and dice).  The
rest is standard PPO: GAE, clipped surrogate, value loss, entropy bonus, Adam.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.tensorboard import SummaryWriter

from nard_rl.arena.matches import play_match
from nard_rl.engine.batch import gather_slices, segment_argmax
from nard_rl.envs.vector import NardVectorEnv
from nard_rl.players.base import Player, make_player

TAG = "ppo_masked"
"""Namespace of every TensorBoard tag and of the run directory (``runs/ppo_masked``)."""


@dataclass
class Config:
    """Every knob of a run; each field is also a ``--flag`` (underscores as dashes)."""

    exp_name: str = field(default=TAG, metadata={"help": "prefix of the run's name"})
    seed: int = field(default=1, metadata={"help": "seed of torch, numpy and the dice"})
    minutes: float = field(default=10.0, metadata={"help": "wall-clock training budget"})
    total_steps: int = field(
        default=10**9, metadata={"help": "stop after this many agent decisions (whichever first)"}
    )
    opponent: str = field(
        default="random", metadata={"help": "who the agent trains against: random or pubeval"}
    )
    rules: str = field(default="standard", metadata={"help": "rule set: standard or mars"})
    num_envs: int = field(default=64, metadata={"help": "games stepped together"})
    num_steps: int = field(default=32, metadata={"help": "decisions per game per rollout"})
    hidden: int = field(default=128, metadata={"help": "width of the actor's and critic's layers"})
    learning_rate: float = field(default=3e-4, metadata={"help": "Adam step size"})
    anneal_lr: bool = field(default=True, metadata={"help": "decay the step size to 0 over time"})
    gamma: float = field(default=1.0, metadata={"help": "discount (episodic game: 1)"})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda"})
    num_minibatches: int = field(default=4, metadata={"help": "minibatches per epoch"})
    update_epochs: int = field(default=4, metadata={"help": "passes over each rollout"})
    clip_coef: float = field(default=0.2, metadata={"help": "PPO ratio clip"})
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus weight"})
    vf_coef: float = field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "gradient norm clip"})
    eval_games: int = field(default=2000, metadata={"help": "games per final match (0: none)"})
    eval_opponents: str = field(
        default="random,pubeval", metadata={"help": "comma list of final-match opponents"}
    )
    threads: int = field(default=2, metadata={"help": "torch CPU threads"})
    log_dir: str = field(default="runs", metadata={"help": "TensorBoard root directory"})


def parse_config(argv: list[str] | None = None) -> Config:
    """A ``Config`` from the command line: one flag per field, its help the field's."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for f in dataclasses.fields(Config):
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            parser.add_argument(
                flag,
                action=argparse.BooleanOptionalAction,
                default=f.default,
                help=f.metadata["help"],
            )
        else:
            kind = {"int": int, "float": float, "str": str}[str(f.type)]
            parser.add_argument(flag, type=kind, default=f.default, help=f.metadata["help"])
    cfg = Config(**vars(parser.parse_args(argv)))
    if cfg.num_envs * cfg.num_steps % cfg.num_minibatches:
        parser.error("num_envs * num_steps must be a multiple of num_minibatches")
    return cfg


def mlp(inputs: int, hidden: int, std: float) -> nn.Sequential:
    """Two tanh layers and a linear head, orthogonally initialised (CleanRL's recipe)."""
    layers = [nn.Linear(inputs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()]
    head = nn.Linear(hidden, 1)
    for layer in [*layers[::2], head]:
        nn.init.orthogonal_(layer.weight, np.sqrt(2) if layer is not head else std)
        nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers, head)


class Agent(nn.Module):
    """Actor: one logit per legal afterstate; critic: the value of the observation."""

    def __init__(self, afterstate_size: int, obs_size: int, hidden: int) -> None:
        super().__init__()
        self.actor = mlp(afterstate_size, hidden, std=0.01)
        self.critic = mlp(obs_size, hidden, std=1.0)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def logits(self, afterstates: torch.Tensor) -> torch.Tensor:
        return self.actor(afterstates).squeeze(-1)


def segment_log_softmax(
    logits: torch.Tensor, offsets: np.ndarray
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row log-probabilities within each game's candidates, and each game's entropy.

    ``offsets`` (N + 1) splits the flat rows into games, as the vector environment's
    ``infos["offsets"]`` does; this is the masked softmax without a padded 3060 matrix.
    """
    counts = torch.as_tensor(np.diff(offsets), dtype=torch.long)
    seg = torch.repeat_interleave(torch.arange(counts.numel()), counts)
    n = counts.numel()
    peak = torch.full((n,), -torch.inf).scatter_reduce(0, seg, logits, "amax", include_self=True)
    shifted = logits - peak[seg].detach()
    total = torch.zeros(n).scatter_add(0, seg, shifted.exp())
    logp = shifted - total.log()[seg]
    entropy = -torch.zeros(n).scatter_add(0, seg, logp.exp() * logp)
    return logp, entropy


class PPOPlayer(Player):
    """The trained actor as a project ``Player``: the highest-logit afterstate, so the
    final matches use the same ``play_match`` as every other player."""

    def __init__(self, agent: Agent, env: NardVectorEnv) -> None:
        self.agent = agent
        self.encoding = env.encoding
        self.name = TAG

    def choose_batch(
        self, boards: np.ndarray, dice: np.ndarray, afterstates: np.ndarray, offsets: np.ndarray
    ) -> np.ndarray:
        if afterstates.shape[0] == 0:
            return np.full(boards.shape[0], -1, dtype=np.int64)
        x = torch.as_tensor(self.encoding.encode(afterstates, on_roll=False))
        with torch.no_grad():
            logits = self.agent.logits(x).numpy()
        return segment_argmax(logits, offsets)


def train(cfg: Config) -> tuple[Agent, NardVectorEnv, str]:
    run_name = (
        f"{cfg.exp_name}__{cfg.seed}__{time.strftime('%Y%m%d-%H%M%S')}__{uuid.uuid4().hex[:6]}"
    )
    writer = SummaryWriter(str(Path(cfg.log_dir) / TAG / run_name))
    writer.add_text(
        f"{TAG}/config",
        "|key|value|\n|-|-|\n"
        + "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(cfg).items()),
    )
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    env = NardVectorEnv(cfg.num_envs, opponent=cfg.opponent, rules=cfg.rules)
    obs_size = env.single_observation_space.shape[0]
    agent = Agent(env.encoding.size, obs_size, cfg.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=cfg.learning_rate, eps=1e-5)
    rng = np.random.default_rng(cfg.seed)

    n, t_len = cfg.num_envs, cfg.num_steps
    batch = n * t_len
    obs_buf = np.zeros((t_len, n, obs_size), dtype=np.float32)
    act_buf = np.zeros((t_len, n), dtype=np.int64)
    logp_buf = np.zeros((t_len, n), dtype=np.float32)
    val_buf = np.zeros((t_len, n), dtype=np.float32)
    rew_buf = np.zeros((t_len, n), dtype=np.float32)
    done_buf = np.zeros((t_len, n), dtype=np.float32)

    obs, infos = env.reset(seed=cfg.seed)
    next_done = np.zeros(n, dtype=np.float32)
    start = time.monotonic()
    budget = cfg.minutes * 60.0
    steps = 0
    iteration = 0
    recent: deque[float] = deque(maxlen=1000)  # the last games' points
    while time.monotonic() - start < budget and steps < cfg.total_steps:
        iteration += 1
        if cfg.anneal_lr:
            frac = max(0.0, 1.0 - (time.monotonic() - start) / budget)
            optimizer.param_groups[0]["lr"] = frac * cfg.learning_rate
        cand: list[np.ndarray] = []  # per step: (M_t, F) candidate encodings
        offs: list[np.ndarray] = []
        for t in range(t_len):
            obs_buf[t] = obs
            done_buf[t] = next_done
            offsets = infos["offsets"].copy()
            afters = infos["afterstates"]
            with torch.no_grad():
                logits = agent.logits(torch.as_tensor(afters))
                logp, _ = segment_log_softmax(logits, offsets)
                val_buf[t] = agent.value(torch.as_tensor(obs)).numpy()
            gumbel = -np.log(-np.log(rng.random(logits.shape[0]) + 1e-12) + 1e-12)
            actions = segment_argmax(logits.numpy() + gumbel, offsets)
            act_buf[t] = actions
            logp_buf[t] = logp.numpy()[offsets[:-1] + actions]
            cand.append(afters.copy())
            offs.append(offsets)
            obs, rewards, terms, truncs, infos = env.step(actions)
            rew_buf[t] = rewards
            next_done = (terms | truncs).astype(np.float32)
            for k in np.flatnonzero(terms):
                recent.append(float(rewards[k]))
        steps += batch

        # GAE over the rollout (a finished game's next observation belongs to a new game,
        # so its bootstrap is cut by the done flag: same-step autoreset).
        with torch.no_grad():
            next_value = agent.value(torch.as_tensor(obs)).numpy()
        adv = np.zeros((t_len, n), dtype=np.float32)
        last = np.zeros(n, dtype=np.float32)
        for t in reversed(range(t_len)):
            nonterminal = 1.0 - (next_done if t == t_len - 1 else done_buf[t + 1])
            nxt = next_value if t == t_len - 1 else val_buf[t + 1]
            delta = rew_buf[t] + cfg.gamma * nxt * nonterminal - val_buf[t]
            last = delta + cfg.gamma * cfg.gae_lambda * nonterminal * last
            adv[t] = last
        ret = adv + val_buf

        # One flat candidate list for the whole rollout: sample b = t * n + i.
        base = np.cumsum([0] + [c.shape[0] for c in cand])
        all_cand = np.concatenate(cand)
        all_off = np.concatenate(
            [o[:-1] + base[t] for t, o in enumerate(offs)] + [np.array([base[-1]])]
        )
        b_obs = torch.as_tensor(obs_buf.reshape(batch, -1))
        b_act = act_buf.reshape(batch)
        b_logp = torch.as_tensor(logp_buf.reshape(batch))
        b_adv = torch.as_tensor(adv.reshape(batch))
        b_ret = torch.as_tensor(ret.reshape(batch))
        b_val = torch.as_tensor(val_buf.reshape(batch))
        mb_size = batch // cfg.num_minibatches
        clipfracs = []
        for _ in range(cfg.update_epochs):
            order = rng.permutation(batch)
            for lo in range(0, batch, mb_size):
                mb = order[lo : lo + mb_size]
                rows, mb_off = gather_slices(all_cand, all_off, mb)
                logits = agent.logits(torch.as_tensor(rows))
                logp_all, entropy = segment_log_softmax(logits, mb_off)
                new_logp = logp_all[torch.as_tensor(mb_off[:-1] + b_act[mb])]
                ratio = (new_logp - b_logp[mb]).exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - (new_logp - b_logp[mb])).mean()
                    clipfracs.append(float(((ratio - 1.0).abs() > cfg.clip_coef).float().mean()))
                a = b_adv[mb]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg_loss = torch.max(
                    -a * ratio, -a * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)
                ).mean()
                v = agent.value(b_obs[mb])
                v_clipped = b_val[mb] + (v - b_val[mb]).clamp(-cfg.clip_coef, cfg.clip_coef)
                v_loss = 0.5 * torch.max((v - b_ret[mb]) ** 2, (v_clipped - b_ret[mb]) ** 2).mean()
                ent = entropy.mean()
                loss = pg_loss - cfg.ent_coef * ent + cfg.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm)
                optimizer.step()

        elapsed = time.monotonic() - start
        writer.add_scalar(f"{TAG}/charts/learning_rate", optimizer.param_groups[0]["lr"], steps)
        writer.add_scalar(f"{TAG}/losses/value_loss", v_loss.item(), steps)
        writer.add_scalar(f"{TAG}/losses/policy_loss", pg_loss.item(), steps)
        writer.add_scalar(f"{TAG}/losses/entropy", ent.item(), steps)
        writer.add_scalar(f"{TAG}/losses/approx_kl", approx_kl.item(), steps)
        writer.add_scalar(f"{TAG}/losses/clipfrac", float(np.mean(clipfracs)), steps)
        writer.add_scalar(f"{TAG}/charts/steps_per_second", steps / elapsed, steps)
        if recent:
            ppg = float(np.mean(recent))
            writer.add_scalar(f"{TAG}/charts/training_ppg_vs_{cfg.opponent}", ppg, steps)
            if iteration % 10 == 0:
                print(
                    f"{elapsed / 60:5.1f} min  {steps:>9,} decisions  {len(recent):>5} games  "
                    f"training ppg vs {cfg.opponent} {ppg:+.3f}",
                    flush=True,
                )
    writer.close()
    elapsed = time.monotonic() - start
    print(f"trained {elapsed / 60:.1f} min: {steps:,} decisions ({steps / elapsed:,.0f}/s)")
    return agent, env, run_name


def main(argv: list[str] | None = None) -> dict[str, float]:
    cfg = parse_config(argv)
    agent, env, run_name = train(cfg)
    out = Path(cfg.log_dir) / TAG / run_name / "agent.pt"
    torch.save({"config": dataclasses.asdict(cfg), "state_dict": agent.state_dict()}, out)
    print(f"weights in {out}")
    results: dict[str, float] = {}
    player = PPOPlayer(agent, env)
    for name in filter(None, cfg.eval_opponents.split(",")) if cfg.eval_games else []:
        opponent = make_player(name.strip(), rules=cfg.rules, seed=cfg.seed)
        res = play_match(player, opponent, cfg.eval_games, seed=12345, rules=cfg.rules)
        results[name.strip()] = res.ppg
        print(f"result: {res.summary()}", flush=True)
    env.close()
    return results


if __name__ == "__main__":
    main()
