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

from contract.boards import BoardLogIn, BoardScore, GomokuLogIn, GomokuScore
from contract.deals import DealLogIn, DealScore
from contract.events import EdgeEvent, EventPosted
from engine.jsontext import load_json
from scoreboard import auth, feed
from scoreboard.alerts import Alerts, LookClosed, Settled
from scoreboard.db import Database
from scoreboard.deals import DealPosted, DealRefused, Deals
from scoreboard.errors import (
    Conflict,
    Forbidden,
    Invalid,
    Malformed,
    NotFound,
    ServiceError,
    TooLarge,
    TooManyAttempts,
    Unauthorised,
)
from scoreboard.games import describe as describe_game
from scoreboard.idempotency import Outcome, Replayed
from scoreboard.live_events import EventPosted as EventOutcome
from scoreboard.live_events import LiveEvents
from scoreboard.models import Alert, AlertImage, Deal, DealVersion, Event, ScoreTable, TableGame, User
from scoreboard.rows import alert_dict, deal_path, deal_row, table_row
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
from scoreboard.tables import Tables, summary

router = APIRouter(prefix="/api")
MAX_KEY = 200
#: Events a stream replays at most before it tells the page to reload instead (``reset``).
MAX_REPLAY = 2000
TABLE_ID = re.compile(r"^[0-9a-f]{32}$")
ALERT_STATUSES = ("open", "acknowledged", "ruled", "dismissed", "resolved")
ALERT_KINDS = ("revoke", "failed_throw", "overtime", "mismatch", "refused", "look", "held")


# --- dependencies --------------------------------------------------------------------------------


def get_board(request: Request) -> Scoreboard:
    return request.app.state.board  # type: ignore[no-any-return]


def get_settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


Board = Annotated[Scoreboard, Depends(get_board)]


def get_database(board: Board) -> Database:
    return board.db


def get_tables(board: Board) -> Tables:
    return board.tables


def get_deals(board: Board) -> Deals:
    return board.deals


def get_alerts(board: Board) -> Alerts:
    return board.alerts


def get_events(board: Board) -> LiveEvents:
    return board.events


Db = Annotated[Database, Depends(get_database)]
TablesPart = Annotated[Tables, Depends(get_tables)]
DealsPart = Annotated[Deals, Depends(get_deals)]
AlertsPart = Annotated[Alerts, Depends(get_alerts)]
EventsPart = Annotated[LiveEvents, Depends(get_events)]


def table_id_path(table_id: Annotated[str, Path(max_length=64)]) -> str:
    """A table id (32 hex digits); anything else names no table."""
    if not TABLE_ID.match(table_id):
        raise NotFound("no such table")
    return table_id


TableId = Annotated[str, Depends(table_id_path)]
Seq = Annotated[int, Path(ge=1, le=MAX_ID)]
Cursor = Annotated[int, Query(ge=0, le=MAX_ID)]


def referee(request: Request, db: Db) -> auth.Principal:
    return auth.require(request, db, get_settings(request).admin_token, "referee")


def admin(request: Request, db: Db) -> auth.Principal:
    return auth.require(request, db, get_settings(request).admin_token, "admin")


Referee = Annotated[auth.Principal, Depends(referee)]
Admin = Annotated[auth.Principal, Depends(admin)]


def table_caller(request: Request, table_id: TableId, db: Db) -> str:
    """The table id, once the request's token is that table's own."""
    auth.table_caller(request, db, table_id)
    return table_id


def table_of_token(request: Request, db: Db) -> str:
    """The id of the table whose token the request carries."""
    return auth.table_of_token(request, db)[0]


def idempotency_key(
    key: Annotated[
        str | None, Header(alias="Idempotency-Key", description="one per post; a retry reuses it")
    ] = None,
) -> str:
    key = (key or "").strip()
    if not key:
        raise Malformed("missing Idempotency-Key header")
    if len(key) > MAX_KEY:
        raise Malformed(f"Idempotency-Key longer than {MAX_KEY} characters")
    return key


