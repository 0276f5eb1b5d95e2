"""Request and response bodies (pydantic): the API's OpenAPI schema is made from these and from the
edge's bodies (events, deal logs) in :mod:`contract`, which the table service shares. Unknown keys
are refused except inside deal logs, whose contract (deal-log.md) allows added fields."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from contract.base import Card, Seat, Strict, Trump
from contract.boards import BoardLogIn, GomokuLogIn
from contract.deals import DealLogIn
from engine.text import shown

RuleId = Literal["national-1deck", "national-2deck", "national-3deck", "zhku-3deck", "challenge-2deck"]
# A name shown on the pages: no control characters (PostgreSQL refuses NUL in text).
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100, pattern=r"^[^\x00-\x1f\x7f]+$"),
]
Text = Annotated[str, StringConstraints(max_length=1000, pattern=r"^[^\x00]*$")]
Rank = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^([2-9]|10|[TtJjQqKkAa])$")]
#: The largest id, sequence number or cursor the database holds (a 32-bit integer column).
MAX_ID = 2**31 - 1


class SideLevels(Strict):
    """Each side's level (a rank, 2 … A)."""

    NS: Rank = "2"
    EW: Rank = "2"


class Teams(Strict):
    """The names of the teams (or pairs) sitting N/S and E/W."""

    NS: Name | None = None
    EW: Name | None = None


GameName = Literal["shengji", "bridge", "gomoku"]


class TableCreate(Strict):
    name: Name
    plays: GameName = Field(default="shengji", description="the game the table plays (games.md)")
    rules: RuleId | None = Field(default=None, description="Shengji's rule set")
    levels: SideLevels | None = Field(
        default=None, description="Shengji: levels before the first deal (default 2/2)"
    )
    dealer: Seat | None = Field(default=None, description="Shengji: the first deal's dealer, when known")
    teams: Teams | None = None

    @model_validator(mode="after")
    def _shengji_only(self) -> TableCreate:
        if self.plays != "shengji":
            given = [k for k in ("rules", "levels", "dealer") if getattr(self, k) is not None]
            if given:
                raise ValueError(f"{', '.join(given)}: Shengji's only, not {self.plays}'s")
        return self


class TableUpdate(Strict):
    """What an organiser or referee may set on a table; a table's own token never can."""

    name: Name | None = None
    teams: Teams | None = None
    levels: SideLevels | None = Field(default=None, description="levels before the first deal")
    dealer: Seat | None = Field(default=None, description="the first deal's dealer")
    archived: bool | None = Field(
        default=None, description="left off the pages and the event forms (it still takes posts)"
    )


class TableCreated(Strict):
    """A table's id and its token (shown once: the table posts with it)."""

    id: str
    token: str


class UserCreate(Strict):
    username: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,60}$")]
    password: Annotated[str, StringConstraints(min_length=8, max_length=200)]
    role: Literal["referee", "admin"] = "referee"


class Login(Strict):
    username: str = Field(max_length=60)
    password: str = Field(max_length=200)


# --- referee work ------------------------------------------------------------------------------


class RulingIn(Strict):
    """A referee's ruling; omit the numbers to apply the rule set's standard penalty."""

    seat: Seat | None = None
    kind: Literal["revoke", "failed_throw", "other"] | None = None
    points: int | None = Field(default=None, ge=0, le=1000)
    levels: int | None = Field(default=None, ge=0, le=13)
    deals_next: bool | None = None
    trick: int | None = Field(default=None, ge=1, le=60)
    note: Text = ""


class BeforeAfter(Strict):
    before: Any = None
    after: Any = None


class RulingPreview(Strict):
    """What a ruling would change, before the referee confirms it."""

    deal: int
    ruling: dict[str, Any]
    defender_total: BeforeAfter
    outcome: BeforeAfter
    levels: BeforeAfter = Field(description="the game's levels now, and after the ruling")
    dealer: BeforeAfter = Field(description="the game's next dealer now, and after the ruling")
    counts: bool = Field(
        description="whether the deal counts in its game (a held or voided deal moves nothing)"
    )


class AlertClose(Strict):
    note: Text = ""


class PlayFix(Strict):
    trick: int = Field(ge=1, le=60)
    seat: Seat
    cards: list[Card] = Field(min_length=1, max_length=60)


Reason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]


