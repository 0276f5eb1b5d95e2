"""Subcommands of the per-table service: ``run`` and ``demo`` (:mod:`edge_app.demo`).

``tractorcam run --source SRC --table FILE [--log-out FILE] [--scoreboard URL --token TOKEN]``
(``../shared/spec/cli.md``). What the camera cannot see (rule set, level, trump, dealer) comes from
``--info FILE`` (any JSON with those keys, e.g. a deal log such as ``synth deal``'s ``truth.json``)
or the options of the same names, for the first deal; without them the rule set is
``national-2deck``, the dealer the first trick's leader (the dealer leads the first trick), and the
trump and level those a player declares by showing the level card (亮主; with a warning, since the
score depends on them: a trump nobody was seen declaring is inferred from the play and a referee
asked to check it, a level never told is ``2``). A source may show deal after deal: each later
deal's level and dealer follow from the outcome before it, its trump from its declaration
(:mod:`edge_app.session`), and ``--log-out`` then holds the list of the deals' logs.

Everything ``run`` is given is checked before the first frame is read (:func:`_check`): a bad
option, ``--info`` key, table file, ``--log-out`` folder, reader backend or scoreboard URL, or a
token the scoreboard refuses, exits 2 with one line on standard error; a scoreboard that cannot be
reached is a warning (posts are queued and re-sent). SIGTERM and SIGINT end the run at the next
frame boundary as if the source had ended: the log so far is written, the last posts get a few
seconds, the report is printed.

With a scoreboard, every post goes through the durable outbox (:mod:`edge_app.outbox`, ``--outbox
FILE``; by default next to ``--log-out`` as ``<log-out without its suffix>.outbox.sqlite``, else
``$XDG_CACHE_HOME/tractorcam/outbox-<token tag>.sqlite``). Before the first frame is read, what a
previous run left there is sent (one line on standard error says how much was pending), and the
posts' keys come from the deal and the source (:class:`edge_app.outbox.DealKeys`), so a run killed
at any moment and started again on the same film stores nothing twice.
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import typer

if TYPE_CHECKING:
    import httpx

    from calibration.table import TableGeometry
    from edge_app.client import ScoreboardClient
    from edge_app.config import TableConfig
    from vision.reader import CardReader


def register(app: typer.Typer) -> None:
    """Add this package's subcommands to ``app``."""
    app.command("run")(run)
    app.command("demo")(demo)
    config_app = typer.Typer(
        help="The table's configuration file (tractorcam run --config).", no_args_is_help=True
    )
    config_app.command("example")(config_example)
    config_app.command("check")(config_check)
    app.add_typer(config_app, name="config")
    app.command("doctor")(doctor)


def doctor(
    config: Annotated[Path | None, typer.Option("--config", help="the table's configuration file")] = None,
    source: Annotated[
        str | None, typer.Option("--source", help="camera or film (wins over --config)")
    ] = None,
    table: Annotated[Path | None, typer.Option("--table", help="table.json (wins over --config)")] = None,
    scoreboard: Annotated[str | None, typer.Option("--scoreboard", help="scoreboard URL")] = None,
    token: Annotated[str | None, typer.Option("--token", help="this table's scoreboard token")] = None,
    backend: Annotated[str | None, typer.Option("--backend", help="onnx, ncnn or ultralytics")] = None,
) -> None:
    """Is this table ready? Camera, calibration, model, clock and scoreboard, one line each; exit 1
    on any failure (:mod:`edge_app.doctor`)."""
    from edge_app.doctor import run_checks

    cfg = _settings(config, source=source, table=table, scoreboard=scoreboard, token=token, backend=backend)
    checks = run_checks(cfg)
    for check in checks:
        typer.echo(check.line())
    if not all(c.ok for c in checks):
        raise typer.Exit(1)


def config_example() -> None:
    """Print a configuration file with every key described (all commented out)."""
    from edge_app.config import example

    typer.echo(example())


def config_check(path: Annotated[Path, typer.Argument(help="the configuration file")]) -> None:
    """Check a configuration file; print the settings it gives (exit 2 naming the key at fault)."""
    cfg = _settings(path)
    for key, value in cfg.model_dump().items():
        typer.echo(f"{key} = {value if value is not None else '(not set)'}")


def demo(
    folder: Annotated[
        Path | None,
        typer.Option("--dir", help="where the sample deal lives (default: ~/.cache/tractorcam/demo-SEED)"),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="the sample deal's seed")] = 7,
    tricks: Annotated[
        int | None, typer.Option("--tricks", help="film only the first N tricks (quicker, no outcome)")
    ] = None,
) -> None:
    """The main job on an embedded default: film a sample deal, run the table service on it with a
    local scoreboard, and print what happened."""
    from edge_app.demo import default_folder, run_demo

    run_demo(folder or default_folder(seed), seed, tricks)


