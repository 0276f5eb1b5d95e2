"""Server-rendered live pages (Jinja2); ``static/live.js`` swaps in fragments when the feed moves.
Also what every page with forms shares: the logged-in user, a form's anti-forgery token, the one
message a form's answer leaves for the next page (a short-lived cookie), and reading a posted form."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape
from sqlalchemy import func, select
from starlette.concurrency import run_in_threadpool

from scoreboard import auth, games
from scoreboard.api import ALERT_KINDS, TABLE_ID, Seq, TableId, error_status
from scoreboard.errors import Forbidden, Invalid, NotFound, ServiceError, Unauthorised, clip
from scoreboard.explain import explain, explain_look
from scoreboard.kinds import kind_of
from scoreboard.models import Alert, Deal, DealVersion, Event, ScoreTable, TableGame, TourneyRound
from scoreboard.rows import alert_dict
from scoreboard.service import Scoreboard
from scoreboard.tables import summary

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=Path(__file__).resolve().parent / "templates")
SUITS = {"S": ("♠", "black"), "H": ("♥", "red"), "D": ("♦", "red"), "C": ("♣", "black")}
SEAT_NAMES = {"S": "South", "E": "East", "N": "North", "W": "West"}


def card_html(card: str) -> Markup:
    text = str(card).upper()
    if text in ("BJ", "SJ"):
        label, colour = ("Big joker" if text == "BJ" else "Small joker"), ("red" if text == "BJ" else "black")
        return Markup('<span class="card {}" title="{}">{}</span>').format(
            colour, label, "★" if text == "BJ" else "☆"
        )
    rank, suit = text[:-1], text[-1:]
    rank = "10" if rank == "T" else rank
    symbol, colour = SUITS.get(suit, (suit, "black"))
    if "?" in text:  # seen, not (fully) named: ??, J?, ?H, ?J
        colour += " unknown"
    return Markup('<span class="card {}">{}{}</span>').format(colour, escape(rank), symbol)


def trump_html(trump: str | None) -> Markup:
    if not trump:
        return Markup("–")
    if trump == "NT":
        return Markup("NT")
    symbol, colour = SUITS.get(trump, (trump, "black"))
    return Markup('<span class="{}">{}</span>').format(colour, symbol)


def side_of(seat: str | None) -> str | None:
    return None if seat is None else ("NS" if seat in "SN" else "EW")


def gomoku_board(stones: Any, size: int | None = None, line: Any = None) -> dict[str, Any]:
    """A gomoku board drawn as SVG: the grid's lines and star points, each stone at its point with
    its move number, the winning line's stones marked (``_gomoku_board.html``)."""
    n = int(size or 15)
    step, pad = 30, 24
    letters = "abcdefghijklmnopqrstuvwxyz"

    def xy(name: str) -> tuple[int, int]:
        return pad + letters.index(name[0]) * step, pad + (n - int(name[1:])) * step

    drawn = []
    for k, move in enumerate(stones or [], start=1):
        try:
            x, y = xy(str(move[1]))
        except (ValueError, IndexError):
            continue
        drawn.append({"x": x, "y": y, "colour": move[0], "number": k, "won": str(move[1]) in (line or [])})
    stars = [
        (pad + c * step, pad + r * step)
        for c in (3, 7, 11)
        for r in (3, 7, 11)
        if n == 15 and (c == 7) == (r == 7)
    ]
    return {
        "size": n,
        "step": step,
        "pad": pad,
        "span": (n - 1) * step,
        "width": 2 * pad + (n - 1) * step,
        "lines": [pad + i * step for i in range(n)],
        "stones": drawn,
        "stars": stars,
        "columns": [(pad + i * step, letters[i]) for i in range(n)],
        "rows": [(pad + (n - 1 - i) * step, i + 1) for i in range(n)],
    }


def gomoku_limit(live: Any) -> int:
    """The seconds the move in play has (seed 004 art. 4): 120 with one of its player's first three
    long thinks, else 30."""
    stones = list((live or {}).get("stones") or [])
    number = len(stones) + 1
    colour = "B" if number % 2 else "W"
    thinks = sorted(((live or {}).get("long_thinks") or {}).get(colour) or [])[:3]
    return 120 if number in thinks else 30


templates.env.globals["gomoku_board"] = gomoku_board
templates.env.globals["gomoku_limit"] = gomoku_limit
templates.env.filters["card"] = card_html
templates.env.filters["trump"] = trump_html
templates.env.globals["side_of"] = side_of
templates.env.globals["card_of"] = lambda game: kind_of(game).card
templates.env.globals["SEAT_NAMES"] = SEAT_NAMES