class LogChange(Strict):
    """Changes to a deal log: a whole corrected ``log``, or fixed plays (``fix``, ``fixes``), a
    fixed ``bottom`` and the ``trump`` as declared (the table's camera did not see the declaration,
    or misread it). A finished deal stays whole, so a misread card is fixed together with the place
    its twin was read."""

    reason: Reason
    log: DealLogIn | BoardLogIn | GomokuLogIn | None = Field(
        default=None, description="a Shengji deal log, a bridge log or a gomoku log"
    )
    fix: PlayFix | None = None
    fixes: list[PlayFix] = Field(default_factory=list, max_length=8)
    bottom: list[Card] | None = Field(default=None, max_length=8)
    trump: Trump | None = None

    def plays(self) -> list[PlayFix]:
        """The fixed plays, ``fix`` first."""
        return ([self.fix] if self.fix is not None else []) + list(self.fixes)

    def names_cards(self) -> bool:
        """Whether the body changes the log at all (a log, a play, the bottom or the trump)."""
        return self.log is not None or bool(self.plays()) or self.bottom is not None or self.trump is not None


class Correction(LogChange):
    """A new version of a stored deal, made on its current version ``base_version``."""

    base_version: int = Field(ge=1, le=MAX_ID)


class Resolution(LogChange):
    """A referee settling an alert. A ``refused`` log: the corrected log (or its fixed plays and
    bottom) is scored and stored as the table's deal. A ``look``: the cards the referee saw become
    a new version of the look's deal, made on ``base_version``; with no cards, the look closes."""

    base_version: int | None = Field(default=None, ge=1, le=MAX_ID)


# --- responses -------------------------------------------------------------------------------------


class GameOut(Strict):
    """A game at a table: from its start levels to its end; in an event, one board of one match."""

    number: int
    status: Literal["open", "ready", "closed"]
    teams: dict[str, str | None]
    start: dict[str, Any] | None
    deals: int = Field(description="deals counted in the game")
    event: str | None
    event_name: str | None
    round: int | None
    table_no: int | None = Field(description="the match's table number in its round")
    board: int | None = Field(description="the board of a team match (1, 2, …)")
    match: bool
    note: str


class TableSummary(Strict):
    """A table as the pages and the API show it: its match state (levels, next dealer, winner), the
    deal in play (``live``) and its health."""

    id: str
    name: str
    plays: str = Field(default="shengji", description="the game the table plays (games.md)")
    teams: dict[str, str | None]
    start: dict[str, Any] | None = Field(description="levels and dealer before the first deal, as set")
    rules: str | None
    levels: dict[str, str] = Field(description='each side\'s level, e.g. {"NS": "5", "EW": "3"}')
    dealer: str | None = Field(description="the next deal's dealer, when known")
    winner: str | None = Field(description="the side that won the match, once one has")
    deals: int
    boards: dict[str, Any] | None = Field(
        default=None,
        description="a bridge table: the boards played in its current game, the last one's line, "
        "and the boards its round plays",
    )
    gomoku: dict[str, Any] | None = Field(
        default=None,
        description="a gomoku table: the games played in its current game, the last one's result",
    )
    open_alerts: int
    live: dict[str, Any] = Field(description="the deal in play: its start, plays and trick results so far")
    health: dict[str, Any] = Field(description="online, last reading, camera, looks waiting")
    game: GameOut | None = Field(default=None, description="the game the table plays now")
    next: GameOut | None = Field(default=None, description="an event's game waiting for this one to close")
    archived: bool = False


class TableList(Strict):
    tables: list[TableSummary]
    cursor: int = Field(description="the feed's newest event: stream from here (GET /api/stream?after=)")


class UserCreated(Strict):
    username: str
    role: Literal["referee", "admin"]


class LoggedIn(Strict):
    token: str
    username: str
    role: Literal["referee", "admin"]
    expires_at: str


class DealMove(Strict):
    """Where a deal belongs: a game at a table (default: that table's current game)."""

    to_table: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]
    game: int | None = Field(default=None, ge=1, le=MAX_ID, description="the game's number at that table")
    reason: Reason


class DealStatusChange(Strict):
    reason: Reason


class DealPlace(Strict):
    """Where a deal counts now, and what referees did to it (moves, voids)."""

    table: str
    deal: int
    status: Literal["counted", "held", "voided"]
    game: GameOut | None
    history: list[dict[str, Any]]
    state_after: dict[str, Any] | None


