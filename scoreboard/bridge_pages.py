"""A bridge event's live pages: the event (its round, movement, standings or team match, and the
boards with their travellers) and one board's traveller, following the feed like the table pages."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from scoreboard.bridge_api import BoardNo, EventId, Service
from scoreboard.pages import cursor_now, render, who

router = APIRouter(include_in_schema=False)


def event_context(request: Request, service: Service, event_id: str) -> dict[str, Any]:
    ev = service.view(event_id)
    with service.db.read() as s:
        cursor = cursor_now(s)
    now = [x for x in ev["movement"] if x["round"] == ev["current_round"]]
    return {"ev": ev, "now": now, "cursor": cursor, "director": who(request) is not None}


@router.get("/bridge", response_class=HTMLResponse)
def events_page(request: Request, service: Service) -> HTMLResponse:
    with service.db.read() as s:
        cursor = cursor_now(s)
    return render(request, "bridge_events.html", {"events": service.all(), "cursor": cursor})


@router.get("/bridge/{bridge_id}", response_class=HTMLResponse)
def event_page(request: Request, bridge_id: EventId, service: Service) -> HTMLResponse:
    return render(request, "bridge_event.html", event_context(request, service, bridge_id))


@router.get("/fragments/bridge/{bridge_id}", response_class=HTMLResponse)
def event_fragment(request: Request, bridge_id: EventId, service: Service) -> HTMLResponse:
    return render(request, "_bridge_event.html", event_context(request, service, bridge_id))


@router.get("/bridge/{bridge_id}/boards/{board}", response_class=HTMLResponse)
def traveller_page(request: Request, bridge_id: EventId, board: BoardNo, service: Service) -> HTMLResponse:
    out = service.traveller(bridge_id, board)
    with service.db.read() as s:
        cursor = cursor_now(s)
    return render(request, "bridge_traveller.html", {**out, "cursor": cursor})


@router.get("/fragments/bridge/{bridge_id}/boards/{board}", response_class=HTMLResponse)
def traveller_fragment(
    request: Request, bridge_id: EventId, board: BoardNo, service: Service
) -> HTMLResponse:
    return render(request, "_bridge_traveller.html", service.traveller(bridge_id, board))
