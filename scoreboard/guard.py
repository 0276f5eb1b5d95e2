"""What every request passes before any route sees it (pure ASGI middleware):

* :class:`BodyGuard` reads a request's body whole, within the size limit of the route it is for
  (413), and checks JSON bodies against :mod:`engine.jsontext`'s bounds (nesting depth, number
  length, NaN, NUL characters: 400) before anything parses or stores them; the same bytes then go on
  to the route. One hostile body can no longer reach a ``RecursionError`` or a database error.
* :class:`SecurityHeaders` adds the usual browser protections to every response: a content
  security policy (scripts, styles and images from this server only; the API's documentation page
  loads its viewer from a CDN and is left out), no framing, no MIME sniffing, same-origin referrers.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.jsontext import JsonInputError, load_json
from scoreboard.settings import Settings

_DEAL_PATHS = re.compile(r"^/api/(tables/[^/]+/deals(/\d+/versions)?|deals|alerts/[^/]+/resolve)$")
_EVENT_PATHS = re.compile(r"^/api/(tables/[^/]+/)?events$")
_EVENT_FILE_PATHS = re.compile(r"^/api/tourneys/?$")
# The organiser's forms that carry an event file: URL-encoded, a Chinese name takes 9 bytes a character.
_EVENT_FORM_PATHS = re.compile(r"^/tourneys/(new|import)$")
_WITH_BODY = {"POST", "PUT", "PATCH"}


def body_limit(settings: Settings, path: str) -> int:
    """The largest body the route at ``path`` takes.

    >>> s = Settings()
    >>> body_limit(s, "/api/tables/abc/deals") == s.max_deal_bytes, body_limit(s, "/api/events") == s.max_event_bytes
    (True, True)
    """
    if _DEAL_PATHS.match(path):
        return settings.max_deal_bytes
    if _EVENT_PATHS.match(path):
        return settings.max_event_bytes
    if _EVENT_FILE_PATHS.match(path):
        return settings.max_event_file_bytes
    if _EVENT_FORM_PATHS.match(path):
        return 4 * settings.max_event_file_bytes
    return settings.max_body_bytes


def _is_json(scope: Scope) -> bool:
    for name, value in scope.get("headers", []):
        if name == b"content-type":
            kind = value.split(b";")[0].strip().lower()
            return bool(kind == b"application/json" or kind.endswith(b"+json"))
    return True  # no content type: FastAPI reads the body as JSON


class BodyGuard:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _WITH_BODY:
            await self.app(scope, receive, send)
            return
        limit = body_limit(self.settings, scope["path"])
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                if not value.isdigit():
                    await _refuse(400, "invalid Content-Length", scope, receive, send)
                    return
                if int(value) > limit:
                    await _refuse(
                        413,
                        f"body too large: {int(value)} bytes, the limit here is {limit}",
                        scope,
                        receive,
                        send,
                    )
                    return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _refuse(413, f"body too large: more than {limit} bytes", scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if body.strip() and _is_json(scope):
            try:
                load_json(body)
            except JsonInputError as exc:
                await _refuse(400, str(exc), scope, receive, send)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _refuse(status: int, detail: str, scope: Scope, receive: Receive, send: Send) -> None:
    await JSONResponse({"detail": detail}, status_code=status)(scope, receive, send)


CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'"
)
_ALWAYS: list[tuple[bytes, bytes]] = [
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]


class SecurityHeaders:
    def __init__(self, app: ASGIApp, docs_path: str = "/api/docs") -> None:
        self.app = app
        self.docs_path = docs_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = list(_ALWAYS)
        if not scope["path"].startswith(self.docs_path):
            extra.append((b"content-security-policy", CSP.encode()))

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[Any] = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(k, v) for k, v in extra if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
