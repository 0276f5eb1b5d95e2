"""``tractorcam doctor``: is this table ready to run? One line per check, exit 1 on any failure.

Run on the Raspberry Pi after set-up and whenever a table misbehaves (``docs/pi.md``). The checks
use the table's configuration (:mod:`edge_app.config`) and change nothing:

* **source**: the camera (or film) opens and gives a frame;
* **calibration**: ``table.json`` loads, and its frame size is the camera's; without one, the
  camera's frame shows enough corner markers for ``run`` to calibrate from;
* **model**: the card reader builds with the configured backend and reads that frame (its time);
* **clock**: the system clock is not before this release (a Pi without a real-time clock starts
  from its last shutdown until the network sets it) and, where ``timedatectl`` answers, synchronised;
* **scoreboard**: the scoreboard answers and accepts the token (only when one is configured).

A check that cannot run because an earlier one failed says so and counts as failed.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from edge_app.config import TableConfig

#: A clock before this date is certainly wrong (no deal is played before the software exists).
CLOCK_FLOOR = datetime(2026, 11, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        """``ok    name: detail`` or ``FAIL  name: detail``.

        >>> Check("clock", False, "1970-01-01, before 2026-11-01").line()
        'FAIL  clock: 1970-01-01, before 2026-11-01'
        """
        return f"{'ok  ' if self.ok else 'FAIL'}  {self.name}: {self.detail}"


def check_clock(now: datetime | None = None, synced: Callable[[], bool | None] | None = None) -> Check:
    """The clock is after :data:`CLOCK_FLOOR` and, where known, synchronised.

    >>> check_clock(datetime(2027, 3, 1, tzinfo=UTC), lambda: True).ok
    True
    >>> check_clock(datetime(2020, 1, 1, tzinfo=UTC), lambda: None).line()
    'FAIL  clock: 2020-01-01 00:00 UTC is before 2026-11-01: set the time (NTP) before scoring'
    >>> check_clock(datetime(2027, 3, 1, tzinfo=UTC), lambda: False).ok
    False
    """
    now = now or datetime.now(UTC)
    stamp = now.strftime("%Y-%m-%d %H:%M UTC")
    if now < CLOCK_FLOOR:
        return Check(
            "clock", False, f"{stamp} is before {CLOCK_FLOOR:%Y-%m-%d}: set the time (NTP) before scoring"
        )
    state = (synced or ntp_synchronised)()
    if state is False:
        return Check(
            "clock", False, f"{stamp}, not synchronised (timedatectl): posts would carry a wrong time"
        )
    return Check("clock", True, stamp + (", synchronised" if state else " (synchronisation not known here)"))


def ntp_synchronised() -> bool | None:
    """``timedatectl``'s NTPSynchronized, or None where it cannot be asked."""
    exe = shutil.which("timedatectl")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "show", "-p", "NTPSynchronized", "--value"], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = out.stdout.strip().lower()
    return {"yes": True, "no": False}.get(value) if out.returncode == 0 else None


def _check_markers(cfg: TableConfig, frame: Any) -> Check:
    """Without a table file, ``run`` calibrates from the corner markers: are enough of them seen?"""
    from calibration.markers import MarkersMissingError, calibrate, parse_table_size

    if frame is None:
        return Check("calibration", False, "no table.json configured and no frame to find the markers in")
    try:
        width, height = parse_table_size(cfg.table_size or "900x900")
        cal = calibrate(frame.image, width, height, cfg.marker_mm)
    except (MarkersMissingError, ValueError) as exc:
        return Check("calibration", False, f"no table.json configured, and from the markers: {exc}")
    return Check(
        "calibration",
        True,
        f"no table.json: run calibrates from markers {', '.join(map(str, cal.markers))} "
        f"(reprojection {cal.reprojection_px:.2f} px)",
    )


def run_checks(cfg: TableConfig) -> list[Check]:
    """Every check for ``cfg``, in order."""
    from calibration.table import TableGeometry
    from engine.jsontext import load_json
    from vision.capture import open_source

    checks: list[Check] = []
    frame: Any = None
    if cfg.source is None:
        checks.append(Check("source", False, "no source configured (source = ... or --source)"))
    else:
        try:
            src = open_source(cfg.source, cfg.camera)
            try:
                frame = next(iter(src), None)
            finally:
                src.close()
            if frame is None:
                checks.append(Check("source", False, f"{cfg.source} opened but gave no frame"))
            else:
                w, h = frame.size
                checks.append(Check("source", True, f"{cfg.source} gives {w}×{h} frames"))
        except Exception as exc:  # any source's failure: missing file, busy or absent camera
            checks.append(Check("source", False, f"{cfg.source}: {exc}"))
    if cfg.table is None:
        checks.append(_check_markers(cfg, frame))
    else:
        try:
            geometry = TableGeometry.model_validate(load_json(cfg.table.read_bytes()))
            size = (geometry.image_width, geometry.image_height)
            if frame is not None and frame.size != size:
                checks.append(
                    Check(
                        "calibration",
                        False,
                        f"{cfg.table} is for {size[0]}×{size[1]} frames, the camera gives "
                        f"{frame.size[0]}×{frame.size[1]}: calibrate again",
                    )
                )
            else:
                checks.append(Check("calibration", True, f"{cfg.table}: {len(geometry.zones)} play zones"))
        except (OSError, ValueError) as exc:
            checks.append(Check("calibration", False, f"cannot read {cfg.table}: {exc}".splitlines()[0]))
    checks.append(_check_model(cfg, frame))
    checks.append(check_clock())
    if cfg.scoreboard is not None:
        checks.append(_check_scoreboard(cfg))
    return checks


def _check_model(cfg: TableConfig, frame: Any) -> Check:
    from vision.reader import CardReader, default_reader_config, model_options

    try:
        reader = CardReader(default_reader_config(cfg.backend, **model_options(cfg.model)))
    except Exception as exc:  # a missing package, weights or enrolled deck, a backend that does not build
        return Check("model", False, f"backend {cfg.backend}: {exc}".splitlines()[0])
    if frame is None:
        return Check("model", False, f"backend {cfg.backend} builds; no frame to read (see source)")
    start = time.perf_counter()
    try:
        cards = reader.read(frame.image).cards
    except Exception as exc:  # the network fails on a real frame
        return Check("model", False, f"backend {cfg.backend} fails on a frame: {exc}".splitlines()[0])
    took = time.perf_counter() - start
    deck = f", the enrolled deck {cfg.model}" if cfg.model is not None else ""
    return Check(
        "model",
        True,
        f"backend {cfg.backend}{deck}: one frame read in {took:.2f} s ({len(cards)} cards seen)",
    )


def _check_scoreboard(cfg: TableConfig) -> Check:
    import httpx

    from edge_app.client import ScoreboardClient

    if not cfg.token:
        return Check("scoreboard", False, f"{cfg.scoreboard}: no token configured")
    try:
        client = ScoreboardClient(cfg.scoreboard or "", cfg.token)
        table = client.whoami()
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        why = "refuses the token" if status in (401, 403) else f"answers {status}"
        return Check("scoreboard", False, f"{cfg.scoreboard} {why}")
    except (httpx.HTTPError, ValueError) as exc:
        return Check("scoreboard", False, f"{cfg.scoreboard} cannot be reached ({type(exc).__name__})")
    if not isinstance(table, dict) or "id" not in table:
        return Check("scoreboard", False, f"{cfg.scoreboard} is not a tractorcam scoreboard")
    return Check("scoreboard", True, f"{cfg.scoreboard}: this token is table {table['id']}")
