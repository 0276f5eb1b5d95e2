"""The event's JSON API (``/api/tourneys``): import and export an event file, its entries and
tables, pair a round (a draft), publish or discard it, override a pairing, enter or take results,
the standings, exports and the round clock; archive an event.

Who: the **admin** (the organiser) imports and changes events, pairs, publishes and overrides; a
**referee** (or the admin) enters and corrects results, closes a match at time and runs a round's
clock; anyone reads the published rounds, the standings and the clock (a draft only to referees).
"""

from __future__ import annotations

import csv
import io
import re
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Request
from fastapi.responses import JSONResponse, Response
from sqlalchemy import select

from scoreboard import auth
from scoreboard.api import Admin, Referee, get_settings, reply
from scoreboard.errors import NotFound, ServiceError
from scoreboard.models import Tournament
from scoreboard.schemas import (
    ClockOut,
    ClockStart,
    EntryChange,
    EntryId,
    EntryIn,
    EventFile,
    MatchClose,
    PairingOverride,
    ResultIn,
    RoundOut,
    StandingsOut,
    TourneyImport,
    TourneyList,
    TourneyOut,
    TourneyUpdate,
)
from scoreboard.tourney_service import Tourneys

router = APIRouter(prefix="/api/tourneys")
EVENT_ID = re.compile(r"^[0-9a-f]{32}$")
CSV: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/csv": {}}, "description": "CSV, one row per line, a header first"}
}


def get_tourneys(request: Request) -> Tourneys:
    return request.app.state.tourneys  # type: ignore[no-any-return]


Service = Annotated[Tourneys, Depends(get_tourneys)]


def event_id_path(event_id: Annotated[str, Path(max_length=64)]) -> str:
    if not EVENT_ID.match(event_id):
        raise NotFound("no such event")
    return event_id


EventId = Annotated[str, Depends(event_id_path)]
RoundNo = Annotated[int, Path(ge=1, le=256)]
TableNo = Annotated[int, Path(ge=1, le=100_000)]


def may_see_drafts(request: Request) -> bool:
    board = request.app.state.board
    try:
        return auth.principal(request, board.db, get_settings(request).admin_token) is not None
    except ServiceError:
        return False


@router.post("", status_code=201, response_model=TourneyOut)
def import_event(body: TourneyImport, service: Service, _: Admin) -> JSONResponse:
    """A new event from an event file; its rounds (and their results) come in published. An event
    with no rounds yet is how an event is created. The same file again is refused (409) unless
    ``again`` or the first one is archived."""
    clock = body.clock.model_dump() if body.clock else None
    out = service.import_event(body.event, list(body.tables), clock, again=body.again)
    return reply(201, out, {"Location": f"/api/tourneys/{out['id']}"})


@router.get("", response_model=TourneyList)
def list_events(service: Service, archived: bool = False) -> dict[str, Any]:
    """The events, oldest first; archived ones only with ``archived=true``."""
    with service.db.read() as s:
        rows = s.scalars(select(Tournament).order_by(Tournament.created_at)).all()
        return {"events": [service.summary(s, t) for t in rows if archived or t.archived_at is None]}


@router.get("/{event_id}", response_model=TourneyOut)
def get_event(event_id: EventId, service: Service) -> dict[str, Any]:
    with service.db.read() as s:
        return service.summary(s, service.tournament(s, event_id))


@router.patch("/{event_id}", response_model=TourneyOut)
def update_event(event_id: EventId, body: TourneyUpdate, service: Service, who: Admin) -> dict[str, Any]:
    """The event's name, tables (for rounds paired from now on), clock; or archive it (its games
    waiting at tables dropped, those in play closed, the tables free) or restore it."""
    return service.update_event(
        event_id,
        name=body.name,
        tables=None if body.tables is None else list(body.tables),
        clock=body.clock.model_dump() if body.clock else None,
        archived=body.archived,
        author=who.name,
    )


@router.post("/{event_id}/entries", status_code=201, response_model=TourneyOut)
def add_entry(event_id: EventId, body: EntryIn, service: Service, _: Admin) -> JSONResponse:
    """A new entry (a late entry too: it joins the next round paired)."""
    return reply(201, service.add_entry(event_id, body.model_dump(exclude_none=True)))


@router.patch("/{event_id}/entries/{entry}", response_model=TourneyOut)
def update_entry(
    event_id: EventId, entry: Annotated[EntryId, Path()], body: EntryChange, service: Service, _: Admin
) -> dict[str, Any]:
    """An entry's details, or withdrawn (kept in the standings, not paired again) or back."""
    return service.update_entry(event_id, entry, body.model_dump(exclude_none=True))


@router.get("/{event_id}/event.json", response_model=EventFile)
def export_event(event_id: EventId, service: Service) -> JSONResponse:
    """The event file of the published rounds: `tractorcam tourney pair|standings` read it as is."""
    with service.db.read() as s:
        return reply(200, service.event_json(service.tournament(s, event_id)))


@router.get("/{event_id}/standings", response_model=StandingsOut)
def get_standings(event_id: EventId, service: Service) -> JSONResponse:
    """After the last complete published round, computed now from the stored results."""
    return reply(200, service.standings(event_id))


