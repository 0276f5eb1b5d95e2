"""The table's durable outbox: every scoreboard post is written to one SQLite file before it is
sent, so a table that is killed (``kill -9``, a pulled plug) and restarted loses nothing and sends
nothing twice.

**What is written when.** :meth:`Outbox.add` commits a post (path, JSON body, idempotency key) as
``pending`` *before* any attempt to send it. The client (:class:`edge_app.client.ScoreboardClient`
with ``outbox=PATH``) sends pending posts oldest first and marks each one only once the scoreboard
has answered: ``sent`` after a 2xx, ``refused`` after a 4xx (with the status and the scoreboard's
detail), both with the answer kept. A network failure or a 5xx (or 408/425/429) leaves it pending,
its ``attempts`` and ``last_error`` updated, at the head of the queue: nothing behind it goes first.
A kill between the send and the mark therefore re-sends the post after the restart, with the *same*
key, which the scoreboard answers as a replay (stored once, ``docs/scoreboard.md``
"Idempotency"). Answered rows stay in the file (pruned after :data:`KEEP_DAYS` days), so a post
the scoreboard has answered is never sent again, and one queued again under the same key (a
restarted run regenerating its events) is ignored.

**Durability.** The file is in WAL mode with ``synchronous=FULL``: each commit is on disk (the WAL
fsynced) before :meth:`Outbox.add` returns. ``NORMAL`` would survive a killed process (the WAL is
written before the commit returns) but may lose the last commits on a power cut, and a table's Pi
loses its power more often than its process; a post is a few hundred bytes every few seconds, so
an fsync each is cheap.

**Whose posts.** Each row carries its table's tag (:func:`token_tag`, a hash of the table's token,
never the token itself); a client sends only its own table's rows, so one file given to two tables
never sends one table's posts with the other's token.

**Keys** (:class:`DealKeys`): ``<deal>-<place>``. ``deal`` is a hash of the table's tag, the deal's
rule set, level, trump and dealer, and the source's identity (:func:`source_identity`: a video
file's bytes, an image folder's names, sizes and first bytes; a live camera has none that survives a
restart, so its run's start time is used). ``place`` is where the post sits in the deal:
``start``, ``play-<trick>-<seat>``, ``trick-<trick>``, ``alert-<kind>-<seat>-<trick>``, ``deal``;
a post with no such place (a ``mismatch`` alert, health) is named by a hash of its body. A place,
unlike a running number, does not shift when one run sees an alert another did not, so a
restarted run that re-reads the same film regenerates the same key for every post; the same
key with a different body (a re-read that came out differently) is refused by the scoreboard with
422 and kept as a refusal, instead of a second play at the same place.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Answered rows older than this many days are deleted when the file is opened.
KEEP_DAYS = 30.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS posts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tab TEXT NOT NULL,                      -- token_tag() of the table whose post it is
    path TEXT NOT NULL,                     -- /api/events or /api/deals
    body TEXT NOT NULL,                     -- the JSON body
    key TEXT NOT NULL,                      -- the Idempotency-Key
    created REAL NOT NULL,                  -- Unix time it was queued
    attempts INTEGER NOT NULL DEFAULT 0,    -- sends tried
    last_error TEXT,                        -- the last failure (network, 5xx)
    state TEXT NOT NULL DEFAULT 'pending',  -- pending, sent or refused
    status INTEGER,                         -- the scoreboard's answer: HTTP status
    answer TEXT,                            -- its body (a refusal's detail)
    done REAL,                              -- Unix time it was answered
    UNIQUE (tab, key)
);
CREATE INDEX IF NOT EXISTS posts_pending ON posts (tab, id) WHERE state = 'pending';
"""


def token_tag(token: str) -> str:
    """A table's tag: the first 16 hex digits of SHA-256 of its token (the token is never stored)."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


@dataclass
class Pending:
    """A post waiting for the scoreboard's answer (``id`` is its row in an outbox, 0 in memory)."""

    path: str
    body: dict[str, Any]
    key: str
    id: int = 0


@dataclass
class Refused:
    """A post the scoreboard refused (4xx): not sent again."""

    path: str
    key: str
    status: int
    detail: str


