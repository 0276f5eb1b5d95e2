"""Who is calling: a table (its own token), a referee or admin (login session), or the admin token."""

from __future__ import annotations

import hmac
import re
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from fastapi import Request, Response
from sqlalchemy import delete, select

from scoreboard.db import Database
from scoreboard.errors import Forbidden, NotFound, TooManyAttempts, Unauthorised
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
        raise Unauthorised("missing table token (Authorization: Bearer <token>)")
    found = TOKENS.get(db, table_id)
    if found is None:
        raise NotFound(f"no table {table_id!r}")
    stored_hash, name = found
    if not token_matches(token, stored_hash):
        raise Forbidden(f"this token is not valid for table {name}")
    return name


def table_of_token(request: Request, db: Database) -> tuple[str, str]:
    """(id, name) of the table whose token the request carries; 401 if none or unknown."""
    token = bearer(request.headers.get("authorization"))
    if token is None:
        raise Unauthorised("missing table token (Authorization: Bearer <token>)")
    found = TOKENS.by_token(db, token)
    if found is None:
        raise Unauthorised("this token belongs to no table")
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
        raise Forbidden(f"cookie-authenticated API writes need the {CSRF_HEADER} header")
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
        raise Unauthorised("log in as a referee or admin (or send the admin token)")
    if role == "admin" and who.role != "admin":
        raise Forbidden("admins only")
    return who


class LoginThrottle:
    """Failed logins slow down the source that makes them; the right password from another source
    is never locked out.

    A *source* is the caller's address, or a device that logged in as this user before (the signed
    ``tc_device`` cookie, :func:`device_token`), so a referee's own phone keeps working while
    someone else guesses from the same hall network. After ``free`` failures of one (user, source)
    within ``window`` seconds, each further try from that source waits ``2 ** (n - free)`` seconds
    after its last failure, at most ``cap``: guessing slows to a crawl, a typo costs nothing. A
    source failing for many users (password spraying) is slowed the same way after ``spray_free``.
    """

    def __init__(
        self, free: int = 3, cap: float = 300.0, window: float = 900.0, spray_free: int = 20
    ) -> None:
        self.free, self.cap, self.window, self.spray_free = free, cap, window, spray_free
        self._lock = threading.Lock()
        self._failures: dict[tuple[str, str], list[float]] = {}

    def _wait(self, key: tuple[str, str], free: int, now: float) -> float:
        recent = [t for t in self._failures.get(key, []) if now - t < self.window]
        if recent:
            self._failures[key] = recent
        else:
            self._failures.pop(key, None)
        if len(recent) < free:
            return 0.0
        delay = min(self.cap, 2.0 ** (len(recent) - free))
        return max(0.0, recent[-1] + delay - now)

    def check(self, username: str, source: str, address: str) -> None:
        """Raise :class:`~scoreboard.errors.TooManyAttempts` while this source must wait."""
        now = time.monotonic()
        with self._lock:
            wait = max(
                self._wait((username.lower(), source), self.free, now),
                self._wait(("*", address), self.spray_free, now),
            )
        if wait > 0:
            seconds = int(wait) + 1
            raise TooManyAttempts(f"too many failed logins from here; try again in {seconds} s", seconds)

    def failed(self, username: str, source: str, address: str) -> None:
        now = time.monotonic()
        with self._lock:
            self._failures.setdefault((username.lower(), source), []).append(now)
            self._failures.setdefault(("*", address), []).append(now)

    def succeeded(self, username: str, source: str) -> None:
        with self._lock:
            self._failures.pop((username.lower(), source), None)


DEVICE_COOKIE = "tc_device"


def device_token(secret: bytes, username: str) -> str:
    """The cookie value that marks a browser where ``username`` logged in before."""
    return hmac.new(secret, username.lower().encode(), "sha256").hexdigest()


def login_source(request: Request, username: str, secret: bytes) -> tuple[str, str]:
    """(source, address) of a login attempt for :class:`LoginThrottle`."""
    address = request.client.host if request.client else "unknown"
    cookie = request.cookies.get(DEVICE_COOKIE, "")
    if cookie and hmac.compare_digest(cookie, device_token(secret, username)):
        return f"device:{cookie[:16]}", address
    return f"address:{address}", address


def remember_device(response: Response, secret: bytes, username: str) -> None:
    """Mark this browser as one where ``username`` logged in (see :class:`LoginThrottle`)."""
    response.set_cookie(
        DEVICE_COOKIE, device_token(secret, username), max_age=180 * 86400, httponly=True, samesite="strict"
    )


USERNAME = re.compile(r"^[A-Za-z0-9_.-]{1,60}$")


def login(
    db: Database,
    username: str,
    password: str,
    hours: int,
    throttle: LoginThrottle,
    source: tuple[str, str],
) -> tuple[str, Principal, datetime]:
    where, address = source
    throttle.check(username, where, address)
    with db.write() as s:
        # A name no account can have is a wrong login, without asking the database.
        user = s.scalar(select(User).where(User.username == username)) if USERNAME.match(username) else None
        if user is None or not verify_password(password, user.password_hash):
            throttle.failed(username, where, address)
            raise Unauthorised("wrong username or password")
        throttle.succeeded(username, where)
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
