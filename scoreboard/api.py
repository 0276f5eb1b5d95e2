"""The JSON API (``/api``): tables, deals, the edge's events, the feed, alerts, referees.

Bodies are pydantic models (so ``/api/openapi.json`` describes every one), callers and the service
come in through dependencies, and every body has already passed :class:`scoreboard.guard.BodyGuard`
(size, nesting, number bounds) before a route sees it. Who may do what:

* a **table's token** reports what its camera saw: events and finished deal logs, never rulings;
* a **referee** (or admin) rules, corrects, settles refused logs and looks, and sets a table's starting
  levels, first dealer and team names;
* the **admin** creates tables, tokens and users.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Header, Path, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from starlette.concurrency import run_in_threadpool

from contract.deals import DealLogIn, DealScore
from contract.events import EdgeEvent, EventPosted
from engine.jsontext import load_json
from scoreboard import auth, feed
from scoreboard.errors import ServiceError
from scoreboard.games import describe as describe_game
from scoreboard.models import Alert, AlertImage, Deal, DealVersion, Event, ScoreTable, TableGame, User
from scoreboard.schemas import (
    MAX_ID,
    AlertClose,
    AlertList,
    AlertOut,
    Correction,
    DealDetail,
    DealList,
    DealMove,
    DealPlace,
    DealStatusChange,
    EventList,
    LoggedIn,
    Login,
    Refused,
    Resolution,
    RulingIn,
    RulingPreview,
    TableCreate,
    TableCreated,
    TableList,
    TableSummary,
    TableUpdate,
    UserCreate,
    UserCreated,
    VersionMade,
)
from scoreboard.security import bearer, hash_password
from scoreboard.service import Scoreboard
from scoreboard.settings import Settings

router = APIRouter(prefix="/api")
MAX_KEY = 200
#: Events a stream replays at most before it tells the page to reload instead (``reset``).
MAX_REPLAY = 2000
TABLE_ID = re.compile(r"^[0-9a-f]{32}$")
ALERT_STATUSES = ("open", "acknowledged", "ruled", "dismissed", "resolved")
ALERT_KINDS = ("revoke", "failed_throw", "mismatch", "refused", "look", "held")


# --- dependencies --------------------------------------------------------------------------------


def get_board(request: Request) -> Scoreboard:
    return request.app.state.board  # type: ignore[no-any-return]


def get_settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


Board = Annotated[Scoreboard, Depends(get_board)]


def table_id_path(table_id: Annotated[str, Path(max_length=64)]) -> str:
    """A table id (32 hex digits); anything else names no table."""
    if not TABLE_ID.match(table_id):
        raise ServiceError(404, "no such table")
    return table_id


TableId = Annotated[str, Depends(table_id_path)]
Seq = Annotated[int, Path(ge=1, le=MAX_ID)]
Cursor = Annotated[int, Query(ge=0, le=MAX_ID)]


def referee(request: Request, board: Board) -> auth.Principal:
    return auth.require(request, board.db, get_settings(request).admin_token, "referee")


def admin(request: Request, board: Board) -> auth.Principal:
    return auth.require(request, board.db, get_settings(request).admin_token, "admin")


Referee = Annotated[auth.Principal, Depends(referee)]
Admin = Annotated[auth.Principal, Depends(admin)]


def table_caller(request: Request, table_id: TableId, board: Board) -> str:
    """The table id, once the request's token is that table's own."""
    auth.table_caller(request, board.db, table_id)
    return table_id


def table_of_token(request: Request, board: Board) -> str:
    """The id of the table whose token the request carries."""
    return auth.table_of_token(request, board.db)[0]


def idempotency_key(
    key: Annotated[
        str | None, Header(alias="Idempotency-Key", description="one per post; a retry reuses it")
    ] = None,
) -> str:
    key = (key or "").strip()
    if not key:
        raise ServiceError(400, "missing Idempotency-Key header")
    if len(key) > MAX_KEY:
        raise ServiceError(400, f"Idempotency-Key longer than {MAX_KEY} characters")
    return key


Key = Annotated[str, Depends(idempotency_key)]


async def raw_json(request: Request) -> Any:
    """The body exactly as sent (stored and hashed as sent; the models only check its form). It
    has passed :class:`scoreboard.guard.BodyGuard`'s bounds already."""
    body = await request.body()
    if not body.strip():
        raise ServiceError(400, "empty body: expected JSON")
    return load_json(body)


Raw = Annotated[Any, Depends(raw_json)]


