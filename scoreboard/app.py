"""The application factory: ``create_app(Settings(db_url=...))``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import DataError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scoreboard import api, bridge_api, bridge_pages, organise, pages, tourney_api, tourney_pages
from scoreboard.auth import LoginThrottle
from scoreboard.bridge_events import BridgeEvents
from scoreboard.db import Database, make_engine, migrate
from scoreboard.errors import ServiceError, clip
from scoreboard.feed import Notifier
from scoreboard.guard import BodyGuard, SecurityHeaders
from scoreboard.schemas import one_line
from scoreboard.scoring import ScoringError
from scoreboard.service import Scoreboard
from scoreboard.settings import Settings
from scoreboard.tourney_service import Tourneys

HERE = Path(__file__).resolve().parent


class ServerTiming:
    """Adds ``Server-Timing: app;dur=<ms>`` (time inside the app) to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()

        async def timed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                took = (time.perf_counter() - start) * 1000
                headers = list(message.get("headers", []))
                headers.append((b"server-timing", f"app;dur={took:.2f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, timed_send)


async def _tick_clocks(app: FastAPI, every: float) -> None:
    """Send each round's last-deal call when its time comes (``Tourneys.tick``), every few seconds."""
    if every <= 0:
        return
    while True:
        await asyncio.sleep(every)
        try:
            await run_in_threadpool(app.state.tourneys.tick)
        except Exception:  # a busy or closed database: try again next time
            logging.getLogger(__name__).exception("clock tick failed")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    engine = make_engine(settings.db_url)
    if settings.migrate:
        migrate(engine)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ticker = asyncio.create_task(_tick_clocks(app, settings.clock_tick_s))
        yield
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
        engine.dispose()

    app = FastAPI(
        lifespan=lifespan,
        title="tractorcam scoreboard",
        version="1",
        docs_url="/api/docs",
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.settings = settings
    database, notifier = Database(engine), Notifier()
    app.state.tourneys = Tourneys(database, notifier)
    app.state.board = Scoreboard(database, notifier, app.state.tourneys)
    app.state.bridge = BridgeEvents(database, notifier)
    app.state.throttle = LoginThrottle()
    app.state.device_secret = secrets.token_bytes(32)
    app.add_middleware(BodyGuard, settings=settings)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(ServerTiming)
    app.include_router(api.router)
    app.include_router(tourney_api.router)
    app.include_router(bridge_api.router)
    app.include_router(organise.router)  # before the event pages: /tourneys/new is not an event id
    app.include_router(pages.router)
    app.include_router(tourney_pages.router)
    app.include_router(bridge_pages.router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.exception_handler(ServiceError)
    async def service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        return api.service_error(exc)  # the refusal's status and headers: scoreboard.api.ERROR_STATUS

    @app.exception_handler(ScoringError)
    async def scoring_error(_request: Request, exc: ScoringError) -> JSONResponse:
        return JSONResponse({"detail": clip(f"deal log refused: {exc}")}, status_code=422)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": clip(one_line(list(exc.errors())))}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(DataError)
    async def data_error(_request: Request, exc: DataError) -> JSONResponse:
        # Inputs are validated before they reach the database; this answers a value it still refuses.
        return JSONResponse(
            {"detail": clip(f"the database refuses a value: {exc.orig}", 200)}, status_code=400
        )

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app
