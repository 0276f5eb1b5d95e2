"""Deal-log helpers around the engine's output: play fixes, fold inputs, alert wording, evidence."""

from __future__ import annotations

import base64
import binascii
import copy
from typing import Any

from contract.events import AlertIn
from scoreboard.errors import Invalid, TooLarge
from scoreboard.schemas import LogChange

IMAGE_MAGIC = {
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/webp": (b"RIFF",),
}
MAX_IMAGE_BYTES = 2_000_000


def violation_reasoning(violation: dict[str, Any], seq: int) -> str:
    kind = str(violation.get("kind")).replace("_", " ")
    if violation.get("kind") == "overtime":
        colour = {"B": "black", "W": "white"}.get(str(violation.get("colour")), violation.get("colour"))
        return (
            f"engine: overtime by {colour} at move {violation.get('move')} of game {seq}: "
            f"{violation.get('seconds')} s of {violation.get('limit')} s (the referee rules; nothing is forfeited)"
        )
    text = (
        f"engine: {kind} by {violation.get('seat')} at trick {violation.get('trick')} of deal {seq}, "
        f"proven by the plays of trick {violation.get('proven_at')}"
    )
    extra = {k: v for k, v in violation.items() if k not in ("kind", "seat", "trick", "proven_at")}
    if extra:
        text += " — " + "; ".join(
            f"{k}: {' '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in extra.items()
        )
    return text


BULKY_LOG_KEYS = ("tricks", "hands", "bottom")


def fold_input(log: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """A deal's log and result without the lists MatchState does not need."""
    return {
        "log": {k: v for k, v in log.items() if k not in BULKY_LOG_KEYS},
        "result": {k: v for k, v in result.items() if k not in ("tricks", "violations")},
    }


def replace_play(log: dict[str, Any], trick: int, seat: str, cards: list[str]) -> dict[str, Any]:
    new = copy.deepcopy(log)
    tricks = new.get("tricks") or []
    if trick > len(tricks):
        raise Invalid(f"the deal has {len(tricks)} tricks, no trick {trick}")
    bridge = new.get("game") == "bridge"
    if bridge and len(cards) != 1:
        raise Invalid(f"a bridge play is one card, not {len(cards)}")
    for play in tricks[trick - 1].get("plays", []):
        if play and play[0] == seat:
            play[1] = cards[0] if bridge else list(cards)
            if len(play) > 2:
                del play[2:]  # a declared split no longer applies to other cards
            return new
    raise Invalid(f"trick {trick} has no play by {seat}")


def changed_log(log: dict[str, Any], body: LogChange) -> dict[str, Any]:
    """``log`` with ``body``'s changes: its whole ``log``, or its fixed plays, bottom and trump;
    exactly one of the two kinds (422 otherwise)."""
    if (body.log is None) == (not body.plays() and body.bottom is None and body.trump is None):
        raise Invalid(
            'give either "log" (the corrected deal log) or fixed plays ("fix", "fixes"), "bottom" and "trump"',
        )
    if body.log is not None:
        return body.log.model_dump(mode="json", exclude_unset=True)
    if log.get("game") == "gomoku":
        raise Invalid('a gomoku game is corrected with its whole log ("log")')
    if log.get("game") == "bridge" and (body.bottom is not None or body.trump is not None):
        raise Invalid("a bridge board has no bottom and no trump to fix: fix its plays or give its log")
    new = copy.deepcopy(log)
    for fix in body.plays():
        new = replace_play(new, fix.trick, fix.seat, fix.cards)
    if body.bottom is not None:
        new["bottom"] = list(body.bottom)
    if body.trump is not None:
        new["trump"] = body.trump
    return new


def decode_images(event: AlertIn) -> list[tuple[str, str, bytes]]:
    out: list[tuple[str, str, bytes]] = []
    for index, image in enumerate(event.images, start=1):
        try:
            data = base64.b64decode(image.data, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise Invalid(f"image {index}: not valid base64") from exc
        if len(data) > MAX_IMAGE_BYTES:
            raise TooLarge(f"image {index}: larger than {MAX_IMAGE_BYTES} bytes")
        if not data.startswith(IMAGE_MAGIC[image.content_type]):
            raise Invalid(f"image {index}: not a {image.content_type} file")
        out.append((image.content_type, image.caption, data))
    return out


def continuity_doubt(state: dict[str, Any], log: dict[str, Any]) -> str | None:
    """Why a new deal does not follow from the table's match state (dealer or level), if it doesn't."""
    dealer, levels = state.get("dealer"), state.get("levels") or {}
    if dealer is None or not isinstance(log.get("dealer"), str):
        return None  # the first deal: anyone may deal
    problems = []
    if log["dealer"].upper() != dealer:
        problems.append(f"dealer {log['dealer']} (the match state says {dealer} deals)")
    side = "NS" if dealer in "SN" else "EW"
    level = str(log.get("level", "")).upper()
    if level and levels.get(side) and level != levels[side]:
        problems.append(f"level {level} ({side}, the dealer's side, is at {levels[side]})")
    if not problems:
        return None
    return "mismatch: the posted deal has " + " and ".join(problems)