def reply(status: int, body: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=headers)


#: A table's deal log refused (422): kept as a ``refused`` alert for a referee.
DEAL_REFUSED: dict[int | str, dict[str, Any]] = {
    422: {"model": Refused, "description": "the log is refused (the rules engine, or rulings from a table)"}
}


# --- tables and deals ----------------------------------------------------------------------------


@router.post("/tables", status_code=201, response_model=TableCreated)
def create_table(body: TableCreate, board: Board, _: Admin) -> JSONResponse:
    table_id, token = board.create_table(body)
    return reply(201, {"id": table_id, "token": token}, {"Location": f"/api/tables/{table_id}"})


@router.get("/tables", response_model=TableList)
def list_tables(board: Board) -> dict[str, Any]:
    with board.db.read() as s:
        tables = s.scalars(select(ScoreTable).order_by(ScoreTable.name)).all()
        cursor = s.scalar(select(func.max(Event.id))) or 0
        return {"tables": [board.summary(s, t) for t in tables], "cursor": cursor}


@router.get("/tables/{table_id}", response_model=TableSummary)
def get_table(table_id: TableId, board: Board) -> dict[str, Any]:
    with board.db.read() as s:
        return board.summary(s, board.table(s, table_id))


@router.patch("/tables/{table_id}", response_model=TableSummary)
def update_table(table_id: TableId, body: TableUpdate, board: Board, who: Referee) -> dict[str, Any]:
    """Name, team names, starting levels or first dealer (a referee or the organiser)."""
    return board.update_table(table_id, body, who.name)


@router.post("/tables/{table_id}/token", response_model=TableCreated)
def rotate_token(table_id: TableId, board: Board, _: Admin) -> dict[str, str]:
    return {"id": table_id, "token": board.rotate_token(table_id)}


@router.post("/tables/{table_id}/deals", status_code=201, response_model=DealScore, responses=DEAL_REFUSED)
def post_deal(
    log: DealLogIn, table_id: Annotated[str, Depends(table_caller)], key: Key, raw: Raw, board: Board
) -> JSONResponse:
    """A finished deal log from the table (201 with the score). Refused (422) when it carries
    rulings or the rules engine refuses it; such a refusal is kept as a ``refused`` alert with the
    log, for a referee to correct. The same key again gives the same answer, stored once."""
    out = board.post_deal(table_id, key, raw)
    return reply(out.status, out.body, out.headers)


@router.post("/tables/{table_id}/events", status_code=201, response_model=EventPosted)
def post_event(
    event: Annotated[EdgeEvent, Body()],
    table_id: Annotated[str, Depends(table_caller)],
    key: Key,
    raw: Raw,
    board: Board,
) -> JSONResponse:
    out = board.post_event(table_id, key, raw, event)
    return reply(out.status, out.body, out.headers)


@router.get("/table", response_model=TableSummary)
def whoami(table_id: Annotated[str, Depends(table_of_token)], board: Board) -> dict[str, Any]:
    """The table a table token belongs to (an edge configured with only a URL and a token)."""
    return get_table(table_id, board)


@router.post("/deals", status_code=201, response_model=DealScore, responses=DEAL_REFUSED)
def post_deal_by_token(
    log: DealLogIn, table_id: Annotated[str, Depends(table_of_token)], key: Key, raw: Raw, board: Board
) -> JSONResponse:
    """``POST /api/tables/{id}/deals`` for the table the token belongs to."""
    out = board.post_deal(table_id, key, raw)
    return reply(out.status, out.body, out.headers)


@router.post("/events", status_code=201, response_model=EventPosted)
def post_event_by_token(
    event: Annotated[EdgeEvent, Body()],
    table_id: Annotated[str, Depends(table_of_token)],
    key: Key,
    raw: Raw,
    board: Board,
) -> JSONResponse:
    """``POST /api/tables/{id}/events`` for the table the token belongs to."""
    out = board.post_event(table_id, key, raw, event)
    return reply(out.status, out.body, out.headers)


def deal_version_dict(v: DealVersion) -> dict[str, Any]:
    return {
        "version": v.version,
        "author": v.author,
        "reason": v.reason,
        "at": v.created_at.isoformat() if v.created_at else None,
        "log": v.log,
        "result": v.result,
    }