def _settings(config: Path | None, **options: Any) -> TableConfig:
    """``--config``'s file with the options given on the command line in its place; exit 2 with one
    line when either is refused."""
    from edge_app.config import ConfigError, load_config, merged

    try:
        return merged(load_config(config) if config is not None else None, **options)
    except ConfigError as exc:
        raise _fail(
            f"--config {exc}" if config is not None and str(exc).startswith(str(config)) else str(exc)
        ) from None


def _fail(message: str) -> typer.Exit:
    """Print ``error: MESSAGE`` (its first line only) on standard error; the exit to raise (2)."""
    typer.echo(f"error: {(str(message).strip().splitlines() or ['bad input'])[0]}", err=True)
    return typer.Exit(2)


INFO_KEYS = ("rules", "level", "trump", "dealer")


def _normal(key: str, value: object) -> str:
    """One deal-info value checked with the engine's own parsers and written as the deal log writes
    it; raises ``ValueError`` with the engine's message."""
    from engine.cards import RANK_NAME, parse_rank, parse_suit
    from engine.rules import get_rule_set
    from engine.seats import parse_seat
    from engine.text import shown

    if key == "rules":
        get_rule_set(value)
        return str(value)
    if key == "level":
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise ValueError(f"unknown rank {shown(value)}")
        return RANK_NAME[parse_rank(str(value))]
    if key == "trump":
        text = value.strip().upper() if isinstance(value, str) else None
        if text == "NT":
            return text
        try:
            return parse_suit(str(text if text is not None else value))
        except ValueError:
            raise ValueError(f"unknown trump {shown(value)} (S, H, D, C or NT)") from None
    return parse_seat(value).name


def _info(
    info_file: Path | None, rules: str | None, level: str | None, trump: str | None, dealer: str | None
) -> tuple[dict[str, str], list[str]]:
    """The deal info from ``--info`` and the options (the options win), each value checked; the keys
    given by neither that the score depends on. Raises the exit 2."""
    from engine.jsontext import load_json

    given: dict[str, str] = {}
    if info_file is not None:
        try:
            raw = load_json(info_file.read_bytes())
        except (OSError, ValueError) as exc:
            raise _fail(f"cannot read --info {info_file}: {exc}") from None
        if isinstance(raw, list) and raw and isinstance(raw[0], dict):
            raw = raw[0]  # a match's logs (``synth deal --deals N``): the first deal's info
        if not isinstance(raw, dict):
            raise _fail(f"--info {info_file} is not a JSON object")
        for key in INFO_KEYS:
            if key in raw:
                try:
                    given[key] = _normal(key, raw[key])
                except ValueError as exc:
                    raise _fail(f"--info {info_file}: {key}: {exc}") from None
    for key, value in zip(INFO_KEYS, (rules, level, trump, dealer), strict=True):
        if value is not None:
            try:
                given[key] = _normal(key, value)
            except ValueError as exc:
                raise _fail(f"--{key}: {exc}") from None
    missing = [k for k in ("level", "trump") if k not in given]
    given.setdefault("rules", "national-2deck")
    return given, missing


@dataclass
class _Checked:
    """What ``run`` needs once everything it was given has been checked."""

    info: dict[str, str]
    geometry: TableGeometry
    reader: CardReader
    client: ScoreboardClient | None
    warnings: list[str]
    outbox: Path | None = None


def _check_log_out(log_out: Path) -> None:
    """``--log-out``'s folder exists and takes a new file (one is created there and removed)."""
    if log_out.is_dir():
        raise _fail(f"--log-out {log_out} is a folder; give a file name")
    folder = log_out.parent
    if not folder.is_dir():
        raise _fail(f"--log-out {log_out}: no folder {folder}")
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".tractorcam-check-", suffix=".tmp")
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        raise _fail(f"--log-out {log_out}: cannot write in {folder} ({exc.strerror or exc})") from None


def default_outbox(log_out: Path | None, token: str) -> Path:
    """Where ``run`` keeps its outbox without ``--outbox``: beside ``--log-out`` (``read.json`` →
    ``read.outbox.sqlite``), else ``$XDG_CACHE_HOME/tractorcam/outbox-<token tag>.sqlite``
    (``~/.cache`` without it). The token's tag, not the table's id, names it: the id needs the
    scoreboard, and a restart while it is down must find the same file."""
    from edge_app.outbox import token_tag

    if log_out is not None:
        return log_out.with_name(log_out.stem + ".outbox.sqlite")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tractorcam" / f"outbox-{token_tag(token)}.sqlite"


