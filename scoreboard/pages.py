"""Server-rendered live pages (Jinja2); ``static/live.js`` swaps in fragments when the feed moves."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape
from sqlalchemy import func, select

from scoreboard import auth
from scoreboard.errors import ServiceError
from scoreboard.models import Alert, Deal, DealVersion, Event, ScoreTable
from scoreboard.service import Scoreboard

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


templates.env.filters["card"] = card_html
templates.env.filters["trump"] = trump_html
templates.env.globals["side_of"] = side_of
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


def all_tables(request: Request) -> dict[str, Any]:
    with board(request).db.read() as s:
        tables = s.scalars(select(ScoreTable).order_by(ScoreTable.name)).all()
        return {"tables": [board(request).summary(s, t) for t in tables], "cursor": cursor_now(s)}


def table_context(request: Request, table_id: str) -> dict[str, Any]:
    with board(request).db.read() as s:
        table = s.get(ScoreTable, table_id)
        if table is None:
            raise ServiceError(404, f"no table {table_id!r}")
        rows = s.execute(
            select(Deal, DealVersion)
            .join(
                DealVersion, (DealVersion.deal_id == Deal.id) & (DealVersion.version == Deal.current_version)
            )
            .where(Deal.table_id == table_id)
            .order_by(Deal.seq.desc())
            .limit(30)
        ).all()
        history = [
            {"seq": d.seq, "version": v.version, "result": v.result, "state": d.state_after, "log": v.log}
            for d, v in rows
        ]
        return {"t": board(request).summary(s, table), "history": history, "cursor": cursor_now(s)}


def alerts_context(request: Request) -> dict[str, Any]:
    with board(request).db.read() as s:
        rows = s.execute(
            select(Alert, ScoreTable.name, Deal.seq)
            .join(ScoreTable, ScoreTable.id == Alert.table_id)
            .outerjoin(Deal, Deal.id == Alert.deal_id)
            .where(Alert.status.in_(("open", "acknowledged")))
            .order_by(Alert.id)
        ).all()
        alerts = [{**board(request).alert_dict(a), "table_name": name, "deal": seq} for a, name, seq in rows]
        return {"alerts": alerts, "cursor": cursor_now(s)}


def render(request: Request, name: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    return templates.TemplateResponse(request, name, {"user": who(request), **context}, status_code=status)


@router.get("/", response_class=HTMLResponse)
def index(request: Request) -> HTMLResponse:
    return render(request, "index.html", all_tables(request))


@router.get("/tables/{table_id}", response_class=HTMLResponse)
def table_page(request: Request, table_id: str) -> HTMLResponse:
    return render(request, "table.html", table_context(request, table_id))


@router.get("/tables/{table_id}/deals/{seq}", response_class=HTMLResponse)
def deal_page(request: Request, table_id: str, seq: int) -> HTMLResponse:
    with board(request).db.read() as s:
        table = s.get(ScoreTable, table_id)
        deal = s.scalar(select(Deal).where(Deal.table_id == table_id, Deal.seq == seq))
        if table is None or deal is None:
            raise ServiceError(404, f"no deal {seq} at table {table_id!r}")
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
            "t": board(request).summary(s, table),
            "seq": seq,
            "versions": versions,
            "current": deal.current_version,
            "cursor": cursor_now(s),
        }
    return render(request, "deal.html", ctx)


@router.get("/referee", response_class=HTMLResponse, response_model=None)
def referee(request: Request) -> Response:
    if who(request) is None:
        return RedirectResponse("/login?next=/referee", status_code=303)
    return render(request, "referee.html", alerts_context(request))


@router.get("/fragments/tables", response_class=HTMLResponse)
def fragment_tables(request: Request) -> HTMLResponse:
    return render(request, "_tables.html", all_tables(request))


@router.get("/fragments/cards", response_class=HTMLResponse)
def fragment_cards(request: Request, ids: str = "") -> HTMLResponse:
    """Several tables' cards at once: the all-tables page asks once a second for those that changed."""
    wanted = [i for i in ids.split(",") if i][:500]
    with board(request).db.read() as s:
        tables = s.scalars(select(ScoreTable).where(ScoreTable.id.in_(wanted))).all() if wanted else []
        return render(request, "_cards.html", {"tables": [board(request).summary(s, t) for t in tables]})


@router.get("/fragments/tables/{table_id}/card", response_class=HTMLResponse)
def fragment_card(request: Request, table_id: str) -> HTMLResponse:
    with board(request).db.read() as s:
        table = s.get(ScoreTable, table_id)
        if table is None:
            raise ServiceError(404, f"no table {table_id!r}")
        return render(request, "_card.html", {"t": board(request).summary(s, table)})


@router.get("/fragments/tables/{table_id}", response_class=HTMLResponse)
def fragment_table(request: Request, table_id: str) -> HTMLResponse:
    return render(request, "_table.html", table_context(request, table_id))


@router.get("/fragments/alerts", response_class=HTMLResponse)
def fragment_alerts(request: Request) -> HTMLResponse:
    if who(request) is None:
        raise ServiceError(401, "log in as a referee")
    return render(request, "_alerts.html", alerts_context(request))


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
        return render(request, "login.html", {"next": target, "error": exc.message}, status=exc.status)
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