class DealRow(Strict):
    """A stored deal at its current version."""

    deal: int
    idempotency_key: str | None
    version: int
    log: dict[str, Any]
    result: dict[str, Any] | None
    state_after: dict[str, Any] | None
    status: Literal["counted", "held", "voided"] = "counted"
    game: int | None = Field(default=None, description="the game's number at the table")


class DealList(Strict):
    deals: list[DealRow]
    next: int = Field(description="the last deal number listed: page on with ?after=")


class DealVersionOut(Strict):
    version: int
    author: str | None
    reason: str | None
    at: str | None
    log: dict[str, Any]
    result: dict[str, Any] | None


class DealDetail(Strict):
    deal: int
    table: str
    current_version: int
    idempotency_key: str | None
    state_after: dict[str, Any] | None
    versions: list[DealVersionOut]
    status: Literal["counted", "held", "voided"] = "counted"
    game: GameOut | None = None
    history: list[dict[str, Any]] = Field(default_factory=list, description="moves and voids")


class VersionMade(Strict):
    """A new version of a deal (a correction, a ruling, a look settled) or a refused log stored."""

    deal: int
    version: int
    result: dict[str, Any] | None
    state_after: dict[str, Any] | None = None


class FeedEvent(Strict):
    id: int
    table: str | None
    kind: str
    at: str | None
    data: dict[str, Any]


class EventList(Strict):
    events: list[FeedEvent]
    cursor: int = Field(description="the last event listed: page on with ?after=")


class AlertOut(Strict):
    """An alert for a referee, with the engine's (or the table's) reasoning and its pictures."""

    id: int
    table: str
    deal_id: int | None
    kind: str
    seat: str | None
    trick: int | None
    proven_at: int | None
    reasoning: str
    source: str
    status: str
    ruling: dict[str, Any] | None
    note: str | None
    resolved_by: str | None
    data: dict[str, Any] | None
    images: list[str] = Field(description="the evidence pictures' addresses")
    deal: int | None = Field(default=None, description="the alert's deal number at its table (GET one alert)")


class AlertList(Strict):
    alerts: list[AlertOut]


class Refused(Strict):
    """A deal log the scoreboard refuses (422): why, and the ``refused`` alert that keeps it."""

    detail: str
    alert: int | None = None


def one_line(errors: list[Any]) -> str:
    """A short message from pydantic errors: ``field.path: message (got value); ...``.

    >>> one_line([{"loc": ("body", "rules"), "msg": "Input should be 'a' or 'b'", "input": "poker"}])
    "rules: Input should be 'a' or 'b' (got 'poker')"
    """
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        text = f"{loc}: {err.get('msg')}" if loc else str(err.get("msg"))
        value = err.get("input")
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            text += f" (got {shown(value)})"
        parts.append(text)
    return "; ".join(parts)


# --- the event (issue 43) -------------------------------------------------------------------------

TableRef = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]
EntryId = Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f\x7f]+$")]


class ClockSettings(Strict):
    """A round's clock: its length, the minute of the last-deal call, and what the call means
    (``finish_deal``: seed 001, the deal in play is the last; ``no_new_deal``: seed 004;
    ``three_more_deals``: seed 002 art. 38). Each scoring has its seed's default."""

    minutes: int = Field(ge=1, le=24 * 60)
    call_at: int = Field(ge=1, le=24 * 60)
    rule: Literal["finish_deal", "no_new_deal", "three_more_deals"]


class TourneyImport(Strict):
    """An event file (``shared/spec/cli.md``, "Tournament commands"), checked by ``tourney``'s parser
    (a bad one is a 422 naming the field), with the scoreboard tables its table numbers play at (in
    order: table n is the n-th; a team match takes one per board) and, optionally, its clock."""

    event: dict[str, Any] = Field(description="the event file, as `tractorcam tourney` reads it")
    tables: list[TableRef | None] = Field(default_factory=list, max_length=4096)
    clock: ClockSettings | None = None
    again: bool = Field(default=False, description="import a file already imported, on purpose")


class TourneyUpdate(Strict):
    """The event's name, its scoreboard tables (for rounds paired from now on), its clock, or
    archived (its waiting games dropped and those in play closed) or back."""

    name: Name | None = None
    tables: list[TableRef | None] | None = Field(default=None, max_length=4096)
    clock: ClockSettings | None = None
    archived: bool | None = None


EntryName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$"),
]


