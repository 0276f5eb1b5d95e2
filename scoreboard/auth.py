"""Who is calling: a table (its own token), a referee or admin (login session), or the admin token."""

from __future__ import annotations

import hmac
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from fastapi import Request
from sqlalchemy import delete, select

from scoreboard.db import Database
from scoreboard.errors import ServiceError
from scoreboard.models import LoginSession, ScoreTable, User
from scoreboard.security import bearer, new_token, token_hash, token_matches, verify_password

COOKIE = "tc_session"
CSRF_HEADER = "x-requested-with"


@dataclass(frozen=True)
class Principal:
    name: str
    role: str  # "referee" or "admin"


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class TokenCache:
    """Table id -> (token hash, name), kept for a few seconds: every edge post checks its token.

    A token rotated through this process is forgotten at once; one rotated through another worker
    process stops working here within ``ttl`` seconds.
    """

    def __init__(self, ttl: float = 10.0) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[float, str, str]] = {}
        self._by_hash: dict[str, tuple[float, str, str]] = {}

    def get(self, db: Database, table_id: str) -> tuple[str, str] | None:
        now = time.monotonic()
        with self._lock:
            hit = self._entries.get(table_id)
        if hit is not None and hit[0] > now:
            return hit[1], hit[2]
        with db.read() as s:
            row = s.execute(
                select(ScoreTable.token_hash, ScoreTable.name).where(ScoreTable.id == table_id)
            ).first()
        if row is None:
            return None
        with self._lock:
            self._entries[table_id] = (now + self.ttl, row.token_hash, row.name)
        return row.token_hash, row.name

    def by_token(self, db: Database, token: str) -> tuple[str, str] | None:
        """(table id, name) of the table holding ``token``, for edges that know only their token."""
        digest = token_hash(token)
        now = time.monotonic()
        with self._lock:
            hit = self._by_hash.get(digest)
        if hit is not None and hit[0] > now:
            return hit[1], hit[2]
        with db.read() as s:
            row = s.execute(
                select(ScoreTable.id, ScoreTable.name).where(ScoreTable.token_hash == digest)
            ).first()
        if row is None:
            return None
        with self._lock:
            self._by_hash[digest] = (now + self.ttl, row.id, row.name)
        return row.id, row.name

    def forget(self, table_id: str) -> None:
        with self._lock:
            self._entries.pop(table_id, None)
            self._by_hash = {h: e for h, e in self._by_hash.items() if e[1] != table_id}


TOKENS = TokenCache()


def table_caller(request: Request, db: Database, table_id: str) -> str:
    """The name of the table whose token the request carries; 401 without a token, 403 with another."""
    token = bearer(request.headers.get("authorization"))
    if token is None:
        raise ServiceError(401, "missing table token (Authorization: Bearer <token>)")
    found = TOKENS.get(db, table_id)
    if found is None:
        raise ServiceError(404, f"no table {table_id!r}")
    stored_hash, name = found
    if not token_matches(token, stored_hash):
        raise ServiceError(403, f"this token is not valid for table {name}")
    return name


def table_of_token(request: Request, db: Database) -> tuple[str, str]:
    """(id, name) of the table whose token the request carries; 401 if none or unknown."""
    token = bearer(request.headers.get("authorization"))
    if token is None:
        raise ServiceError(401, "missing table token (Authorization: Bearer <token>)")
    found = TOKENS.by_token(db, token)
    if found is None:
        raise ServiceError(401, "this token belongs to no table")
    return found


def principal(request: Request, db: Database, admin_token: str | None) -> Principal | None:
    token = bearer(request.headers.get("authorization"))
    from_cookie = False
    if token is None:
        token = request.cookies.get(COOKIE)
        from_cookie = token is not None
    if token is None:
        return None
    if not from_cookie and admin_token and hmac.compare_digest(token.encode(), admin_token.encode()):
        return Principal("admin", "admin")
    if (
        from_cookie
        and request.method not in ("GET", "HEAD")
        and request.url.path.startswith("/api/")
        and not request.headers.get(CSRF_HEADER)
    ):
        raise ServiceError(403, f"cookie-authenticated API writes need the {CSRF_HEADER} header")
    with db.read() as s:
        row = s.execute(
            select(User, LoginSession)
            .join(LoginSession, LoginSession.user_id == User.id)
            .where(LoginSession.token_hash == token_hash(token))
        ).first()
        if row is None or _aware(row[1].expires_at) < datetime.now(UTC):
            return None
        return Principal(row[0].username, row[0].role)


def require(request: Request, db: Database, admin_token: str | None, role: str) -> Principal:
    who = principal(request, db, admin_token)
    if who is None:
        raise ServiceError(401, "log in as a referee or admin (or send the admin token)")
    if role == "admin" and who.role != "admin":
        raise ServiceError(403, "admins only")
    return who


class LoginThrottle:
    """At most ``limit`` failed logins per username in ``window`` seconds (in this process)."""

    def __init__(self, limit: int = 5, window: float = 300.0) -> None:
        self.limit, self.window = limit, window
        self._lock = threading.Lock()
        self._failures: dict[str, list[float]] = {}

    def check(self, username: str) -> None:
        now = time.monotonic()
        with self._lock:
            recent = [t for t in self._failures.get(username, []) if now - t < self.window]
            self._failures[username] = recent
        if len(recent) >= self.limit:
            wait = int(self.window - (now - recent[0])) + 1
            raise ServiceError(429, f"too many failed logins for {username!r}; try again in {wait} s")

    def failed(self, username: str) -> None:
        with self._lock:
            self._failures.setdefault(username, []).append(time.monotonic())

    def succeeded(self, username: str) -> None:
        with self._lock:
            self._failures.pop(username, None)


def login(
    db: Database, username: str, password: str, hours: int, throttle: LoginThrottle
) -> tuple[str, Principal, datetime]:
    throttle.check(username)
    with db.write() as s:
        user = s.scalar(select(User).where(User.username == username))
        if user is None or not verify_password(password, user.password_hash):
            throttle.failed(username)
            raise ServiceError(401, "wrong username or password")
        throttle.succeeded(username)
        now = datetime.now(UTC)
        s.execute(delete(LoginSession).where(LoginSession.expires_at < now))
        token = new_token()
        expires = now + timedelta(hours=hours)
        s.add(LoginSession(token_hash=token_hash(token), user_id=user.id, expires_at=expires))
        return token, Principal(user.username, user.role), expires


def logout(db: Database, token: str | None) -> None:
    if token:
        with db.write() as s:
            s.execute(delete(LoginSession).where(LoginSession.token_hash == token_hash(token)))
