"""The deal in progress as the edge reports it: a partial deal log scored by the engine.

:class:`LiveDeal` is its typed form; the table row keeps it as JSON (``ScoreTable.live``) with only
the keys that were ever set (:meth:`LiveDeal.stored`), which is also what the API and the feed
send, so a key that was never set is left out rather than sent as ``null``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from contract.events import BoardStart, DealStart, GameStart, LongThink, Play, Stone, TrickResult
from scoreboard import scoring

#: The fields a deal start sets and a trick's running score needs.
_START = ("rules", "level", "trump", "dealer")


class LiveDeal(BaseModel):
    """The deal in play at a table (``finished: false``), or the last one posted (``finished:
    true``, its number in ``deal``). Unset fields are absent from :meth:`stored`."""

    model_config = ConfigDict(extra="allow")

    finished: bool = False
    #: The posted deal's number (a finished deal only).
    deal: int | None = None
    rules: str | None = None
    level: str | None = None
    trump: str | None = None
    dealer: str | None = None
    #: The plays so far, trick by trick: ``{"plays": [[seat, cards, {"as": …}?], …]}``.
    tricks: list[dict[str, Any]] = []
    #: The engine's reading of each finished trick (``winner``, ``points``…).
    scored_tricks: list[dict[str, Any]] = []
    #: The defenders' points so far (the engine's).
    captured: int | None = None
    #: The defenders' total (a finished deal only).
    defender_total: int | None = None
    #: The edge's own trick results, by trick number (a string): ``{"winner", "points"}``.
    trick_results: dict[str, dict[str, Any]] = {}
    #: Why the engine could not score the plays so far.
    error: str | None = None
    #: Bridge: declarer's tricks so far (the bridge rules').
    declarer_tricks: int | None = None
    #: Gomoku: the board's size, the stones so far ``[colour, point, seconds]``, each player's long
    #: thinks (move numbers), when the clock of the move in play started (ISO 8601, the server's),
    #: and the gomoku rules' result so far.
    size: int | None = None
    stones: list[list[Any]] = []
    long_thinks: dict[str, list[int]] = {}
    clock_from: str | None = None
    result: dict[str, Any] | None = None
    #: The id of the game the deal started in.
    game: int | None = None
    #: When the table last said something about its deal (ISO 8601): is it online.
    seen: str | None = None

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any] | None) -> LiveDeal:
        """The stored JSON as it is (no validation: the row holds what :meth:`stored` wrote)."""
        return cls.model_construct(**dict(stored or {}))

    def stored(self) -> dict[str, Any]:
        """The JSON form: the fields that were set, and nothing else."""
        return self.model_dump(exclude_unset=True, warnings=False)

    def empty(self) -> bool:
        """Whether nothing was ever set (a table that has not started a deal)."""
        return not self.model_fields_set and not self.model_extra

    def unset(self, name: str) -> None:
        """Leave ``name`` out of :meth:`stored` again."""
        setattr(self, name, type(self).model_fields[name].get_default(call_default_factory=True))
        self.model_fields_set.discard(name)

    def slim(self) -> dict[str, Any]:
        """What a feed event carries: the current trick only, not the whole deal."""
        live = {k: v for k, v in self.stored().items() if k not in ("tricks", "scored_tricks")}
        tricks = self.tricks or []
        live["trick_count"] = len(tricks)
        live["current_trick"] = tricks[-1] if tricks else None
        return live


def finished_deal(seq: int, log: Mapping[str, Any], result: Mapping[str, Any]) -> LiveDeal:
    """A table's live state once its deal ``seq`` is posted: the whole deal and its score."""
    if log.get("game") == "gomoku":
        return LiveDeal.model_construct(
            finished=True,
            deal=seq,
            game_name="gomoku",
            size=log.get("size", 15),
            stones=log.get("moves", []),
            long_thinks=log.get("long_thinks", {}),
            result=dict(result),
        )
    if log.get("game") == "bridge":
        return LiveDeal.model_construct(
            finished=True,
            deal=seq,
            game_name="bridge",
            board=log.get("board"),
            contract=log.get("contract"),
            declarer=log.get("declarer"),
            tricks=log.get("tricks", []),
            scored_tricks=result.get("tricks", []),
            score=result.get("score"),
            result=result.get("result"),
        )
    return LiveDeal.model_construct(
        finished=True,
        deal=seq,
        rules=log.get("rules"),
        level=log.get("level"),
        trump=log.get("trump"),
        dealer=log.get("dealer"),
        tricks=log.get("tricks", []),
        scored_tricks=result.get("tricks", []),
        captured=result.get("captured"),
        defender_total=result.get("defender_total"),
    )


