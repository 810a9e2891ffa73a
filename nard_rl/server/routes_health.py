"""``GET /health`` and the web board (``GET /``, static files under ``/static``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse

from nard_rl.server.services import ServicesDep

STATIC = Path(str(resources.files("nard_rl.server") / "static"))
"""The web board's files (served under ``/static``; no build step)."""

router = APIRouter()


@router.get("/health", tags=["health"])
async def health(svc: ServicesDep) -> dict[str, Any]:
    cfg, s = svc.config, svc.batcher.stats
    return {
        "status": "ok",
        "net": cfg.net,
        "ply": cfg.ply,
        "max_ply": cfg.max_ply,
        "cube_ply": cfg.cube_ply,
        "cube_rollout": cfg.cube_rollout,
        "batches": s.batches,
        "batched_requests": s.requests,
        "largest_batch": s.largest,
        "queued_searches": svc.search.pending,
        "sessions": len(svc.sessions),
    }


@router.get("/", include_in_schema=False)
async def index() -> FileResponse:
    return FileResponse(STATIC / "index.html")