Key = Annotated[str, Depends(idempotency_key)]


async def raw_json(request: Request) -> object:
    """The body exactly as sent (stored and hashed as sent; the models only check its form). It
    has passed :class:`scoreboard.guard.BodyGuard`'s bounds already."""
    body = await request.body()
    if not body.strip():
        raise Malformed("empty body: expected JSON")
    return load_json(body)


Raw = Annotated[object, Depends(raw_json)]


# --- from the service's outcomes and refusals to HTTP ----------------------------------------------

#: The status each kind of refusal answers with (the first of its classes found here): the one
#: place where a :class:`~scoreboard.errors.ServiceError` becomes HTTP (:func:`service_error`; the
#: pages render their forms' refusals with the same status).
ERROR_STATUS: dict[type[ServiceError], int] = {
    Malformed: 400,
    Unauthorised: 401,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    TooLarge: 413,
    Invalid: 422,
    TooManyAttempts: 429,
    ServiceError: 400,
}
#: The status of a post's outcome: a replay answers as the first time did.
OUTCOME_STATUS = {Outcome.CREATED: 201, Outcome.REFUSED: 422}


def error_status(exc: ServiceError) -> int:
    return next(ERROR_STATUS[c] for c in type(exc).__mro__ if c in ERROR_STATUS)


def error_headers(exc: ServiceError) -> dict[str, str] | None:
    if isinstance(exc, Unauthorised):
        return {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, TooManyAttempts):
        return {"Retry-After": str(exc.retry_after)}
    return None


def service_error(exc: ServiceError) -> JSONResponse:
    """The answer to a refusal: ``{"detail": <one line>}`` with its status and headers."""
    return JSONResponse({"detail": exc.message}, status_code=error_status(exc), headers=error_headers(exc))


def reply(status: int, body: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=headers)


def replayed(table_id: str, out: Replayed) -> JSONResponse:
    """A repeated post's answer: the first one's, marked ``Idempotent-Replayed``."""
    headers = {"Location": deal_path(table_id, out.deal)} if out.deal is not None else {}
    return reply(OUTCOME_STATUS[out.outcome], out.body, {**headers, "Idempotent-Replayed": "true"})


def deal_posted(table_id: str, out: DealPosted) -> JSONResponse:
    """201 with the score and the deal's address, or 422 with the refusal and its alert."""
    if isinstance(out, Replayed):
        return replayed(table_id, out)
    if isinstance(out, DealRefused):
        return reply(422, out.body())
    return reply(201, out.result, {"Location": deal_path(out.table_id, out.seq)})


def event_posted(table_id: str, out: EventOutcome) -> JSONResponse:
    if isinstance(out, Replayed):
        return replayed(table_id, out)
    return reply(201, out.body())


def settled(out: Settled) -> JSONResponse:
    """201 with the new version (or a refused log's new deal); 200 with a look closed as it is."""
    if isinstance(out, LookClosed):
        return reply(200, out.alert)
    return reply(201, out.body())


#: A table's deal log refused (422): kept as a ``refused`` alert for a referee.
DEAL_REFUSED: dict[int | str, dict[str, Any]] = {
    422: {"model": Refused, "description": "the log is refused (the rules engine, or rulings from a table)"}
}


# --- tables and deals ----------------------------------------------------------------------------


@router.post("/tables", status_code=201, response_model=TableCreated)
def create_table(body: TableCreate, tables: TablesPart, _: Admin) -> JSONResponse:
    table_id, token = tables.create(body)
    return reply(201, {"id": table_id, "token": token}, {"Location": f"/api/tables/{table_id}"})


@router.get("/tables", response_model=TableList)
def list_tables(db: Db) -> dict[str, Any]:
    with db.read() as s:
        tables = s.scalars(select(ScoreTable).order_by(ScoreTable.name)).all()
        cursor = s.scalar(select(func.max(Event.id))) or 0
        return {"tables": [summary(s, t) for t in tables], "cursor": cursor}