class EntryIn(Strict):
    """A new entry (a pair, or a team with ``pairs``); its id is made up (E01, E02, …) when not given."""

    id: EntryId | None = None
    name: EntryName
    unit: EntryName | None = None
    rating: float = Field(default=0, ge=-1e9, le=1e9)
    group: EntryName | None = None
    pairs: list[EntryName] | None = Field(default=None, max_length=16)


class EntryChange(Strict):
    """An entry's details, or ``withdrawn`` (kept in the standings, not paired again) or back."""

    name: EntryName | None = None
    unit: EntryName | None = None
    rating: float | None = Field(default=None, ge=-1e9, le=1e9)
    group: EntryName | None = None
    pairs: list[EntryName] | None = Field(default=None, max_length=16)
    withdrawn: bool | None = None


class RoundStatus(Strict):
    round: int
    status: Literal["draft", "published"]


class TourneyOut(Strict):
    id: str
    name: str | None
    format: str
    scoring: str
    seed: int
    rounds_planned: int | None
    entries: int
    team: bool = Field(description="entries are teams of pairs (seed 001): a match is one board per pair")
    clock: dict[str, Any]
    tables: list[str | None]
    rounds: list[RoundStatus]
    archived: bool = False
    warnings: list[str] = Field(default_factory=list, description="what the organiser should know")


class TourneyList(Strict):
    events: list[TourneyOut]


class EventEntry(Strict):
    id: str
    name: str
    unit: str | None = None
    rating: float
    group: str | None = None
    pairs: list[str] | None = None
    withdrawn: bool | None = None


BoardResult = dict[str, Any]


class EventMatch(Strict):
    table: int
    home: str
    away: str
    result: BoardResult | list[BoardResult] | None = Field(
        default=None, description="levels or a forfeit; a team match: one per board"
    )


class EventBye(Strict):
    bye: str


class EventRound(Strict):
    round: int
    matches: list[EventMatch | EventBye]


class EventFile(Strict):
    """The event file of the published rounds, in the spec's form (`tractorcam tourney` reads it)."""

    name: str | None = None
    format: str
    scoring: str
    rounds_planned: int | None = None
    seed: int
    entries: list[EventEntry]
    rounds: list[EventRound]


class Relaxation(Strict):
    rule: Literal["rematch", "same_unit", "second_bye", "same_group"]
    entries: list[str]


class MatchOut(Strict):
    table: int | None = None
    home: str | None = None
    away: str | None = None
    bye: str | None = None
    result: BoardResult | list[BoardResult] | None = None
    tables: list[str | None] | None = Field(default=None, description="the scoreboard table of each board")
    home_side: str | None = None
    boards: list[BoardResult | None] | None = Field(default=None, description="each board's result so far")
    source: str | None = Field(default=None, description="referee, table or import")
    by: str | None = None
    at: str | None = None
    note: str | None = Field(default=None, description="why the result was taken over a warning")
    history: list[dict[str, Any]] | None = Field(default=None, description="earlier results, oldest first")
    home_name: str | None = None
    away_name: str | None = None
    bye_name: str | None = None
    games: list[dict[str, Any]] | None = Field(
        default=None, description="each board's game at its table: levels, deals, a deal in play"
    )


class ClockOut(Strict):
    minutes: int | None = None
    call_at: int | None = None
    rule: str | None = None
    round: int | None
    state: Literal["not started", "running", "paused", "called", "time"]
    started_at: str | None
    call_at_time: str | None = None
    ends_at: str | None = None
    elapsed_s: int | None = None
    remaining_s: int | None = None
    called: bool | None = None
    call: str | None = Field(default=None, description="what the last-deal call tells the tables")
    paused_s: int | None = Field(default=None, description="seconds the clock was paused (they move the end)")


class RoundOut(Strict):
    event: str
    round: int
    status: Literal["draft", "published"]
    matches: list[MatchOut]
    relaxed: list[Relaxation] = Field(description="the rules this pairing breaks (none while avoidable)")
    clock: ClockOut
    warnings: list[str] = Field(default_factory=list)


class OverrideMatch(Strict):
    table: int = Field(ge=1, le=100_000)
    home: EntryId
    away: EntryId
    tables: list[TableRef | None] | None = Field(default=None, max_length=8)


class OverrideBye(Strict):
    bye: EntryId