def board(request: Request) -> Scoreboard:
    return request.app.state.board  # type: ignore[no-any-return]


def who(request: Request) -> auth.Principal | None:
    try:
        return auth.principal(request, board(request).db, request.app.state.settings.admin_token)
    except ServiceError:
        return None


def cursor_now(s: Any) -> int:
    return int(s.scalar(select(func.max(Event.id))) or 0)


# --- forms: who posts, the anti-forgery token, the message for the next page -------------------

FLASH = "tc_flash"
FORM_BYTES = 4 * 1024 * 1024  # the guard's limit for an event file pasted in a form


def form_token(request: Request) -> str | None:
    """The token every form of a logged-in page carries: an HMAC of the login cookie, which a
    foreign page can neither read nor make, so it cannot post the form."""
    session = request.cookies.get(auth.COOKIE)
    if not session:
        return None
    return hmac.new(session.encode(), b"tractorcam-form", hashlib.sha256).hexdigest()


def flash(response: Response, kind: str, message: str) -> Response:
    """One message for the next page (``ok`` or ``error``), in a cookie that lives a minute."""
    text = base64.urlsafe_b64encode(json.dumps({"kind": kind, "text": clip(message, 600)}).encode()).decode()
    response.set_cookie(FLASH, text, max_age=60, httponly=True, samesite="strict")
    return response


def take_flash(request: Request) -> dict[str, str] | None:
    raw = request.cookies.get(FLASH)
    if not raw:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(raw.encode()))
        return {"kind": str(data["kind"]), "text": str(data["text"])}
    except (ValueError, KeyError, TypeError):
        return None


class Form:
    """A posted form (``application/x-www-form-urlencoded``): the first value of a field, or all."""

    def __init__(self, fields: dict[str, list[str]]) -> None:
        self.fields = fields

    def get(self, name: str, default: str = "") -> str:
        values = self.fields.get(name)
        return values[0].strip() if values else default

    def all(self, name: str) -> list[str]:
        return [v.strip() for v in self.fields.get(name, [])]

    def opt(self, name: str) -> str | None:
        return self.get(name) or None

    def int(self, name: str, what: str | None = None) -> int | None:
        text = self.get(name)
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            raise Invalid(f"{what or name}: a whole number, please (got {text[:20]!r})") from None


async def read_form(request: Request, role: str) -> tuple[Form, auth.Principal]:
    """The form a logged-in user posted, once its anti-forgery token is checked (403 otherwise;
    401 when not logged in; 403 for an organiser's form posted by a referee)."""
    who_in = who(request)
    if who_in is None:
        raise Unauthorised("log in first")
    if role == "admin" and who_in.role != "admin":
        raise Forbidden("organisers (admin role) only")
    raw = (await request.body())[:FORM_BYTES].decode("utf-8", "replace")
    form = Form(parse_qs(raw, keep_blank_values=True))
    expected = form_token(request)
    if expected is None or not hmac.compare_digest(form.get("csrf"), expected):
        raise Forbidden("this form is out of date: reload the page and try again")
    return form, who_in


async def form_action(
    request: Request, role: str, back: str, action: Callable[[Form, auth.Principal], str | tuple[str, str]]
) -> Response:
    """Run a form's action in the thread pool and go back to ``back`` (303) with its message; a
    refusal (the service's own one line) goes back as an error message. Not logged in: the login
    page, then back."""
    try:
        form, who_in = await read_form(request, role)
        out = await run_in_threadpool(action, form, who_in)
    except ServiceError as exc:
        if isinstance(exc, Unauthorised):
            return RedirectResponse(f"/login?next={back}", status_code=303)
        return flash(RedirectResponse(back, status_code=303), "error", exc.message)
    target, message = (back, out) if isinstance(out, str) else out
    return flash(RedirectResponse(target, status_code=303), "ok", message)


def all_tables(request: Request) -> dict[str, Any]:
    with board(request).db.read() as s:
        tables = s.scalars(
            select(ScoreTable).where(ScoreTable.archived_at.is_(None)).order_by(ScoreTable.name)
        ).all()
        return {"tables": [summary(s, t) for t in tables], "cursor": cursor_now(s)}