def _open_client(url: str, token: str, outbox: Path, http: httpx.Client) -> ScoreboardClient:
    """The client with its outbox at ``outbox`` (its folder made if missing); raises the exit 2
    when the file cannot be opened as an outbox."""
    import sqlite3

    from edge_app.client import ScoreboardClient

    if outbox.is_dir():
        raise _fail(f"--outbox {outbox} is a folder; give a file name")
    try:
        outbox.parent.mkdir(parents=True, exist_ok=True)
        return ScoreboardClient(url, token, outbox=outbox, http=http)
    except (OSError, sqlite3.Error) as exc:
        raise _fail(f"--outbox {outbox}: cannot open it as an outbox ({exc})") from None


def _check_scoreboard(url: str, token: str, outbox: Path) -> tuple[ScoreboardClient, str | None]:
    """The client for ``url`` once the token is accepted (``GET /api/table``), and a warning when the
    scoreboard cannot be reached now (the posts are then queued and re-sent). Raises the exit 2 for a
    malformed URL or token, a refused token, an answer that is not a scoreboard's, or an outbox
    that cannot be opened."""
    import httpx

    from edge_app.client import ScoreboardClient
    from engine.text import shown

    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        parts, port_ok = urlsplit(""), False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise _fail(f"--scoreboard {shown(url)} is not an http:// or https:// URL with a host")
    if (
        not token
        or len(token) > 4096
        or not token.isascii()
        or not all(c.isprintable() and not c.isspace() for c in token)
    ):
        raise _fail("--token must be one word of printable ASCII (the table's token)")
    probe = ScoreboardClient(url, token)

    def client() -> ScoreboardClient:  # the outbox is opened once the token is not refused
        return _open_client(url, token, outbox, probe.http)

    try:
        table = probe.whoami()
    except httpx.TransportError as exc:
        return client(), (
            f"scoreboard {url} cannot be reached now ({type(exc).__name__}): "
            "posts are queued and re-sent until it answers"
        )
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        if status in (401, 403):
            raise _fail(f"the scoreboard refuses this token ({status} from {url}/api/table)") from None
        if status >= 500:
            return client(), f"scoreboard {url} answers {status} now: posts are queued and re-sent"
        raise _fail(
            f"--scoreboard {url} answers {status} for /api/table: not a tractorcam scoreboard?"
        ) from None
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        raise _fail(f"--scoreboard {url}: not a tractorcam scoreboard ({type(exc).__name__})") from None
    if not isinstance(table, dict) or "id" not in table:
        raise _fail(f"--scoreboard {url}: not a tractorcam scoreboard (no table in its answer)")
    return client(), None


def _calibrated(source: str, cfg: Any, log_out: Path | None) -> TableGeometry:
    """The table calibrated from the corner markers in the sharpest of ``source``'s first frames
    (``--table-size``, ``--marker-mm``); said in one line, and kept beside ``--log-out`` as
    ``NAME.table.json``. Exit 2 naming the missing markers when too few are seen."""
    from calibration.markers import MarkersMissingError, calibrate, parse_table_size
    from calibration.table import LensDistortion
    from vision.capture import CameraUnavailableError, SourceNotFoundError, sharpest_frame

    try:
        width, height = parse_table_size(cfg.table_size or "900x900", "--table-size")
    except ValueError as exc:
        raise _fail(str(exc)) from None
    try:
        image = sharpest_frame(source, 10, cfg.camera)
    except (SourceNotFoundError, CameraUnavailableError) as exc:
        raise _fail(str(exc)) from None
    if image is None:
        raise _fail(f"{source} gave no frame to calibrate from")
    given: bool | LensDistortion = True
    if cfg.lens is not None:
        from calibration.lens import load_lens

        try:
            given = load_lens(cfg.lens)
        except (OSError, ValueError) as exc:
            raise _fail(f"--lens {cfg.lens}: not a lens.json (tractorcam calibrate lens): {exc}") from None
    try:
        cal = calibrate(image, width, height, cfg.marker_mm, lens=given)
    except MarkersMissingError as exc:
        raise _fail(f"no --table, and calibrating from the markers failed: {exc}") from None
    except ValueError as exc:  # a lens measured on frames of another shape
        raise _fail(f"--lens {cfg.lens}: {exc}") from None
    lens = cal.geometry.distortion
    typer.echo(
        f"calibrated from the markers ({', '.join(map(str, cal.markers))}) of a {width:g} x {height:g} mm "
        f"table: reprojection error {cal.reprojection_px:.2f} px"
        + (f", lens k1 {lens.k1:.3f}" if lens is not None else "")
        + (f" (from {cfg.lens})" if cfg.lens is not None else ""),
        err=True,
    )
    if log_out is not None:
        cal.geometry.save(log_out.with_suffix(".table.json"))
    return cal.geometry