def _csv(rows: list[list[Any]], name: str) -> Response:
    """CSV in UTF-8 with a byte order mark, so a spreadsheet reads Chinese names right."""
    buf = io.StringIO()
    buf.write("\ufeff")
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return Response(
        buf.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.get("/{event_id}/standings.csv", response_class=Response, responses=CSV)
def standings_csv(event_id: EventId, service: Service) -> Response:
    table = service.standings(event_id)
    rows = table["standings"]
    header = list(rows[0]) if rows else ["rank", "id", "name", "points"]
    return _csv([header, *[[r.get(k, "") for k in header] for r in rows]], f"standings-{event_id[:8]}.csv")


def _round(service: Tourneys, event_id: str, number: int, drafts: bool) -> dict[str, Any]:
    with service.db.read() as s:
        t = service.tournament(s, event_id)
        r = service.round_of(t, number)
        if r.status != "published" and not drafts:
            raise NotFound(f"round {number} is not published yet")
        return service.round_dict(t, r, s)


@router.get("/{event_id}/rounds/{number}", response_model=RoundOut)
def get_round(event_id: EventId, number: RoundNo, service: Service, request: Request) -> JSONResponse:
    """A round's pairing and results (a draft only to referees and the admin)."""
    return reply(200, _round(service, event_id, number, may_see_drafts(request)))


@router.get("/{event_id}/rounds/{number}/pairings.csv", response_class=Response, responses=CSV)
def pairings_csv(event_id: EventId, number: RoundNo, service: Service, request: Request) -> Response:
    out = _round(service, event_id, number, may_see_drafts(request))
    rows: list[list[Any]] = [
        ["round", "table", "home", "home_name", "away", "away_name", "bye", "bye_name", "result"]
    ]
    for m in out["matches"]:
        result = m.get("result")
        text = ""
        if isinstance(result, dict):
            text = _result_text(result)
        elif isinstance(result, list):
            text = "; ".join(_result_text(b) for b in result)
        rows.append(
            [
                number,
                m.get("table", ""),
                m.get("home", ""),
                m.get("home_name") or "",
                m.get("away", ""),
                m.get("away_name") or "",
                m.get("bye", ""),
                m.get("bye_name") or "",
                text,
            ]
        )
    return _csv(rows, f"pairings-{event_id[:8]}-round-{number}.csv")


def _result_text(board: dict[str, Any]) -> str:
    if "forfeit" in board:
        return f"{board['forfeit']} forfeits"
    return f"{board.get('home_level')}-{board.get('away_level')}"


@router.post("/{event_id}/rounds", status_code=201, response_model=RoundOut)
def pair_round(event_id: EventId, service: Service, _: Admin) -> JSONResponse:
    """Pair the next round by `tourney`'s pairing (the command line's code), stored as a draft
    (409 while a draft waits, a round is unfinished, or the event is complete)."""
    return reply(201, service.pair(event_id))


@router.post("/{event_id}/rounds/{number}/publish", response_model=RoundOut)
def publish_round(event_id: EventId, number: RoundNo, service: Service, _: Admin) -> JSONResponse:
    """The draft published: each board of each match gets a game at its scoreboard table, which
    the table starts from 2–2 as soon as its previous game is closed."""
    return reply(200, service.publish(event_id, number))


@router.delete("/{event_id}/rounds/{number}", response_model=TourneyOut)
def discard_round(event_id: EventId, number: RoundNo, service: Service, _: Admin) -> JSONResponse:
    """A draft thrown away (409 for a published round)."""
    return reply(200, service.discard(event_id, number))


@router.put("/{event_id}/rounds/{number}/matches", response_model=RoundOut)
def override_round(
    event_id: EventId, number: RoundNo, body: PairingOverride, service: Service, _: Admin
) -> JSONResponse:
    """The organiser's own pairing of a round without results (swap entries or tables): accepted;
    ``relaxed`` in the answer names every rule it breaks (rematch, same unit, second bye)."""
    items = [m.model_dump(exclude_none=True) for m in body.matches]
    return reply(200, service.override(event_id, number, items))


@router.put("/{event_id}/rounds/{number}/matches/{table}/result", response_model=RoundOut)
def enter_result(
    event_id: EventId, number: RoundNo, table: TableNo, body: ResultIn, service: Service, who: Referee
) -> JSONResponse:
    """Enter or correct a match's result (the earlier one is kept in its history); every later
    standing follows. The first result closes the match's games at its tables: while a deal is in
    play there it is refused (409) unless ``reason`` says why."""
    return reply(200, service.enter_result(event_id, number, table, body.result, who.name, body.reason))


@router.post("/{event_id}/rounds/{number}/matches/{table}/close", response_model=RoundOut)
def close_match(
    event_id: EventId,
    number: RoundNo,
    table: TableNo,
    service: Service,
    who: Referee,
    body: Annotated[MatchClose | None, Body()] = None,
) -> JSONResponse:
    """At time: the match's result from its games' levels (higher wins, equal draws), and its games
    closed. While a deal is in play at one of its tables (seed 001: finish it first), or no deal was
    played at one, it is refused (409) unless ``reason`` says why (kept with the result)."""
    reason = body.reason if body else None
    return reply(200, service.close_match(event_id, number, table, who.name, reason))


@router.get("/{event_id}/clock", response_model=ClockOut)
def get_clock(event_id: EventId, service: Service) -> JSONResponse:
    """The clock of the latest published round (sends the last-deal call when its time has come)."""
    return reply(200, service.clock_of(event_id))


@router.post("/{event_id}/rounds/{number}/clock", response_model=ClockOut)
def start_clock(
    event_id: EventId, number: RoundNo, service: Service, who: Referee, body: ClockStart | None = None
) -> JSONResponse:
    """A referee starts the round's clock (once), pauses or resumes it (the call and the end move by
    the pause), or sends the last-deal call now."""
    action = body.action if body else "start"
    return reply(200, service.clock_action(event_id, number, action, who.name))
