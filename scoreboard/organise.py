"""The organiser's screens: server-rendered pages with forms over the same service the JSON API
uses (``scoreboard.tourney_service``, ``scoreboard.service``), so a form and its API route can
never disagree.

* ``/tourneys``: the events (anyone); an organiser creates one (``/tourneys/new``: the event's
  settings and its entries, one per line) or imports an event file (``/tourneys/import``).
* ``/tourneys/{id}/manage``: an event's entries (add, change, withdraw), its scoreboard tables in
  table-number order, its clock, pairing the next round, archiving.
* ``/tourneys/{id}/rounds/{n}/manage``: a round: review the draft (what the pairing breaks),
  override it, publish or discard it; the clock (start, pause, resume, the call now); each match
  with its tables' games live, its result entered, corrected or taken at time.
* ``/tables/manage``: the scoreboard tables: create one (its token shown once), a new token,
  archive.
* A deal's page takes a referee's move (to the table and game it was played at), void or count.

Organisers are users with the ``admin`` role; referees may run the clock and enter and close
results. Every form carries the anti-forgery token of :func:`scoreboard.pages.form_token`, and
answers with a redirect and one message (:func:`scoreboard.pages.form_action`).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Annotated, Any, get_args

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from engine.cards import RANK_NAME
from scoreboard import auth, games
from scoreboard.api import TABLE_ID, Seq, TableId, error_status
from scoreboard.errors import Forbidden, Invalid, NotFound, ServiceError, TooLarge, Unauthorised
from scoreboard.models import ScoreTable, TableGame, Tournament
from scoreboard.pages import Form, board, cursor_now, flash, form_action, read_form, render, who
from scoreboard.rows import table_row
from scoreboard.schemas import RuleId, TableCreate, TableUpdate, one_line
from scoreboard.tourney_api import EventId, RoundNo
from scoreboard.tourney_service import CALL_TEXT, CLOCKS, Tourneys

router = APIRouter(include_in_schema=False)
FORMATS = {
    "swiss": "Swiss",
    "round-robin": "Round robin",
    "knockout": "Knockout (after group round robins, if entries have groups)",
}
SCORINGS = {
    "zhku": "seed 001 (2 / 1 / 0, level difference)",
    "national": "seed 002 (2 / 1 / 0, rounds won)",
    "challenge": "seed 004 (3 / 1 / 0, head-to-head)",
}
LEVELS = [RANK_NAME[r] for r in range(2, 15)]
RULES = get_args(RuleId)


def tourneys(request: Request) -> Tourneys:
    return request.app.state.tourneys  # type: ignore[no-any-return]


Service = Annotated[Tourneys, Depends(tourneys)]


def _login(request: Request) -> Response | None:
    """The login page (then back here) for a visitor who is not logged in."""
    if who(request) is None:
        return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
    return None


def _organiser(request: Request) -> Response | None:
    if (redirect := _login(request)) is not None:
        return redirect
    user = who(request)
    if user is not None and user.role != "admin":
        return render(request, "forbidden.html", {"need": "an organiser (admin role)"}, status=403)
    return None


def _tables(s: Session, *, archived: bool = False) -> list[ScoreTable]:
    rows = s.scalars(select(ScoreTable).order_by(ScoreTable.name)).all()
    return [t for t in rows if archived or t.archived_at is None]


# --- the events -----------------------------------------------------------------------------------


@router.get("/tourneys", response_class=HTMLResponse)
def events_page(
    request: Request, service: Service, archived: Annotated[bool, Query()] = False
) -> HTMLResponse:
    with service.db.read() as s:
        rows = s.scalars(select(Tournament).order_by(Tournament.created_at.desc())).all()
        events = [service.summary(s, t) for t in rows if (t.archived_at is not None) == archived]
        hidden = sum(1 for t in rows if t.archived_at is not None)
    return render(
        request,
        "events.html",
        {"events": events, "archived": archived, "hidden": hidden, "formats": FORMATS},
    )


def _event_form(s: Session, form: dict[str, Any] | None = None, error: str | None = None) -> dict[str, Any]:
    """What the new-event and import pages show: the choices, the tables, the form as sent."""
    return {
        "tables": _tables(s),
        "formats": FORMATS,
        "scorings": SCORINGS,
        "clocks": CLOCKS,
        "calls": CALL_TEXT,
        "form": form or {"seed": secrets.randbelow(10**6), "format": "swiss", "scoring": "zhku"},
        "error": error,
    }


@router.get("/tourneys/new", response_class=HTMLResponse, response_model=None)
def new_event_page(request: Request, service: Service) -> Response:
    if (redirect := _organiser(request)) is not None:
        return redirect
    with service.db.read() as s:
        return render(request, "event_new.html", _event_form(s))


def entries_from_lines(text: str) -> list[dict[str, Any]]:
    """Entries from the form's lines: ``name | unit | rating | group | pair, pair`` (or the same
    separated by tabs, as pasted from a spreadsheet); only the name is needed.

    >>> entries_from_lines("红队 | 数学系 | 1500\\n\\nBlue\\tPhysics\\t\\tA\\tB1, B2")
    [{'id': 'E01', 'name': '红队', 'unit': '数学系', 'rating': 1500}, {'id': 'E02', 'name': 'Blue', 'unit': 'Physics', 'group': 'A', 'pairs': ['B1', 'B2']}]
    """
    entries: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = [p.strip() for p in (line.split("\t") if "\t" in line else line.split("|"))]
        parts += [""] * (5 - len(parts))
        name, unit, rating, group, pairs = parts[:5]
        if not name:
            raise Invalid(f"entries, line {number}: a name first")
        entry: dict[str, Any] = {"id": f"E{len(entries) + 1:02d}", "name": name}
        if unit:
            entry["unit"] = unit
        if rating:
            try:
                value = float(rating)
            except ValueError:
                raise Invalid(f"entries, line {number}: rating {rating[:20]!r} is not a number") from None
            entry["rating"] = int(value) if value.is_integer() else value
        if group:
            entry["group"] = group
        if pairs:
            entry["pairs"] = [p.strip() for p in pairs.replace("，", ",").split(",") if p.strip()]
        entries.append(entry)
    return entries


def _clock_of(form: Form) -> dict[str, Any] | None:
    minutes, call_at, rule = form.int("minutes", "minutes"), form.int("call_at", "call at"), form.get("rule")
    if minutes is None and call_at is None and not rule:
        return None
    if minutes is None or call_at is None or rule not in CALL_TEXT:
        raise Invalid("clock: give its minutes, the minute of the call and what the call means")
    return {"minutes": minutes, "call_at": call_at, "rule": rule}


async def _event_from_form(
    request: Request,
    service: Tourneys,
    template: str,
    fields: tuple[str, ...],
    make: Callable[[Form], dict[str, Any]],
    said: Callable[[dict[str, Any]], str],
) -> Response:
    """A new event from a form: on to its page with a message, or the form again, as it was sent,
    with the refusal's one line (a bad line of entries, a bad event file)."""
    path = request.url.path
    try:
        form, _ = await read_form(request, "admin")
    except ServiceError as exc:
        if isinstance(exc, Unauthorised):
            return RedirectResponse(f"/login?next={path}", status_code=303)
        return flash(RedirectResponse(path, status_code=303), "error", exc.message)
    values: dict[str, Any] = {k: form.get(k) for k in fields}
    values["tables"] = form.all("tables")
    try:
        out = await run_in_threadpool(make, form)
    except ServiceError as exc:
        with service.db.read() as s:
            ctx = _event_form(s, values, exc.message)
        return render(request, template, ctx, status=error_status(exc))
    return flash(RedirectResponse(f"/tourneys/{out['id']}/manage", status_code=303), "ok", said(out))