def _gomoku(live: LiveDeal, event: GameStart | Stone | LongThink, now: str) -> LiveDeal:
    """A gomoku game in progress after one event: the stones so far, each player's long thinks
    (for their next move), when the last stone was laid (the table page's clock runs from there)
    and the result so far (the gomoku rules on the moves so far)."""
    if isinstance(event, GameStart) or (live.model_extra or {}).get("game_name") != "gomoku" or live.finished:
        live = LiveDeal.model_construct(
            finished=False, game_name="gomoku", size=15, stones=[], long_thinks={"B": [], "W": []},
            clock_from=now,
        )  # fmt: skip
        if isinstance(event, GameStart):
            live.size = event.size
            return live
    else:
        live = live.model_copy()
    stones: list[list[Any]] = list(live.stones or [])
    thinks: dict[str, list[int]] = {c: list(v) for c, v in (live.long_thinks or {}).items()}
    if isinstance(event, LongThink):
        number = len(stones) + (1 if len(stones) % 2 == (0 if event.colour == "B" else 1) else 2)
        if number not in thinks.setdefault(event.colour, []):
            thinks[event.colour].append(number)
        live.long_thinks = thinks
        return live
    if event.move != len(stones) + 1:  # a stone out of order: shown as the error, kept out
        live.error = f"stone {event.move} came after stone {len(stones)}"
        return live
    stones.append([event.colour, event.point] + ([] if event.seconds is None else [event.seconds]))
    live.stones, live.clock_from = stones, now
    log = {"game": "gomoku", "size": live.size or 15, "moves": stones, "long_thinks": thinks}
    try:
        result = scoring.score(log)
    except scoring.ScoringError as exc:
        live.error = str(exc)
    else:
        live.unset("error")
        live.result = result
    return live


def _bridge_play(live: LiveDeal, event: Play) -> LiveDeal:
    """A bridge board in progress after one card: each finished trick's winner from the bridge rules."""
    extra = live.model_extra or {}
    if len(event.cards) != 1:
        live.error = f"a bridge play is one card, not {len(event.cards)}"
        return live
    tricks: list[dict[str, Any]] = list(live.tricks or [])
    live.tricks = tricks
    while len(tricks) < event.trick:
        tricks.append({"plays": []})
    tricks[event.trick - 1] = {"plays": [*tricks[event.trick - 1]["plays"], [event.seat, event.cards[0]]]}
    if len(tricks[event.trick - 1]["plays"]) >= 4:
        partial = {
            "game": "bridge",
            **{k: extra.get(k) for k in ("board", "contract", "declarer") if extra.get(k) is not None},
            "tricks": [t for t in tricks if t["plays"]],
        }
        try:
            result = scoring.score(partial)
        except scoring.ScoringError as exc:
            live.error = str(exc)
        else:
            live.unset("error")
            live.scored_tricks = result.get("tricks", [])
            live.declarer_tricks = result.get("declarer_tricks")
    return live


def apply_live(
    live: LiveDeal,
    table_rules: str | None,
    event: DealStart | BoardStart | GameStart | Stone | LongThink | Play | TrickResult,
    now: str = "",
) -> LiveDeal:
    """The deal in progress after one edge event; the running score comes from the game's rules.
    ``now``: the server's time (ISO 8601), from which a gomoku table's clock runs."""
    if isinstance(event, GameStart | Stone | LongThink):
        return _gomoku(live, event, now)
    if isinstance(event, BoardStart):
        return LiveDeal.model_construct(
            finished=False,
            game_name="bridge",
            board=event.board,
            contract=event.contract,
            declarer=event.declarer,
            tricks=[],
            scored_tricks=[],
        )
    if isinstance(event, DealStart):
        return LiveDeal.model_construct(
            finished=False,
            rules=event.rules or table_rules,
            level=event.level,
            trump=event.trump,
            dealer=event.dealer,
            tricks=[],
            captured=0,
            trick_results={},
        )
    # Copy only what changes (the live log grows to a whole deal; deep copies per play add up).
    live = live.model_copy() if not live.finished else LiveDeal.model_construct(finished=False, tricks=[])
    if isinstance(event, TrickResult):
        results = dict(live.trick_results or {})
        results[str(event.trick)] = {"winner": event.winner, "points": event.points}
        live.trick_results = results
        return live
    if (live.model_extra or {}).get("game_name") == "bridge":
        return _bridge_play(live, event)
    tricks: list[dict[str, Any]] = list(live.tricks or [])
    live.tricks = tricks
    while len(tricks) < event.trick:
        tricks.append({"plays": []})
    play: list[Any] = [event.seat, list(event.cards)]
    if event.declared:
        play.append({"as": event.declared})
    tricks[event.trick - 1] = {"plays": [*tricks[event.trick - 1]["plays"], play]}
    trick_done = len(tricks[event.trick - 1]["plays"]) >= 4
    start = {k: getattr(live, k) for k in _START}
    if trick_done and all(start.values()):
        # The defenders' points change only when a trick completes: score then (engine).
        partial: dict[str, Any] = {**start, "tricks": [t for t in tricks if t["plays"]], "finished": False}
        try:
            result = scoring.score(partial)
        except scoring.ScoringError as exc:
            live.error = str(exc)
        else:
            live.unset("error")
            live.captured = result.get("captured")
            live.scored_tricks = result.get("tricks", [])
    return live


def trick_disagreement(live: LiveDeal, event: TrickResult) -> str | None:
    """Why the edge's trick result differs from the engine's reading of the same plays, if it does."""
    scored = live.scored_tricks or []
    if live.error or len(scored) < event.trick:
        return None
    mine = scored[event.trick - 1]
    points, bounds = mine.get("points"), mine.get("points_range")
    fits = points == event.points or (
        points is None and bounds is not None and bounds[0] <= event.points <= bounds[1]
    )
    if mine.get("winner") in (None, event.winner) and fits:  # open values (unknown cards) fit too
        return None
    return (
        f"mismatch at trick {event.trick}: the table reported {event.winner} winning {event.points} points, "
        f"the engine reads the recorded plays as {mine.get('winner')} winning {mine.get('points')} points"
    )
