"""The JSON API (``/api``): tables, deals, the edge's events, the feed, alerts, referees."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, TypeAdapter, ValidationError
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from starlette.concurrency import run_in_threadpool

from scoreboard import auth, feed
from scoreboard.db import Database
from scoreboard.errors import ServiceError
from scoreboard.models import Alert, AlertImage, Deal, DealVersion, Event, ScoreTable, User
from scoreboard.schemas import (
    AlertClose,
    Correction,
    EdgeEvent,
    Login,
    RulingIn,
    TableCreate,
    UserCreate,
    one_line,
)
from scoreboard.security import hash_password
from scoreboard.service import Scoreboard
from scoreboard.settings import Settings

router = APIRouter(prefix="/api")
EDGE_EVENT: TypeAdapter[Any] = TypeAdapter(EdgeEvent)
MAX_KEY = 200


def board(request: Request) -> Scoreboard:
    return request.app.state.board  # type: ignore[no-any-return]


def settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


def db(request: Request) -> Database:
    return board(request).db


async def read_body(request: Request, limit: int) -> bytes:
    """The raw body, refusing oversized ones (413) before anything is parsed or stored."""
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise ServiceError(400, "invalid Content-Length")
        if int(length) > limit:
            raise ServiceError(413, f"body too large: {length} bytes, the limit here is {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ServiceError(413, f"body too large: more than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(raw: bytes) -> Any:
    """Malformed JSON (including NaN/Infinity) is a 400."""
    if not raw.strip():
        raise ServiceError(400, "empty body: expected JSON")
    try:
        return json.loads(raw, parse_constant=_no_constants)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ServiceError(400, f"malformed JSON: {exc}") from exc


async def read_json(request: Request, limit: int) -> Any:
    return parse_json(await read_body(request, limit))


M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ServiceError(422, one_line(exc.errors())) from exc


def idempotency_key(request: Request) -> str:
    key = request.headers.get("idempotency-key", "").strip()
    if not key:
        raise ServiceError(400, "missing Idempotency-Key header")
    if len(key) > MAX_KEY:
        raise ServiceError(400, f"Idempotency-Key longer than {MAX_KEY} characters")
    return key


def reply(status: int, body: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=headers)


def require(request: Request, role: str) -> auth.Principal:
    return auth.require(request, db(request), settings(request).admin_token, role)


# --- tables and deals ----------------------------------------------------------------------------


@router.post("/tables", status_code=201)
async def create_table(request: Request) -> JSONResponse:
    require(request, "admin")
    body = parse(TableCreate, await read_json(request, settings(request).max_body_bytes))
    table_id, token = await run_in_threadpool(board(request).create_table, body.name, body.rules)
    return reply(201, {"id": table_id, "token": token}, {"Location": f"/api/tables/{table_id}"})


@router.get("/tables")
def list_tables(request: Request) -> dict[str, Any]:
    with db(request).read() as s:
        tables = s.scalars(select(ScoreTable).order_by(ScoreTable.name)).all()
        cursor = s.scalar(select(func.max(Event.id))) or 0
        return {"tables": [board(request).summary(s, t) for t in tables], "cursor": cursor}


@router.get("/tables/{table_id}")
def get_table(request: Request, table_id: str) -> dict[str, Any]:
    with db(request).read() as s:
        table = s.get(ScoreTable, table_id)
        if table is None:
            raise ServiceError(404, f"no table {table_id!r}")
        return board(request).summary(s, table)


@router.post("/tables/{table_id}/token")
def rotate_token(request: Request, table_id: str) -> dict[str, str]:
    require(request, "admin")
    return {"id": table_id, "token": board(request).rotate_token(table_id)}


@router.post("/tables/{table_id}/deals", status_code=201)
async def post_deal(request: Request, table_id: str) -> JSONResponse:
    raw = await read_body(request, settings(request).max_deal_bytes)

    def work() -> Any:  # one worker-thread hop: token, key, JSON, then the write
        auth.table_caller(request, db(request), table_id)
        key = idempotency_key(request)
        return board(request).post_deal(table_id, key, parse_json(raw))

    out = await run_in_threadpool(work)
    return reply(out.status, out.body, out.headers)


@router.post("/tables/{table_id}/events", status_code=201)
async def post_event(request: Request, table_id: str) -> JSONResponse:
    raw = await read_body(request, settings(request).max_event_bytes)

    def work() -> Any:
        auth.table_caller(request, db(request), table_id)
        key = idempotency_key(request)
        data = parse_json(raw)
        try:
            event = EDGE_EVENT.validate_python(data)
        except ValidationError as exc:
            raise ServiceError(422, one_line(exc.errors())) from exc
        return board(request).post_event(table_id, key, data, event)

    out = await run_in_threadpool(work)
    return reply(out.status, out.body, out.headers)


@router.get("/table")
def whoami(request: Request) -> dict[str, Any]:
    """The table a table token belongs to (an edge configured with only a URL and a token)."""
    table_id, _ = auth.table_of_token(request, db(request))
    return get_table(request, table_id)


@router.post("/deals", status_code=201)
async def post_deal_by_token(request: Request) -> JSONResponse:
    """``POST /api/tables/{id}/deals`` for the table the token belongs to."""
    table_id, _ = await run_in_threadpool(auth.table_of_token, request, db(request))
    return await post_deal(request, table_id)


@router.post("/events", status_code=201)
async def post_event_by_token(request: Request) -> JSONResponse:
    """``POST /api/tables/{id}/events`` for the table the token belongs to."""
    table_id, _ = await run_in_threadpool(auth.table_of_token, request, db(request))
    return await post_event(request, table_id)


def deal_version_dict(v: DealVersion) -> dict[str, Any]:
    return {
        "version": v.version,
        "author": v.author,
        "reason": v.reason,
        "at": v.created_at.isoformat() if v.created_at else None,
        "log": v.log,
        "result": v.result,
    }


@router.get("/tables/{table_id}/deals")
def list_deals(request: Request, table_id: str, after: int = 0, limit: int = 100) -> dict[str, Any]:
    """The table's deals after deal number ``after`` (re-sync: the edge compares idempotency keys)."""
    limit = max(1, min(limit, 500))
    with db(request).read() as s:
        if s.get(ScoreTable, table_id) is None:
            raise ServiceError(404, f"no table {table_id!r}")
        rows = s.execute(
            select(Deal, DealVersion)
            .join(
                DealVersion, (DealVersion.deal_id == Deal.id) & (DealVersion.version == Deal.current_version)
            )
            .where(Deal.table_id == table_id, Deal.seq > after)
            .order_by(Deal.seq)
            .limit(limit)
        ).all()
        deals = [
            {
                "deal": d.seq,
                "idempotency_key": d.idempotency_key,
                "version": v.version,
                "log": v.log,
                "result": v.result,
                "state_after": d.state_after,
            }
            for d, v in rows
        ]
    return {"deals": deals, "next": deals[-1]["deal"] if deals else after}


