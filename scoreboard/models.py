"""Database schema of the scoreboard (SQLAlchemy 2 declarative models).

Every change that screens care about is also appended to ``events``; its integer id is the
cursor a screen or a table uses to re-sync after an outage.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class ScoreTable(Base):
    """One physical tournament table (a camera and four players)."""

    __tablename__ = "tables"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), index=True)
    # The game the table plays (:mod:`games`): its posts are that game's logs.
    game: Mapped[str] = mapped_column(String(20), default="shengji", server_default="shengji")
    rules: Mapped[str | None] = mapped_column(String(40))
    # Match state folded from the current versions of the table's deals (engine.match.MatchState).
    state: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    deal_count: Mapped[int] = mapped_column(Integer, default=0)
    # The deal in progress as the edge reports it (a partial deal log plus the engine's running score).
    live: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    health: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # The game the table plays now (``TableGame.id``): deals it posts are that game's, and
    # ``state`` is that game's state. Its start and team names live on the game.
    game_id: Mapped[int | None] = mapped_column(Integer)
    archived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    deals: Mapped[list[Deal]] = relationship(back_populates="table", order_by="Deal.seq")


class TableGame(Base):
    """One game at one table: from its start levels to its end. A table plays one game per round of
    an event (bound to a match's board by ``match_id`` and ``board``), or a free game outside any
    event. ``status``: ``open`` (the table's current game: its deals count here), ``ready`` (a
    published round's game waiting for the table's current game to close), ``closed``.

    The start ({"levels": {"NS", "EW"}, "dealer"}) and the sides' team names ({"NS", "EW"}) are set by
    the organiser, a referee or the event's pairing, never by the table; ``state`` is the match state
    folded over the game's counted deals."""

    __tablename__ = "table_games"
    __table_args__ = (
        UniqueConstraint("table_id", "number", name="uq_table_games_table_number"),
        Index("ix_table_games_match_id", "match_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(10), default="open")
    start: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    teams: Mapped[dict[str, str] | None] = mapped_column(JSON)
    state: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    deals: Mapped[int] = mapped_column(Integer, default=0)
    match_id: Mapped[int | None] = mapped_column(ForeignKey("tourney_matches.id", ondelete="SET NULL"))
    board: Mapped[int | None] = mapped_column(Integer)
    # Where the game stands in its event, kept with it for the pages and the deals' history.
    tournament_id: Mapped[str | None] = mapped_column(ForeignKey("tournaments.id", ondelete="SET NULL"))
    round_no: Mapped[int | None] = mapped_column(Integer)
    table_no: Mapped[int | None] = mapped_column(Integer)
    # A bridge event's round at this table (its boards and pairs are in ``start`` and ``teams``).
    bridge_event_id: Mapped[str | None] = mapped_column(
        ForeignKey("bridge_events.id", ondelete="SET NULL"), index=True
    )
    opened_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    closed_by: Mapped[str | None] = mapped_column(String(100))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Deal(Base):
    """A finished deal posted by a table; its log lives in versions (corrections keep history)."""

    __tablename__ = "deals"
    __table_args__ = (UniqueConstraint("table_id", "seq", name="uq_deals_table_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    idempotency_key: Mapped[str] = mapped_column(String(200))
    current_version: Mapped[int] = mapped_column(Integer, default=1)
    # The table's match state right after this deal (recomputed when an earlier deal is corrected).
    state_after: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # The current version's log and result without their bulky lists (tricks, hands, bottom): what
    # folding MatchState over the table needs, small enough to read for every deal on every post.
    fold: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # The game the deal was played in (its round and match, in an event).
    game_id: Mapped[int | None] = mapped_column(ForeignKey("table_games.id", ondelete="SET NULL"), index=True)
    # ``counted`` (folded into its game), ``held`` (posted to a game already closed: kept apart
    # until a referee counts, moves or voids it) or ``voided`` (by a referee).
    status: Mapped[str] = mapped_column(String(10), default="counted")
    # What referees did to the deal beside new versions: moves and voids, with reason, who and when.
    history: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    table: Mapped[ScoreTable] = relationship(back_populates="deals")
    versions: Mapped[list[DealVersion]] = relationship(
        back_populates="deal", order_by="DealVersion.version", cascade="all, delete-orphan"
    )


class DealVersion(Base):
    """One version of a deal log and the engine's score of it. Version 1 is what the table sent."""

    __tablename__ = "deal_versions"
    __table_args__ = (UniqueConstraint("deal_id", "version", name="uq_deal_versions_deal_version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    deal_id: Mapped[int] = mapped_column(ForeignKey("deals.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    log: Mapped[dict[str, Any]] = mapped_column(JSON)
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    author: Mapped[str] = mapped_column(String(100))
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    deal: Mapped[Deal] = relationship(back_populates="versions")


class IdempotencyRecord(Base):
    """The stored response of a keyed POST; replays return it, a different body is refused."""

    __tablename__ = "idempotency"
    __table_args__ = (UniqueConstraint("table_id", "scope", "key", name="uq_idempotency_table_scope_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id", ondelete="CASCADE"))
    scope: Mapped[str] = mapped_column(String(20))
    key: Mapped[str] = mapped_column(String(200))
    request_hash: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int] = mapped_column(Integer)
    response: Mapped[Any] = mapped_column(JSON)
    headers: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Event(Base):
    """Append-only feed of everything that changed; ``id`` is the re-sync cursor."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_table_id_id", "table_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str | None] = mapped_column(ForeignKey("tables.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(40))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Alert(Base):
    """Something for a referee: a suspected rule break (revoke, failed throw), a mismatch between
    what the table reports and the match state, or a deal log the scoreboard refused (``refused``,
    with the log kept in ``data`` for the referee to correct)."""

    __tablename__ = "alerts"
    __table_args__ = (Index("ix_alerts_status", "status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id", ondelete="CASCADE"), index=True)
    deal_id: Mapped[int | None] = mapped_column(ForeignKey("deals.id", ondelete="SET NULL"))
    kind: Mapped[str] = mapped_column(String(20))
    seat: Mapped[str | None] = mapped_column(String(1))
    trick: Mapped[int | None] = mapped_column(Integer)
    proven_at: Mapped[int | None] = mapped_column(Integer)
    reasoning: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str] = mapped_column(String(10))  # "edge" or "engine"
    status: Mapped[str] = mapped_column(String(12), default="open")
    ruling: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # What the referee needs beside the reasoning: a refused log ({"log": ..., "key": ...}).
    data: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    note: Mapped[str] = mapped_column(Text, default="")
    resolved_by: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    images: Mapped[list[AlertImage]] = relationship(
        back_populates="alert", order_by="AlertImage.id", cascade="all, delete-orphan"
    )


class AlertImage(Base):
    """An evidence image (JPEG/PNG) attached to an alert by the edge."""

    __tablename__ = "alert_images"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    alert_id: Mapped[int] = mapped_column(ForeignKey("alerts.id", ondelete="CASCADE"), index=True)
    content_type: Mapped[str] = mapped_column(String(20))
    caption: Mapped[str] = mapped_column(String(200), default="")
    data: Mapped[bytes] = mapped_column(LargeBinary)

    alert: Mapped[Alert] = relationship(back_populates="images")


class User(Base):
    """A referee or an admin who can log in to the referee pages."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(60), unique=True)
    password_hash: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(10))  # "referee" or "admin"
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LoginSession(Base):
    """A logged-in referee or admin; the bearer/cookie token is stored hashed."""

    __tablename__ = "login_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


# --- the event around the tables (issue 43): entries, rounds, matches, results -----------------


class Tournament(Base):
    """An event run on the scoreboard: its format and scoring (``tourney``'s vocabulary), the lot's
    seed, the clock of its rounds, and the scoreboard tables its matches are played at (``tables``:
    table ids in table-number order; a team match takes one per board)."""

    __tablename__ = "tournaments"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str | None] = mapped_column(String(200))
    format: Mapped[str] = mapped_column(String(20))
    scoring: Mapped[str] = mapped_column(String(20))
    seed: Mapped[int] = mapped_column(BigInteger)
    rounds_planned: Mapped[int | None] = mapped_column(Integer)
    # {"minutes", "call_at", "rule"}: the round's length, when the last-deal call comes, what it means
    clock: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    tables: Mapped[list[str | None]] = mapped_column(JSON, default=list)
    # The SHA-256 of the imported event file (canonical JSON): importing it again is refused.
    source_hash: Mapped[str | None] = mapped_column(String(64), index=True)
    archived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    entries: Mapped[list[TourneyEntry]] = relationship(
        back_populates="tournament", order_by="TourneyEntry.position", cascade="all, delete-orphan"
    )
    rounds: Mapped[list[TourneyRound]] = relationship(
        back_populates="tournament", order_by="TourneyRound.number", cascade="all, delete-orphan"
    )


class TourneyEntry(Base):
    """A pair, or a team of ``pairs`` (seed 001), with its unit (单位/部门) and optional rating."""

    __tablename__ = "tourney_entries"
    __table_args__ = (UniqueConstraint("tournament_id", "code", name="uq_tourney_entries_code"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tournament_id: Mapped[str] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    code: Mapped[str] = mapped_column(String(100))  # the event file's entry id
    name: Mapped[str] = mapped_column(String(200))
    unit: Mapped[str | None] = mapped_column(String(200))
    rating: Mapped[float] = mapped_column(Float, default=0)
    group_name: Mapped[str | None] = mapped_column(String(100))
    pairs: Mapped[list[str]] = mapped_column(JSON, default=list)
    withdrawn: Mapped[bool] = mapped_column(Boolean, default=False)

    tournament: Mapped[Tournament] = relationship(back_populates="entries")


class TourneyRound(Base):
    """A round: paired as a ``draft``, then ``published``; its clock once a referee starts it."""

    __tablename__ = "tourney_rounds"
    __table_args__ = (UniqueConstraint("tournament_id", "number", name="uq_tourney_rounds_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tournament_id: Mapped[str] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(10), default="draft")
    # The rules the pairing breaks ({"rule", "entries"}), as the core (or the override check) says.
    relaxed: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    clock_started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    clock_started_by: Mapped[str | None] = mapped_column(String(100))
    # A paused clock: since when, and the seconds of earlier pauses (they move the call and the end).
    clock_paused_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    clock_paused_s: Mapped[int] = mapped_column(Integer, default=0)
    call_sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    tournament: Mapped[Tournament] = relationship(back_populates="rounds")
    matches: Mapped[list[TourneyMatch]] = relationship(
        back_populates="round", order_by="TourneyMatch.position", cascade="all, delete-orphan"
    )


class TourneyMatch(Base):
    """A match (two entries at a table number) or a bye. ``tables`` binds each board to a scoreboard
    table; ``results`` holds one result per board (the event file's form), filled by a referee or
    from the table's levels; ``history`` keeps every earlier result with who entered it."""

    __tablename__ = "tourney_matches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("tourney_rounds.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    table_no: Mapped[int | None] = mapped_column(Integer)
    home: Mapped[str | None] = mapped_column(String(100))
    away: Mapped[str | None] = mapped_column(String(100))
    bye: Mapped[str | None] = mapped_column(String(100))
    tables: Mapped[list[str | None]] = mapped_column(JSON, default=list)
    home_side: Mapped[str] = mapped_column(String(2), default="NS")
    results: Mapped[list[dict[str, Any] | None] | None] = mapped_column(JSON)
    result_source: Mapped[str | None] = mapped_column(String(10))  # "referee", "table", "import"
    result_by: Mapped[str | None] = mapped_column(String(100))
    result_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Why the result was taken as it was, when a referee overrode a warning (a deal still in play).
    result_note: Mapped[str] = mapped_column(Text, default="")
    history: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)

    round: Mapped[TourneyRound] = relationship(back_populates="matches")


# --- a bridge event (seed 003): pairs by match points, or a team match by IMPs -------------------


class BridgeEvent(Base):
    """A bridge pair event (a Mitchell movement, scored by match points) or a team match (two
    tables, IMPs), played at bridge tables (``tables``: table ids in table-number order). A round
    starts when the director starts it: each table's game becomes that round's, with its boards
    and pairs; the boards its tables post are the event's results."""

    __tablename__ = "bridge_events"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(10))  # "pairs" or "teams"
    boards_per_round: Mapped[int] = mapped_column(Integer)
    rounds: Mapped[int] = mapped_column(Integer)
    tables: Mapped[list[str]] = mapped_column(JSON, default=list)
    # pairs: {"NS": [names by pair number], "EW": [...]}; teams: {"A": name, "B": name}
    entries: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    current_round: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
