"""A table's finished deals and their versions: posting one (idempotent; a refused log is kept as a
``refused`` alert), storing it in the game it belongs to, moving it to another table or game,
voiding or counting it, and new versions of it (a referee's correction or ruling, and what a ruling
would do before it is made). Every write is one transaction that also appends to the feed."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from scoreboard import feed, games, idempotency, scoring
from scoreboard.db import Database
from scoreboard.errors import Conflict, Invalid, NotFound, VersionConflict, clip
from scoreboard.folding import Folds
from scoreboard.idempotency import Idempotency, Outcome, Replayed
from scoreboard.kinds import kind_of
from scoreboard.live import LiveDeal, finished_deal
from scoreboard.logs import changed_log, fold_input
from scoreboard.models import Alert, Deal, DealVersion, ScoreTable, TableGame
from scoreboard.rows import (
    OPEN_ALERT,
    FeedEvent,
    alert_dict,
    deal_event,
    deal_place,
    deal_row,
    logged,
    now,
    table_row,
)
from scoreboard.schemas import Correction, RulingIn
from scoreboard.tables import summary
from scoreboard.violations import RULING_KIND, sync_engine_alerts


@dataclass(frozen=True)
class DealStored:
    """A table's deal log scored and stored as its deal ``seq``."""

    table_id: str
    seq: int
    result: dict[str, Any]


@dataclass(frozen=True)
class DealRefused:
    """A table's deal log refused (``detail``), kept as the ``refused`` alert ``alert``."""

    detail: str
    alert: int

    def body(self) -> dict[str, Any]:
        return {"detail": self.detail, "alert": self.alert}


#: What a table's post of a deal log comes to.
DealPosted = DealStored | DealRefused | Replayed


@dataclass(frozen=True)
class NewVersion:
    """A new version of deal ``deal`` (a correction, a ruling, a look settled), or a refused log
    stored as the table's next deal (then with ``state_after``)."""

    deal: int
    version: int
    result: dict[str, Any]
    state_after: dict[str, Any] | None = None
    ruling: dict[str, Any] | None = None

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"deal": self.deal, "version": self.version, "result": self.result}
        if self.state_after is not None:
            out["state_after"] = self.state_after
        if self.ruling is not None:
            out["ruling"] = self.ruling
        return out


def check_version(deal: Deal, base_version: int) -> None:
    if base_version != deal.current_version:
        raise VersionConflict(
            f"deal {deal.seq} is at version {deal.current_version}, not {base_version}: reload and retry"
        )


def check_rules(table: ScoreTable, log: dict[str, Any]) -> None:
    if table.rules is not None and log.get("rules") != table.rules:
        raise Invalid(f"table {table.name} plays {table.rules}, the log says {log.get('rules')!r}")


def held_reason(game: TableGame, deal: Deal) -> str:
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