def _geometry(table: Path | TableGeometry) -> TableGeometry:
    """The table's calibration, or the file of it read; exit 2 naming a file that is not one."""
    from calibration.table import TableGeometry
    from engine.jsontext import load_json

    if isinstance(table, TableGeometry):
        return table
    try:
        return TableGeometry.model_validate(load_json(table.read_bytes()))
    except (OSError, ValueError) as exc:
        raise _fail(f"cannot read --table {table}: {exc}") from None


def _check(
    cfg: TableConfig,
    table: Path | TableGeometry,
    info: dict[str, str],
    missing: list[str],
    decks: int | None = None,
) -> _Checked:
    """Everything ``run`` was given (the table's configuration, its calibration or the file of it,
    the first deal's info and what it lacks), before the source is opened (see the module
    docstring)."""
    from engine.rules import get_rule_set
    from vision.reader import CardReader, ModelFolderError, default_reader_config, model_options

    log_out, scoreboard, token, outbox = cfg.log_out, cfg.scoreboard, cfg.token, cfg.outbox
    if cfg.frames_every < 1:
        raise _fail(f"--every must be at least 1, got {cfg.frames_every}")
    if cfg.inertia < 1:
        raise _fail(f"--inertia must be at least 1, got {cfg.inertia}")
    if (scoreboard is None) != (token is None):
        raise _fail("--scoreboard and --token go together")
    if outbox is not None and scoreboard is None:
        raise _fail("--outbox goes with --scoreboard and --token")
    geometry = _geometry(table)
    if log_out is not None:
        _check_log_out(log_out)
    warnings = []
    if missing:
        warnings.append(
            f"no {' or '.join(missing)} given: read from the declaration (亮主) when a player shows "
            f"the level card; {'trump is otherwise inferred from the play' if 'trump' in missing else ''}"
            f"{' and ' if len(missing) == 2 else ''}{'level 2 is used otherwise' if 'level' in missing else ''}"
            " (the score depends on them; pass --info or --level/--trump)"
        )
    client = None
    if scoreboard is not None and token is not None:
        outbox = outbox or default_outbox(log_out, token)
        client, unreachable = _check_scoreboard(scoreboard, token, outbox)
        if unreachable:
            warnings.append(unreachable)
    try:
        options = model_options(cfg.model)
    except ModelFolderError as exc:
        raise _fail(str(exc)) from None
    try:
        reader = CardReader(
            default_reader_config(
                cfg.backend,
                decks=decks if decks is not None else get_rule_set(info["rules"]).decks,
                unknown_cards=cfg.unknown_cards,
                **options,
            )
        )
    except Exception as exc:  # any backend's failure to build: a missing package, weights, a typo
        raise _fail(f"--backend {cfg.backend}: cannot build the card reader: {exc}") from None
    return _Checked(info, geometry, reader, client, warnings, outbox if client is not None else None)


def _send_leftovers(client: ScoreboardClient, outbox: Path) -> str:
    """Send what a previous run left in the outbox; the line that says how it went."""
    box = client.outbox
    assert box is not None
    left = len(box)
    others = box.pending_elsewhere()
    line = f"outbox {outbox}: {left} posts pending from a previous run"
    if left:
        client.flush()
        still = len(box)
        line += "; all sent" if not still else f"; {left - still} sent, {still} still queued"
    if others:
        line += f" ({others} more of another table's token, not sent by this run)"
    return line