@router.get("/tables/{table_id}/deals/{seq}")
def get_deal(request: Request, table_id: str, seq: int) -> dict[str, Any]:
    with db(request).read() as s:
        deal = s.scalar(select(Deal).where(Deal.table_id == table_id, Deal.seq == seq))
        if deal is None:
            raise ServiceError(404, f"no deal {seq} at table {table_id!r}")
        return {
            "deal": deal.seq,
            "table": table_id,
            "current_version": deal.current_version,
            "idempotency_key": deal.idempotency_key,
            "state_after": deal.state_after,
            "versions": [deal_version_dict(v) for v in deal.versions],
        }


@router.post("/tables/{table_id}/deals/{seq}/versions", status_code=201)
async def correct_deal(request: Request, table_id: str, seq: int) -> JSONResponse:
    who = require(request, "referee")
    body = parse(Correction, await read_json(request, settings(request).max_deal_bytes))
    out = await run_in_threadpool(board(request).correct_deal, table_id, seq, body, who.name)
    return reply(201, out)


class DealRuling(RulingIn):
    base_version: int | None = None


@router.post("/tables/{table_id}/deals/{seq}/rulings", status_code=201)
async def rule_deal(request: Request, table_id: str, seq: int) -> JSONResponse:
    who = require(request, "referee")
    body = parse(DealRuling, await read_json(request, settings(request).max_body_bytes))
    ruling = RulingIn.model_validate(body.model_dump(exclude={"base_version"}))
    out = await run_in_threadpool(
        board(request).rule, table_id, seq, ruling, who.name, None, body.base_version
    )
    return reply(201, out)