@router.post("/tourneys/new", response_class=HTMLResponse, response_model=None)
async def new_event(request: Request, service: Service) -> Response:
    def create(form: Form) -> dict[str, Any]:
        event: dict[str, Any] = {"format": form.get("format"), "scoring": form.get("scoring")}
        if form.get("name"):
            event["name"] = form.get("name")
        if form.get("rounds_planned"):
            event["rounds_planned"] = form.int("rounds_planned", "rounds planned")
        event["seed"] = form.int("seed", "seed") or 0
        event["entries"] = entries_from_lines(form.fields.get("entries", [""])[0])
        event["rounds"] = []
        return service.import_event(event, form.all("tables"), _clock_of(form), again=True)

    fields = ("name", "format", "scoring", "rounds_planned", "seed", "entries", "minutes", "call_at", "rule")
    return await _event_from_form(
        request,
        service,
        "event_new.html",
        fields,
        create,
        lambda out: f"Event created with {out['entries']} entries.",
    )


@router.get("/tourneys/import", response_class=HTMLResponse, response_model=None)
def import_page(request: Request, service: Service) -> Response:
    if (redirect := _organiser(request)) is not None:
        return redirect
    with service.db.read() as s:
        return render(request, "event_import.html", _event_form(s, {}))


@router.post("/tourneys/import", response_class=HTMLResponse, response_model=None)
async def import_event(request: Request, service: Service) -> Response:
    def load(form: Form) -> dict[str, Any]:
        text = form.fields.get("event", [""])[0]
        if len(text.encode()) > request.app.state.settings.max_event_file_bytes:
            raise TooLarge("the event file is over 1 MB")
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise Invalid(f"the event file is not JSON: {exc}") from None
        return service.import_event(data, form.all("tables"), None, again=bool(form.get("again")))

    return await _event_from_form(
        request,
        service,
        "event_import.html",
        ("event", "again"),
        load,
        lambda out: f"Event imported: {out['entries']} entries, {len(out['rounds'])} round(s).",
    )