def table_context(request: Request, table_id: str) -> dict[str, Any]:
    with board(request).db.read() as s:
        table = s.get(ScoreTable, table_id)
        if table is None:
            raise NotFound(f"no table {table_id!r}")
        rows = s.execute(
            select(Deal, DealVersion)
            .join(
                DealVersion, (DealVersion.deal_id == Deal.id) & (DealVersion.version == Deal.current_version)
            )
            .where(Deal.table_id == table_id)
            .order_by(Deal.seq.desc())
            .limit(30)
        ).all()
        numbers = dict(
            s.execute(select(TableGame.id, TableGame.number).where(TableGame.table_id == table_id)).all()
        )
        history = [
            {
                "seq": d.seq,
                "version": v.version,
                "result": v.result,
                "state": d.state_after,
                "log": v.log,
                "status": d.status,
                "game": numbers.get(d.game_id or 0),
            }
            for d, v in rows
        ]
        return {
            "t": summary(s, table),
            "kind": kind_of(table.game),
            "history": history,
            "call": _last_call(request, s, table_id),
            "cursor": cursor_now(s),
        }


def _last_call(request: Request, s: Any, table_id: str) -> dict[str, Any] | None:
    """The round clock's last-deal call sent to this table, while its round is on (``clock`` events
    on the table's feed, :mod:`scoreboard.tourney_service`)."""
    event = s.scalar(
        select(Event)
        .where(Event.table_id == table_id, Event.kind == "clock")
        .order_by(Event.id.desc())
        .limit(1)
    )
    if event is None:
        return None
    service = request.app.state.tourneys
    r = s.scalar(
        select(TourneyRound).where(
            TourneyRound.tournament_id == event.payload.get("tourney"),
            TourneyRound.number == event.payload.get("round"),
        )
    )
    if r is None or r.tournament is None:
        return None
    state = service.clock_dict(r.tournament, r)["state"]
    return dict(event.payload) if state != "time" else None


GROUPED_KINDS = ("mismatch", "refused", "look")
#: Deal id -> its current version, log and result.
DealLogs = dict[int, tuple[int, dict[str, Any], dict[str, Any]]]


def alerts_context(request: Request, table: str | None = None, kind: str | None = None) -> dict[str, Any]:
    """The referee queue: newest first, optionally one table's or one kind's; repeated alerts of the
    same doubt (same table, kind and reasoning) are one entry with their count; each alert with the
    trick's cards, the proving play and a sentence (:mod:`scoreboard.explain`)."""
    with board(request).db.read() as s:
        query = (
            select(Alert, ScoreTable.name, Deal.seq)
            .join(ScoreTable, ScoreTable.id == Alert.table_id)
            .outerjoin(Deal, Deal.id == Alert.deal_id)
            .where(Alert.status.in_(("open", "acknowledged")))
            .order_by(Alert.id.desc())
        )
        if table:
            query = query.where(Alert.table_id == table)
        if kind:
            query = query.where(Alert.kind == kind)
        rows = s.execute(query.limit(500)).all()
        entries: list[dict[str, Any]] = []
        seen: dict[tuple[str, str, str], dict[str, Any]] = {}
        logs: DealLogs = {}
        for a, name, seq in rows:
            if a.kind in GROUPED_KINDS:
                key = (a.table_id, a.kind, a.reasoning)
                if key in seen:
                    seen[key]["alike"] += 1
                    continue
            entry = {**alert_dict(a), "table_name": name, "deal": seq, "alike": 1}
            entry["game"] = _alert_game(s, a)
            entry["explained"] = _explain(s, a, logs)
            if a.kind in GROUPED_KINDS:
                seen[(a.table_id, a.kind, a.reasoning)] = entry
            entries.append(entry)
        names = s.execute(select(ScoreTable.id, ScoreTable.name).order_by(ScoreTable.name)).all()
        return {
            "alerts": entries,
            "waiting": len(rows),
            "cursor": cursor_now(s),
            "filters": {"table": table or "", "kind": kind or ""},
            "table_names": [(i, n) for i, n in names],
            "kinds": ALERT_KINDS,
        }


def _alert_game(s: Any, alert: Alert) -> dict[str, Any] | None:
    """Who plays at the alert's table: its deal's game, or the table's current game."""
    deal = s.get(Deal, alert.deal_id) if alert.deal_id is not None else None
    game_id = deal.game_id if deal is not None else None
    if game_id is None:
        table = s.get(ScoreTable, alert.table_id)
        game_id = table.game_id if table is not None else None
    return games.describe(s, s.get(TableGame, game_id) if game_id is not None else None)


