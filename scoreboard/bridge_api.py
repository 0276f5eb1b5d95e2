"""A bridge event's JSON API (``/api/bridge/events``): the **admin** (the organiser) creates an
event from bridge tables; a **referee** (the director) starts its rounds; anyone reads the event
(its movement, its standings or team match) and each board's traveller."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse

from scoreboard.api import Admin, Referee, reply
from scoreboard.bridge_events import BridgeEvents
from scoreboard.errors import NotFound
from scoreboard.schemas import (
    BridgeEventCreate,
    BridgeEventList,
    BridgeEventOut,
    BridgeRoundStart,
    TravellerOut,
)

router = APIRouter(prefix="/api/bridge/events")
EVENT_ID = re.compile(r"^[0-9a-f]{32}$")


def get_bridge(request: Request) -> BridgeEvents:
    return request.app.state.bridge  # type: ignore[no-any-return]


Service = Annotated[BridgeEvents, Depends(get_bridge)]


def event_id_path(bridge_id: Annotated[str, Path(max_length=64)]) -> str:
    if not EVENT_ID.match(bridge_id):
        raise NotFound("no such bridge event")
    return bridge_id


EventId = Annotated[str, Depends(event_id_path)]
BoardNo = Annotated[int, Path(ge=1, le=999)]


@router.post("", status_code=201, response_model=BridgeEventOut)
def create_event(body: BridgeEventCreate, service: Service, _: Admin) -> JSONResponse:
    """A new bridge event from bridge tables; no round is started yet."""
    out = service.create(body)
    return reply(201, out, {"Location": f"/api/bridge/events/{out['id']}"})


@router.get("", response_model=BridgeEventList)
def list_events(service: Service) -> dict[str, Any]:
    """The bridge events, newest first."""
    return {"events": service.all()}


@router.get("/{bridge_id}", response_model=BridgeEventOut)
def get_event(bridge_id: EventId, service: Service) -> dict[str, Any]:
    """The event: its movement, the boards with how many results each has, and its standings (pairs)
    or its team match (teams)."""
    return service.view(bridge_id)


@router.post("/{bridge_id}/rounds", response_model=BridgeEventOut)
def start_round(bridge_id: EventId, body: BridgeRoundStart, service: Service, who: Referee) -> dict[str, Any]:
    """The director starts the event's next round: each table's game becomes the round's, with its
    boards and pairs (the table's previous game closes)."""
    return service.start_round(bridge_id, body.round, who.name)


@router.get("/{bridge_id}/boards/{board}", response_model=TravellerOut)
def traveller(bridge_id: EventId, board: BoardNo, service: Service) -> dict[str, Any]:
    """One board's traveller: each table's result, with match points (pairs) or IMPs (teams)."""
    return service.traveller(bridge_id, board)
