"""``GET /docs``: Swagger UI from files installed with the package, never from a CDN.

FastAPI's own ``/docs`` page loads Swagger UI's script and style sheet from jsDelivr, so
it is blank on a machine without internet (a tournament hall, an air-gapped lab).  The
same page is served here with the assets of the ``fastapi-offline`` package (Swagger UI
5, which reads FastAPI's OpenAPI 3.1) under ``/docs/assets/``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png")

router = APIRouter(include_in_schema=False)


def assets_dir() -> Path:
    return Path(str(resources.files("fastapi_offline") / "static"))


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    root = request.scope.get("root_path", "").rstrip("/")
    return get_swagger_ui_html(
        openapi_url=root + (request.app.openapi_url or "/openapi.json"),
        title=f"{request.app.title} - API docs",
        swagger_js_url=f"{root}/docs/assets/swagger-ui-bundle.js",
        swagger_css_url=f"{root}/docs/assets/swagger-ui.css",
        swagger_favicon_url=f"{root}/docs/assets/favicon.png",
    )


@router.get("/docs/assets/{name}")
async def swagger_asset(name: str) -> FileResponse:
    if name not in ASSETS:
        raise HTTPException(404, f"no asset {name!r}")
    return FileResponse(assets_dir() / name, headers={"Cache-Control": "max-age=86400"})