# --- one event ----------------------------------------------------------------------------------


@router.get("/tourneys/{event_id}/manage", response_class=HTMLResponse, response_model=None)
def manage_event_page(request: Request, event_id: EventId, service: Service) -> Response:
    if (redirect := _login(request)) is not None:
        return redirect
    with service.db.read() as s:
        t = service.tournament(s, event_id)
        ev = service.summary(s, t)
        tables = _tables(s, archived=True)
        names = {x.id: x.name for x in tables}
        slots = list(t.tables or [])
        ctx = {
            "ev": ev,
            "entries": [
                {
                    "id": e.code,
                    "name": e.name,
                    "unit": e.unit,
                    "rating": int(e.rating) if float(e.rating).is_integer() else e.rating,
                    "group": e.group_name,
                    "pairs": list(e.pairs or []),
                    "withdrawn": e.withdrawn,
                }
                for e in t.entries
            ],
            "slots": slots + [None] * max(2, 4 - len(slots) % 4),
            "tables": [x for x in tables if x.archived_at is None or x.id in slots],
            "table_names": names,
            "draft": next((r.number for r in t.rounds if r.status == "draft"), None),
            "calls": CALL_TEXT,
            "formats": FORMATS,
            "scorings": SCORINGS,
            "clock": service.clock_dict(t, service.current_round(t)),
        }
    return render(request, "event_manage.html", ctx)


@router.post("/tourneys/{event_id}/manage", response_model=None)
async def manage_event(request: Request, event_id: EventId, service: Service) -> Response:
    back = f"/tourneys/{event_id}/manage"

    def act(form: Form, user: auth.Principal) -> str | tuple[str, str]:
        action = form.get("action")
        if action == "pair":
            out = service.pair(event_id)
            return (
                f"/tourneys/{event_id}/rounds/{out['round']}/manage",
                f"Round {out['round']} paired as a draft.",
            )
        if action == "tables":
            slots: list[str | None] = [x or None for x in form.all("slot")]
            while slots and slots[-1] is None:
                slots.pop()
            service.update_event(event_id, tables=slots, author=user.name)
            return f"The event plays at {sum(1 for x in slots if x)} table(s) from the next round paired."
        if action == "settings":
            name = form.get("name")
            service.update_event(event_id, name=name or None, clock=_clock_of(form), author=user.name)
            return "Settings saved."
        if action == "entry_add":
            entry: dict[str, Any] = {"name": form.get("name")}
            for key in ("unit", "group"):
                if form.get(key):
                    entry[key] = form.get(key)
            if form.get("rating"):
                entry["rating"] = _number(form.get("rating"))
            if form.get("pairs"):
                entry["pairs"] = [
                    p.strip() for p in form.get("pairs").replace("，", ",").split(",") if p.strip()
                ]
            service.add_entry(event_id, entry)
            return f"{entry['name']} entered."
        if action in ("entry_withdraw", "entry_reinstate", "entry_edit"):
            code = form.get("entry")
            if action == "entry_edit":
                change: dict[str, Any] = {"name": form.get("name") or None, "unit": form.get("unit") or None}
                change["group"] = form.get("group") or None
                if form.get("rating"):
                    change["rating"] = _number(form.get("rating"))
                service.update_entry(event_id, code, change)
                return f"Entry {code} saved."
            service.update_entry(event_id, code, {"withdrawn": action == "entry_withdraw"})
            return f"Entry {code} {'withdrawn' if action == 'entry_withdraw' else 'back in the event'}."
        if action == "archive":
            if form.get("confirm") != "yes":
                raise Invalid("tick the box to archive the event")
            service.update_event(event_id, archived=True, author=user.name)
            return "/tourneys", "Event archived: its games waiting at tables were dropped."
        if action == "restore":
            service.update_event(event_id, archived=False, author=user.name)
            return "Event restored."
        raise Invalid(f"unknown action {action[:30]!r}")

    return await form_action(request, "admin", back, act)


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise Invalid(f"rating {text[:20]!r} is not a number") from None
    return int(value) if value.is_integer() else value


