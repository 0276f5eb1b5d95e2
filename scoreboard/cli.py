"""Subcommands of this package (registered into the `tractorcam` command line)."""

from __future__ import annotations

import errno
import socket
import sys

import typer

scoreboard_app = typer.Typer(no_args_is_help=True, help="The central scoreboard service.")


@scoreboard_app.command("serve")
def serve(
    db: str = typer.Option(
        "sqlite:///scoreboard.db", "--db", help="SQLAlchemy URL (sqlite:///… or postgresql://…)"
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on"),
    port: int = typer.Option(8000, "--port", help="TCP port (1-65535)"),
) -> None:
    """Migrate the database, then serve the HTTP API and the live pages."""
    import gc
    import os
    import secrets
    import sys

    import uvicorn
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

    from scoreboard.app import create_app
    from scoreboard.settings import Settings

    if not 1 <= port <= 65535:
        print(f"error: --port {port} is not a TCP port (1-65535)", file=sys.stderr)
        raise typer.Exit(2)
    listener = _listen(host, port)
    if not os.environ.get("TRACTORCAM_ADMIN_TOKEN"):
        os.environ["TRACTORCAM_ADMIN_TOKEN"] = secrets.token_urlsafe(24)
        print(
            f"TRACTORCAM_ADMIN_TOKEN was not set; admin token for this run: "
            f"{os.environ['TRACTORCAM_ADMIN_TOKEN']}",
            file=sys.stderr,
        )
    try:
        shown = make_url(db).render_as_string(hide_password=True)  # never print a password
    except (ArgumentError, ValueError) as exc:
        print(f"error: bad --db URL: {exc}", file=sys.stderr)
        raise typer.Exit(2) from exc
    try:
        app = create_app(Settings(db_url=db))
    except (ArgumentError, ValueError, NoSuchModuleError) as exc:
        print(f"error: bad --db URL {shown!r}: {exc}", file=sys.stderr)
        raise typer.Exit(2) from exc
    except OperationalError as exc:
        reason = " ".join(str(exc.orig).split())
        print(f"error: cannot open database {shown!r}: {reason}", file=sys.stderr)
        raise typer.Exit(1) from exc
    # Everything loaded so far lives as long as the process: keep it out of the collector's full
    # passes (a full pass over it stalled requests for ~100 ms in the benchmark).
    gc.collect()
    gc.freeze()
    print(f"scoreboard on http://{host}:{port}/ (database {shown})", file=sys.stderr)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=3)
    uvicorn.Server(config).run(sockets=[listener])


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, opened before anything else so that a port in use or an address that
    is not this machine's is one clear line (exit 1), not a traceback after start-up."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        print(f"error: --host {host!r}: {exc.strerror or exc}", file=sys.stderr)
        raise typer.Exit(2) from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = "the port is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        print(f"error: cannot listen on {host}:{port}: {reason}", file=sys.stderr)
        raise typer.Exit(1) from exc
    sock.set_inheritable(True)
    return sock


@scoreboard_app.command("add-user")
def add_user(
    username: str = typer.Argument(..., help="login name"),
    role: str = typer.Option("referee", "--role", help="referee or admin"),
    db: str = typer.Option("sqlite:///scoreboard.db", "--db", help="SQLAlchemy URL"),
) -> None:
    """Create a referee or admin login (the password is read from standard input or a prompt)."""
    import sys

    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, NoSuchModuleError, OperationalError

    from scoreboard.auth import USERNAME
    from scoreboard.db import Database, make_engine, migrate
    from scoreboard.models import User
    from scoreboard.security import hash_password

    if role not in ("referee", "admin"):
        print("error: --role must be referee or admin", file=sys.stderr)
        raise typer.Exit(2)
    password = (
        sys.stdin.readline().rstrip("\n")
        if not sys.stdin.isatty()
        else typer.prompt("password", hide_input=True, confirmation_prompt=True)
    )
    if len(password) < 8:
        print("error: the password needs at least 8 characters", file=sys.stderr)
        raise typer.Exit(2)
    if not USERNAME.match(username):
        print("error: a username is 1-60 letters, digits, '.', '_' or '-'", file=sys.stderr)
        raise typer.Exit(2)
    try:
        shown = make_url(db).render_as_string(hide_password=True)
        engine = make_engine(db)
    except (ArgumentError, ValueError, NoSuchModuleError) as exc:
        print(f"error: bad --db URL: {' '.join(str(exc).split())[:200]}", file=sys.stderr)
        raise typer.Exit(2) from exc
    try:
        migrate(engine)
        with Database(engine).write() as s:
            s.add(User(username=username, password_hash=hash_password(password), role=role))
    except IntegrityError as exc:
        print(f"error: user {username!r} already exists", file=sys.stderr)
        raise typer.Exit(2) from exc
    except (OperationalError, DBAPIError) as exc:
        reason = " ".join(str(getattr(exc, "orig", exc)).split())[:200]
        print(f"error: cannot open database {shown!r}: {reason}", file=sys.stderr)
        raise typer.Exit(1) from exc
    print(f"{role} {username} created")


def register(app: typer.Typer) -> None:
    """Add this package's subcommands to ``app``."""
    app.add_typer(scoreboard_app, name="scoreboard")
