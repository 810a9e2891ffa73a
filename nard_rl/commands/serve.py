"""``nard serve``: the HTTP API, the web board and gnubg's external-player protocol.

Settings come from the defaults, then ``--config FILE`` (JSON or TOML), then the flags;
every setting of ``nard_rl.server.config.ServerConfig`` (limits and timeouts included) can
be given in the file, the common ones as flags too.  docs/serving.md lists them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the server's imports (FastAPI, torch) load only when serving
    from fastapi import FastAPI

    from nard_rl.server.config import ServerConfig

NAME = "serve"
HELP = "Serve the bot: HTTP API (+ wildbg routes), web board, gnubg external player."

_APP_ENV = "NARD_SERVE_CONFIG"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="settings file (.json or .toml)")
    parser.add_argument("--host", help="interface (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="HTTP port (default 8000)")
    parser.add_argument("--workers", type=int, help="uvicorn worker processes (default 1)")
    parser.add_argument("--net", help="evaluator: 'default' or a checkpoint path")
    parser.add_argument("--rules", choices=("standard", "mars"), help="default rule set")
    parser.add_argument("--ply", type=int, help="default lookahead of hints and plays (0..3)")
    parser.add_argument(
        "--max-ply", type=int, help="deepest lookahead a request may ask for (default 2)"
    )
    parser.add_argument("--cube-ply", type=int, help="lookahead of cube decisions (default 1)")
    parser.add_argument(
        "--cube-rollout",
        type=int,
        metavar="TRIALS",
        help="games rolled out per close cube decision (default 0: none)",
    )
    parser.add_argument(
        "--external-ply",
        type=int,
        help="lookahead of the plays answered to gnubg's external-player port (default 1)",
    )
    parser.add_argument("--max-batch", type=int, help="most afterstates in one forward pass")
    parser.add_argument("--max-wait-ms", type=float, help="micro-batch wait (default 1 ms)")
    parser.add_argument("--max-body-bytes", type=int, help="largest request body")
    parser.add_argument("--torch-threads", type=int, help="threads of the forward pass")
    parser.add_argument(
        "--gnubg-external",
        type=int,
        metavar="PORT",
        help="also listen on PORT for gnubg's 'set player N external 127.0.0.1:PORT'",
    )
    parser.add_argument(
        "--gnubg-log", metavar="FILE", help="write each gnubg board line and answer (JSONL)"
    )
    parser.add_argument(
        "--no-http", action="store_true", help="serve only the gnubg external-player port"
    )
    parser.add_argument("--log-level", default="warning", help="uvicorn log level")


def _config(args: argparse.Namespace) -> ServerConfig:
    from nard_rl.server.config import load_config

    return load_config(
        args.config,
        host=args.host,
        port=args.port,
        workers=args.workers,
        net=args.net,
        rules=args.rules,
        ply=args.ply,
        max_ply=args.max_ply,
        cube_ply=args.cube_ply,
        cube_rollout=args.cube_rollout,
        external_ply=args.external_ply,
        max_batch=args.max_batch,
        max_wait_ms=args.max_wait_ms,
        max_body_bytes=args.max_body_bytes,
        torch_threads=args.torch_threads,
        gnubg_external=args.gnubg_external,
        gnubg_log=args.gnubg_log,
        http=False if args.no_http else None,
    )


def app_from_env() -> FastAPI:
    """The app of a worker process (settings passed through the environment as JSON)."""
    import json

    import torch

    from nard_rl.server.app import create_app
    from nard_rl.server.config import ServerConfig
    from nard_rl.server.http import uvicorn_options

    cfg = ServerConfig().updated(json.loads(os.environ[_APP_ENV]))
    torch.set_num_threads(cfg.torch_threads)
    uvicorn_options(cfg)  # this worker's connection limits (the protocol's head deadline)
    return create_app(cfg)


def run(args: argparse.Namespace) -> int:
    try:
        cfg = _config(args)
        if cfg.workers > 1 and cfg.gnubg_external is not None:
            raise ValueError("--gnubg-external needs a single worker (one TCP listener)")
        # a bad --net is told in one line here; inside the app's startup it would be a
        # traceback of the server framework
        from nard_rl.nets.evaluator import load_evaluator

        load_evaluator(cfg.net, rules=cfg.rules)
    except (ValueError, OSError) as exc:
        print(f"nard serve: error: {exc}", file=sys.stderr)
        return 2
    import torch
    import uvicorn

    torch.set_num_threads(cfg.torch_threads)
    if not cfg.http:
        from nard_rl.server.analysis import Analyzer
        from nard_rl.server.gnubg_external import serve_forever

        analyzer = Analyzer(
            cfg.net, ply=cfg.ply, cube_ply=cfg.cube_ply, cube_rollout=cfg.cube_rollout
        )
        print(f"nard serve: gnubg external player on {cfg.gnubg_host}:{cfg.gnubg_external}")
        with contextlib.ExitStack() as stack:
            log = stack.enter_context(open(cfg.gnubg_log, "a")) if cfg.gnubg_log else None
            asyncio.run(
                serve_forever(
                    analyzer,
                    cfg.gnubg_host,
                    cfg.gnubg_external,
                    log,
                    ply=cfg.external_ply,
                    config=cfg,
                )
            )
        return 0
    from nard_rl.server.http import uvicorn_options

    limits = uvicorn_options(cfg)
    print(f"nard serve: http://{cfg.host}:{cfg.port}/ (API docs at /docs)", flush=True)
    if cfg.workers > 1:
        import dataclasses
        import json

        os.environ[_APP_ENV] = json.dumps(dataclasses.asdict(cfg))
        uvicorn.run(
            "nard_rl.commands.serve:app_from_env",
            factory=True,
            host=cfg.host,
            port=cfg.port,
            workers=cfg.workers,
            log_level=args.log_level,
            **limits,
        )
        return 0
    from nard_rl.server.app import create_app

    uvicorn.run(create_app(cfg), host=cfg.host, port=cfg.port, log_level=args.log_level, **limits)
    return 0
