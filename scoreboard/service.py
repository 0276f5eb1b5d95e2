"""What the scoreboard does, independent of HTTP: tables, deals (idempotent), the edge's events,
alerts, rulings and corrections. Every write is one transaction that also appends to the feed."""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast
from uuid import uuid4

from sqlalchemy import Table, bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from contract.events import AlertIn, DealStart, Health, Play, TrickResult
from scoreboard import feed, games, scoring
from scoreboard.db import Database
from scoreboard.errors import ServiceError, clip
from scoreboard.live import apply_live, trick_disagreement
from scoreboard.logs import changed_log, continuity_doubt, decode_images, fold_input, violation_reasoning
from scoreboard.models import (
    Alert,
    AlertImage,
    Deal,
    DealVersion,
    Event,
    IdempotencyRecord,
    ScoreTable,
    TableGame,
)
from scoreboard.schemas import (
    Correction,
    Resolution,
    RulingIn,
    SideLevels,
    TableCreate,
    TableUpdate,
)
from scoreboard.security import new_token, token_hash

if TYPE_CHECKING:
    from scoreboard.tourney_service import Tourneys

VIOLATION_ALERT_KIND = {"revoke": "revoke", "failed_throw": "failed_throw", "card_count": "mismatch"}
#: The ruling kind an alert suggests; a look or a refused log names none (the referee says which).
RULING_KIND = {"revoke": "revoke", "failed_throw": "failed_throw", "mismatch": "other"}
_TABLES = cast(Table, ScoreTable.__table__)
_IDEM = cast(Table, IdempotencyRecord.__table__)
_EVENTS = cast(Table, Event.__table__)
# Built once: the play path runs for every card laid at every table.
# The table's row (locked on PostgreSQL) and any stored answer for the key, in one round trip.
_SELECT_LIVE = (
    select(
        _TABLES.c.rules,
        _TABLES.c.live,
        _TABLES.c.game_id,
        _IDEM.c.request_hash,
        _IDEM.c.status_code,
        _IDEM.c.response,
        _IDEM.c.headers,
    )
    .select_from(
        _TABLES.outerjoin(
            _IDEM,
            (_IDEM.c.table_id == _TABLES.c.id) & (_IDEM.c.scope == "event") & (_IDEM.c.key == bindparam("k")),
        )
    )
    .where(_TABLES.c.id == bindparam("tid"))
    .with_for_update(of=_TABLES)
)
_UPDATE_LIVE = update(_TABLES).where(_TABLES.c.id == bindparam("tid"))
_INSERT_EVENT = insert(_EVENTS).returning(_EVENTS.c.id)
_INSERT_IDEM = insert(_IDEM)


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