class Deals:
    def __init__(self, db: Database, notifier: feed.Notifier, folds: Folds, keys: Idempotency) -> None:
        self.db = db
        self.notifier = notifier
        self.folds = folds
        self.keys = keys

    # --- posting -----------------------------------------------------------------------------

    def post(self, table_id: str, key: str, log: object) -> DealPosted:
        """A table's finished deal log: stored and scored, or refused. A refusal of a well-formed
        log (rulings from a table, a log the engine refuses, another rule set) is kept as a
        ``refused`` alert holding the log, for a referee to correct, and is answered the same way
        when the same key comes again."""
        digest = idempotency.request_hash(log)
        replay = self.keys.replay(table_id, "deal", key, digest)
        if replay is not None:
            return replay
        if not isinstance(log, dict):
            raise Invalid("the body must be a deal log (a JSON object)")
        if log.get("finished") is not True:
            raise Invalid('only finished deal logs are accepted ("finished": true)')
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
                refusal = kind_of(scoring.game_of(log)).still_open(result)
        try:
            with self.db.write() as s:
                self.db.lock_table_row(s, table_id)
                stored = idempotency.record(s, table_id, "deal", key)
                if stored is not None:
                    return idempotency.replayed(stored, digest)
                table = table_row(s, table_id)
                if refusal is None and scoring.game_of(log) != table.game:
                    refusal = f"table {table.name} plays {table.game}, the log is of {scoring.game_of(log)}"
                if refusal is None and table.rules is not None and log.get("rules") != table.rules:
                    refusal = (
                        f"table {table.name} plays {table.rules}, the log says {str(log.get('rules'))[:40]!r}"
                    )
                if refusal is not None:
                    return self._refuse(s, table, key, digest, log, refusal)
                deal, events = self.store(
                    s, table, key, log, result, f"table {table.name}", "posted by the table"
                )
                seq = deal.seq
                idempotency.remember(s, table.id, "deal", key, digest, Outcome.CREATED, result, deal=seq)
                s.flush()
                feed.append(self.db, s, events)
        except IntegrityError as exc:
            return self.keys.lost_race(table_id, "deal", key, digest, exc)
        finally:
            self.notifier.notify()
        return DealStored(table_id, seq, result)

    def _refuse(
        self, s: Session, table: ScoreTable, key: str, digest: str, log: dict[str, Any], reason: str
    ) -> DealRefused:
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
        refused = DealRefused(clip(f"deal log refused: {reason}"), alert.id)
        idempotency.remember(s, table.id, "deal", key, digest, Outcome.REFUSED, refused.body())
        s.flush()
        feed.append(
            self.db,
            s,
            [
                (table.id, "alert", alert_dict(alert)),
                (table.id, "table", summary(s, table, slim=True)),
            ],
        )
        return refused

    def store(
        self,
        s: Session,
        table: ScoreTable,
        key: str,
        log: dict[str, Any],
        result: dict[str, Any],
        author: str,
        reason: str,
    ) -> tuple[Deal, list[FeedEvent]]:
        """Store a scored finished deal as the table's next, in the game it belongs to
        (:func:`scoreboard.games.target`), fold that game's match state, link and raise alerts;
        returns the deal and the feed events to append. A deal for a closed game is stored
        ``held``, counted nowhere, with a ``held`` alert for the referees."""
        check_rules(table, log)
        if table.rules is None and isinstance(log.get("rules"), str):
            table.rules = log["rules"]
        game = games.target(s, table, log)
        held = game.status != games.OPEN and not games.counts_when_closed(game)
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
            self.folds.recompute(s, table, game)
        linked = s.scalars(
            select(Alert).where(Alert.table_id == table.id, Alert.deal_id.is_(None), Alert.kind != "refused")
        ).all()
        for alert in linked:
            alert.deal_id = deal.id
        changed = sync_engine_alerts(s, table, deal, result)
        doubt = held_reason(game, deal) if held else kind_of(table.game).doubt(expected, game.start, log)
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
        table.live = finished_deal(deal.seq, log, result).stored()
        s.flush()
        events: list[FeedEvent] = [(table.id, "deal", deal_event(deal, 1, result))]
        events += [(table.id, "alert", alert_dict(a)) for a in [*linked, *changed]]
        events.append((table.id, "table", summary(s, table, slim=True)))
        return deal, events

    # --- where a deal counts: move, void, count ------------------------------------------------

    def move(
        self, table_id: str, seq: int, to_table: str, game_no: int | None, reason: str, author: str
    ) -> dict[str, Any]:
        """A deal posted under the wrong table's token (or into the wrong game) moved to the game it
        was played in: ``game_no`` at ``to_table`` (default: that table's current game). It counts
        there, after that game's deals; both games are folded again and their matches' results
        follow. The move is kept in the deal's history; its alerts go with it."""
        with self.db.write() as s:
            for x in sorted({table_id, to_table}):
                self.db.lock_table_row(s, x)
            source = table_row(s, table_id)
            deal, current = deal_row(s, table_id, seq)
            target_table = table_row(s, to_table)
            if game_no is None:
                target = games.current(s, target_table)
            else:
                found = s.scalar(
                    select(TableGame).where(TableGame.table_id == to_table, TableGame.number == game_no)
                )
                if found is None:
                    raise NotFound(f"no game {game_no} at table {target_table.name}")
                target = found
            if target.status == games.READY:
                raise Conflict(
                    f"game {target.number} at {target_table.name} has not started: move the deal once it has"
                )
            if target.id == deal.game_id:
                raise Conflict(f"deal {seq} is in that game already (to count a held deal, count it)")
            if target_table.game != source.game:
                raise Invalid(
                    f"table {target_table.name} plays {target_table.game}, the deal is {source.game}'s"
                )
            if target_table.rules is not None and current.log.get("rules") != target_table.rules:
                raise Invalid(
                    f"table {target_table.name} plays {target_table.rules}, the deal {current.log.get('rules')!r}"
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
                    and alert.status in OPEN_ALERT
                ):
                    alert.status, alert.resolved_by, alert.resolved_at = "resolved", author, at
                    alert.note = f"deal moved to {target_table.name} (deal {deal.seq}): {reason}"
                changed.append(alert)
            left = LiveDeal.from_stored(source.live)
            if left.finished and left.deal == seq:
                source.live = {}
            s.flush()
            if old_game is not None and old_status == games.COUNTED:
                self.folds.recompute(s, source, old_game)
            self.folds.recompute(s, target_table, target)
            doubt = kind_of(target_table.game).doubt(expected, target.start, current.log)
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
            out = self._placed(s, deal, current.result, {"moved": entry}, changed, [source, target_table])
        self.notifier.notify()
        return out

    def set_status(self, table_id: str, seq: int, status: str, reason: str, author: str) -> dict[str, Any]:
        """A referee voids a deal (it counts nowhere; its open alerts close) or counts a held or
        voided one in its game again; the game is folded again and its match's result follows."""
        with self.db.write() as s:
            self.db.lock_table_row(s, table_id)
            table = table_row(s, table_id)
            deal, current = deal_row(s, table_id, seq)
            if deal.status == status:
                raise Conflict(f"deal {seq} is {status} already")
            game = s.get(TableGame, deal.game_id) if deal.game_id is not None else None
            if status == games.COUNTED and game is None:
                raise Conflict(f"deal {seq} belongs to no game: move it to one")
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
                if closes and alert.status in OPEN_ALERT:
                    alert.status, alert.resolved_by, alert.resolved_at = "resolved", author, at
                    alert.note = f"deal {entry['what']}: {reason}"
                    changed.append(alert)
            s.flush()
            if game is not None:
                self.folds.recompute(s, table, game)
            if status == games.COUNTED:
                changed += sync_engine_alerts(s, table, deal, current.result)
            out = self._placed(s, deal, current.result, {"status": status}, changed, [table])
        self.notifier.notify()
        return out

    def _placed(
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
                (deal.table_id, "deal", {**deal_event(deal, deal.current_version, result), **what}),
                *[(a.table_id, "alert", alert_dict(a)) for a in changed],
                *[(t.id, "table", summary(s, t, slim=True)) for t in tables],
            ],
        )
        return deal_place(s, deal)

    # --- versions: corrections and rulings ----------------------------------------------------

    def correct(self, table_id: str, seq: int, body: Correction, author: str) -> NewVersion:
        with self.db.read() as s:
            deal, current = deal_row(s, table_id, seq)
            check_version(deal, body.base_version)
            log = changed_log(current.log, body)
        return self.new_version(table_id, seq, body.base_version, log, author, body.reason)

    def rule(
        self,
        table_id: str,
        seq: int,
        body: RulingIn,
        author: str,
        alert_id: int | None = None,
        base_version: int | None = None,
    ) -> NewVersion:
        """Record a referee's ruling in the deal log (``rulings``), rescore, and close the alert."""
        log, ruling, version, reason = self._ruled(table_id, seq, body, alert_id, base_version)
        out = self.new_version(table_id, seq, version, log, author, reason, alert_id=alert_id, ruling=ruling)
        return NewVersion(out.deal, out.version, out.result, ruling=ruling)

    def preview(self, table_id: str, seq: int, body: RulingIn, alert_id: int | None = None) -> dict[str, Any]:
        """What a ruling would do, stored nowhere: the deal's new score, and the levels and next
        dealer of its game before and after (the game folded again with the ruled deal)."""
        log, ruling, _, _ = self._ruled(table_id, seq, body, alert_id, None)
        result = scoring.score(log)
        with self.db.read() as s:
            table = table_row(s, table_id)
            deal, current = deal_row(s, table_id, seq)
            game = s.get(TableGame, deal.game_id) if deal.game_id is not None else None
            before = dict(game.state if game is not None else table.state or {})
            after = before
            if game is not None and deal.status == games.COUNTED and table.rules is not None:
                inputs = [
                    (fold_input(log, result) if d.id == deal.id else d.fold or fold_input(*logged(s, d)))
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

    def _ruled(
        self, table_id: str, seq: int, body: RulingIn, alert_id: int | None, base_version: int | None
    ) -> tuple[dict[str, Any], dict[str, Any], int, str]:
        """The deal's log with the ruling added, the ruling (the rule set's standard penalty where
        the referee names none), the version it is made on, and the new version's reason."""
        with self.db.read() as s:
            deal, current = deal_row(s, table_id, seq)
            table = table_row(s, table_id)
            if not kind_of(table.game).rulings:
                raise Invalid(
                    f"a {table.game} board takes no Shengji ruling: correct its log (a new version) instead"
                )
            alert = s.get(Alert, alert_id) if alert_id is not None else None
            kind = body.kind or (None if alert is None else RULING_KIND.get(alert.kind))
            seat = body.seat or (alert.seat if alert is not None else None)
            if kind is None or seat is None:
                raise Invalid("a ruling needs the offending seat and its kind")
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
        return log, ruling, version, reason

    def new_version(
        self,
        table_id: str,
        seq: int,
        base_version: int,
        log: object,
        author: str,
        reason: str,
        *,
        alert_id: int | None = None,
        ruling: dict[str, Any] | None = None,
    ) -> NewVersion:
        """A new version of deal ``seq`` made on ``base_version``: scored, its game folded again,
        its engine alerts kept in step; ``alert_id``'s alert closes (ruled with ``ruling``, else
        resolved: a look settled by the cards it asked about)."""
        if not isinstance(log, dict) or log.get("finished") is not True:
            raise Invalid('a corrected deal log must be finished ("finished": true)')
        result = scoring.score(log)
        if (still_open := kind_of(scoring.game_of(log)).still_open(result)) is not None:
            raise Invalid(still_open)
        with self.db.write() as s:
            self.db.lock_table_row(s, table_id)
            table = table_row(s, table_id)
            check_rules(table, log)
            if scoring.game_of(log) != table.game:
                raise Invalid(f"table {table.name} plays {table.game}, the log is of {scoring.game_of(log)}")
            deal, _ = deal_row(s, table_id, seq)
            check_version(deal, base_version)
            alert = None
            if alert_id is not None:
                alert = s.get(Alert, alert_id)
                if alert is None or alert.table_id != table_id:
                    raise NotFound(f"no alert #{alert_id} at this table")
                if alert.status not in OPEN_ALERT:
                    raise Conflict(f"alert #{alert_id} is already {alert.status}")
            version = deal.current_version + 1
            deal.versions.append(
                DealVersion(version=version, log=log, result=result, author=author, reason=reason)
            )
            deal.current_version = version
            deal.fold = fold_input(log, result)
            s.flush()
            self.folds.refold(s, table, deal)
            if alert is not None:  # closed first: a look holds back no violation of the new version
                if ruling is not None:
                    alert.status, alert.ruling = "ruled", ruling
                else:  # a look settled by the cards it asked about
                    alert.status, alert.note = "resolved", f"settled by version {version} of deal {seq}"
                alert.resolved_by, alert.resolved_at = author, now()
                s.flush()
            changed = sync_engine_alerts(s, table, deal, result)
            if alert is not None:
                changed.append(alert)
            live = LiveDeal.from_stored(table.live)
            if live.finished and live.deal == seq:
                live.tricks = log.get("tricks", [])
                live.scored_tricks = result.get("tricks", [])
                live.captured = result.get("captured")
                live.defender_total = result.get("defender_total")
                table.live = live.stored()
            s.flush()
            events: list[FeedEvent] = [
                (
                    table.id,
                    "correction",
                    {**deal_event(deal, version, result), "author": author, "reason": reason},
                ),
            ]
            events += [(table.id, "alert", alert_dict(a)) for a in changed]
            events.append((table.id, "table", summary(s, table, slim=True)))
            feed.append(self.db, s, events)
        self.notifier.notify()
        return NewVersion(seq, version, result)