class PairingOverride(Strict):
    """A round's pairing as the organiser wants it (swapped entries or tables): accepted, and the
    answer's ``relaxed`` names each rule it breaks."""

    matches: list[OverrideMatch | OverrideBye] = Field(min_length=1, max_length=8192)


class ResultIn(Strict):
    """A match's result in the event file's form: ``{"home_level", "away_level"}`` or
    ``{"forfeit": "home"|"away"}`` (with ``winner``/``violations`` as the file allows); a team match
    a list, one per board (or one forfeit)."""

    result: BoardResult | list[BoardResult]
    reason: Reason | None = Field(
        default=None, description="why the match closes while a deal is still in play (kept with the result)"
    )


class MatchClose(Strict):
    reason: Reason | None = Field(
        default=None,
        description="why the match closes while a deal is in play or none was played (kept with the result)",
    )


class ClockStart(Strict):
    """``start`` (once), ``pause``, ``resume``, or ``call`` (send the last-deal call now)."""

    action: Literal["start", "pause", "resume", "call"] = "start"


class StandingRow(BaseModel):
    """A row of the standings as ``tractorcam tourney standings`` prints it (the scoring's own
    tie-breaks beside these)."""

    model_config = ConfigDict(extra="allow")

    rank: int
    id: str
    name: str
    points: int
    opponents_points: int
    level_difference: int
    played: int
    won: int
    drawn: int
    lost: int
    byes: int
    lot: int


class StandingsOut(Strict):
    event: str
    after_round: int
    scoring: str
    order: list[str]
    standings: list[StandingRow]


# --- a bridge event (seed 003) ------------------------------------------------------------------


class PairNames(Strict):
    """The pairs' names in each direction, by pair number (a Mitchell: one pair of each direction per table)."""

    NS: list[Name] | None = Field(default=None, max_length=64)
    EW: list[Name] | None = Field(default=None, max_length=64)


class TeamNames(Strict):
    A: Name | None = None
    B: Name | None = None


class BridgeEventCreate(Strict):
    """A bridge event from bridge tables (table 1, 2, … in this order): ``pairs`` (a Mitchell
    movement, 3 tables or more, match points) or ``teams`` (a team match at 2 tables, IMPs)."""

    name: Name
    kind: Literal["pairs", "teams"]
    tables: list[TableRef] = Field(min_length=2, max_length=64)
    boards_per_round: int = Field(default=2, ge=1, le=8)
    rounds: int | None = Field(
        default=None, ge=1, le=64, description="default: the whole Mitchell (pairs), 1 (teams)"
    )
    pairs: PairNames | None = None
    teams: TeamNames | None = None


class BridgeRoundStart(Strict):
    """The round to start: the event's next."""

    round: int = Field(ge=1, le=64)


class BridgeSeating(Strict):
    round: int
    table: int
    ns: int
    ew: int
    ns_name: str
    ew_name: str
    boards: list[int]


class BridgeStanding(Strict):
    direction: Literal["NS", "EW"]
    pair: int
    name: str
    matchpoints: int
    top: int
    percentage: float


class BridgeEventHead(Strict):
    id: str
    name: str
    kind: Literal["pairs", "teams"]
    boards_per_round: int
    rounds: int
    current_round: int = Field(description="0 before the first round starts")
    tables: list[str]
    names: dict[str, list[str]] = Field(description="the pairs of each direction, or the two teams")


class BridgeEventOut(BridgeEventHead):
    movement: list[BridgeSeating]
    boards: list[dict[str, int]] = Field(description="each board and how many results it has")
    standings: list[BridgeStanding] = Field(description="a pair event's, each direction best first")
    match: dict[str, Any] | None = Field(description="a team match: each board's IMPs to team A, and totals")


class BridgeEventList(Strict):
    events: list[BridgeEventHead]


class TravellerLine(Strict):
    board: int
    round: int | None
    table: int | None
    table_id: str
    table_name: str
    deal: int
    ns: int | None
    ew: int | None
    ns_name: str | None
    ew_name: str | None
    contract: str | None
    declarer: str | None
    result: int | None
    ns_score: int
    ns_mp: int | None = None
    ew_mp: int | None = None


class TravellerOut(Strict):
    event: BridgeEventHead
    board: int
    lines: list[TravellerLine]
    top: int | None = Field(description="a pair event's top on this board")
    imps: int | None = Field(
        description="a team match: the board's IMPs to team A, once both tables played it"
    )