def run(
    source: Annotated[
        str | None, typer.Option("--source", help="video file, image folder, camera index or picamera2")
    ] = None,
    table: Annotated[
        Path | None,
        typer.Option(
            "--table", help="the table's calibration (table.json); without it, calibrated from the markers"
        ),
    ] = None,
    table_size: Annotated[
        str | None,
        typer.Option("--table-size", help="without --table: the table's W x H in mm [default: 900x900]"),
    ] = None,
    marker_mm: Annotated[
        float | None, typer.Option("--marker-mm", help="without --table: the markers' side, mm [default: 60]")
    ] = None,
    lens: Annotated[
        Path | None,
        typer.Option("--lens", help="without --table: the camera's lens.json (calibrate lens), not fitted"),
    ] = None,
    log_out: Annotated[
        Path | None,
        typer.Option("--log-out", help="keep the recognised deal log here (rewritten after every trick)"),
    ] = None,
    scoreboard: Annotated[str | None, typer.Option("--scoreboard", help="scoreboard URL")] = None,
    token: Annotated[str | None, typer.Option("--token", help="this table's scoreboard token")] = None,
    info_file: Annotated[
        Path | None, typer.Option("--info", help="JSON with rules, level, trump, dealer (e.g. a deal log)")
    ] = None,
    game: Annotated[
        str | None, typer.Option("--game", help="the game this table plays (default shengji)")
    ] = None,
    rules: Annotated[str | None, typer.Option("--rules", help="rule set id (default national-2deck)")] = None,
    level: Annotated[str | None, typer.Option("--level", help="the rank being played")] = None,
    trump: Annotated[str | None, typer.Option("--trump", help="S, H, D, C or NT")] = None,
    dealer: Annotated[
        str | None, typer.Option("--dealer", help="dealer's seat (default: first leader)")
    ] = None,
    read: Annotated[
        str | None,
        typer.Option(
            "--read", help="zones (default): the table's changed areas at one scale; frame: whole frames"
        ),
    ] = None,
    every: Annotated[
        int | None,
        typer.Option("--every", help="read every N-th frame [default: 1 with zones, 5 with frame]"),
    ] = None,
    inertia: Annotated[
        int | None, typer.Option("--inertia", help="readings a zone must hold before it counts [default: 2]")
    ] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="onnx (default), ncnn, ultralytics")
    ] = None,
    model: Annotated[
        Path | None,
        typer.Option("--model", help="the event's enrolled deck folder (tractorcam enroll learn)"),
    ] = None,
    outbox: Annotated[
        Path | None,
        typer.Option(
            "--outbox",
            help="the posts' durable outbox, SQLite (default: beside --log-out as NAME.outbox.sqlite, "
            "else ~/.cache/tractorcam/outbox-<token tag>.sqlite)",
        ),
    ] = None,
    unknown_cards: Annotated[
        bool | None,
        typer.Option(
            "--unknown-cards/--no-unknown-cards",
            help="keep cards seen but not named in full (??, K?, ?C, ?J) for the decoding and a referee "
            "[default: kept]",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="the table's configuration, TOML or JSON (tractorcam config example)"),
    ] = None,
    board: Annotated[
        int | None, typer.Option("--board", help="bridge: the board's number (its dealer and vulnerability)")
    ] = None,
    contract: Annotated[
        str | None, typer.Option("--contract", help="bridge: the contract, e.g. 4HX or 3NT")
    ] = None,
    declarer: Annotated[str | None, typer.Option("--declarer", help="bridge: declarer's seat")] = None,
    long_thinks: Annotated[
        Path | None,
        typer.Option(
            "--long-thinks",
            help='gomoku, replaying a film: the long-think presses, [{"t": s, "colour": "B"}] '
            "(live: type B or W and Enter)",
        ),
    ] = None,
) -> None:
    """The per-table service: read a source to its end (or SIGTERM / Ctrl-C), keep the recognised
    deal log, post the deal when it is finished. Options given on the command line win over
    ``--config``'s keys (:mod:`edge_app.config`)."""
    from tqdm import tqdm

    from edge_app.deal import DealInfo
    from edge_app.games import table_service
    from edge_app.outbox import DealKeys, source_identity
    from games import UnknownGameError

    cfg = _settings(
        config,
        source=source,
        table=table,
        table_size=table_size,
        marker_mm=marker_mm,
        lens=lens,
        log_out=log_out,
        scoreboard=scoreboard,
        token=token,
        info=info_file,
        game=game,
        rules=rules,
        level=level,
        trump=trump,
        dealer=dealer,
        read=read,
        every=every,
        inertia=inertia,
        backend=backend,
        model=model,
        outbox=outbox,
        unknown_cards=unknown_cards,
    )
    if cfg.source is None:
        raise _fail("no source: give --source or set it in --config")
    if long_thinks is not None and cfg.game != "gomoku":
        raise _fail("--long-thinks is a gomoku table's (--game gomoku)")
    if cfg.game == "gomoku":
        if board is not None or contract is not None or declarer is not None:
            raise _fail("--board, --contract and --declarer are a bridge table's (--game bridge)")
        _run_gomoku(cfg, long_thinks)
        return
    if cfg.game == "bridge":
        _run_bridge(cfg, board, contract, declarer)
        return
    if board is not None or contract is not None or declarer is not None:
        raise _fail("--board, --contract and --declarer are a bridge table's (--game bridge)")
    try:
        service = table_service(cfg.game)
    except UnknownGameError as exc:  # a game whose rules tractorcam knows, but no table service yet
        raise _fail(str(exc)) from None
    source, log_out, every = cfg.source, cfg.log_out, cfg.frames_every
    given, missing = _info(cfg.info, cfg.rules, cfg.level, cfg.trump, cfg.dealer)
    # a table set up with its markers only: calibrate from the source's first frames
    where = cfg.table if cfg.table is not None else _calibrated(source, cfg, log_out)
    checked = _check(cfg, where, given, missing)
    src = _open(source, cfg)
    for line in checked.warnings:
        typer.echo(f"warning: {line}", err=True)
    reader, client = checked.reader, checked.client
    games = None
    if client is not None:
        from edge_app.client import GameWatch

        games = GameWatch(client)  # an event's next round at this table starts from 2-2
    watch = None
    if checked.geometry.markers:
        from calibration.markers import CameraWatch

        watch = CameraWatch(checked.geometry)

    zones, read_cards = _reading(
        cfg, reader, (lambda: watch.geometry) if watch is not None else checked.geometry
    )

    recalibrated = [0]

    def on_camera(moved: bool, frame: Any) -> None:
        again = watch is not None and watch.recalibrations > recalibrated[0]
        recalibrated[0] = watch.recalibrations if watch is not None else 0
        if moved:
            line = (
                f"warning: camera moved at frame {frame.index} (markers {watch.offset_px if watch else 0:.0f} px "
                "off their calibrated place): reading paused until they are back or lie still in the new place"
            )
        elif again:
            line = f"camera calibrated again from the markers in its new place at frame {frame.index}: reading again"
        else:
            line = f"camera back in place at frame {frame.index}: reading again"
        typer.echo(line, err=True)

    def on_lag(behind: bool, frame: Any, lag: Any) -> None:
        typer.echo(("warning: " if behind else "") + lag.said(behind, frame), err=True)

    keys = None
    if client is not None and checked.outbox is not None:
        typer.echo(_send_leftovers(client, checked.outbox), err=True)
        keys = DealKeys.of(client.tab, given, source_identity(source))
    with _stopping(src) as signals:
        # said once the handlers are in place: from here a SIGTERM ends the run cleanly
        typer.echo(
            f"reading {source}: {given['rules']}, level {given.get('level', 'as declared')}, "
            f"trump {given.get('trump', 'as declared')}, "
            f"dealer {given.get('dealer', 'the first leader')}; SIGTERM or Ctrl-C stops and keeps the log",
            err=True,
        )
        with tqdm(desc="frames", unit="frame", disable=None) as bar:
            result = service(
                src,
                read_cards,
                checked.geometry,
                DealInfo(given["rules"], given.get("level"), given.get("trump"), given.get("dealer")),
                cfg,
                client=client,
                on_frame=lambda frame, state: _step(bar, every),
                stop=lambda: bool(signals),
                keys=keys,
                camera=source,
                watch=watch,
                on_camera=on_camera,
                new_game=games,
                on_lag=on_lag,
            )
    if result.stopped:
        typer.echo(
            f"stopped by {signal.Signals(signals[0]).name}: the deal as seen so far is kept"
            + (f" in {log_out}" if log_out else ""),
            err=True,
        )
    _report(result, zones)
    if result.paused_frames:
        typer.echo(f"warning: {result.paused_frames} frames not read while the camera had moved", err=True)
    if client is not None:
        _sent(client, result.all_sent, cfg, checked.outbox, "deal")