@router.get("/tables/{table_id}", response_model=TableSummary)
def get_table(table_id: TableId, db: Db) -> dict[str, Any]:
    with db.read() as s:
        return summary(s, table_row(s, table_id))


@router.patch("/tables/{table_id}", response_model=TableSummary)
def update_table(table_id: TableId, body: TableUpdate, tables: TablesPart, who: Referee) -> dict[str, Any]:
    """Name, team names, starting levels or first dealer (a referee or the organiser)."""
    return tables.update(table_id, body, who.name)


@router.post("/tables/{table_id}/token", response_model=TableCreated)
def rotate_token(table_id: TableId, tables: TablesPart, _: Admin) -> dict[str, str]:
    return {"id": table_id, "token": tables.rotate_token(table_id)}


@router.post("/tables/{table_id}/deals", status_code=201, response_model=DealScore, responses=DEAL_REFUSED)
def post_deal(
    log: DealLogIn, table_id: Annotated[str, Depends(table_caller)], key: Key, raw: Raw, deals: DealsPart
) -> JSONResponse:
    """A finished deal log from the table (201 with the score). Refused (422) when it carries
    rulings or the rules engine refuses it; such a refusal is kept as a ``refused`` alert with the
    log, for a referee to correct. The same key again gives the same answer, stored once."""
    return deal_posted(table_id, deals.post(table_id, key, raw))


@router.post("/tables/{table_id}/events", status_code=201, response_model=EventPosted)
def post_event(
    event: Annotated[EdgeEvent, Body()],
    table_id: Annotated[str, Depends(table_caller)],
    key: Key,
    raw: Raw,
    events: EventsPart,
) -> JSONResponse:
    return event_posted(table_id, events.post(table_id, key, raw, event))


@router.get("/table", response_model=TableSummary)
def whoami(table_id: Annotated[str, Depends(table_of_token)], db: Db) -> dict[str, Any]:
    """The table a table token belongs to (an edge configured with only a URL and a token)."""
    return get_table(table_id, db)


@router.post("/deals", status_code=201, response_model=DealScore, responses=DEAL_REFUSED)
def post_deal_by_token(
    log: DealLogIn, table_id: Annotated[str, Depends(table_of_token)], key: Key, raw: Raw, deals: DealsPart
) -> JSONResponse:
    """``POST /api/tables/{id}/deals`` for the table the token belongs to."""
    return deal_posted(table_id, deals.post(table_id, key, raw))


@router.post("/tables/{table_id}/boards", status_code=201, response_model=BoardScore, responses=DEAL_REFUSED)
def post_board(
    log: BoardLogIn, table_id: Annotated[str, Depends(table_caller)], key: Key, raw: Raw, deals: DealsPart
) -> JSONResponse:
    """A finished bridge board from a bridge table (201 with its score; stored as the table's next
    deal, at the address in ``Location``). Refused (422) when the bridge rules refuse it, its
    unknown cards leave the score open, or the table plays another game; a refusal is kept as a
    ``refused`` alert with the log, for a referee to correct. The same key again gives the same
    answer, stored once."""
    return deal_posted(table_id, deals.post(table_id, key, raw))


@router.post("/tables/{table_id}/gomoku", status_code=201, response_model=GomokuScore, responses=DEAL_REFUSED)
def post_gomoku(
    log: GomokuLogIn, table_id: Annotated[str, Depends(table_caller)], key: Key, raw: Raw, deals: DealsPart
) -> JSONResponse:
    """A finished gomoku game from a gomoku table (201 with its score: the winner and line, a draw,
    the overtimes; stored as the table's next deal). Refused (422) when the gomoku rules refuse it
    or the table plays another game, kept as a ``refused`` alert for a referee."""
    return deal_posted(table_id, deals.post(table_id, key, raw))