@router.get("/tables/{table_id}/deals", response_model=DealList)
def list_deals(
    table_id: TableId, board: Board, after: Cursor = 0, limit: Annotated[int, Query(ge=1, le=500)] = 100
) -> dict[str, Any]:
    """The table's deals after deal number ``after`` (re-sync: the edge compares idempotency keys)."""
    with board.db.read() as s:
        board.table(s, table_id)
        rows = s.execute(
            select(Deal, DealVersion)
            .join(
                DealVersion, (DealVersion.deal_id == Deal.id) & (DealVersion.version == Deal.current_version)
            )
            .where(Deal.table_id == table_id, Deal.seq > after)
            .order_by(Deal.seq)
            .limit(limit)
        ).all()
        games = dict(
            s.execute(select(TableGame.id, TableGame.number).where(TableGame.table_id == table_id)).all()
        )
        deals = [
            {
                "deal": d.seq,
                "idempotency_key": d.idempotency_key,
                "version": v.version,
                "log": v.log,
                "result": v.result,
                "state_after": d.state_after,
                "status": d.status,
                "game": games.get(d.game_id or 0),
            }
            for d, v in rows
        ]
    return {"deals": deals, "next": deals[-1]["deal"] if deals else after}


@router.get("/tables/{table_id}/deals/{seq}", response_model=DealDetail)
def get_deal(table_id: TableId, seq: Seq, board: Board) -> dict[str, Any]:
    with board.db.read() as s:
        deal = s.scalar(select(Deal).where(Deal.table_id == table_id, Deal.seq == seq))
        if deal is None:
            raise ServiceError(404, f"no deal {seq} at this table")
        return {
            "deal": deal.seq,
            "table": table_id,
            "current_version": deal.current_version,
            "idempotency_key": deal.idempotency_key,
            "state_after": deal.state_after,
            "versions": [deal_version_dict(v) for v in deal.versions],
            "status": deal.status,
            "game": describe_game(s, s.get(TableGame, deal.game_id) if deal.game_id else None),
            "history": list(deal.history or []),
        }


@router.post("/tables/{table_id}/deals/{seq}/versions", status_code=201, response_model=VersionMade)
def correct_deal(table_id: TableId, seq: Seq, body: Correction, board: Board, who: Referee) -> JSONResponse:
    return reply(201, board.correct_deal(table_id, seq, body, who.name))


@router.post("/tables/{table_id}/deals/{seq}/move", response_model=DealPlace)
def move_deal(table_id: TableId, seq: Seq, body: DealMove, board: Board, who: Referee) -> dict[str, Any]:
    """A deal posted under the wrong table's token, or into the wrong game, moved to the game it was
    played in (default: the other table's current game). It gets the next deal number there; both
    games are folded again and their matches' results follow; the move is kept in its history."""
    return board.move_deal(table_id, seq, body.to_table, body.game, body.reason, who.name)


@router.post("/tables/{table_id}/deals/{seq}/void", response_model=DealPlace)
def void_deal(
    table_id: TableId, seq: Seq, body: DealStatusChange, board: Board, who: Referee
) -> dict[str, Any]:
    """The deal counts nowhere (kept, with the reason); its game is folded again."""
    return board.set_deal_status(table_id, seq, "voided", body.reason, who.name)


@router.post("/tables/{table_id}/deals/{seq}/count", response_model=DealPlace)
def count_deal(
    table_id: TableId, seq: Seq, body: DealStatusChange, board: Board, who: Referee
) -> dict[str, Any]:
    """A held deal (posted after its game closed) or a voided one counted in its game again; the
    game's match result follows."""
    return board.set_deal_status(table_id, seq, "counted", body.reason, who.name)


class DealRuling(RulingIn):
    base_version: int | None = Field(default=None, ge=1, le=MAX_ID)


@router.post("/tables/{table_id}/deals/{seq}/rulings", status_code=201, response_model=VersionMade)
def rule_deal(table_id: TableId, seq: Seq, body: DealRuling, board: Board, who: Referee) -> JSONResponse:
    ruling = RulingIn.model_validate(body.model_dump(exclude={"base_version"}))
    return reply(201, board.rule(table_id, seq, ruling, who.name, None, body.base_version))


# --- the feed ------------------------------------------------------------------------------------


def table_filter(table: Annotated[str | None, Query(max_length=64)] = None) -> str | None:
    if table is not None and not TABLE_ID.match(table):
        raise ServiceError(404, "no such table")
    return table


TableFilter = Annotated[str | None, Depends(table_filter)]