class MemoryQueue:
    """The queue of a client without an outbox: in this process only, at most ``max_queue`` posts
    (the oldest dropped beyond that)."""

    def __init__(self, max_queue: int = 100_000) -> None:
        self.items: deque[Pending] = deque(maxlen=max_queue)
        self.keys: set[str] = set()

    def add(self, path: str, body: dict[str, Any], key: str) -> bool:
        if key in self.keys:
            return False
        self.keys.add(key)
        self.items.append(Pending(path, body, key))
        return True

    def head(self) -> Pending | None:
        return self.items[0] if self.items else None

    def failed(self, item: Pending, error: str) -> None:
        pass

    def answered(self, item: Pending, status: int, answer: str, refused: bool) -> None:
        if self.items and self.items[0] is item:
            self.items.popleft()

    def __len__(self) -> int:
        return len(self.items)

    def close(self) -> None:
        pass


class Outbox:
    """Pending posts in one SQLite file (module docstring); ``tab`` (:func:`token_tag`) is the table
    whose rows this instance adds and sends."""

    def __init__(self, path: Path, tab: str, *, keep_days: float = KEEP_DAYS) -> None:
        self.path = Path(path)
        self.tab = tab
        self.db = sqlite3.connect(str(self.path), timeout=10.0, isolation_level=None)
        try:
            mode = self.db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"{self.path}: cannot use WAL (journal mode {mode})")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(SCHEMA)
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute(
                    "DELETE FROM posts WHERE state != 'pending' AND done < ?",
                    (time.time() - keep_days * 86400,),
                )
        except BaseException:
            self.db.close()
            raise

    def add(self, path: str, body: dict[str, Any], key: str) -> bool:
        """Commit a post as pending; False (and nothing written) when this table's outbox already
        holds ``key``, pending or answered."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            cur = self.db.execute(
                "INSERT OR IGNORE INTO posts (tab, path, body, key, created) VALUES (?, ?, ?, ?, ?)",
                (self.tab, path, json.dumps(body, separators=(",", ":")), key, time.time()),
            )
        return cur.rowcount == 1

    def head(self) -> Pending | None:
        """The oldest pending post of this table."""
        row = self.db.execute(
            "SELECT id, path, body, key FROM posts WHERE tab = ? AND state = 'pending' ORDER BY id LIMIT 1",
            (self.tab,),
        ).fetchone()
        return None if row is None else Pending(row[1], json.loads(row[2]), row[3], row[0])

    def failed(self, item: Pending, error: str) -> None:
        """A send that failed on the network or with a 5xx: the post stays pending."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(
                "UPDATE posts SET attempts = attempts + 1, last_error = ? WHERE id = ?", (error, item.id)
            )

    def answered(self, item: Pending, status: int, answer: str, refused: bool) -> None:
        """The scoreboard answered ``status`` (2xx, or a 4xx refusal): never sent again."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(
                "UPDATE posts SET attempts = attempts + 1, state = ?, status = ?, answer = ?, done = ? "
                "WHERE id = ?",
                ("refused" if refused else "sent", status, answer, time.time(), item.id),
            )

    def __len__(self) -> int:
        """How many of this table's posts are pending."""
        return int(
            self.db.execute(
                "SELECT count(*) FROM posts WHERE tab = ? AND state = 'pending'", (self.tab,)
            ).fetchone()[0]
        )

    def pending_elsewhere(self) -> int:
        """Pending posts of other tables (another token) in this file: this instance never sends them."""
        return int(
            self.db.execute(
                "SELECT count(*) FROM posts WHERE tab != ? AND state = 'pending'", (self.tab,)
            ).fetchone()[0]
        )

    def counts(self) -> dict[str, int]:
        """This table's rows by state."""
        rows = self.db.execute("SELECT state, count(*) FROM posts WHERE tab = ? GROUP BY state", (self.tab,))
        return {str(state): int(n) for state, n in rows}

    def refusals(self) -> list[Refused]:
        """Every refusal of this table kept in the file, oldest first."""
        rows = self.db.execute(
            "SELECT path, key, status, answer FROM posts WHERE tab = ? AND state = 'refused' ORDER BY id",
            (self.tab,),
        )
        return [Refused(p, k, int(s), str(a)) for p, k, s, a in rows]

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def source_identity(source: str) -> str | None:
    """What identifies a source across restarts: a hash of a video file's bytes, or of an image
    folder's names, sizes and first 64 KiB of each file; None for a live source (a camera index,
    ``picamera2``), which cannot be read again."""
    p = Path(source)
    h = hashlib.sha256()
    if p.is_file():
        with p.open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        return "file:" + h.hexdigest()
    if p.is_dir():
        for child in sorted(c for c in p.iterdir() if c.is_file()):
            h.update(f"{child.name}\0{child.stat().st_size}\0".encode())
            with child.open("rb") as f:
                h.update(f.read(1 << 16))
        return "folder:" + h.hexdigest()
    return None


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class DealKeys:
    """Idempotency keys of one deal's posts: ``<deal>-<place>`` (module docstring)."""

    deal: str

    @classmethod
    def of(cls, tab: str, info: Mapping[str, object], source: str | None) -> DealKeys:
        """The keys of the deal ``info`` (rules, level, trump, dealer) read from ``source`` (a
        :func:`source_identity`; None: a live source, keyed by this moment) at table ``tab``."""
        return cls._hashed(
            [tab] + [str(info.get(k) or "") for k in ("rules", "level", "trump", "dealer")], source
        )

    @classmethod
    def _hashed(cls, fields: list[str], source: str | None) -> DealKeys:
        source = source if source is not None else f"live:{time.time_ns()}"
        return cls(hashlib.sha256("\0".join([*fields, source]).encode()).hexdigest()[:24])

    @classmethod
    def of_board(cls, tab: str, info: Mapping[str, object], source: str | None) -> DealKeys:
        """The keys of the bridge board ``info`` (board, contract, declarer) read from ``source``
        at table ``tab`` (as :meth:`of`)."""
        return cls._hashed(
            [tab, "bridge"] + [str(info.get(k) or "") for k in ("board", "contract", "declarer")], source
        )

    @classmethod
    def of_game(cls, tab: str, game: str, source: str | None) -> DealKeys:
        """The keys of a board game (gomoku) read from ``source`` at table ``tab`` (as :meth:`of`)."""
        return cls._hashed([tab, game], source)

    def of_deal(self, number: int) -> DealKeys:
        """The keys of the ``number``-th deal (0-based) read from the same source: the first deal's
        are these, a later deal's are derived from them and its number.

        >>> k = DealKeys("abc")
        >>> k.of_deal(0) == k, k.of_deal(2).deal
        (True, 'abc-2')
        """
        return self if number == 0 else DealKeys(f"{self.deal}-{number}")

    def event(self, body: Mapping[str, Any]) -> str:
        """The key of a live event (``edge_app.events.event_body``)."""
        return f"{self.deal}-{place(body)}"

    def deal_post(self) -> str:
        """The key of the finished deal's post."""
        return f"{self.deal}-deal"


def place(body: Mapping[str, Any]) -> str:
    """Where an event sits in its deal (module docstring)."""
    kind = body.get("type")
    if kind in ("deal_start", "board_start", "game_start"):
        return "start"
    if kind == "stone" and isinstance(body.get("move"), int):
        return f"stone-{body['move']}"
    if kind == "play" and isinstance(body.get("trick"), int) and isinstance(body.get("seat"), str):
        return f"play-{body['trick']}-{body['seat']}"
    if kind == "trick" and isinstance(body.get("trick"), int):
        return f"trick-{body['trick']}"
    if (
        kind == "alert"
        and body.get("kind") != "mismatch"
        and isinstance(body.get("seat"), str)
        and isinstance(body.get("trick"), int)
    ):
        return f"alert-{body['kind']}-{body['seat']}-{body['trick']}"
    digest = hashlib.sha256(_canonical(dict(body)).encode()).hexdigest()[:16]
    return f"{kind if isinstance(kind, str) and kind.isidentifier() else 'post'}-{digest}"