@router.post("/gomoku", status_code=201, response_model=GomokuScore, responses=DEAL_REFUSED)
def post_gomoku_by_token(
    log: GomokuLogIn, table_id: Annotated[str, Depends(table_of_token)], key: Key, raw: Raw, deals: DealsPart
) -> JSONResponse:
    """``POST /api/tables/{id}/gomoku`` for the table the token belongs to."""
    return deal_posted(table_id, deals.post(table_id, key, raw))


@router.get(
    "/tables/{table_id}/deals/{seq}/sgf",
    response_class=Response,
    responses={200: {"content": {"application/x-go-sgf": {}}, "description": "the game as SGF, GM[4]"}},
)
def gomoku_sgf(table_id: TableId, seq: Seq, db: Db) -> Response:
    """A gomoku game's record as SGF (FF[4], ``GM[4]``: gomoku), which gomoku programs read; the
    players are the table's sides (black is N-S)."""
    from gomoku.log import parse_gomoku_log
    from gomoku.sgf import to_sgf

    with db.read() as s:
        table = table_row(s, table_id)
        deal, current = deal_row(s, table_id, seq)
        if table.game != "gomoku":
            raise NotFound(f"deal {seq} at {table.name} is no gomoku game")
        game = s.get(TableGame, deal.game_id) if deal.game_id is not None else None
        teams = dict(game.teams or {}) if game is not None else {}
        log = parse_gomoku_log(current.log)
    text = to_sgf(log, black=teams.get("NS") or "Black", white=teams.get("EW") or "White")
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{table.name}-{seq}.sgf")
    return Response(
        text,
        media_type="application/x-go-sgf",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.post("/boards", status_code=201, response_model=BoardScore, responses=DEAL_REFUSED)
def post_board_by_token(
    log: BoardLogIn, table_id: Annotated[str, Depends(table_of_token)], key: Key, raw: Raw, deals: DealsPart
) -> JSONResponse:
    """``POST /api/tables/{id}/boards`` for the table the token belongs to."""
    return deal_posted(table_id, deals.post(table_id, key, raw))


@router.post("/events", status_code=201, response_model=EventPosted)
def post_event_by_token(
    event: Annotated[EdgeEvent, Body()],
    table_id: Annotated[str, Depends(table_of_token)],
    key: Key,
    raw: Raw,
    events: EventsPart,
) -> JSONResponse:
    """``POST /api/tables/{id}/events`` for the table the token belongs to."""
    return event_posted(table_id, events.post(table_id, key, raw, event))


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
    table_id: TableId, db: Db, after: Cursor = 0, limit: Annotated[int, Query(ge=1, le=500)] = 100
) -> dict[str, Any]:
    """The table's deals after deal number ``after`` (re-sync: the edge compares idempotency keys)."""
    with db.read() as s:
        table_row(s, table_id)
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
def get_deal(table_id: TableId, seq: Seq, db: Db) -> dict[str, Any]:
    with db.read() as s:
        deal = s.scalar(select(Deal).where(Deal.table_id == table_id, Deal.seq == seq))
        if deal is None:
            raise NotFound(f"no deal {seq} at this table")
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
def correct_deal(
    table_id: TableId, seq: Seq, body: Correction, deals: DealsPart, who: Referee
) -> JSONResponse:
    return reply(201, deals.correct(table_id, seq, body, who.name).body())


@router.post("/tables/{table_id}/deals/{seq}/move", response_model=DealPlace)
def move_deal(table_id: TableId, seq: Seq, body: DealMove, deals: DealsPart, who: Referee) -> dict[str, Any]:
    """A deal posted under the wrong table's token, or into the wrong game, moved to the game it was
    played in (default: the other table's current game). It gets the next deal number there; both
    games are folded again and their matches' results follow; the move is kept in its history."""
    return deals.move(table_id, seq, body.to_table, body.game, body.reason, who.name)