# --- one round ----------------------------------------------------------------------------------


@router.get("/tourneys/{event_id}/rounds/{number}/manage", response_class=HTMLResponse, response_model=None)
def manage_round_page(request: Request, event_id: EventId, number: RoundNo, service: Service) -> Response:
    if (redirect := _login(request)) is not None:
        return redirect
    service.tick(event_id)
    with service.db.read() as s:
        t = service.tournament(s, event_id)
        r = service.round_of(t, number)
        rnd = service.round_dict(t, r, s)
        in_round = sorted(
            {x for m in r.matches for x in (m.home, m.away, m.bye) if x is not None},
            key=lambda code: [e.code for e in t.entries].index(code),
        )
        names = service.names(t)
        ctx = {
            "ev": service.summary(s, t),
            "rnd": rnd,
            "names": names,
            "in_round": [(code, names[code]) for code in in_round],
            "levels": LEVELS,
            "boards": max(1, len(t.entries[0].pairs) if t.entries and t.entries[0].pairs else 1),
            "clock": service.clock_dict(t, r),
            "cursor": cursor_now(s),
            "later": any(x.number > number and x.status == "published" for x in t.rounds),
        }
    return render(request, "round_manage.html", ctx)


@router.post("/tourneys/{event_id}/rounds/{number}/manage", response_model=None)
async def manage_round(request: Request, event_id: EventId, number: RoundNo, service: Service) -> Response:
    back = f"/tourneys/{event_id}/rounds/{number}/manage"

    def act(form: Form, user: auth.Principal) -> str | tuple[str, str]:
        action = form.get("action")
        if action in ("publish", "discard", "override") and user.role != "admin":
            raise Forbidden("organisers (admin role) only")
        if action == "publish":
            service.publish(event_id, number)
            return f"Round {number} published: its tables start it as soon as their previous game closes."
        if action == "discard":
            service.discard(event_id, number)
            return f"/tourneys/{event_id}/manage", f"Round {number}'s draft discarded."
        if action == "override":
            out = service.override(event_id, number, _override_items(form))
            broken = "; ".join(
                f"{x['rule'].replace('_', ' ')}: {', '.join(x['entries'])}" for x in out["relaxed"]
            )
            return "Pairing changed." + (f" It breaks: {broken}." if broken else " It breaks no rule.")
        if action == "clock":
            what = form.get("clock")
            out = service.clock_action(event_id, number, what, user.name)
            done = {
                "start": "Clock started.",
                "pause": "Clock paused.",
                "resume": "Clock running again.",
                "call": "Last-deal call sent to the tables.",
            }
            return done.get(what, str(out["state"]))
        if action == "close":
            table_no = form.int("table", "table") or 0
            service.close_match(event_id, number, table_no, user.name, form.opt("reason"))
            return f"Table {table_no} closed: its result taken from its table's levels."
        if action == "result":
            table_no = form.int("table", "table") or 0
            service.enter_result(event_id, number, table_no, _result_of(form), user.name, form.opt("reason"))
            return f"Table {table_no}'s result saved."
        raise Invalid(f"unknown action {action[:30]!r}")

    return await form_action(request, "referee", back, act)


def _override_items(form: Form) -> list[dict[str, Any]]:
    """The round as the override form lists it: a table number, home and away per match row (a row
    left empty is dropped), and the byes."""
    items: list[dict[str, Any]] = []
    for k in range(1, 4097):
        if f"home_{k}" not in form.fields and f"bye_{k}" not in form.fields:
            break
        if form.get(f"bye_{k}"):
            items.append({"bye": form.get(f"bye_{k}")})
            continue
        home, away = form.get(f"home_{k}"), form.get(f"away_{k}")
        if not home and not away:
            continue
        if not home or not away:
            raise Invalid(f"row {k}: a home and an away entry, or neither")
        items.append({"table": form.int(f"table_{k}", f"row {k}'s table") or k, "home": home, "away": away})
    if not items:
        raise Invalid("the pairing is empty")
    return items


def _result_of(form: Form) -> Any:
    """A match's result from the form: a forfeit, or each board's levels (and who goes through a
    tied knockout match)."""
    forfeit = form.get("forfeit")
    if forfeit in ("home", "away"):
        return {"forfeit": forfeit}
    boards = []
    k = 1
    while f"home_level_{k}" in form.fields:
        board_result: dict[str, Any] = {
            "home_level": form.get(f"home_level_{k}"),
            "away_level": form.get(f"away_level_{k}"),
        }
        if form.get(f"winner_{k}") in ("home", "away"):
            board_result["winner"] = form.get(f"winner_{k}")
        boards.append(board_result)
        k += 1
    if not boards:
        raise Invalid("give the levels, or a forfeit")
    return boards if len(boards) > 1 else boards[0]