def _open(source: str, cfg: TableConfig) -> Any:
    """The frame source ``source`` opened with the configuration's camera controls; exit 2 with one
    line when it is missing or the camera cannot be had."""
    from vision.capture import CameraUnavailableError, SourceNotFoundError, open_source

    try:
        return open_source(source, cfg.camera)
    except (SourceNotFoundError, CameraUnavailableError) as exc:
        raise _fail(str(exc)) from None


def _reading(cfg: TableConfig, reader: Any, geometry: Any) -> tuple[Any, Any]:
    """How ``run`` reads a frame's cards: the zone reader over ``geometry`` (a calibration, or a
    function giving the current one) with ``read = "zones"``, else the reader on whole frames; the
    zone reader (None for whole frames) and the reading function."""
    if cfg.read != "zones":
        return None, lambda image: reader.read(image).cards
    from vision.zones import ZoneReader

    zones = ZoneReader(reader, geometry)
    return zones, zones.read


@contextmanager
def _stopping(src: Any) -> Iterator[list[int]]:
    """While inside, SIGTERM and SIGINT are noted in the list given (the run stops at the next
    frame and keeps what it saw) instead of ending the process; on leaving, the handlers before are
    back and ``src`` is closed. A camera lost on the way is one line and exit 2. Off the main
    thread no handler is set (the caller owns the signals)."""
    from vision.capture import CameraUnavailableError

    signals: list[int] = []
    previous: dict[int, Any] = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, lambda signum, frame: signals.append(signum))
    except ValueError:
        pass
    try:
        yield signals
    except CameraUnavailableError as exc:
        raise _fail(str(exc)) from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        src.close()