@router.post("/tables/{table_id}/deals/{seq}/void", response_model=DealPlace)
def void_deal(
    table_id: TableId, seq: Seq, body: DealStatusChange, deals: DealsPart, who: Referee
) -> dict[str, Any]:
    """The deal counts nowhere (kept, with the reason); its game is folded again."""
    return deals.set_status(table_id, seq, "voided", body.reason, who.name)


@router.post("/tables/{table_id}/deals/{seq}/count", response_model=DealPlace)
def count_deal(
    table_id: TableId, seq: Seq, body: DealStatusChange, deals: DealsPart, who: Referee
) -> dict[str, Any]:
    """A held deal (posted after its game closed) or a voided one counted in its game again; the
    game's match result follows."""
    return deals.set_status(table_id, seq, "counted", body.reason, who.name)


class DealRuling(RulingIn):
    base_version: int | None = Field(default=None, ge=1, le=MAX_ID)


@router.post("/tables/{table_id}/deals/{seq}/rulings", status_code=201, response_model=VersionMade)
def rule_deal(table_id: TableId, seq: Seq, body: DealRuling, deals: DealsPart, who: Referee) -> JSONResponse:
    ruling = RulingIn.model_validate(body.model_dump(exclude={"base_version"}))
    return reply(201, deals.rule(table_id, seq, ruling, who.name, None, body.base_version).body())


# --- the feed ------------------------------------------------------------------------------------


def table_filter(table: Annotated[str | None, Query(max_length=64)] = None) -> str | None:
    if table is not None and not TABLE_ID.match(table):
        raise NotFound("no such table")
    return table


TableFilter = Annotated[str | None, Depends(table_filter)]


@router.get("/events", response_model=EventList)
def list_events(
    db: Db, table: TableFilter, after: Cursor = 0, limit: Annotated[int, Query(ge=1, le=1000)] = 500
) -> dict[str, Any]:
    """Everything after cursor ``after``; page on with the returned ``cursor``."""
    events = feed.events_after(db, after, limit=limit, table_id=table)
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
        raise Invalid(f"unknown alert status {unknown[0][:20]!r} (known: {', '.join(ALERT_STATUSES)})")
    return wanted


@router.get("/alerts", response_model=AlertList)
def list_alerts(
    db: Db,
    _: Referee,
    table: TableFilter,
    status: Annotated[list[str], Depends(alert_statuses)],
    kind: Annotated[
        Literal["revoke", "failed_throw", "overtime", "mismatch", "refused", "look", "held"] | None, Query()
    ] = None,
    order: Annotated[Literal["newest", "oldest"], Query()] = "newest",
) -> dict[str, Any]:
    """The referee queue, newest first unless ``order=oldest``, filtered by table and kind."""
    with db.read() as s:
        query = select(Alert).where(Alert.status.in_(status))
        if table:
            query = query.where(Alert.table_id == table)
        if kind:
            query = query.where(Alert.kind == kind)
        query = query.order_by(Alert.id.desc() if order == "newest" else Alert.id)
        rows = s.execute(query.add_columns(Deal.seq).outerjoin(Deal, Deal.id == Alert.deal_id)).all()
        return {"alerts": [{**alert_dict(a), "deal": seq} for a, seq in rows]}


AlertId = Annotated[int, Path(ge=1, le=MAX_ID)]


@router.get("/alerts/{alert_id}", response_model=AlertOut)
def get_alert(alert_id: AlertId, db: Db, _: Referee) -> dict[str, Any]:
    with db.read() as s:
        alert = s.get(Alert, alert_id)
        if alert is None:
            raise NotFound(f"no alert #{alert_id}")
        out = alert_dict(alert)
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
    alert_id: AlertId, image_id: Annotated[int, Path(ge=1, le=MAX_ID)], db: Db, _: Referee
) -> Response:
    with db.read() as s:
        image = s.get(AlertImage, image_id)
        if image is None or image.alert_id != alert_id:
            raise NotFound("no such image")
        return Response(
            image.data, media_type=image.content_type, headers={"Cache-Control": "private, max-age=3600"}
        )


