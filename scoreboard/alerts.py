"""The referees' alert queue: acknowledging and dismissing an alert, and settling one with cards: a
``refused`` log corrected and stored as the table's next deal, or a ``look`` answered (the cards
the referee saw make a new version of its deal, or it closes as it is). Rulings on an alert's
deal are the deal's business (:meth:`scoreboard.deals.Deals.rule`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scoreboard import feed, scoring
from scoreboard.db import Database
from scoreboard.deals import Deals, NewVersion, check_version
from scoreboard.errors import Conflict, Invalid, NotFound
from scoreboard.logs import changed_log
from scoreboard.models import Alert, Deal
from scoreboard.rows import OPEN_ALERT, FeedEvent, alert_dict, deal_row, now, table_row
from scoreboard.schemas import Resolution
from scoreboard.tables import summary
from scoreboard.violations import sync_engine_alerts


@dataclass(frozen=True)
class LookClosed:
    """A look closed with no change to its deal: the alert as it is now."""

    alert: dict[str, Any]


#: What settling an alert comes to: a new version (or a refused log's new deal), or a look closed.
Settled = NewVersion | LookClosed


class Alerts:
    def __init__(self, db: Database, notifier: feed.Notifier, deals: Deals) -> None:
        self.db = db
        self.notifier = notifier
        #: settling an alert with cards makes or changes a deal
        self.deals = deals

    def close(self, alert_id: int, status: str, note: str, author: str) -> dict[str, Any]:
        """An alert acknowledged (still open: someone is on it) or dismissed."""
        allowed = {"acknowledged": ("open",), "dismissed": OPEN_ALERT}[status]
        with self.db.write() as s:
            alert = s.get(Alert, alert_id)
            if alert is None:
                raise NotFound(f"no alert #{alert_id}")
            if alert.status not in allowed:
                raise Conflict(f"alert #{alert_id} is {alert.status}; cannot mark it {status}")
            alert.status, alert.note, alert.resolved_by = status, note, author
            if status == "dismissed":
                alert.resolved_at = now()
            table = table_row(s, alert.table_id)
            s.flush()
            out = alert_dict(alert)
            feed.append(
                self.db,
                s,
                [
                    (alert.table_id, "alert", out),
                    (alert.table_id, "table", summary(s, table, slim=True)),
                ],
            )
        self.notifier.notify()
        return out

    def resolve(self, alert_id: int, body: Resolution, author: str) -> Settled:
        """Settle a ``refused`` alert (:meth:`resolve_refused`) or a ``look`` (:meth:`settle_look`)."""
        with self.db.read() as s:
            alert = s.get(Alert, alert_id)
            if alert is None:
                raise NotFound(f"no alert #{alert_id}")
            kind, status = alert.kind, alert.status
        if status not in OPEN_ALERT:
            raise Conflict(f"alert #{alert_id} is already {status}")
        if kind == "refused":
            return self.resolve_refused(alert_id, body, author)
        if kind == "look":
            return self.settle_look(alert_id, body, author)
        if kind == "held":
            raise Conflict(f"alert #{alert_id} is a held deal: count it, move it or void it")
        raise Conflict(
            f"alert #{alert_id} is a {kind.replace('_', ' ')} alert: record a ruling or dismiss it"
        )

    def resolve_refused(self, alert_id: int, body: Resolution, author: str) -> NewVersion:
        """A referee's corrected log for a ``refused`` alert (a whole log, or fixed plays and bottom
        of the refused one), stored as the table's next deal."""
        with self.db.read() as s:
            alert = s.get(Alert, alert_id)
            if alert is None:
                raise NotFound(f"no alert #{alert_id}")
            if alert.kind != "refused" or not alert.data:
                raise Conflict(f"alert #{alert_id} is not a refused deal log")
            refused = alert.data
        if body.base_version is not None:
            raise Invalid('a refused log has no stored version: leave out "base_version"')
        log = changed_log(refused["log"], body)
        if log.get("finished") is not True:
            raise Invalid('a corrected deal log must be finished ("finished": true)')
        result = scoring.score(log)  # ScoringError -> 422: the referee sees what is still wrong
        if (still_open := scoring.open_outcome(result)) is not None:
            raise Invalid(still_open)
        with self.db.write() as s:
            self.db.lock_table_row(s, refused_table := alert.table_id)
            alert = s.get(Alert, alert_id)
            assert alert is not None
            if alert.status not in OPEN_ALERT:
                raise Conflict(f"alert #{alert_id} is already {alert.status}")
            table = table_row(s, refused_table)
            deal, events = self.deals.store(
                s, table, str(refused.get("key", f"alert-{alert_id}")), log, result, author, body.reason
            )
            alert.deal_id = deal.id
            alert.status, alert.resolved_by, alert.resolved_at = "resolved", author, now()
            alert.note = f"corrected and stored as deal {deal.seq}: {body.reason}"
            s.flush()
            events.insert(1, (table.id, "alert", alert_dict(alert)))
            feed.append(self.db, s, events)
            seq, state = deal.seq, deal.state_after
        self.notifier.notify()
        return NewVersion(seq, 1, result, state_after=state)

    def settle_look(self, alert_id: int, body: Resolution, author: str) -> Settled:
        """A referee's answer to a ``look``: the cards they saw (fixed plays, bottom or a whole log)
        become a new version of the look's deal, made on ``base_version`` and closing the look;
        with no cards the look closes as it is. A look whose deal the table has not posted yet
        takes no cards (:class:`~scoreboard.errors.Conflict`)."""
        with self.db.read() as s:
            alert = s.get(Alert, alert_id)
            if alert is None or alert.kind != "look":
                raise NotFound(f"no look alert #{alert_id}")
            deal = s.get(Deal, alert.deal_id) if alert.deal_id is not None else None
            table_id = alert.table_id
            if deal is None and body.names_cards():
                raise Conflict(
                    f"look #{alert_id} belongs to a deal the table has not posted yet: "
                    "name the cards once the deal is posted"
                )
            if deal is not None and body.base_version is not None:
                check_version(deal, body.base_version)
            if not body.names_cards():
                return LookClosed(self._close_look(alert_id, body.reason, author))
            assert deal is not None
            if body.base_version is None:
                raise Invalid(f'naming cards makes a new version of deal {deal.seq}: give "base_version"')
            _, current = deal_row(s, table_id, deal.seq)
            seq = deal.seq
            log = changed_log(current.log, body)
        return self.deals.new_version(
            table_id,
            seq,
            body.base_version,
            log,
            author,
            f"look #{alert_id}: {body.reason}",
            alert_id=alert_id,
        )

    def _close_look(self, alert_id: int, reason: str, author: str) -> dict[str, Any]:
        """Close a look without changing its deal: the cards are as read, or do not matter."""
        with self.db.write() as s:
            alert = s.get(Alert, alert_id)
            assert alert is not None
            if alert.status not in OPEN_ALERT:
                raise Conflict(f"alert #{alert_id} is already {alert.status}")
            alert.status, alert.resolved_by, alert.resolved_at = "resolved", author, now()
            alert.note = f"looked, no change: {reason}"
            table = table_row(s, alert.table_id)
            s.flush()
            changed: list[Alert] = []
            deal = s.get(Deal, alert.deal_id) if alert.deal_id is not None else None
            if deal is not None:  # a violation the look held back stands as read: alerted now
                _, current = deal_row(s, table.id, deal.seq)
                changed = sync_engine_alerts(s, table, deal, current.result)
            out = alert_dict(alert)
            events: list[FeedEvent] = [
                (table.id, "alert", out),
                *[(table.id, "alert", alert_dict(a)) for a in changed],
                (table.id, "table", summary(s, table, slim=True)),
            ]
            feed.append(self.db, s, events)
        self.notifier.notify()
        return out