def _run_bridge(cfg: TableConfig, board: int | None, contract: str | None, declarer: str | None) -> None:
    """``run`` at a bridge table: one board followed to the source's end (or SIGTERM / Ctrl-C), its
    log kept in ``--log-out``, its score, alerts and looks printed (:mod:`edge_app.bridge`)."""
    from tqdm import tqdm

    from edge_app.bridge import BoardInfo, BoardInfoError, run_bridge_service
    from edge_app.outbox import DealKeys, source_identity

    if board is None or contract is None or declarer is None:
        raise _fail(
            "a bridge table follows the board its operator enters: give --board, --contract and --declarer"
        )
    try:
        info = BoardInfo(board, contract, declarer)
    except BoardInfoError as exc:
        raise _fail(f"board {board}: {exc}") from None
    assert cfg.source is not None
    where = cfg.table if cfg.table is not None else _calibrated(cfg.source, cfg, cfg.log_out)
    checked = _check(cfg, where, {}, [], decks=1)
    client, keys = checked.client, None
    if client is not None:
        _plays(client, cfg.scoreboard, "bridge")
        if checked.outbox is not None:
            typer.echo(_send_leftovers(client, checked.outbox), err=True)
        keys = DealKeys.of_board(client.tab, info.header(), source_identity(cfg.source))
    for line in checked.warnings:
        typer.echo(f"warning: {line}", err=True)
    src = _open(cfg.source, cfg)
    zones, read_cards = _reading(cfg, checked.reader, checked.geometry)
    with _stopping(src) as signals:
        typer.echo(
            f"reading {cfg.source}: bridge board {board}, {info.contract} by {info.declarer}; "
            "SIGTERM or Ctrl-C stops and keeps the log",
            err=True,
        )
        with tqdm(desc="frames", unit="frame", disable=None) as bar:
            result = run_bridge_service(
                src, read_cards, checked.geometry, info, cfg,
                on_frame=lambda frame, state: _step(bar, cfg.frames_every), stop=lambda: bool(signals),
                client=client, keys=keys,
            )  # fmt: skip
    log = result.board.log
    read = f"{result.read} read" if zones is None else f"{zones.stats.areas} areas read"
    typer.echo(f"{result.frames} frames, {read}")
    plays = sum(len(t["plays"]) for t in log["tricks"])
    dummy = log.get("dummy")
    named = sum(c != "??" for c in dummy) if dummy else 0
    score = (result.board.result or {}).get("score")
    typer.echo(
        f"board {board}: {info.contract} by {info.declarer}, {len(log['tricks'])} tricks, {plays} plays, "
        f"dummy {'read (' + str(named) + ' of 13 named)' if dummy else 'not seen'}, finished "
        f"{str(log['finished']).lower()}" + (f"; score NS {score['NS']}, EW {score['EW']}" if score else "")
    )
    if result.board.problem:
        typer.echo(f"warning: the rules refuse the board as read: {result.board.problem}", err=True)
    for line in result.alerts:
        typer.echo(f"alert: {line}")
    for line in result.board.looks:
        typer.echo(f"look: {line}")
    if client is not None:
        _sent(client, result.all_sent, cfg, checked.outbox, "board")


def _run_gomoku(cfg: TableConfig, long_thinks: Path | None) -> None:
    """``run`` at a gomoku table: the game followed to the source's end, a win or a draw (or SIGTERM
    / Ctrl-C), its log kept in ``--log-out``, its result, overtimes and looks printed
    (:mod:`edge_app.gomoku`)."""
    import sys

    from tqdm import tqdm

    from edge_app.gomoku import KeyPresses, read_presses, run_gomoku_service
    from engine.jsontext import load_json

    if (cfg.scoreboard is None) != (cfg.token is None):
        raise _fail("--scoreboard and --token go together")
    if cfg.frames_every < 1:
        raise _fail(f"--every must be at least 1, got {cfg.frames_every}")
    given: list[tuple[float, str]] | None = None
    if long_thinks is not None:
        try:
            given = read_presses(load_json(long_thinks.read_bytes()))
        except (OSError, ValueError) as exc:
            raise _fail(f"--long-thinks {long_thinks}: {exc}") from None
    if cfg.log_out is not None:
        _check_log_out(cfg.log_out)
    assert cfg.source is not None
    where = cfg.table if cfg.table is not None else _calibrated(cfg.source, cfg, cfg.log_out)
    geometry = _geometry(where)
    client = keys = outbox = None
    if cfg.scoreboard is not None and cfg.token is not None:
        from edge_app.outbox import DealKeys, source_identity

        outbox = cfg.outbox or default_outbox(cfg.log_out, cfg.token)
        client, unreachable = _check_scoreboard(cfg.scoreboard, cfg.token, outbox)
        _plays(client, cfg.scoreboard, "gomoku")
        if unreachable:
            typer.echo(f"warning: {unreachable}", err=True)
        typer.echo(_send_leftovers(client, outbox), err=True)
        keys = DealKeys.of_game(client.tab, "gomoku", source_identity(cfg.source))
    src = _open(cfg.source, cfg)
    typed = KeyPresses(sys.stdin) if given is None else None
    from vision.gomoku import GridNotFoundError

    def seen(frame: Any) -> None:
        if typed is not None:
            typed.now = frame.timestamp
        _step(bar, cfg.frames_every)

    with _stopping(src) as signals:
        typer.echo(
            f"reading {cfg.source}: gomoku; long thinks "
            + ("as given" if given is not None else "by typing B or W and Enter")
            + "; SIGTERM or Ctrl-C stops and keeps the log",
            err=True,
        )
        with tqdm(desc="frames", unit="frame", disable=None) as bar:
            try:
                result = run_gomoku_service(
                    src, geometry, presses=(lambda: given) if given is not None else typed or (lambda: []),
                    log_out=cfg.log_out, every=cfg.frames_every, stop=lambda: bool(signals),
                    on_frame=seen, client=client, keys=keys,
                )  # fmt: skip
            except GridNotFoundError as exc:
                raise _fail(str(exc)) from None
    log, score = result.log, result.result or {}
    typer.echo(f"{result.frames} frames, {result.read} read, {result.busy} with a hand over the board")
    winner = score.get("winner")
    typer.echo(
        f"gomoku: {len(log['moves'])} moves, "
        + (
            f"{winner} won ({' '.join(score.get('line') or [])})"
            if winner
            else "drawn"
            if score.get("draw")
            else "not finished"
        )
    )
    for v in score.get("violations", []):
        typer.echo(f"overtime: move {v['move']} ({v['colour']}) took {v['seconds']} s of {v['limit']} s")
    if result.problem:
        typer.echo(f"warning: the rules refuse the game as read: {result.problem}", err=True)
    for look in result.looks:
        typer.echo(f"look: at {look.at:.1f} s (frame {look.frame}): {look.reason}")
    if client is not None:
        _sent(client, result.all_sent, cfg, outbox, "game")