# --- the feed ------------------------------------------------------------------------------------


@router.get("/events")
def list_events(
    request: Request, after: int = 0, limit: int = 500, table: str | None = None
) -> dict[str, Any]:
    """Everything after cursor ``after``; page on with the returned ``cursor``."""
    events = feed.events_after(db(request), after, limit=max(1, min(limit, 1000)), table_id=table)
    return {"events": events, "cursor": events[-1]["id"] if events else after}


@router.get("/stream")
async def stream(
    request: Request,
    after: int | None = None,
    table: str | None = None,
    limit: int | None = None,
    timeout: float | None = None,
) -> StreamingResponse:
    """Server-Sent Events of the feed from cursor ``after`` (or ``Last-Event-ID``; default: all).

    ``limit`` (events) and ``timeout`` (seconds) end the stream early, for scripts and tests.
    """
    last = request.headers.get("last-event-id", "")
    cursor = int(last) if last.isdigit() else max(after or 0, 0)
    deadline = time.monotonic() + min(timeout, 3600.0) if timeout is not None else None
    database, notifier = db(request), board(request).notifier

    async def events() -> AsyncIterator[str]:
        nonlocal cursor
        token = notifier.subscribe()
        sent, beat = 0, time.monotonic()
        try:
            yield "retry: 2000\n\n"
            while True:
                token[1].clear()
                rows = await run_in_threadpool(feed.events_after, database, cursor, limit=200, table_id=table)
                for ev in rows:
                    cursor = ev["id"]
                    data = json.dumps(ev, separators=(",", ":"))
                    yield f"id: {ev['id']}\nevent: {ev['kind']}\ndata: {data}\n\n"
                    sent += 1
                    if limit is not None and sent >= limit:
                        return
                if len(rows) == 200:  # catching up: next page at once
                    continue
                if rows:
                    # Busy feed: gather what comes in the next moment into one batch instead of
                    # querying once per write (200 tables write several times a second).
                    await asyncio.sleep(0.2)
                    continue
                if deadline is not None and time.monotonic() >= deadline:
                    return
                if await request.is_disconnected():
                    return
                wait = 2.0 if deadline is None else max(0.0, min(2.0, deadline - time.monotonic()))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(token[1].wait(), timeout=wait)
                if time.monotonic() - beat > 15:
                    beat = time.monotonic()
                    yield ": keep-alive\n\n"
        finally:
            notifier.unsubscribe(token)

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


# --- alerts --------------------------------------------------------------------------------------


@router.get("/alerts")
def list_alerts(
    request: Request, status: str = "open,acknowledged", table: str | None = None
) -> dict[str, Any]:
    require(request, "referee")
    wanted = [s for s in status.split(",") if s]
    with db(request).read() as s:
        query = select(Alert).where(Alert.status.in_(wanted)).order_by(Alert.id)
        if table:
            query = query.where(Alert.table_id == table)
        return {"alerts": [board(request).alert_dict(a) for a in s.scalars(query).all()]}


