"""The event's live pages: pairings, standings and the round clock (readable on a projector and a
phone, following the feed like the table pages), and a printable pairing sheet. Only published
rounds are shown."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from scoreboard.errors import NotFound
from scoreboard.pages import cursor_now, render
from scoreboard.tourney_api import EventId, RoundNo
from scoreboard.tourney_service import Tourneys

router = APIRouter(include_in_schema=False)


def tourneys(request: Request) -> Tourneys:
    return request.app.state.tourneys  # type: ignore[no-any-return]


Service = Annotated[Tourneys, Depends(tourneys)]
RoundQuery = Annotated[int | None, Query(ge=1, le=256)]


def pairings_context(service: Tourneys, event_id: str, number: int | None) -> dict[str, Any]:
    """The published round ``number`` (default: the latest), its clock and the event."""
    service.tick(event_id)
    with service.db.read() as s:
        t = service.tournament(s, event_id)
        published = [r for r in t.rounds if r.status == "published"]
        if number is None:
            r = published[-1] if published else None
        else:
            r = next((x for x in published if x.number == number), None)
            if r is None:
                raise NotFound(f"round {number} is not published")
        names = {e.code: e.name for e in t.entries}
        return {
            "ev": service.summary(s, t),
            "rnd": service.round_dict(t, r) if r is not None else None,
            "names": names,
            "clock": service.clock_dict(t, service.current_round(t)),
            "rounds": [x.number for x in published],
            "cursor": cursor_now(s),
        }


def standings_context(service: Tourneys, event_id: str) -> dict[str, Any]:
    service.tick(event_id)
    table = service.standings(event_id)
    with service.db.read() as s:
        t = service.tournament(s, event_id)
        return {
            "ev": service.summary(s, t),
            "table": table,
            "grouped": any("group" in row for row in table["standings"]),
            "clock": service.clock_dict(t, service.current_round(t)),
            "cursor": cursor_now(s),
        }


@router.get("/tourneys/{event_id}", response_class=HTMLResponse)
@router.get("/tourneys/{event_id}/pairings", response_class=HTMLResponse)
def pairings_page(
    request: Request, event_id: EventId, service: Service, round: RoundQuery = None
) -> HTMLResponse:
    ctx = pairings_context(service, event_id, round)
    return render(request, "tourney_pairings.html", {**ctx, "fixed_round": round})


@router.get("/tourneys/{event_id}/standings", response_class=HTMLResponse)
def standings_page(request: Request, event_id: EventId, service: Service) -> HTMLResponse:
    return render(request, "tourney_standings.html", standings_context(service, event_id))


@router.get("/tourneys/{event_id}/rounds/{number}/sheet", response_class=HTMLResponse)
def pairing_sheet(request: Request, event_id: EventId, number: RoundNo, service: Service) -> HTMLResponse:
    """The round's pairing on paper (print CSS: black on white, one table per line)."""
    return render(request, "tourney_sheet.html", pairings_context(service, event_id, number))


@router.get("/fragments/tourneys/{event_id}/pairings", response_class=HTMLResponse)
def pairings_fragment(
    request: Request, event_id: EventId, service: Service, round: RoundQuery = None
) -> HTMLResponse:
    return render(request, "_tourney_pairings.html", pairings_context(service, event_id, round))


@router.get("/fragments/tourneys/{event_id}/standings", response_class=HTMLResponse)
def standings_fragment(request: Request, event_id: EventId, service: Service) -> HTMLResponse:
    return render(request, "_tourney_standings.html", standings_context(service, event_id))