def _plays(client: Any, url: str | None, game: str) -> None:
    """Exit 2 when the scoreboard's table for this token plays another game than ``game`` (best
    effort: a scoreboard that does not answer now is checked by its answers to the posts)."""
    import httpx

    try:
        plays = client.whoami().get("plays")
    except (httpx.HTTPError, ValueError, AttributeError):
        return
    if isinstance(plays, str) and plays != game:
        raise _fail(f"the scoreboard {url} has this token's table playing {plays}, not {game}")


def _sent(client: Any, all_sent: bool, cfg: TableConfig, outbox: Path | None, what: str) -> None:
    """The scoreboard's part of the run's end: its refusals (exit 1), or the posts left unsent
    (exit 1, kept in the outbox for the next run)."""
    unsent = len(client.queue)
    client.close()
    for r in client.refused:
        typer.echo(f"scoreboard refused {r.path} ({r.status}): {r.detail}", err=True)
    if not all_sent:
        typer.echo(
            f"error: scoreboard {cfg.scoreboard} unreachable: {unsent} posts not sent"
            + (f", kept in the outbox {outbox} for the next run" if outbox else "")
            + (f" (the {what} log is in {cfg.log_out})" if cfg.log_out else ""),
            err=True,
        )
        raise typer.Exit(1)
    if client.refused:
        raise typer.Exit(1)


def _report(result: Any, zones: Any = None) -> None:
    """The run's summary: frames, what was read (areas with the zone reader), each deal's log."""
    stats = result.stats
    deals = result.deals or (result.deal,)
    read = (
        f"{stats.read} read"
        if zones is None
        else f"{zones.stats.areas} areas read, {zones.stats.confirmations} read again"
    )
    typer.echo(
        f"{stats.frames} frames, {stats.sampled} sampled, {read}"
        + (f": {len(deals)} deals" if len(deals) > 1 else "")
    )
    for deal in deals:
        log = deal.log.to_json()
        plays = sum(len(t["plays"]) for t in log["tricks"])
        how = (
            "declared" if deal.declared_by else ("inferred from the play" if deal.trump_inferred else "given")
        )
        typer.echo(
            (f"deal {deal.number + 1}: " if len(deals) > 1 else "")
            + f"{len(log['tricks'])} tricks, {plays} plays, bottom {'seen' if 'bottom' in log else 'not seen'}, "
            f"finished {str(log['finished']).lower()}; level {log['level']}, trump {log['trump']} ({how}), "
            f"dealer {log['dealer']}"
        )
        if deal.problem:
            typer.echo(
                "warning: the engine refuses the recognised log"
                + (f" of deal {deal.number + 1}" if len(deals) > 1 else "")
                + f": {deal.problem}",
                err=True,
            )
    for line in result.alerts:
        typer.echo(f"alert: {line}")


def _step(bar: Any, frames: int) -> None:
    """The progress bar moved on by ``frames`` (a frame read)."""
    bar.update(frames)