@router.get("/alerts/{alert_id}")
def get_alert(request: Request, alert_id: int) -> dict[str, Any]:
    require(request, "referee")
    with db(request).read() as s:
        alert = s.get(Alert, alert_id)
        if alert is None:
            raise ServiceError(404, f"no alert #{alert_id}")
        out = board(request).alert_dict(alert)
        deal = s.get(Deal, alert.deal_id) if alert.deal_id else None
        out["deal"] = deal.seq if deal else None
        return out


@router.get("/alerts/{alert_id}/images/{image_id}")
def alert_image(request: Request, alert_id: int, image_id: int) -> Response:
    require(request, "referee")
    with db(request).read() as s:
        image = s.get(AlertImage, image_id)
        if image is None or image.alert_id != alert_id:
            raise ServiceError(404, "no such image")
        return Response(
            image.data, media_type=image.content_type, headers={"Cache-Control": "private, max-age=3600"}
        )


@router.post("/alerts/{alert_id}/ack")
async def ack_alert(request: Request, alert_id: int) -> dict[str, Any]:
    who = require(request, "referee")
    body = parse(AlertClose, await read_json_or_empty(request, settings(request).max_body_bytes))
    return await run_in_threadpool(board(request).close_alert, alert_id, "acknowledged", body.note, who.name)


@router.post("/alerts/{alert_id}/dismiss")
async def dismiss_alert(request: Request, alert_id: int) -> dict[str, Any]:
    who = require(request, "referee")
    body = parse(AlertClose, await read_json_or_empty(request, settings(request).max_body_bytes))
    return await run_in_threadpool(board(request).close_alert, alert_id, "dismissed", body.note, who.name)


@router.post("/alerts/{alert_id}/ruling", status_code=201)
async def rule_alert(request: Request, alert_id: int) -> JSONResponse:
    who = require(request, "referee")
    body = parse(RulingIn, await read_json_or_empty(request, settings(request).max_body_bytes))
    with db(request).read() as s:
        alert = s.get(Alert, alert_id)
        if alert is None:
            raise ServiceError(404, f"no alert #{alert_id}")
        if alert.deal_id is None:
            raise ServiceError(409, f"alert #{alert_id} belongs to a deal the table has not posted yet")
        deal = s.get(Deal, alert.deal_id)
        assert deal is not None
        table_id, seq = alert.table_id, deal.seq
    out = await run_in_threadpool(board(request).rule, table_id, seq, body, who.name, alert_id)
    return reply(201, out)


async def read_json_or_empty(request: Request, limit: int) -> Any:
    if request.headers.get("content-length", "") in ("", "0") and "transfer-encoding" not in request.headers:
        return {}
    return await read_json(request, limit)


# --- referees ------------------------------------------------------------------------------------


@router.post("/users", status_code=201)
async def create_user(request: Request) -> JSONResponse:
    require(request, "admin")
    body = parse(UserCreate, await read_json(request, settings(request).max_body_bytes))

    def create() -> None:
        try:
            with db(request).write() as s:
                s.add(
                    User(username=body.username, password_hash=hash_password(body.password), role=body.role)
                )
        except IntegrityError as exc:
            raise ServiceError(409, f"user {body.username!r} already exists") from exc

    await run_in_threadpool(create)
    return reply(201, {"username": body.username, "role": body.role})


@router.post("/login")
async def api_login(request: Request) -> dict[str, Any]:
    body = parse(Login, await read_json(request, settings(request).max_body_bytes))
    token, who, expires = await run_in_threadpool(
        auth.login,
        db(request),
        body.username,
        body.password,
        settings(request).session_hours,
        request.app.state.throttle,
    )
    return {"token": token, "username": who.name, "role": who.role, "expires_at": expires.isoformat()}


@router.post("/logout", status_code=204)
def api_logout(request: Request) -> Response:
    from scoreboard.security import bearer

    auth.logout(db(request), bearer(request.headers.get("authorization")) or request.cookies.get(auth.COOKIE))
    return Response(status_code=204)
