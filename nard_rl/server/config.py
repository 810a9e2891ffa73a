"""Settings of ``nard serve``: defaults, a config file, command-line flags (last wins).

The config file is JSON (``.json``) or TOML (``.toml``, Python 3.11+) with the field
names below at the top level, e.g. ``{"port": 8080, "ply": 1, "max_wait_ms": 2}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    """Interface to listen on (0.0.0.0 exposes the server to the network)."""
    port: int = 8000
    workers: int = 1
    """uvicorn worker processes; each loads its own net and batches on its own."""
    net: str = "default"
    """Evaluator spec: ``default`` (the shipped nets) or a checkpoint path."""
    rules: str = "standard"
    """Rule set of requests that do not name one."""
    ply: int = 0
    """Lookahead of hints and bot plays when a request does not ask for one."""
    max_ply: int = 2
    """Deepest lookahead a request may ask for (hints, actions, cube analyses: 400
    beyond). One 3-ply hint costs seconds of CPU, 2-ply a few tenths."""
    max_queued_searches: int = 8
    """Searches and cube analyses (everything above 0-ply) running or waiting on the
    search thread; a request beyond gets 503 at once instead of waiting behind them."""
    cube_ply: int = 1
    """Lookahead behind cube decisions (pre-roll probabilities one roll ahead)."""
    cube_rollout: int = 0
    """Games rolled out per close cube decision and blended into its probabilities
    (``nard_rl.cube.cubeful.CubeAdvisor``; 0: off). Costs a few tenths of a second per close
    decision on a CPU core."""
    external_ply: int = 1
    """Lookahead of the plays answered on gnubg's external-player port. There nard-rl is
    an opponent, where strength counts and latency hardly does: a 1-ply play costs about
    15 ms and wins 47% of 5-point matches against gnubg 0-ply, where 0-ply wins 40%."""
    max_batch: int = 8192
    """Most afterstates evaluated in one forward pass by the micro-batcher."""
    max_wait_ms: float = 1.0
    """Longest a request waits for others to join its batch."""
    inline_rows: int = 256
    """Batches up to this many afterstates are evaluated on the event loop itself when
    the evaluator is free (no thread hand-over); larger ones on the evaluation thread."""
    max_body_bytes: int = 262_144
    """Largest request body (413 beyond); ``/v1/evaluate`` also takes at most 512
    positions (``nard_rl.server.models.MAX_EVALUATE_POSITIONS``)."""
    max_queued_actions: int = 64
    """Game-session actions running or waiting on the session thread (503 beyond): a
    bot playing at 2-ply spends tenths of a second a move."""
    max_sessions: int = 1000
    """Game sessions kept in memory. A new game beyond it gets 503: games idle for
    ``session_idle_s`` are the only ones ever dropped, so no client can evict another's."""
    max_sessions_per_client: int = 20
    """Live sessions one client address may hold (429 beyond)."""
    session_idle_s: float = 3600.0
    """A session nobody has touched for this long expires."""
    session_games_kept: int = 10
    """Finished games a money session keeps in full (older ones leave only their points
    in the score), so an endless session stays small."""
    timeout_keep_alive: float = 5.0
    """Seconds an idle keep-alive connection stays open between requests."""
    header_timeout_s: float = 10.0
    """Seconds a connection may take to send a request's head (and a new connection
    its first request): slow or silent connections are closed."""
    body_timeout_s: float = 10.0
    """Seconds a request may take between two parts of its body (408 beyond)."""
    max_header_bytes: int = 16_384
    """Largest request head (request line and headers); the connection is refused beyond."""
    limit_concurrency: int = 1000
    """Open connections and requests in progress; beyond it new requests get 503."""
    torch_threads: int = 1
    """CPU threads of the forward pass (one keeps latency low next to the event loop)."""
    gnubg_external: int | None = None
    """TCP port for gnubg's external-player protocol (None: off)."""
    gnubg_host: str = "127.0.0.1"
    gnubg_log: str | None = None
    """File that receives every gnubg board line and its answer (JSON lines)."""
    gnubg_idle_s: float = 3600.0
    """A gnubg connection silent for this long is closed (gnubg waits on its own
    player, or a human, between two questions)."""
    gnubg_line_timeout_s: float = 30.0
    """Seconds a started line may take to be finished (its newline) on the gnubg port."""
    gnubg_max_connections: int = 32
    """Connections the gnubg port serves at once; more are closed on arrival."""
    http: bool = True
    """Serve HTTP (false: only the gnubg external-player port)."""
    rollout_max_trials: int = 46_656
    """Most trials one ``/v1/rollout`` job plays (trials times positions; 400 above)."""
    rollout_max_jobs: int = 4
    """Rollout jobs queued or running at once (429 beyond)."""
    rollout_threads: int = 1
    """Rollout jobs running at once (the others wait in order)."""
    rollout_keep_s: float = 600.0
    """Seconds a finished rollout's result stays available to poll."""

    def validate(self) -> ServerConfig:
        checks = [
            (1 <= self.port <= 65535, f"port must be 1..65535, got {self.port}"),
            (self.workers >= 1, f"workers must be >= 1, got {self.workers}"),
            (self.rollout_max_trials >= 1, "rollout_max_trials must be >= 1"),
            (self.rollout_max_jobs >= 1, "rollout_max_jobs must be >= 1"),
            (self.rollout_threads >= 1, "rollout_threads must be >= 1"),
            (self.rollout_keep_s > 0, "rollout_keep_s must be > 0"),
            (0 <= self.ply <= 3, f"ply must be 0..3, got {self.ply}"),
            (0 <= self.max_ply <= 3, f"max_ply must be 0..3, got {self.max_ply}"),
            (self.ply <= self.max_ply, f"ply {self.ply} is above max_ply {self.max_ply}"),
            (self.max_queued_searches >= 1, "max_queued_searches must be >= 1"),
            (self.max_queued_actions >= 1, "max_queued_actions must be >= 1"),
            (0 <= self.cube_ply <= 3, f"cube_ply must be 0..3, got {self.cube_ply}"),
            (self.cube_rollout >= 0, f"cube_rollout must be >= 0, got {self.cube_rollout}"),
            (0 <= self.external_ply <= 3, f"external_ply must be 0..3, got {self.external_ply}"),
            (self.max_batch >= 1, "max_batch must be >= 1"),
            (0 <= self.max_wait_ms <= 1000, "max_wait_ms must be 0..1000"),
            (self.max_body_bytes >= 1024, "max_body_bytes must be >= 1024"),
            (self.max_sessions >= 1, "max_sessions must be >= 1"),
            (self.max_sessions_per_client >= 1, "max_sessions_per_client must be >= 1"),
            (self.session_idle_s > 0, "session_idle_s must be > 0"),
            (self.session_games_kept >= 1, "session_games_kept must be >= 1"),
            (self.timeout_keep_alive > 0, "timeout_keep_alive must be > 0"),
            (self.header_timeout_s > 0, "header_timeout_s must be > 0"),
            (self.body_timeout_s > 0, "body_timeout_s must be > 0"),
            (self.max_header_bytes >= 1024, "max_header_bytes must be >= 1024"),
            (self.limit_concurrency >= 1, "limit_concurrency must be >= 1"),
            (self.gnubg_idle_s > 0, "gnubg_idle_s must be > 0"),
            (self.gnubg_line_timeout_s > 0, "gnubg_line_timeout_s must be > 0"),
            (self.gnubg_max_connections >= 1, "gnubg_max_connections must be >= 1"),
            (self.torch_threads >= 1, "torch_threads must be >= 1"),
            (
                self.gnubg_external is None or 1 <= self.gnubg_external <= 65535,
                "gnubg_external must be a port 1..65535",
            ),
            (self.http or self.gnubg_external is not None, "nothing to serve"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        return self

    def updated(self, values: dict[str, Any]) -> ServerConfig:
        known = {f.name: f for f in fields(self)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown server settings {unknown}; known: {sorted(known)}")
        return replace(self, **values).validate()


def load_config(path: str | Path | None, **overrides: Any) -> ServerConfig:
    """Defaults, then the file at ``path``, then the ``overrides`` that are not None."""
    config = ServerConfig()
    if path is not None:
        p = Path(path)
        text = p.read_text()
        if p.suffix == ".toml":
            import tomllib

            data = tomllib.loads(text)
        else:
            data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{p}: the config must be an object of settings")
        config = config.updated(data)
    return config.updated({k: v for k, v in overrides.items() if v is not None})