OptionalClose = Annotated[AlertClose | None, Body()]


@router.post("/alerts/{alert_id}/ack", response_model=AlertOut)
def ack_alert(
    alert_id: AlertId, alerts: AlertsPart, who: Referee, body: OptionalClose = None
) -> dict[str, Any]:
    return alerts.close(alert_id, "acknowledged", (body or AlertClose()).note, who.name)


@router.post("/alerts/{alert_id}/dismiss", response_model=AlertOut)
def dismiss_alert(
    alert_id: AlertId, alerts: AlertsPart, who: Referee, body: OptionalClose = None
) -> dict[str, Any]:
    return alerts.close(alert_id, "dismissed", (body or AlertClose()).note, who.name)


@router.post("/alerts/{alert_id}/ruling", status_code=201, response_model=VersionMade)
def rule_alert(
    alert_id: AlertId, db: Db, deals: DealsPart, who: Referee, body: Annotated[RulingIn | None, Body()] = None
) -> JSONResponse:
    table_id, seq = _alert_deal(db, alert_id)
    return reply(201, deals.rule(table_id, seq, body or RulingIn(), who.name, alert_id).body())


def _alert_deal(db: Database, alert_id: int) -> tuple[str, int]:
    """The table and deal number an alert is about (404 no alert, 409 no deal posted yet)."""
    with db.read() as s:
        alert = s.get(Alert, alert_id)
        if alert is None:
            raise NotFound(f"no alert #{alert_id}")
        if alert.deal_id is None:
            raise Conflict(f"alert #{alert_id} belongs to a deal the table has not posted yet")
        deal = s.get(Deal, alert.deal_id)
        assert deal is not None
        return alert.table_id, deal.seq


@router.post("/alerts/{alert_id}/ruling/preview", response_model=RulingPreview)
def preview_ruling(
    alert_id: AlertId, db: Db, deals: DealsPart, _: Referee, body: Annotated[RulingIn | None, Body()] = None
) -> dict[str, Any]:
    """What the ruling would do, stored nowhere: the deal's defenders' total and outcome, and its
    game's levels and next dealer, before and after (the page shows it and asks to confirm)."""
    table_id, seq = _alert_deal(db, alert_id)
    return deals.preview(table_id, seq, body or RulingIn(), alert_id)


@router.post(
    "/alerts/{alert_id}/resolve",
    status_code=201,
    response_model=VersionMade,
    responses={200: {"model": AlertOut, "description": "a look closed without a change"}},
)
def resolve_alert(alert_id: AlertId, body: Resolution, alerts: AlertsPart, who: Referee) -> JSONResponse:
    """Settle a ``refused`` alert (the corrected log is scored and stored as the table's deal, 201)
    or a ``look`` (the cards the referee saw become a new version of its deal, 201; with no cards
    the look closes, 200)."""
    return settled(alerts.resolve(alert_id, body, who.name))


# --- referees ------------------------------------------------------------------------------------


@router.post("/users", status_code=201, response_model=UserCreated)
def create_user(body: UserCreate, db: Db, _: Admin) -> JSONResponse:
    try:
        with db.write() as s:
            s.add(User(username=body.username, password_hash=hash_password(body.password), role=body.role))
    except IntegrityError as exc:
        raise Conflict(f"user {body.username!r} already exists") from exc
    return reply(201, {"username": body.username, "role": body.role})


@router.post("/login", response_model=LoggedIn)
def api_login(body: Login, request: Request, db: Db) -> JSONResponse:
    settings = get_settings(request)
    secret = request.app.state.device_secret
    token, who, expires = auth.login(
        db,
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
def api_logout(request: Request, db: Db) -> Response:
    auth.logout(db, bearer(request.headers.get("authorization")) or request.cookies.get(auth.COOKIE))
    return Response(status_code=204)