ENGINE_KIND = {"revoke": "revoke", "failed_throw": "failed_throw", "mismatch": "card_count"}


def _current(s: Any, deal_id: int, logs: DealLogs) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """A deal's current version, log and result (read once per queue)."""
    if deal_id not in logs:
        version = s.scalar(
            select(DealVersion)
            .join(Deal, Deal.id == DealVersion.deal_id)
            .where(Deal.id == deal_id, DealVersion.version == Deal.current_version)
        )
        logs[deal_id] = (version.version, version.log, version.result) if version is not None else (0, {}, {})
    return logs[deal_id]


def _explain(s: Any, alert: Alert, logs: DealLogs) -> dict[str, Any] | None:
    """The alert explained from its deal's current log (or the deal in progress); a look also
    carries the plays to name and the version a settlement is made on (``base``)."""
    if alert.kind == "look":
        if alert.deal_id is not None:
            base, log, result = _current(s, alert.deal_id, logs)
        else:  # the deal in progress; a finished one on the table is an earlier deal
            table = s.get(ScoreTable, alert.table_id)
            live = (table.live or {}) if table is not None else {}
            log = {} if live.get("finished") else live
            base, result = None, {"tricks": log.get("scored_tricks") or []}
        out = explain_look(log, result, alert.trick, alert.seat)
        return None if out is None else {**out, "base": base}
    if alert.trick is None or alert.kind not in ENGINE_KIND:
        return None
    violation: dict[str, Any] = {
        "kind": ENGINE_KIND[alert.kind],
        "seat": alert.seat,
        "trick": alert.trick,
        "proven_at": alert.proven_at,
    }
    if alert.deal_id is not None:
        _, log, result = _current(s, alert.deal_id, logs)
        for v in result.get("violations") or []:
            if (v.get("kind"), v.get("seat"), v.get("trick")) == (violation["kind"], alert.seat, alert.trick):
                violation = dict(v)
                break
    else:
        table = s.get(ScoreTable, alert.table_id)
        log = (table.live or {}) if table is not None else {}
    return explain(log, violation)


