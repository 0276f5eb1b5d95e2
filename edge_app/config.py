"""One validated configuration per table: what ``tractorcam run`` and ``tractorcam doctor`` read.

A table's service is set up once, in a TOML (or JSON) file beside its calibration, and started the
same way every time (``tractorcam run --config table.toml``, e.g. from a systemd unit:
``docs/pi.md``). Every key is a :class:`TableConfig` field, checked when the file is read: an unknown
key, a wrong type or a value out of range is refused with the key named (:class:`ConfigError`),
never ignored. A command-line option of the same name (``--every 3``) wins over the file.
Relative paths in the file are taken from the file's own folder, so a table's folder can be moved
whole. ``tractorcam config example`` prints every key with its description.

>>> cfg = TableConfig.model_validate({"source": "picamera2", "table": "table.json", "every": 3})
>>> cfg.every, cfg.inertia, cfg.backend
(3, 2, 'onnx')
>>> try:
...     merged(cfg, sorce="0")
... except ConfigError as exc:
...     print(exc)
not configuration keys: sorce
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from games import GAMES

#: The fields that name files, resolved against the configuration file's folder.
PATH_FIELDS = ("table", "lens", "log_out", "info", "outbox", "model")


class ConfigError(ValueError):
    """A configuration file that cannot be read or does not validate; the message names the key."""


class TableConfig(BaseModel):
    """How one table's service runs. Every field is also a ``tractorcam run`` option of the same
    name (``log_out`` is ``--log-out``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str | None = Field(
        default=None,
        description="what to read: a video file, a folder of images, a camera index (0) or picamera2",
    )
    table: Path | None = Field(
        default=None, description="the table's calibration, table.json (tractorcam calibrate)"
    )
    table_size: str | None = Field(
        default=None,
        pattern=r"^\s*\d+(\.\d+)?\s*[xX]\s*\d+(\.\d+)?\s*$",
        description="without a table file: the table's size W x H in mm, to calibrate from the corner "
        "markers at the start (default 900x900)",
    )
    lens: Path | None = Field(
        default=None,
        description="the camera's lens (tractorcam calibrate lens): used, not fitted, when run calibrates "
        "from the markers itself (no table)",
    )
    marker_mm: float = Field(
        default=60.0,
        ge=10,
        le=300,
        description="the printed corner markers' side, mm (tractorcam calibrate sheet)",
    )
    log_out: Path | None = Field(
        default=None, description="keep the recognised deal log here (rewritten after every trick)"
    )
    scoreboard: str | None = Field(
        default=None, description="the scoreboard's URL, e.g. http://10.0.0.2:8000"
    )
    token: str | None = Field(
        default=None, description="this table's scoreboard token (tractorcam tables add)"
    )
    outbox: Path | None = Field(
        default=None,
        description="the posts' durable outbox, SQLite (default: beside log_out, else in ~/.cache)",
    )
    game: str = Field(default="shengji", description="the game this table plays (games.md): shengji")
    info: Path | None = Field(
        default=None, description="JSON with rules, level, trump, dealer for the first deal (e.g. a deal log)"
    )
    rules: str | None = Field(default=None, description="rule set id (default national-2deck)")
    level: str | None = Field(
        default=None, description="the rank being played in the first deal (default: as declared)"
    )
    trump: str | None = Field(
        default=None, description="S, H, D, C or NT for the first deal (default: as declared)"
    )
    dealer: str | None = Field(
        default=None, description="the first deal's dealer seat (default: the first leader)"
    )
    read: Literal["frame", "zones"] = Field(
        default="zones",
        description="zones: only the table's changed areas, rectified to one scale (vision.zones: keeps "
        "up with a 10 fps camera on a Pi-class CPU); frame: the whole frame at every scale (seconds a "
        "reading; docs/experiments/realtime.md compares them)",
    )
    every: int | None = Field(
        default=None,
        ge=1,
        description="read every N-th frame (default: 1 when read is zones, 5 when it is frame)",
    )
    inertia: int = Field(default=2, ge=1, description="readings a zone must hold before it counts")
    camera: dict[str, bool | int | float | list[float]] | None = Field(
        default=None,
        description="picamera2 controls set when the camera starts (a [camera] table: LensPosition, ExposureTime, ...)",
    )
    model: Path | None = Field(
        default=None,
        description="the event's enrolled deck (tractorcam enroll --out DIR; enroll learn DIR): its learned classifier",
    )
    unknown_cards: bool = Field(
        default=True,
        description="keep the cards the camera sees but cannot name in full (??, K?, ?C, ?J) as cards of "
        "their play, for the deal's decoding and a referee to settle; false: a card not named is dropped",
    )
    backend: Literal["onnx", "ncnn", "ultralytics"] = Field(
        default="onnx",
        description="the card reader's backend: onnx (default), ncnn (fastest on a Pi), ultralytics",
    )

    @property
    def frames_every(self) -> int:
        """Read every N-th frame: ``every``, else 1 for the zone reader and 5 for whole frames."""
        return self.every or (1 if self.read == "zones" else 5)

    @field_validator("game")
    @classmethod
    def _known_game(cls, game: str) -> str:
        if game not in GAMES:
            raise ValueError(f"not a game tractorcam knows (known: {', '.join(sorted(GAMES))})")
        return game


def _problem(exc: ValidationError, flag: bool = False) -> str:
    """The first validation error as ``key: message`` (``--key: message`` for an option)."""
    err = exc.errors()[0]
    key = ".".join(str(p) for p in err["loc"]) or "(file)"
    if flag:
        key = "--" + key.replace("_", "-")
    if err["type"] == "extra_forbidden":
        known = ", ".join(TableConfig.model_fields)
        return f"unknown key {key!r} (known: {known})"
    return f"{key}: {err['msg']}"


def load_config(path: Path) -> TableConfig:
    """The configuration in ``path`` (``.toml``, else JSON), relative paths made relative to its folder.

    Raises :class:`ConfigError` with one line naming the file and the key at fault.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        raw: Any = tomllib.loads(data.decode("utf-8")) if path.suffix.lower() == ".toml" else json.loads(data)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"{path}: not valid {'TOML' if path.suffix.lower() == '.toml' else 'JSON'}: {exc}"
        ) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: not a table of keys")
    for key in ("level",):  # a level written as a number (level = 5) is the rank 5
        if isinstance(raw.get(key), int) and not isinstance(raw.get(key), bool):
            raw[key] = str(raw[key])
    try:
        config = TableConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {_problem(exc)}") from None
    base = path.resolve().parent
    moved = {
        k: base / getattr(config, k)
        for k in PATH_FIELDS
        if getattr(config, k) is not None and not getattr(config, k).is_absolute()
    }
    return config.model_copy(update=moved)


def merged(config: TableConfig | None, **options: Any) -> TableConfig:
    """``config`` with the command-line ``options`` that were given (not None) in place of its values.

    >>> merged(TableConfig(every=3, backend="ncnn"), every=None, inertia=4).model_dump(include={"every", "inertia", "backend"})
    {'every': 3, 'inertia': 4, 'backend': 'ncnn'}
    """
    given = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(given) - set(TableConfig.model_fields))
    if unknown:
        raise ConfigError(f"not configuration keys: {', '.join(unknown)}")
    base = (config or TableConfig()).model_dump()
    try:
        return TableConfig.model_validate({**base, **given})
    except ValidationError as exc:
        raise ConfigError(_problem(exc, flag=True)) from None


def example() -> str:
    """A TOML file with every key, its description as a comment and its default (commented out).

    >>> text = example()
    >>> tomllib.loads(text.replace("# source", "source"))["source"]
    'picamera2'
    >>> all(f"# {k} =" in text or f"# [{k}]" in text for k in TableConfig.model_fields)
    True
    """
    samples = {
        "source": "picamera2",
        "table": "table.json",
        "table_size": "900x900",
        "model": "deck",
        "lens": "lens.json",
        "log_out": "deals.json",
        "scoreboard": "http://10.0.0.2:8000",
        "token": "the-token-tables-add-printed",
        "outbox": "outbox.sqlite",
        "info": "info.json",
        "game": "shengji",
        "rules": "national-2deck",
        "level": "2",
        "trump": "H",
        "dealer": "N",
        "every": 5,
        "camera": {"AfMode": 0, "LensPosition": 1.0, "ExposureTime": 8000},
    }
    lines = [
        "# tractorcam table configuration (tractorcam run --config FILE); every key is optional here",
        "# and a command-line option of the same name wins. Relative paths are from this file's folder.",
        "",
    ]
    fields = sorted(TableConfig.model_fields.items(), key=lambda item: isinstance(samples.get(item[0]), dict))
    for name, field in fields:  # TOML tables ([camera]) after the plain keys
        value = samples.get(name, field.default)
        lines.append(f"# {field.description}")
        if isinstance(value, dict):
            lines.append(f"# [{name}]")
            lines.extend(f"# {k} = {json.dumps(v)}" for k, v in value.items())
        else:
            lines.append(f"# {name} = {json.dumps(str(value) if isinstance(value, Path) else value)}")
        lines.append("")
    return "\n".join(lines)
