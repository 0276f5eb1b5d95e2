"""``tractorcam tourney pair FILE`` and ``tractorcam tourney standings FILE`` (``shared/spec/cli.md``,
"Tournament commands"): one JSON object on standard output and exit 0, or one line on standard
error and exit 2 for a file that cannot be read, is not a valid event, or has no next round. For
bridge events (``shared/spec/games.md``, "Results"): ``tourney imps DIFF`` prints the IMPs of a
score difference, ``tourney matchpoints FILE`` the match points of a traveller; ``tourney mitchell
TABLES`` a pair event's movement, ``tourney pairs FILE`` its standings from the travellers' lines,
``tourney teams FILE`` a team match in IMPs (:mod:`bridge.events`).

Only typer is imported here; the core (and networkx) load when a command runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from tourney.event import Event

#: An error line longer than this is cut.
MAX_ERROR_CHARS = 300

tourney_app = typer.Typer(no_args_is_help=True, help="Tournament pairings and standings from an event file.")

FILE = typer.Argument(..., help="Event file (JSON, shared/spec/cli.md), or - for standard input.")


def _fail(message: str) -> NoReturn:
    line = " ".join(message.split())
    if len(line) > MAX_ERROR_CHARS:
        line = line[: MAX_ERROR_CHARS - 1] + "…"
    typer.echo(f"error: {line}", err=True)
    raise typer.Exit(2)


def _label(file: str) -> str:
    return "standard input" if file == "-" else file


def _read(file: str) -> bytes:
    """The bytes of ``file``, or of standard input for ``-``; exit 2 when it cannot be read."""
    try:
        return sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as exc:
        _fail(f"cannot read {file}: {exc.strerror or exc}")


def _event(file: str) -> Event:
    from tourney.event import EventFileError, load_event

    text = _read(file)
    try:
        return load_event(text)
    except EventFileError as exc:
        _fail(f"{_label(file)}: {exc}")


@tourney_app.command("pair")
def pair(file: str = FILE) -> None:
    """Print the next round's pairing: {"round", "matches", "relaxed"}."""
    from tourney.pairing import PairingError, pair_next

    event = _event(file)
    try:
        pairing = pair_next(event)
    except PairingError as exc:
        _fail(f"{_label(file)}: {exc}")
    typer.echo(json.dumps(pairing.to_json(), ensure_ascii=False))


@tourney_app.command("standings")
def standings(file: str = FILE) -> None:
    """Print the standings after the last complete round: {"after_round", "standings"}."""
    from tourney.standings import standings as compute

    typer.echo(json.dumps(compute(_event(file)).to_json(), ensure_ascii=False))


@tourney_app.command(
    "imps", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
def imps(diff: str = typer.Argument(..., help="A score difference, e.g. 170 or -50.")) -> None:
    """Print the IMPs of a bridge score difference by law 78's scale (negative for a negative one)."""
    from bridge.results import imps as scale

    text = diff.strip()
    if not text.lstrip("-").isdigit() or len(text) > 12:
        _fail(f"a score difference is a whole number such as 170 or -50, not {diff[:40]!r}")
    typer.echo(json.dumps(scale(int(text))))


@tourney_app.command("matchpoints")
def matchpoints(
    file: str = typer.Argument(
        ..., help="A JSON list of one board's N-S scores (a traveller), or - for standard input."
    ),
) -> None:
    """Print the match points of one bridge board's N-S scores: {"NS": [...], "EW": [...]}, per line in
    the list's order."""
    from bridge.results import matchpoints as award
    from engine.jsontext import JsonInputError, load_json

    try:
        scores = load_json(_read(file))
    except JsonInputError as exc:
        _fail(f"{_label(file)}: bad JSON: {exc}")
    if not isinstance(scores, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in scores):
        _fail(f"{_label(file)}: a traveller is a JSON list of whole-number N-S scores, e.g. [420, -50, 170]")
    ns, ew = award(scores)
    typer.echo(json.dumps({"NS": ns, "EW": ew}))


@tourney_app.command("mitchell")
def mitchell_command(
    tables: int = typer.Argument(..., help="Tables in play (3 or more)."),
    boards_per_round: int = typer.Option(2, "--boards-per-round", help="Boards each table plays a round."),
    rounds: int | None = typer.Option(None, "--rounds", help="Rounds (default: all the movement has)."),
) -> None:
    """Print a bridge pair event's Mitchell movement: [{"round", "table", "ns", "ew", "boards"}, ...]."""
    from bridge.events import MovementError, mitchell

    try:
        seatings = mitchell(tables, boards_per_round, rounds)
    except MovementError as exc:
        _fail(str(exc))
    typer.echo(json.dumps([{**vars(s), "boards": list(s.boards)} for s in seatings]))


@tourney_app.command("pairs")
def pairs(
    file: str = typer.Argument(
        ..., help='A JSON list of traveller lines {"board", "ns", "ew", "ns_score"}, or - for standard input.'
    ),
) -> None:
    """Print a bridge pair event's standings by match points, North-South then East-West:
    [{"direction", "pair", "matchpoints", "top", "percentage"}, ...]."""
    from bridge.events import BoardResult, pair_results
    from engine.jsontext import JsonInputError, load_json

    try:
        lines = load_json(_read(file))
    except JsonInputError as exc:
        _fail(f"{_label(file)}: bad JSON: {exc}")
    keys = ("board", "ns", "ew", "ns_score")
    if not isinstance(lines, list) or not all(
        isinstance(line, dict)
        and set(line) == set(keys)
        and all(isinstance(line[k], int) and not isinstance(line[k], bool) for k in keys)
        for line in lines
    ):
        _fail(
            f'{_label(file)}: a list of traveller lines, each {{"board", "ns", "ew", "ns_score"}} (whole numbers)'
        )
    standings = pair_results(BoardResult(**line) for line in lines)
    typer.echo(json.dumps([{**vars(s), "percentage": s.percentage} for s in standings]))


@tourney_app.command("teams")
def teams(
    file: str = typer.Argument(
        ..., help="A JSON list of [board, NS score with team A North-South, NS score with team A East-West]."
    ),
) -> None:
    """Print a two-table team match in IMPs: {"boards": [...], "imps": [...], "totals": [A, B]}."""
    from bridge.events import team_match
    from engine.jsontext import JsonInputError, load_json

    try:
        rows = load_json(_read(file))
    except JsonInputError as exc:
        _fail(f"{_label(file)}: bad JSON: {exc}")
    if not isinstance(rows, list) or not all(
        isinstance(row, list)
        and len(row) == 3
        and all(isinstance(v, int) and not isinstance(v, bool) for v in row)
        for row in rows
    ):
        _fail(
            f"{_label(file)}: a list of [board, NS score at one table, NS score at the other] (whole numbers)"
        )
    match = team_match([(b, a, c) for b, a, c in rows])
    typer.echo(
        json.dumps({"boards": list(match.boards), "imps": list(match.imps), "totals": list(match.totals)})
    )


def register(app: typer.Typer) -> None:
    app.add_typer(tourney_app, name="tourney")