# --- the scoreboard tables ----------------------------------------------------------------------


def _tables_context(s: Session) -> dict[str, Any]:
    rows = _tables(s, archived=True)
    listed = []
    for t in rows:
        game = s.get(TableGame, t.game_id) if t.game_id is not None else None
        listed.append(
            {
                "id": t.id,
                "name": t.name,
                "rules": t.rules,
                "archived": t.archived_at is not None,
                "game": games.describe(s, game),
                "next": games.describe(s, games.next_ready(s, t)),
                "levels": (t.state or {}).get("levels") or {"NS": "2", "EW": "2"},
            }
        )
    return {"tables": listed, "rules": RULES, "token": None}


@router.get("/tables/manage", response_class=HTMLResponse, response_model=None)
def tables_page(request: Request) -> Response:
    if (redirect := _organiser(request)) is not None:
        return redirect
    with board(request).db.read() as s:
        return render(request, "tables_manage.html", _tables_context(s))


@router.post("/tables/manage", response_class=HTMLResponse, response_model=None)
async def manage_tables(request: Request) -> Response:
    """Creating a table or a new token answers with the page itself, the token shown once (never
    in an address or a cookie); the rest go back with a message."""
    service = board(request)
    try:
        form, user = await read_form(request, "admin")
        action = form.get("action")
        shown: dict[str, str] | None = None
        if action == "create":
            rules = form.get("rules") or None
            body = TableCreate.model_validate(
                {"name": form.get("name"), **({"rules": rules} if rules else {})}
            )
            table_id, token = await run_in_threadpool(service.tables.create, body)
            shown = {"table": body.name, "token": token, "id": table_id}
        elif action == "token":
            table_id = form.get("table")
            token = await run_in_threadpool(service.tables.rotate_token, _table_id(table_id))
            with service.db.read() as s:
                shown = {"table": table_row(s, table_id).name, "token": token, "id": table_id}
        elif action in ("archive", "restore"):
            change = TableUpdate(archived=action == "archive")
            await run_in_threadpool(service.tables.update, _table_id(form.get("table")), change, user.name)
        else:
            raise Invalid(f"unknown action {action[:30]!r}")
    except ServiceError as exc:
        if isinstance(exc, Unauthorised):
            return RedirectResponse("/login?next=/tables/manage", status_code=303)
        return flash(RedirectResponse("/tables/manage", status_code=303), "error", exc.message)
    except ValueError as exc:  # pydantic: a name too long, an unknown rule set
        errors = exc.errors() if hasattr(exc, "errors") else []
        return flash(
            RedirectResponse("/tables/manage", status_code=303), "error", one_line(errors) or str(exc)
        )
    if shown is None:
        return flash(RedirectResponse("/tables/manage", status_code=303), "ok", f"Table {action}d.")
    with service.db.read() as s:
        ctx = {**_tables_context(s), "token": shown}
    return render(request, "tables_manage.html", ctx)


def _table_id(value: str) -> str:
    if not TABLE_ID.match(value):
        raise NotFound("no such table")
    return value


# --- a deal: where it counts -----------------------------------------------------------------------


@router.post("/tables/{table_id}/deals/{seq}/place", response_model=None)
async def place_deal(request: Request, table_id: TableId, seq: Seq) -> Response:
    service = board(request)

    def act(form: Form, user: auth.Principal) -> str | tuple[str, str]:
        action, reason = form.get("action"), form.get("reason")
        if not reason:
            raise Invalid("give a reason (it is kept with the deal)")
        if action == "move":
            target = form.get("to")  # "<table id>:<game number>"
            if not target:
                raise Invalid("choose the table and game to move the deal to")
            to_table, _, game = target.partition(":")
            out = service.deals.move(
                table_id, seq, _table_id(to_table), int(game) if game.isdigit() else None, reason, user.name
            )
            return f"/tables/{out['table']}/deals/{out['deal']}", f"Deal moved: now deal {out['deal']} here."
        if action in ("void", "count"):
            service.deals.set_status(
                table_id, seq, "voided" if action == "void" else "counted", reason, user.name
            )
            return f"Deal {seq} {'voided' if action == 'void' else 'counted'}."
        raise Invalid(f"unknown action {action[:30]!r}")

    return await form_action(request, "referee", f"/tables/{table_id}/deals/{seq}", act)