def render(request: Request, name: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    message = None if name.startswith("_") else take_flash(request)  # a fragment leaves it
    response = templates.TemplateResponse(
        request,
        name,
        {"user": who(request), "csrf": form_token(request), "flash": message, **context},
        status_code=status,
    )
    if message is not None:
        response.delete_cookie(FLASH)
    return response


@router.get("/", response_class=HTMLResponse)
def index(request: Request) -> HTMLResponse:
    return render(request, "index.html", all_tables(request))


@router.get("/tables/{table_id}", response_class=HTMLResponse)
def table_page(request: Request, table_id: TableId) -> HTMLResponse:
    return render(request, "table.html", table_context(request, table_id))


@router.get("/tables/{table_id}/deals/{seq}", response_class=HTMLResponse)
def deal_page(request: Request, table_id: TableId, seq: Seq) -> HTMLResponse:
    with board(request).db.read() as s:
        table = s.get(ScoreTable, table_id)
        deal = s.scalar(select(Deal).where(Deal.table_id == table_id, Deal.seq == seq))
        if table is None or deal is None:
            raise NotFound(f"no deal {seq} at table {table_id!r}")
        versions = [
            {
                "version": v.version,
                "author": v.author,
                "reason": v.reason,
                "at": v.created_at,
                "log": v.log,
                "result": v.result,
            }
            for v in deal.versions
        ]
        ctx = {
            "t": summary(s, table),
            "seq": seq,
            "versions": versions,
            "current": deal.current_version,
            "cursor": cursor_now(s),
            "status": deal.status,
            "game": games.describe(s, s.get(TableGame, deal.game_id) if deal.game_id else None),
            "history": list(deal.history or []),
            "places": _places(s, deal) if who(request) is not None else [],
        }
    return render(request, kind_of(table.game).deal, ctx)


def _places(s: Any, deal: Deal) -> list[tuple[str, str]]:
    """Where a referee may move a deal: every started game of every table in use, newest first
    (``"<table id>:<game number>"``, a label)."""
    rows = s.execute(
        select(TableGame, ScoreTable.name)
        .join(ScoreTable, ScoreTable.id == TableGame.table_id)
        .where(ScoreTable.archived_at.is_(None), TableGame.status != games.READY)
        .order_by(ScoreTable.name, TableGame.number.desc())
    ).all()
    out = []
    for g, name in rows:
        if g.id == deal.game_id:
            continue
        where = f"round {g.round_no}, table {g.table_no}" if g.round_no is not None else "free game"
        teams = " v ".join(x for x in (g.teams or {}).values() if x)
        label = f"{name} · game {g.number} ({where}{': ' + teams if teams else ''}; {g.status})"
        out.append((f"{g.table_id}:{g.number}", label))
    return out


def queue_table(table: Annotated[str, Query(max_length=64)] = "") -> str | None:
    """The queue's table filter ("" from the form: every table)."""
    if table and not TABLE_ID.match(table):
        raise NotFound("no such table")
    return table or None


def queue_kind(kind: Annotated[str, Query(max_length=20)] = "") -> str | None:
    if kind and kind not in ALERT_KINDS:
        raise Invalid(f"unknown alert kind (known: {', '.join(ALERT_KINDS)})")
    return kind or None


QueueTable = Annotated[str | None, Depends(queue_table)]
QueueKind = Annotated[str | None, Depends(queue_kind)]


@router.get("/referee", response_class=HTMLResponse, response_model=None)
def referee(request: Request, table: QueueTable, kind: QueueKind) -> Response:
    if who(request) is None:
        return RedirectResponse("/login?next=/referee", status_code=303)
    return render(request, "referee.html", alerts_context(request, table, kind))


@router.get("/fragments/tables", response_class=HTMLResponse)
def fragment_tables(request: Request) -> HTMLResponse:
    return render(request, "_tables.html", all_tables(request))


@router.get("/fragments/cards", response_class=HTMLResponse)
def fragment_cards(request: Request, ids: str = "") -> HTMLResponse:
    """Several tables' cards at once: the all-tables page asks once a second for those that changed."""
    wanted = [i for i in ids.split(",") if TABLE_ID.match(i)][:500]
    with board(request).db.read() as s:
        tables = s.scalars(select(ScoreTable).where(ScoreTable.id.in_(wanted))).all() if wanted else []
        return render(request, "_cards.html", {"tables": [summary(s, t) for t in tables]})


@router.get("/fragments/tables/{table_id}/card", response_class=HTMLResponse)
def fragment_card(request: Request, table_id: TableId) -> HTMLResponse:
    with board(request).db.read() as s:
        table = s.get(ScoreTable, table_id)
        if table is None:
            raise NotFound(f"no table {table_id!r}")
        return render(request, kind_of(table.game).card, {"t": summary(s, table)})


@router.get("/fragments/tables/{table_id}", response_class=HTMLResponse)
def fragment_table(request: Request, table_id: TableId) -> HTMLResponse:
    ctx = table_context(request, table_id)
    return render(request, ctx["kind"].table, ctx)


@router.get("/fragments/alerts", response_class=HTMLResponse)
def fragment_alerts(request: Request, table: QueueTable, kind: QueueKind) -> HTMLResponse:
    if who(request) is None:
        raise Unauthorised("log in as a referee")
    return render(request, "_alerts.html", alerts_context(request, table, kind))


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/referee") -> HTMLResponse:
    return render(
        request, "login.html", {"next": next if next.startswith("/") else "/referee", "error": None}
    )


@router.post("/login", response_class=HTMLResponse, response_model=None)
async def login_form(request: Request) -> Response:
    raw = (await request.body())[:4096].decode("utf-8", "replace")
    form = {k: v[0] for k, v in parse_qs(raw).items()}
    target = form.get("next", "/referee")
    target = target if target.startswith("/") and not target.startswith("//") else "/referee"
    username = form.get("username", "")
    secret = request.app.state.device_secret
    try:
        token, who_in, _ = auth.login(
            board(request).db,
            username,
            form.get("password", ""),
            request.app.state.settings.session_hours,
            request.app.state.throttle,
            auth.login_source(request, username, secret),
        )
    except ServiceError as exc:
        return render(request, "login.html", {"next": target, "error": exc.message}, status=error_status(exc))
    response = RedirectResponse(target, status_code=303)
    auth.remember_device(response, secret, who_in.name)
    response.set_cookie(
        auth.COOKIE,
        token,
        httponly=True,
        samesite="strict",
        max_age=request.app.state.settings.session_hours * 3600,
    )
    return response


@router.post("/logout")
def logout_form(request: Request) -> RedirectResponse:
    auth.logout(board(request).db, request.cookies.get(auth.COOKIE))
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(auth.COOKIE)
    return response