def request_hash(body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def now() -> datetime:
    return datetime.now(UTC)


#: A table that has said nothing for this long is shown offline.
ONLINE_S = 120


def _online(live: dict[str, Any] | None, health: dict[str, Any] | None) -> bool:
    """Whether the table's last play, trick or health report is at most :data:`ONLINE_S` old."""
    stamps = [v for v in ((live or {}).get("seen"), (health or {}).get("at")) if isinstance(v, str)]
    if not stamps:
        return False
    try:
        last = max(datetime.fromisoformat(v) for v in stamps)
    except ValueError:
        return False
    return (now() - last).total_seconds() <= ONLINE_S


class Scoreboard:
    def __init__(self, db: Database, notifier: feed.Notifier, tourneys: Tourneys | None = None) -> None:
        self.db = db
        self.notifier = notifier
        #: The event around the tables: a match bound to a table follows its finished game.
        self.tourneys = tourneys

    # --- tables ------------------------------------------------------------------------------

    def create_table(self, body: TableCreate) -> tuple[str, str]:
        token = new_token()
        start = self._start(body.levels, body.dealer)
        table = ScoreTable(
            id=uuid4().hex,
            name=body.name,
            token_hash=token_hash(token),
            game=body.plays,
            rules=body.rules,
            state=scoring.initial_state(body.rules, start),
            deal_count=0,
            live={},
            health={},
        )
        try:
            with self.db.write() as s:
                if s.scalar(select(ScoreTable.id).where(ScoreTable.name == body.name)):
                    raise ServiceError(409, f"a table named {body.name!r} already exists")
                s.add(table)
                s.flush()
                games.new_game(
                    s,
                    table,
                    status=games.OPEN,
                    start=start,
                    teams=body.teams.model_dump(exclude_none=True) if body.teams else None,
                )
                feed.append(self.db, s, [(table.id, "table", self.summary(s, table, slim=True))])
        except IntegrityError as exc:
            raise ServiceError(409, f"a table named {body.name!r} already exists") from exc
        self.notifier.notify()
        return table.id, token

    @staticmethod
    def _start(levels: SideLevels | None, dealer: str | None) -> dict[str, Any] | None:
        try:
            return scoring.start_of(levels.model_dump() if levels else None, dealer)
        except scoring.ScoringError as exc:
            raise ServiceError(422, str(exc)) from exc

    def update_table(self, table_id: str, body: TableUpdate, author: str) -> dict[str, Any]:
        """Name, team names, starting levels or first dealer of the table's current game (every
        deal of that game follows), or the table archived (left off the pages) or back."""
        try:
            with self.db.write() as s:
                self.db.lock_table_row(s, table_id)
                table = self.table(s, table_id)
                if body.name is not None and body.name != table.name:
                    if s.scalar(select(ScoreTable.id).where(ScoreTable.name == body.name)):
                        raise ServiceError(409, f"a table named {body.name!r} already exists")
                    table.name = body.name
                    from scoreboard.auth import TOKENS

                    TOKENS.forget(table.id)
                game = games.current(s, table)
                if body.teams is not None:
                    game.teams = {**(game.teams or {}), **body.teams.model_dump(exclude_none=True)}
                if body.levels is not None or body.dealer is not None:
                    old = game.start or {}
                    levels = body.levels or SideLevels(**(old.get("levels") or {}))
                    game.start = self._start(levels, body.dealer or old.get("dealer"))
                    self._recompute(s, table, game)
                if body.archived is not None:
                    table.archived_at = now() if body.archived else None
                s.flush()
                out = self.summary(s, table)
                feed.append(
                    self.db, s, [(table.id, "table", {**self.summary(s, table, slim=True), "by": author})]
                )
        except IntegrityError as exc:
            raise ServiceError(409, f"a table named {body.name!r} already exists") from exc
        self.notifier.notify()
        return out

    def rotate_token(self, table_id: str) -> str:
        token = new_token()
        with self.db.write() as s:
            table = self.table(s, table_id)
            table.token_hash = token_hash(token)
        from scoreboard.auth import TOKENS

        TOKENS.forget(table_id)
        return token

    def summary(self, s: Session, table: ScoreTable, *, slim: bool = False) -> dict[str, Any]:
        open_alerts = s.scalar(
            select(func.count(Alert.id)).where(
                Alert.table_id == table.id, Alert.status.in_(("open", "acknowledged"))
            )
        )
        looks = s.scalar(
            select(func.count(Alert.id)).where(
                Alert.table_id == table.id, Alert.kind == "look", Alert.status.in_(("open", "acknowledged"))
            )
        )
        game = s.get(TableGame, table.game_id) if table.game_id is not None else None
        state = table.state or scoring.initial_state(None, game.start if game else None)
        live = table.live or {}
        if slim:  # feed events carry the current trick only, not the whole deal
            tricks = live.get("tricks") or []
            live = {k: v for k, v in live.items() if k not in ("tricks", "scored_tricks")}
            live["trick_count"] = len(tricks)
            live["current_trick"] = tricks[-1] if tricks else None
        return {
            "id": table.id,
            "name": table.name,
            "plays": table.game,
            "teams": dict(game.teams or {}) if game else {},
            "start": game.start if game else None,
            "rules": table.rules,
            "levels": state.get("levels", dict(scoring.INITIAL_LEVELS)),
            "dealer": state.get("dealer"),
            "winner": state.get("winner"),
            "deals": game.deals if game else 0,
            "game": games.describe(s, game),
            "next": games.describe(s, games.next_ready(s, table)),
            "archived": table.archived_at is not None,
            "open_alerts": int(open_alerts or 0),
            "live": live,
            "health": {
                **(table.health or {}),
                "online": _online(table.live, table.health),
                "looks": int(looks or 0),
            },
        }

    # --- deals -------------------------------------------------------------------------------

    def post_deal(self, table_id: str, key: str, log: Any) -> Reply:
        """A table's finished deal log: stored and scored (201), or refused (422). A refusal of a
        well-formed log (rulings from a table, a log the engine refuses, another rule set) is kept
        as a ``refused`` alert holding the log, for a referee to correct, and is answered the same
        way when the same key comes again."""
        digest = request_hash(log)
        replay = self._replay(table_id, "deal", key, digest)
        if replay is not None:
            return replay
        if not isinstance(log, dict):
            raise ServiceError(422, "the body must be a deal log (a JSON object)")
        if log.get("finished") is not True:
            raise ServiceError(422, 'only finished deal logs are accepted ("finished": true)')
        refusal: str | None = None
        result: dict[str, Any] = {}
        if log.get("rulings"):
            refusal = (
                "a table may not post rulings: only a referee rules (the log's rulings were not applied)"
            )
        else:
            try:
                result = scoring.score(log)
            except scoring.ScoringError as exc:
                refusal = f"the rules engine refuses the log: {exc}"
            else:
                refusal = scoring.open_outcome(result)
        try:
            with self.db.write() as s:
                self.db.lock_table_row(s, table_id)
                record = self._record(s, table_id, "deal", key)
                if record is not None:
                    return self._replayed(record, digest)
                table = self.table(s, table_id)
                if refusal is None and scoring.game_of(log) != table.game:
                    refusal = f"table {table.name} plays {table.game}, the log is of {scoring.game_of(log)}"
                if refusal is None and table.rules is not None and log.get("rules") != table.rules:
                    refusal = (
                        f"table {table.name} plays {table.rules}, the log says {str(log.get('rules'))[:40]!r}"
                    )
                if refusal is not None:
                    return self._refuse_deal(s, table, key, digest, log, refusal)
                deal, events = self._store_deal(
                    s, table, key, log, result, f"table {table.name}", "posted by the table"
                )
                headers = {"Location": f"/api/tables/{table.id}/deals/{deal.seq}"}
                self._remember(s, table.id, "deal", key, digest, Reply(201, result, headers))
                s.flush()
                feed.append(self.db, s, events)
        except IntegrityError as exc:
            return self._lost_race(table_id, "deal", key, digest, exc)
        finally:
            self.notifier.notify()
        return Reply(201, result, dict(headers))

    def _refuse_deal(
        self, s: Session, table: ScoreTable, key: str, digest: str, log: dict[str, Any], reason: str
    ) -> Reply:
        alert = Alert(
            table_id=table.id,
            kind="refused",
            reasoning=f"the table's deal log was refused: {reason}",
            source="engine",
            status="open",
            note="",
            data={"log": log, "key": key},
        )
        s.add(alert)
        s.flush()
        body = {"detail": clip(f"deal log refused: {reason}"), "alert": alert.id}
        self._remember(s, table.id, "deal", key, digest, Reply(422, body))
        s.flush()
        feed.append(
            self.db,
            s,
            [
                (table.id, "alert", self.alert_dict(alert)),
                (table.id, "table", self.summary(s, table, slim=True)),
            ],
        )
        return Reply(422, body)

    def _store_deal(
        self,
        s: Session,
        table: ScoreTable,
        key: str,
        log: dict[str, Any],
        result: dict[str, Any],
        author: str,
        reason: str,
    ) -> tuple[Deal, list[tuple[str | None, str, dict[str, Any]]]]:
        """Store a scored finished deal as the table's next, in the game it belongs to
        (:func:`scoreboard.games.target`), fold that game's match state, link and raise alerts;
        returns the deal and the feed events to append. A deal for a closed game is stored
        ``held``, counted nowhere, with a ``held`` alert for the referees."""
        self._check_rules(table, log)
        if table.rules is None:
            table.rules = log["rules"]
        game = games.target(s, table)
        held = game.status != games.OPEN
        expected = dict(game.state or {})  # the match state this deal should start from
        table.deal_count += 1
        deal = Deal(
            table_id=table.id,
            seq=table.deal_count,
            idempotency_key=key,
            current_version=1,
            state_after={},
            fold=fold_input(log, result),
            game_id=game.id,
            status=games.HELD if held else games.COUNTED,
            history=[],
        )
        deal.versions.append(DealVersion(version=1, log=log, result=result, author=author, reason=reason))
        s.add(deal)
        s.flush()
        if not held:
            self._recompute(s, table, game)
        linked = s.scalars(
            select(Alert).where(Alert.table_id == table.id, Alert.deal_id.is_(None), Alert.kind != "refused")
        ).all()
        for alert in linked:
            alert.deal_id = deal.id
        changed = self._sync_engine_alerts(s, table, deal, result)
        doubt = self._held_reason(s, game, deal) if held else continuity_doubt(expected, log)
        if doubt is not None:
            alert = Alert(
                table_id=table.id,
                deal_id=deal.id,
                kind="held" if held else "mismatch",
                reasoning=doubt,
                source="engine",
                status="open",
                note="",
            )
            s.add(alert)
            changed.append(alert)
            s.flush()
        table.live = {
            "finished": True,
            "deal": deal.seq,
            "rules": log.get("rules"),
            "level": log.get("level"),
            "trump": log.get("trump"),
            "dealer": log.get("dealer"),
            "tricks": log.get("tricks", []),
            "scored_tricks": result.get("tricks", []),
            "captured": result.get("captured"),
            "defender_total": result.get("defender_total"),
        }
        s.flush()
        events: list[tuple[str | None, str, dict[str, Any]]] = [
            (table.id, "deal", self._deal_event(deal, 1, result)),
        ]
        events += [(table.id, "alert", self.alert_dict(a)) for a in [*linked, *changed]]
        events.append((table.id, "table", self.summary(s, table, slim=True)))
        return deal, events

    @staticmethod
    def _held_reason(s: Session, game: TableGame, deal: Deal) -> str:
        where = (
            f"round {game.round_no}'s match (table {game.table_no})"
            if game.round_no is not None
            else f"game {game.number}"
        )
        return (
            f"held: deal {deal.seq} arrived after {where} at this table was closed"
            f"{': ' + game.note if game.note else ''}. It counts nowhere until a referee counts it "
            "in that game (its result follows), moves it to the game it belongs to, or voids it."
        )

    def resolve(self, alert_id: int, body: Resolution, author: str) -> Reply:
        """Settle a ``refused`` alert (:meth:`resolve_refused`) or a ``look`` (:meth:`settle_look`)."""
        with self.db.read() as s:
            alert = s.get(Alert, alert_id)
            if alert is None:
                raise ServiceError(404, f"no alert #{alert_id}")
            kind, status = alert.kind, alert.status
        if status not in ("open", "acknowledged"):
            raise ServiceError(409, f"alert #{alert_id} is already {status}")
        if kind == "refused":
            return Reply(201, self.resolve_refused(alert_id, body, author))
        if kind == "look":
            return self.settle_look(alert_id, body, author)
        if kind == "held":
            raise ServiceError(409, f"alert #{alert_id} is a held deal: count it, move it or void it")
        raise ServiceError(
            409, f"alert #{alert_id} is a {kind.replace('_', ' ')} alert: record a ruling or dismiss it"
        )

    def resolve_refused(self, alert_id: int, body: Resolution, author: str) -> dict[str, Any]:
        """A referee's corrected log for a ``refused`` alert (a whole log, or fixed plays and bottom
        of the refused one), stored as the table's next deal."""
        with self.db.read() as s:
            alert = s.get(Alert, alert_id)
            if alert is None:
                raise ServiceError(404, f"no alert #{alert_id}")
            if alert.kind != "refused" or not alert.data:
                raise ServiceError(409, f"alert #{alert_id} is not a refused deal log")
            refused = alert.data
        if body.base_version is not None:
            raise ServiceError(422, 'a refused log has no stored version: leave out "base_version"')
        log = changed_log(refused["log"], body)
        if log.get("finished") is not True:
            raise ServiceError(422, 'a corrected deal log must be finished ("finished": true)')
        result = scoring.score(log)  # ScoringError -> 422: the referee sees what is still wrong
        if (still_open := scoring.open_outcome(result)) is not None:
            raise ServiceError(422, still_open)
        with self.db.write() as s:
            self.db.lock_table_row(s, refused_table := alert.table_id)
            alert = s.get(Alert, alert_id)
            assert alert is not None
            if alert.status not in ("open", "acknowledged"):
                raise ServiceError(409, f"alert #{alert_id} is already {alert.status}")
            table = self.table(s, refused_table)
            deal, events = self._store_deal(
                s, table, str(refused.get("key", f"alert-{alert_id}")), log, result, author, body.reason
            )
            alert.deal_id = deal.id
            alert.status, alert.resolved_by, alert.resolved_at = "resolved", author, now()
            alert.note = f"corrected and stored as deal {deal.seq}: {body.reason}"
            s.flush()
            events.insert(1, (table.id, "alert", self.alert_dict(alert)))
            feed.append(self.db, s, events)
            seq, state = deal.seq, deal.state_after
        self.notifier.notify()
        return {"deal": seq, "version": 1, "result": result, "state_after": state}

    def settle_look(self, alert_id: int, body: Resolution, author: str) -> Reply:
        """A referee's answer to a ``look``: the cards they saw (fixed plays, bottom or a whole log)
        become a new version of the look's deal, made on ``base_version`` and closing the look
        (201); with no cards the look closes as it is (200). A look whose deal the table has not
        posted yet takes no cards (409)."""
        with self.db.read() as s:
            alert = s.get(Alert, alert_id)
            if alert is None or alert.kind != "look":
                raise ServiceError(404, f"no look alert #{alert_id}")
            deal = s.get(Deal, alert.deal_id) if alert.deal_id is not None else None
            table_id = alert.table_id
            if deal is None and body.names_cards():
                raise ServiceError(
                    409,
                    f"look #{alert_id} belongs to a deal the table has not posted yet: "
                    "name the cards once the deal is posted",
                )
            if deal is not None and body.base_version is not None:
                self._check_version(deal, body.base_version)
            if not body.names_cards():
                return Reply(200, self._close_look(alert_id, body.reason, author))
            assert deal is not None
            if body.base_version is None:
                raise ServiceError(
                    422, f'naming cards makes a new version of deal {deal.seq}: give "base_version"'
                )
            _, current = self._deal(s, table_id, deal.seq)
            seq = deal.seq
            log = changed_log(current.log, body)
        out = self._new_version(
            table_id,
            seq,
            body.base_version,
            log,
            author,
            f"look #{alert_id}: {body.reason}",
            alert_id=alert_id,
        )
        return Reply(201, out)

    def _close_look(self, alert_id: int, reason: str, author: str) -> dict[str, Any]:
        """Close a look without changing its deal: the cards are as read, or do not matter."""
        with self.db.write() as s:
            alert = s.get(Alert, alert_id)
            assert alert is not None
            if alert.status not in ("open", "acknowledged"):
                raise ServiceError(409, f"alert #{alert_id} is already {alert.status}")
            alert.status, alert.resolved_by, alert.resolved_at = "resolved", author, now()
            alert.note = f"looked, no change: {reason}"
            table = self.table(s, alert.table_id)
            s.flush()
            changed: list[Alert] = []
            deal = s.get(Deal, alert.deal_id) if alert.deal_id is not None else None
            if deal is not None:  # a violation the look held back stands as read: alerted now
                _, current = self._deal(s, table.id, deal.seq)
                changed = self._sync_engine_alerts(s, table, deal, current.result)
            out = self.alert_dict(alert)
            feed.append(
                self.db,
                s,
                [
                    (table.id, "alert", out),
                    *[(table.id, "alert", self.alert_dict(a)) for a in changed],
                    (table.id, "table", self.summary(s, table, slim=True)),
                ],
            )
        self.notifier.notify()
        return out

    # --- fixing where a deal counts: move, void, count ------------------------------------------

    def move_deal(
        self, table_id: str, seq: int, to_table: str, game_no: int | None, reason: str, author: str
    ) -> dict[str, Any]:
        """A deal posted under the wrong table's token (or into the wrong game) moved to the game it
        was played in: ``game_no`` at ``to_table`` (default: that table's current game). It counts
        there, after that game's deals; both games are folded again and their matches' results
        follow. The move is kept in the deal's history; its alerts go with it."""
        with self.db.write() as s:
            for x in sorted({table_id, to_table}):
                self.db.lock_table_row(s, x)
            source = self.table(s, table_id)
            deal, current = self._deal(s, table_id, seq)
            target_table = self.table(s, to_table)
            if game_no is None:
                target = games.current(s, target_table)
            else:
                found = s.scalar(
                    select(TableGame).where(TableGame.table_id == to_table, TableGame.number == game_no)
                )
                if found is None:
                    raise ServiceError(404, f"no game {game_no} at table {target_table.name}")
                target = found
            if target.status == games.READY:
                raise ServiceError(
                    409,
                    f"game {target.number} at {target_table.name} has not started: move the deal once it has",
                )
            if target.id == deal.game_id:
                raise ServiceError(
                    409, f"deal {seq} is in that game already (to count a held deal, count it)"
                )
            if target_table.rules is not None and current.log.get("rules") != target_table.rules:
                raise ServiceError(
                    422,
                    f"table {target_table.name} plays {target_table.rules}, the deal {current.log.get('rules')!r}",
                )
            if target_table.rules is None:
                target_table.rules = current.log.get("rules")
            old_game = s.get(TableGame, deal.game_id) if deal.game_id is not None else None
            expected = dict(target.state or {})
            at = now()
            target_table.deal_count += 1
            entry = {
                "what": "moved",
                "from": {
                    "table": source.id,
                    "table_name": source.name,
                    "deal": seq,
                    "game": old_game.number if old_game else None,
                },
                "to": {
                    "table": target_table.id,
                    "table_name": target_table.name,
                    "deal": target_table.deal_count,
                    "game": target.number,
                },
                "reason": reason,
                "by": author,
                "at": at.isoformat(),
            }
            old_status = deal.status
            deal.table_id, deal.seq, deal.game_id = target_table.id, target_table.deal_count, target.id
            deal.status = games.COUNTED
            deal.history = [*(deal.history or []), entry]
            alerts = s.scalars(select(Alert).where(Alert.deal_id == deal.id)).all()
            changed: list[Alert] = []
            for alert in alerts:
                alert.table_id = target_table.id
                if (
                    alert.kind in ("held", "mismatch")
                    and alert.source == "engine"
                    and alert.status in ("open", "acknowledged")
                ):
                    alert.status, alert.resolved_by, alert.resolved_at = "resolved", author, at
                    alert.note = f"deal moved to {target_table.name} (deal {deal.seq}): {reason}"
                changed.append(alert)
            if (source.live or {}).get("finished") and source.live.get("deal") == seq:
                source.live = {}
            s.flush()
            if old_game is not None and old_status == games.COUNTED:
                self._recompute(s, source, old_game)
            self._recompute(s, target_table, target)
            doubt = continuity_doubt(expected, current.log)
            if doubt is not None:
                alert = Alert(
                    table_id=target_table.id,
                    deal_id=deal.id,
                    kind="mismatch",
                    reasoning=f"{doubt} (after it was moved here from {source.name})",
                    source="engine",
                    status="open",
                    note="",
                )
                s.add(alert)
                changed.append(alert)
            out = self._deal_placed(
                s, deal, current.result, {"moved": entry}, changed, [source, target_table]
            )
        self.notifier.notify()
        return out

    def set_deal_status(
        self, table_id: str, seq: int, status: str, reason: str, author: str
    ) -> dict[str, Any]:
        """A referee voids a deal (it counts nowhere; its open alerts close) or counts a held or
        voided one in its game again; the game is folded again and its match's result follows."""
        with self.db.write() as s:
            self.db.lock_table_row(s, table_id)
            table = self.table(s, table_id)
            deal, current = self._deal(s, table_id, seq)
            if deal.status == status:
                raise ServiceError(409, f"deal {seq} is {status} already")
            game = s.get(TableGame, deal.game_id) if deal.game_id is not None else None
            if status == games.COUNTED and game is None:
                raise ServiceError(409, f"deal {seq} belongs to no game: move it to one")
            at = now()
            entry = {
                "what": "voided" if status == games.VOIDED else "counted",
                "from": deal.status,
                "reason": reason,
                "by": author,
                "at": at.isoformat(),
            }
            deal.status = status
            deal.history = [*(deal.history or []), entry]
            changed: list[Alert] = []
            for alert in s.scalars(select(Alert).where(Alert.deal_id == deal.id)).all():
                closes = status == games.VOIDED or (alert.kind == "held" and alert.source == "engine")
                if closes and alert.status in ("open", "acknowledged"):
                    alert.status, alert.resolved_by, alert.resolved_at = "resolved", author, at
                    alert.note = f"deal {entry['what']}: {reason}"
                    changed.append(alert)
            s.flush()
            if game is not None:
                self._recompute(s, table, game)
            if status == games.COUNTED:
                changed += self._sync_engine_alerts(s, table, deal, current.result)
            out = self._deal_placed(s, deal, current.result, {"status": status}, changed, [table])
        self.notifier.notify()
        return out

    def _deal_placed(
        self,
        s: Session,
        deal: Deal,
        result: dict[str, Any],
        what: dict[str, Any],
        changed: list[Alert],
        tables: list[ScoreTable],
    ) -> dict[str, Any]:
        """After a deal moved or its status changed: the feed's news (the deal, its alerts, each
        table touched) appended; where the deal counts now returned."""
        s.flush()
        feed.append(
            self.db,
            s,
            [
                (deal.table_id, "deal", {**self._deal_event(deal, deal.current_version, result), **what}),
                *[(a.table_id, "alert", self.alert_dict(a)) for a in changed],
                *[(t.id, "table", self.summary(s, t, slim=True)) for t in tables],
            ],
        )
        return self._deal_place(s, deal)

    @staticmethod
    def _deal_place(s: Session, deal: Deal) -> dict[str, Any]:
        """Where a deal counts: its table, number, status, game, and its history of moves."""
        game = s.get(TableGame, deal.game_id) if deal.game_id is not None else None
        return {
            "table": deal.table_id,
            "deal": deal.seq,
            "status": deal.status,
            "game": games.describe(s, game),
            "history": list(deal.history or []),
            "state_after": deal.state_after,
        }

    def correct_deal(self, table_id: str, seq: int, body: Correction, author: str) -> dict[str, Any]:
        with self.db.read() as s:
            deal, current = self._deal(s, table_id, seq)
            self._check_version(deal, body.base_version)
            log = changed_log(current.log, body)
        return self._new_version(table_id, seq, body.base_version, log, author, body.reason)

    def rule(
        self,
        table_id: str,
        seq: int,
        body: RulingIn,
        author: str,
        alert_id: int | None = None,
        base_version: int | None = None,
        *,
        preview: bool = False,
    ) -> dict[str, Any]:
        """Record a referee's ruling in the deal log (``rulings``), rescore, and close the alert;
        with ``preview``, only say what it would do (:meth:`_preview`)."""
        with self.db.read() as s:
            deal, current = self._deal(s, table_id, seq)
            table = self.table(s, table_id)
            alert = s.get(Alert, alert_id) if alert_id is not None else None
            kind = body.kind or (None if alert is None else RULING_KIND.get(alert.kind))
            seat = body.seat or (alert.seat if alert is not None else None)
            if kind is None or seat is None:
                raise ServiceError(422, "a ruling needs the offending seat and its kind")
            ruling: dict[str, Any] = {"seat": seat, "kind": kind}
            if body.points is None or body.levels is None or body.deals_next is None:
                standard = scoring.default_ruling(table.rules or current.log["rules"], kind, seat)
            else:
                standard = {}
            ruling["points"] = body.points if body.points is not None else int(standard.get("points", 0))
            ruling["levels"] = body.levels if body.levels is not None else int(standard.get("levels", 0))
            ruling["deals_next"] = (
                body.deals_next if body.deals_next is not None else bool(standard.get("deals_next", False))
            )
            trick = body.trick or (alert.trick if alert is not None else None)
            if trick is not None:
                ruling["trick"] = trick
            ruling["note"] = body.note or str(standard.get("note", ""))
            log = copy.deepcopy(current.log)
            log["rulings"] = [*log.get("rulings", []), ruling]
            version = base_version if base_version is not None else deal.current_version
        reason = f"ruling: {kind} by {seat}" + (f" (alert #{alert_id})" if alert_id is not None else "")
        if preview:
            return self._preview(table_id, seq, log, ruling)
        out = self._new_version(table_id, seq, version, log, author, reason, alert_id=alert_id, ruling=ruling)
        out["ruling"] = ruling
        return out

    def _preview(
        self, table_id: str, seq: int, log: dict[str, Any], ruling: dict[str, Any]
    ) -> dict[str, Any]:
        """What a ruling would do, stored nowhere: the deal's new score, and the levels and next
        dealer of its game before and after (the game folded again with the ruled deal)."""
        result = scoring.score(log)
        with self.db.read() as s:
            table = self.table(s, table_id)
            deal, current = self._deal(s, table_id, seq)
            game = s.get(TableGame, deal.game_id) if deal.game_id is not None else None
            before = dict(game.state if game is not None else table.state or {})
            after = before
            if game is not None and deal.status == games.COUNTED and table.rules is not None:
                inputs = [
                    (
                        fold_input(log, result)
                        if d.id == deal.id
                        else d.fold or fold_input(*self._logged(s, d))
                    )
                    for d in games.counted_deals(s, game)
                ]
                states = scoring.fold_states(
                    table.rules, [(x["log"], x["result"]) for x in inputs], game.start
                )
                after = states[-1] if states else before
            return {
                "deal": seq,
                "ruling": ruling,
                "defender_total": {
                    "before": current.result.get("defender_total"),
                    "after": result.get("defender_total"),
                },
                "outcome": {"before": current.result.get("outcome"), "after": result.get("outcome")},
                "levels": {"before": before.get("levels"), "after": after.get("levels")},
                "dealer": {"before": before.get("dealer"), "after": after.get("dealer")},
                "counts": deal.status == games.COUNTED,
            }

    def _logged(self, s: Session, deal: Deal) -> tuple[dict[str, Any], dict[str, Any]]:
        _, version = self._deal(s, deal.table_id, deal.seq)
        return version.log, version.result

    def _new_version(
        self,
        table_id: str,
        seq: int,
        base_version: int,
        log: Any,
        author: str,
        reason: str,
        *,
        alert_id: int | None = None,
        ruling: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        if not isinstance(log, dict) or log.get("finished") is not True:
            raise ServiceError(422, 'a corrected deal log must be finished ("finished": true)')
        result = scoring.score(log)
        if (still_open := scoring.open_outcome(result)) is not None:
            raise ServiceError(422, still_open)
        with self.db.write() as s:
            self.db.lock_table_row(s, table_id)
            table = self.table(s, table_id)
            self._check_rules(table, log)
            deal, _ = self._deal(s, table_id, seq)
            self._check_version(deal, base_version)
            alert = None
            if alert_id is not None:
                alert = s.get(Alert, alert_id)
                if alert is None or alert.table_id != table_id:
                    raise ServiceError(404, f"no alert #{alert_id} at this table")
                if alert.status not in ("open", "acknowledged"):
                    raise ServiceError(409, f"alert #{alert_id} is already {alert.status}")
            version = deal.current_version + 1
            deal.versions.append(
                DealVersion(version=version, log=log, result=result, author=author, reason=reason)
            )
            deal.current_version = version
            deal.fold = fold_input(log, result)
            s.flush()
            self._refold(s, table, deal)
            if alert is not None:  # closed first: a look holds back no violation of the new version
                if ruling is not None:
                    alert.status, alert.ruling = "ruled", ruling
                else:  # a look settled by the cards it asked about
                    alert.status, alert.note = "resolved", f"settled by version {version} of deal {seq}"
                alert.resolved_by, alert.resolved_at = author, now()
                s.flush()
            changed = self._sync_engine_alerts(s, table, deal, result)
            if alert is not None:
                changed.append(alert)
            if table.live.get("finished") and table.live.get("deal") == seq:
                table.live = {
                    **table.live,
                    "tricks": log.get("tricks", []),
                    "scored_tricks": result.get("tricks", []),
                    "captured": result.get("captured"),
                    "defender_total": result.get("defender_total"),
                }
            s.flush()
            events: list[tuple[str | None, str, dict[str, Any]]] = [
                (
                    table.id,
                    "correction",
                    {**self._deal_event(deal, version, result), "author": author, "reason": reason},
                ),
            ]
            events += [(table.id, "alert", self.alert_dict(a)) for a in changed]
            events.append((table.id, "table", self.summary(s, table, slim=True)))
            feed.append(self.db, s, events)
        self.notifier.notify()
        return {"deal": seq, "version": version, "result": result}

    # --- the edge's event stream -------------------------------------------------------------

    def post_event(
        self, table_id: str, key: str, raw: Any, event: DealStart | Play | TrickResult | AlertIn | Health
    ) -> Reply:
        digest = request_hash(raw)
        if isinstance(event, DealStart | Play | TrickResult):
            return self._post_live_event(table_id, key, digest, event)
        images = decode_images(event) if isinstance(event, AlertIn) else []
        try:
            with self.db.write() as s:
                self.db.lock_table_row(s, table_id)
                record = self._record(s, table_id, "event", key)
                if record is not None:
                    return self._replayed(record, digest)
                table = self.table(s, table_id)
                body: dict[str, Any] = {}
                payload: dict[str, Any]
                if isinstance(event, AlertIn):
                    alert = Alert(
                        table_id=table.id,
                        kind=event.kind,
                        seat=event.seat,
                        trick=event.trick,
                        proven_at=event.proven_at,
                        reasoning=event.reasoning,
                        source="edge",
                        status="open",
                        note="",
                    )
                    alert.images = [
                        AlertImage(content_type=ct, caption=cap, data=data) for ct, cap, data in images
                    ]
                    s.add(alert)
                    s.flush()
                    body["alert"] = alert.id
                    payload = self.alert_dict(alert)
                elif isinstance(event, Health):
                    table.health = {
                        **event.model_dump(exclude={"type"}, exclude_none=True),
                        "at": now().isoformat(),
                    }
                    payload = dict(table.health)
                else:
                    table.live = apply_live(table.live or {}, table.rules, event)
                    payload = event.model_dump(exclude_none=True)
                    if isinstance(event, Play):
                        payload["captured"] = table.live.get("captured")
                s.flush()
                events: list[tuple[str | None, str, dict[str, Any]]] = [(table.id, event.type, payload)]
                if isinstance(event, AlertIn | Health):  # plays carry their own news; no table event
                    events.append((table.id, "table", self.summary(s, table, slim=True)))
                rows = feed.append(self.db, s, events)
                body["event"] = rows[0].id
                self._remember(s, table.id, "event", key, digest, Reply(201, body))
        except IntegrityError as exc:
            return self._lost_race(table_id, "event", key, digest, exc)
        self.notifier.notify()
        return Reply(201, body)

    def _post_live_event(
        self, table_id: str, key: str, digest: str, event: DealStart | Play | TrickResult
    ) -> Reply:
        """The hot path (a play every few seconds from every table): prebuilt statements, no ORM."""
        try:
            with self.db.write() as s:
                conn = s.connection()
                # Lock the table's row (PostgreSQL; SQLite writers are serialised anyway). A
                # concurrent first use of the same key then fails on the unique index: see below.
                row = conn.execute(_SELECT_LIVE, {"tid": table_id, "k": key}).first()
                if row is None:
                    raise ServiceError(404, f"no table {table_id!r}")
                if row.request_hash is not None:  # a replay: answer as the first time
                    return self._replayed(row, digest)
                live = apply_live(row.live or {}, row.rules, event)
                if isinstance(event, DealStart):  # the deal belongs to the game it started in
                    live["game"] = row.game_id
                live["seen"] = now().isoformat()  # the table's last word: is it online
                conn.execute(_UPDATE_LIVE, {"tid": table_id, "live": live})
                payload = event.model_dump(exclude_none=True)
                if isinstance(event, Play):
                    payload["captured"] = live.get("captured")
                self.db.lock_feed(s)
                at = now()
                event_id = conn.execute(
                    _INSERT_EVENT,
                    {"table_id": table_id, "kind": event.type, "payload": payload, "created_at": at},
                ).scalar_one()
                body: dict[str, Any] = {"event": event_id}
                if isinstance(event, TrickResult):
                    disagreement = trick_disagreement(live, event)
                    if disagreement is not None:
                        body["alert"] = self._mismatch_alert(s, table_id, event.trick, disagreement)
                conn.execute(
                    _INSERT_IDEM,
                    {
                        "table_id": table_id,
                        "scope": "event",
                        "key": key,
                        "request_hash": digest,
                        "status_code": 201,
                        "response": body,
                        "headers": {},
                        "created_at": at,
                    },
                )
        except IntegrityError as exc:
            return self._lost_race(table_id, "event", key, digest, exc)
        self.notifier.notify()
        return Reply(201, body)

    def _mismatch_alert(self, s: Session, table_id: str, trick: int, reasoning: str) -> int:
        alert = Alert(
            table_id=table_id,
            kind="mismatch",
            trick=trick,
            reasoning=reasoning,
            source="engine",
            status="open",
            note="",
        )
        s.add(alert)
        s.flush()
        table = self.table(s, table_id)
        feed.append(
            self.db,
            s,
            [
                (table_id, "alert", self.alert_dict(alert)),
                (table_id, "table", self.summary(s, table, slim=True)),
            ],
        )
        return alert.id

    # --- alerts ------------------------------------------------------------------------------

    def close_alert(self, alert_id: int, status: str, note: str, author: str) -> dict[str, Any]:
        allowed = {"acknowledged": ("open",), "dismissed": ("open", "acknowledged")}[status]
        with self.db.write() as s:
            alert = s.get(Alert, alert_id)
            if alert is None:
                raise ServiceError(404, f"no alert #{alert_id}")
            if alert.status not in allowed:
                raise ServiceError(409, f"alert #{alert_id} is {alert.status}; cannot mark it {status}")
            alert.status, alert.note, alert.resolved_by = status, note, author
            if status == "dismissed":
                alert.resolved_at = now()
            table = self.table(s, alert.table_id)
            s.flush()
            out = self.alert_dict(alert)
            feed.append(
                self.db,
                s,
                [
                    (alert.table_id, "alert", out),
                    (alert.table_id, "table", self.summary(s, table, slim=True)),
                ],
            )
        self.notifier.notify()
        return out

    def alert_dict(self, alert: Alert) -> dict[str, Any]:
        return {
            "id": alert.id,
            "table": alert.table_id,
            "deal_id": alert.deal_id,
            "kind": alert.kind,
            "seat": alert.seat,
            "trick": alert.trick,
            "proven_at": alert.proven_at,
            "reasoning": alert.reasoning,
            "source": alert.source,
            "status": alert.status,
            "ruling": alert.ruling,
            "note": alert.note,
            "resolved_by": alert.resolved_by,
            "data": alert.data,
            "images": [f"/api/alerts/{alert.id}/images/{img.id}" for img in alert.images],
        }

    # --- internals ---------------------------------------------------------------------------

    def table(self, s: Session, table_id: str) -> ScoreTable:
        table = s.get(ScoreTable, table_id)
        if table is None:
            raise ServiceError(404, f"no table {table_id!r}")
        return table

    def _deal(self, s: Session, table_id: str, seq: int) -> tuple[Deal, DealVersion]:
        deal = s.scalar(select(Deal).where(Deal.table_id == table_id, Deal.seq == seq))
        if deal is None:
            raise ServiceError(404, f"no deal {seq} at table {table_id!r}")
        current = s.scalar(
            select(DealVersion).where(
                DealVersion.deal_id == deal.id, DealVersion.version == deal.current_version
            )
        )
        assert current is not None
        return deal, current

    @staticmethod
    def _check_version(deal: Deal, base_version: int) -> None:
        if base_version != deal.current_version:
            raise ServiceError(
                409,
                f"deal {deal.seq} is at version {deal.current_version}, not {base_version}: reload and retry",
            )

    @staticmethod
    def _check_rules(table: ScoreTable, log: dict[str, Any]) -> None:
        if table.rules is not None and log.get("rules") != table.rules:
            raise ServiceError(
                422, f"table {table.name} plays {table.rules}, the log says {log.get('rules')!r}"
            )

    def _record(self, s: Session, table_id: str, scope: str, key: str) -> IdempotencyRecord | None:
        return s.scalar(
            select(IdempotencyRecord).where(
                IdempotencyRecord.table_id == table_id,
                IdempotencyRecord.scope == scope,
                IdempotencyRecord.key == key,
            )
        )

    # The idempotency path, once for every post (deals, events, the live hot path): a post's answer is
    # remembered under (table, scope, key) in the same transaction as its effect; the same key again
    # gets that answer back if the body is the same, 422 if not; a concurrent first use of the key
    # loses on the unique index and answers with the winner's stored response.

    @staticmethod
    def _remember(s: Session, table_id: str, scope: str, key: str, digest: str, reply: Reply) -> None:
        s.add(
            IdempotencyRecord(
                table_id=table_id,
                scope=scope,
                key=key,
                request_hash=digest,
                status_code=reply.status,
                response=reply.body,
                headers=dict(reply.headers),
            )
        )

    def _replay(self, table_id: str, scope: str, key: str, digest: str) -> Reply | None:
        with self.db.read() as s:
            record = self._record(s, table_id, scope, key)
            return None if record is None else self._replayed(record, digest)

    def _lost_race(self, table_id: str, scope: str, key: str, digest: str, exc: IntegrityError) -> Reply:
        """After ``exc``: the stored answer of the request that won the key (else ``exc`` again)."""
        replay = self._replay(table_id, scope, key, digest)
        if replay is None:
            raise exc
        return replay

    @staticmethod
    def _replayed(record: Any, digest: str) -> Reply:
        """The stored answer (an IdempotencyRecord or a row with its columns) for a repeated key."""
        if record.request_hash != digest:
            raise ServiceError(422, "this Idempotency-Key was already used with a different body")
        return Reply(record.status_code, record.response, {**record.headers, "Idempotent-Replayed": "true"})

    def _refold(self, s: Session, table: ScoreTable, deal: Deal) -> None:
        """Fold the game of ``deal`` again, if the deal counts in one."""
        game = s.get(TableGame, deal.game_id) if deal.game_id is not None else None
        if game is not None and deal.status == games.COUNTED:
            self._recompute(s, table, game)

    def _recompute(self, s: Session, table: ScoreTable, game: TableGame) -> None:
        """Fold the match state over the counted deals of ``game`` (one of ``table``'s), in order,
        from the game's start; the table's state is its current game's. A match game's result
        follows (:meth:`scoreboard.tourney_service.Tourneys.game_changed`)."""
        deals = games.counted_deals(s, game)
        if table.rules is None:
            game.state = scoring.initial_state(None, game.start)
        else:
            for deal in deals:
                if deal.fold is None:  # a deal stored before the fold column existed
                    _, current = self._deal(s, table.id, deal.seq)
                    deal.fold = fold_input(current.log, current.result)
            try:
                states = scoring.fold_states(table.rules, games.fold_inputs(deals), game.start)
            except scoring.ScoringError as exc:
                raise ServiceError(422, str(exc)) from exc
            for deal, state in zip(deals, states, strict=True):
                if deal.state_after != state:
                    deal.state_after = state
            game.state = states[-1] if states else scoring.initial_state(table.rules, game.start)
        game.deals = len(deals)
        if table.game_id == game.id:
            table.state = dict(game.state)
        s.flush()
        if self.tourneys is not None:
            self.tourneys.game_changed(s, table, game)

    def _sync_engine_alerts(
        self, s: Session, table: ScoreTable, deal: Deal, result: dict[str, Any]
    ) -> list[Alert]:
        """One alert per violation the engine proves; engine alerts no longer proven are resolved.
        A violation the table itself raised as a ``look`` (the camera read the cards it rests on
        with doubt: :mod:`edge_app.events`) is held back while that look is open: the engine's
        reasoning joins the look, and the alert comes when a referee settles the look (the cards
        corrected or confirmed as read) and the violation is still proven."""
        existing = s.scalars(select(Alert).where(Alert.deal_id == deal.id)).all()
        seen = {(a.kind, a.seat, a.trick): a for a in existing}
        held = {
            (a.seat, a.trick): a
            for a in existing
            if a.kind == "look"
            and a.source == "edge"
            and a.seat is not None
            and a.status in ("open", "acknowledged")
        }
        proven: set[tuple[str, str | None, int | None]] = set()
        changed: list[Alert] = []
        for violation in result.get("violations", []) or []:
            kind = VIOLATION_ALERT_KIND.get(str(violation.get("kind")), "mismatch")
            key = (kind, violation.get("seat"), violation.get("trick"))
            proven.add(key)
            reasoning = violation_reasoning(violation, deal.seq)
            alert = seen.get(key)
            look = held.get((key[1], key[2]))
            if alert is None and look is not None:
                if reasoning not in look.reasoning:
                    look.reasoning = f"{look.reasoning}\n{reasoning}".strip()
                    changed.append(look)
                continue
            if alert is None:
                alert = Alert(
                    table_id=table.id,
                    deal_id=deal.id,
                    kind=kind,
                    seat=key[1],
                    trick=key[2],
                    proven_at=violation.get("proven_at"),
                    reasoning=reasoning,
                    source="engine",
                    status="open",
                    note="",
                )
                s.add(alert)
                seen[key] = alert
                changed.append(alert)
            elif alert.source == "edge" and "engine:" not in alert.reasoning:
                alert.reasoning = f"{alert.reasoning}\n{reasoning}".strip()
                alert.proven_at = alert.proven_at or violation.get("proven_at")
                changed.append(alert)
        for key, alert in seen.items():
            if alert.source == "engine" and key not in proven and alert.status in ("open", "acknowledged"):
                alert.status, alert.note, alert.resolved_at = (
                    "resolved",
                    "no longer proven by the corrected log",
                    now(),
                )
                changed.append(alert)
        s.flush()
        return changed

    @staticmethod
    def _deal_event(deal: Deal, version: int, result: dict[str, Any]) -> dict[str, Any]:
        return {
            "deal": deal.seq,
            "version": version,
            "defender_total": result.get("defender_total"),
            "outcome": result.get("outcome"),
            "state_after": deal.state_after,
        }