@router.get("/events", response_model=EventList)
def list_events(
    board: Board, table: TableFilter, after: Cursor = 0, limit: Annotated[int, Query(ge=1, le=1000)] = 500
) -> dict[str, Any]:
    """Everything after cursor ``after``; page on with the returned ``cursor``."""
    events = feed.events_after(board.db, after, limit=limit, table_id=table)
    return {"events": events, "cursor": events[-1]["id"] if events else after}


@router.get(
    "/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"text/event-stream": {}},
            "description": "Server-Sent Events: `id`, `event` (the kind), `data` (a feed event as in GET /api/events)",
        }
    },
)
async def stream(
    request: Request,
    board: Board,
    table: TableFilter,
    after: Annotated[int | None, Query(ge=0, le=MAX_ID)] = None,
    limit: Annotated[int | None, Query(ge=1, le=100_000)] = None,
    timeout: Annotated[float | None, Query(ge=0, le=3600)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=20)] = None,
) -> StreamingResponse:
    """Server-Sent Events of the feed from cursor ``after`` (or ``Last-Event-ID``); without either,
    from now on. A stream more than 2,000 events behind starts with a ``reset`` event (the page
    reloads its state) instead of replaying them all.

    ``limit`` (events) and ``timeout`` (seconds) end the stream early, for scripts and tests.
    """
    database, notifier = board.db, board.notifier
    now = await run_in_threadpool(feed.last_id, database)
    if last_event_id is not None and last_event_id.isdigit() and len(last_event_id) <= 10:
        cursor = min(int(last_event_id), MAX_ID)
    elif after is not None:
        cursor = after
    else:
        cursor = now
    reset = now - cursor > MAX_REPLAY
    if reset:
        cursor = now
    deadline = time.monotonic() + timeout if timeout is not None else None

    async def events() -> AsyncIterator[str]:
        nonlocal cursor
        token = notifier.subscribe()
        sent, beat = 0, time.monotonic()
        try:
            yield "retry: 2000\n\n"
            if reset:
                yield f"id: {cursor}\nevent: reset\ndata: {json.dumps({'cursor': cursor})}\n\n"
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


def alert_statuses(
    status: Annotated[
        str, Query(max_length=100, description="comma-separated statuses")
    ] = "open,acknowledged",
) -> list[str]:
    wanted = [s for s in status.split(",") if s]
    unknown = [s for s in wanted if s not in ALERT_STATUSES]
    if unknown:
        raise ServiceError(
            422, f"unknown alert status {unknown[0][:20]!r} (known: {', '.join(ALERT_STATUSES)})"
        )
    return wanted


@router.get("/alerts", response_model=AlertList)
def list_alerts(
    board: Board,
    _: Referee,
    table: TableFilter,
    status: Annotated[list[str], Depends(alert_statuses)],
    kind: Annotated[
        Literal["revoke", "failed_throw", "mismatch", "refused", "look", "held"] | None, Query()
    ] = None,
    order: Annotated[Literal["newest", "oldest"], Query()] = "newest",
) -> dict[str, Any]:
    """The referee queue, newest first unless ``order=oldest``, filtered by table and kind."""
    with board.db.read() as s:
        query = select(Alert).where(Alert.status.in_(status))
        if table:
            query = query.where(Alert.table_id == table)
        if kind:
            query = query.where(Alert.kind == kind)
        query = query.order_by(Alert.id.desc() if order == "newest" else Alert.id)
        rows = s.execute(query.add_columns(Deal.seq).outerjoin(Deal, Deal.id == Alert.deal_id)).all()
        return {"alerts": [{**board.alert_dict(a), "deal": seq} for a, seq in rows]}


AlertId = Annotated[int, Path(ge=1, le=MAX_ID)]


@router.get("/alerts/{alert_id}", response_model=AlertOut)
def get_alert(alert_id: AlertId, board: Board, _: Referee) -> dict[str, Any]:
    with board.db.read() as s:
        alert = s.get(Alert, alert_id)
        if alert is None:
            raise ServiceError(404, f"no alert #{alert_id}")
        out = board.alert_dict(alert)
        deal = s.get(Deal, alert.deal_id) if alert.deal_id else None
        out["deal"] = deal.seq if deal else None
        return out


@router.get(
    "/alerts/{alert_id}/images/{image_id}",
    response_class=Response,
    responses={
        200: {"content": {"image/jpeg": {}, "image/png": {}, "image/webp": {}}, "description": "the picture"}
    },
)
def alert_image(
    alert_id: AlertId, image_id: Annotated[int, Path(ge=1, le=MAX_ID)], board: Board, _: Referee
) -> Response:
    with board.db.read() as s:
        image = s.get(AlertImage, image_id)
        if image is None or image.alert_id != alert_id:
            raise ServiceError(404, "no such image")
        return Response(
            image.data, media_type=image.content_type, headers={"Cache-Control": "private, max-age=3600"}
        )


OptionalClose = Annotated[AlertClose | None, Body()]


@router.post("/alerts/{alert_id}/ack", response_model=AlertOut)
def ack_alert(alert_id: AlertId, board: Board, who: Referee, body: OptionalClose = None) -> dict[str, Any]:
    return board.close_alert(alert_id, "acknowledged", (body or AlertClose()).note, who.name)


@router.post("/alerts/{alert_id}/dismiss", response_model=AlertOut)
def dismiss_alert(
    alert_id: AlertId, board: Board, who: Referee, body: OptionalClose = None
) -> dict[str, Any]:
    return board.close_alert(alert_id, "dismissed", (body or AlertClose()).note, who.name)


@router.post("/alerts/{alert_id}/ruling", status_code=201, response_model=VersionMade)
def rule_alert(
    alert_id: AlertId, board: Board, who: Referee, body: Annotated[RulingIn | None, Body()] = None
) -> JSONResponse:
    table_id, seq = _alert_deal(board, alert_id)
    return reply(201, board.rule(table_id, seq, body or RulingIn(), who.name, alert_id))


def _alert_deal(board: Scoreboard, alert_id: int) -> tuple[str, int]:
    """The table and deal number an alert is about (404 no alert, 409 no deal posted yet)."""
    with board.db.read() as s:
        alert = s.get(Alert, alert_id)
        if alert is None:
            raise ServiceError(404, f"no alert #{alert_id}")
        if alert.deal_id is None:
            raise ServiceError(409, f"alert #{alert_id} belongs to a deal the table has not posted yet")
        deal = s.get(Deal, alert.deal_id)
        assert deal is not None
        return alert.table_id, deal.seq


@router.post("/alerts/{alert_id}/ruling/preview", response_model=RulingPreview)
def preview_ruling(
    alert_id: AlertId, board: Board, who: Referee, body: Annotated[RulingIn | None, Body()] = None
) -> dict[str, Any]:
    """What the ruling would do, stored nowhere: the deal's defenders' total and outcome, and its
    game's levels and next dealer, before and after (the page shows it and asks to confirm)."""
    table_id, seq = _alert_deal(board, alert_id)
    return board.rule(table_id, seq, body or RulingIn(), who.name, alert_id, preview=True)


@router.post(
    "/alerts/{alert_id}/resolve",
    status_code=201,
    response_model=VersionMade,
    responses={200: {"model": AlertOut, "description": "a look closed without a change"}},
)
def resolve_alert(alert_id: AlertId, body: Resolution, board: Board, who: Referee) -> JSONResponse:
    """Settle a ``refused`` alert (the corrected log is scored and stored as the table's deal, 201)
    or a ``look`` (the cards the referee saw become a new version of its deal, 201; with no cards
    the look closes, 200)."""
    out = board.resolve(alert_id, body, who.name)
    return reply(out.status, out.body)


# --- referees ------------------------------------------------------------------------------------


@router.post("/users", status_code=201, response_model=UserCreated)
def create_user(body: UserCreate, board: Board, _: Admin) -> JSONResponse:
    try:
        with board.db.write() as s:
            s.add(User(username=body.username, password_hash=hash_password(body.password), role=body.role))
    except IntegrityError as exc:
        raise ServiceError(409, f"user {body.username!r} already exists") from exc
    return reply(201, {"username": body.username, "role": body.role})


@router.post("/login", response_model=LoggedIn)
def api_login(body: Login, request: Request, board: Board) -> JSONResponse:
    settings = get_settings(request)
    secret = request.app.state.device_secret
    token, who, expires = auth.login(
        board.db,
        body.username,
        body.password,
        settings.session_hours,
        request.app.state.throttle,
        auth.login_source(request, body.username, secret),
    )
    response = reply(
        200, {"token": token, "username": who.name, "role": who.role, "expires_at": expires.isoformat()}
    )
    auth.remember_device(response, secret, who.name)
    return response


@router.post("/logout", status_code=204)
def api_logout(request: Request, board: Board) -> Response:
    auth.logout(board.db, bearer(request.headers.get("authorization")) or request.cookies.get(auth.COOKIE))
    return Response(status_code=204)
