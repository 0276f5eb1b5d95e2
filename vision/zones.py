"""Reading only what changed, at one scale: the table service's reader on a calibrated table.

A whole-frame reading looks at a pyramid of the frame (every index size at some level) and takes
seconds on a Pi-class CPU. On a calibrated table the card size is known and almost everything on
the table stays as it was from one frame to the next, so :class:`ZoneReader` does two things
instead:

* **One scale.** The table is rectified (``table.json``: lens, homography) to
  :attr:`ZoneConfig.px_per_mm`, the scale at which a card's index has the size the localiser reads
  best, and the reader looks at that one level only.
* **Only what changed.** Each frame gives a *signature*: the table's mean colour in cells of
  :attr:`ZoneConfig.cell_mm`. The cells that differ from what was there when they were last read
  are *changed*; those that differ between this frame and the ones just before are *moving* (a
  hand, an arm, a card sliding). A connected area of changed cells is read once none of its cells
  moves (a hand over a zone leaves that zone as it was last read: occluded, never empty). Its
  cards replace the ones remembered there; the rest of the table keeps its cards. A reading that
  changed the area's cards is confirmed by another (each play read at least twice while it lies
  there): the hand's going, when it rested there a moment and another reading reads the cards
  again, else the area read once more :attr:`ZoneConfig.confirm_after` frames later.
* **Bare needs no reading.** Each cell also keeps its colour when a reading last found it bare
  (no card's box on it). An area whose cells, and the boxes of the cards remembered on them, all
  show that colour again (the trick taken up, a card lifted) holds no card: its cards are
  forgotten without a reading. A card laid there changes its cells and is read as before.

Its :meth:`ZoneReader.read` answers like :meth:`vision.reader.CardReader.read`'s cards (boxes in
the frame's pixels), so the tracker and the deal builder are the same with either reader;
:class:`ReadStats` says what each step cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table import TableGeometry
from engine.cards import AnyCard, Card, UnknownCard, may_be_same
from vision.detections import box_inside, box_iou
from vision.instances import CardInstance
from vision.reader import CardReader
from vision.settings import SHIPPED
from vision.tiling import TilingConfig

Rect = tuple[float, float, float, float]  # table mm: x1, y1, x2, y2


class ZoneConfigError(ValueError):
    """A zone-reading setting out of range."""


@dataclass(frozen=True)
class ZoneConfig:
    """Settings of :class:`ZoneReader`.

    ``px_per_mm``: the rectified table's scale (the reader's one level); ``cell_mm``: side of a
    change-detection cell; ``change``: colour levels (0–255, any channel) by which a cell must
    differ to count as changed or moving; ``motion_frames``: how many earlier frames a cell is
    compared with to count as still; ``reach_mm``: how far a changed area is grown (a card whose
    box touches the grown area is read again with it); ``margin_mm``: the border read round that,
    so that those cards are seen whole (a card the area's edge cuts is kept as it was); ``edge_slack``:
    how far (a share of its width or height) a card's outline may reach past the area's edge and
    still count as the area's (the localiser's boxes end at the edge; an outline the faces step
    infers, such as a covered copy's, can pass it by a few pixels); ``confirm``:
    read an area a second time when its first reading changed its cards, on the first still frame
    ``confirm_after`` frames or more after it, unless a reading in between read its cards again (the
    hand that laid a card often rests on the table a moment: the area is read with it there, then
    again when it goes, and that second reading is the confirmation); a reading that left a card
    not named in full is read again on the next still frame (another look may name it);
    ``joker_det_conf``: the localiser score from which a box is named too and kept when the
    classifier names it a joker surely (:attr:`vision.settings.ReaderSettings.joker_det_conf`: a
    joker's mark localises weakly, and one scale gives it one chance where the whole frame's pyramid
    gives it several; None: no such second look).

    >>> ZoneConfig(px_per_mm=0)
    Traceback (most recent call last):
    ...
    vision.zones.ZoneConfigError: px_per_mm must be positive, got 0
    """

    px_per_mm: float = SHIPPED.zones.px_per_mm
    cell_mm: float = SHIPPED.zones.cell_mm
    change: float = SHIPPED.zones.change
    motion_frames: int = SHIPPED.zones.motion_frames
    reach_mm: float = SHIPPED.zones.reach_mm
    margin_mm: float = SHIPPED.zones.margin_mm
    edge_slack: float = SHIPPED.zones.edge_slack
    confirm: bool = SHIPPED.zones.confirm
    confirm_after: int = SHIPPED.zones.confirm_after
    joker_det_conf: float | None = SHIPPED.joker_det_conf

    def __post_init__(self) -> None:
        for name in ("px_per_mm", "cell_mm", "change"):
            if getattr(self, name) <= 0:
                raise ZoneConfigError(f"{name} must be positive, got {getattr(self, name)}")
        if self.motion_frames < 1:
            raise ZoneConfigError(f"motion_frames must be at least 1, got {self.motion_frames}")
        if self.confirm_after < 1:
            raise ZoneConfigError(f"confirm_after must be at least 1, got {self.confirm_after}")
        if self.reach_mm < 0 or self.margin_mm < 0:
            raise ZoneConfigError("reach_mm and margin_mm must not be negative")
        if not 0 <= self.edge_slack < 0.5:
            raise ZoneConfigError(f"edge_slack must lie in [0, 0.5), got {self.edge_slack}")
        if self.joker_det_conf is not None and not 0 < self.joker_det_conf < 1:
            raise ZoneConfigError(f"joker_det_conf must lie between 0 and 1, got {self.joker_det_conf}")


@dataclass
class ReadStats:
    """What :class:`ZoneReader` did: frames it was given, areas it read (and of them, those it knew
    bare without reading), areas it put off because something moved over them, and seconds by step (``signature``: rectified cells and the change
    test; ``rectify``: cutting an area at the reader's scale; ``localise``, ``name``, ``group``: the
    reader's steps)."""

    frames: int = 0
    areas: int = 0
    confirmations: int = 0
    deferred: int = 0
    empty: int = 0  # of the areas and confirmations, those known bare without a reading
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, step: str, seconds: float) -> None:
        """Count ``seconds`` more for ``step``."""
        self.seconds[step] = self.seconds.get(step, 0.0) + seconds

    def ms_per_frame(self) -> dict[str, float]:
        """Milliseconds per frame given, by step."""
        n = max(self.frames, 1)
        return {k: 1000 * v / n for k, v in self.seconds.items()}

    def ms_per_area(self) -> dict[str, float]:
        """Milliseconds per area read, by step (the signature is per frame, not per area)."""
        n = max(self.areas + self.confirmations, 1)
        return {k: 1000 * v / n for k, v in self.seconds.items() if k != "signature"}


class TableMaps:
    """The table rectified: where each cell and each reader pixel lies in the frame.

    ``cells``: the frame pixel (x, y) at the middle of each change cell, shape (rows, cols, 2);
    ``map_x``, ``map_y``: where ``cv2.remap`` samples the frame for each rectified pixel at
    ``px_per_mm``."""

    def __init__(self, geometry: TableGeometry, config: ZoneConfig) -> None:
        self.geometry = geometry
        self.config = config
        w, h = geometry.table_width_mm, geometry.table_height_mm
        c = config.cell_mm
        self.cols, self.rows = max(1, int(np.ceil(w / c))), max(1, int(np.ceil(h / c)))
        xs = (np.arange(self.cols) + 0.5) * c
        ys = (np.arange(self.rows) + 0.5) * c
        grid = np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 2)
        self.cells = geometry.table_to_pixel(grid).astype(np.float32).reshape(self.rows, self.cols, 2)
        s = config.px_per_mm
        self.width, self.height = int(np.ceil(w * s)), int(np.ceil(h * s))
        # where cv2.remap samples the frame for every rectified pixel (its middle, (u + 0.5) / s mm;
        # cv2 puts a pixel's middle at its integer index, half a pixel before table_to_pixel's), from
        # a grid every 8 px interpolated: the lens and the homography are smooth, so the error is far
        # below a pixel
        step = 8
        gx = np.arange(0, self.width + step, step, dtype=np.float64)
        gy = np.arange(0, self.height + step, step, dtype=np.float64)
        coarse = np.stack(np.meshgrid(gx, gy), -1).reshape(-1, 2)
        px = geometry.table_to_pixel((coarse + 0.5) / s) - 0.5
        coarse_px = px.astype(np.float32).reshape(len(gy), len(gx), 2)
        ux, uy = np.meshgrid(
            np.arange(self.width, dtype=np.float32) / step, np.arange(self.height, dtype=np.float32) / step
        )
        full = cv2.remap(coarse_px, ux, uy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        self.map_x = np.ascontiguousarray(full[..., 0])
        self.map_y = np.ascontiguousarray(full[..., 1])
        # the signature's sampling: the frame shrunk by a whole factor so a cell is about 2 px (a
        # cell's side taken at the middle of the table; a whole factor is OpenCV's fast path, a
        # third of the time of any other), the cells' middles in the shrunk frame's cv2 coordinates
        r, c = self.rows // 2, self.cols // 2
        cell_px = max(1.0, float(np.linalg.norm(self.cells[r, min(c + 1, self.cols - 1)] - self.cells[r, c])))
        self._factor = max(1, round(cell_px / 2))
        self._sample_x = np.ascontiguousarray(self.cells[..., 0] / self._factor - 0.5)
        self._sample_y = np.ascontiguousarray(self.cells[..., 1] / self._factor - 0.5)

    def signature(self, image: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        """Mean colour of each cell (rows, cols, 3): the frame blurred to about a cell, sampled at
        the cells' middles."""
        k = self._factor
        h, w = image.shape[0] // k, image.shape[1] // k
        small = image if k == 1 else cv2.resize(image[: h * k, : w * k], (w, h), interpolation=cv2.INTER_AREA)
        small = cv2.blur(small, (3, 3))
        out = cv2.remap(
            small, self._sample_x, self._sample_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        return out.astype(np.float32)

    def window(self, rect: Rect) -> tuple[int, int, int, int]:
        """The rectified pixels (x1, y1, x2, y2) of the table area ``rect`` (mm)."""
        s = self.config.px_per_mm
        x1 = max(0, int(np.floor(rect[0] * s)))
        y1 = max(0, int(np.floor(rect[1] * s)))
        x2 = min(self.width, int(np.ceil(rect[2] * s)))
        y2 = min(self.height, int(np.ceil(rect[3] * s)))
        return x1, y1, x2, y2

    def area(self, image: npt.NDArray[np.uint8], rect: Rect) -> tuple[npt.NDArray[np.uint8], int, int]:
        """The table area ``rect`` (mm) at the reader's scale, and its top-left rectified pixel."""
        x1, y1, x2, y2 = self.window(rect)
        crop = cv2.remap(
            image,
            self.map_x[y1:y2, x1:x2],
            self.map_y[y1:y2, x1:x2],
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REPLICATE,
        )
        return np.ascontiguousarray(crop), x1, y1

    def to_frame(
        self, box: tuple[float, float, float, float], x0: int, y0: int
    ) -> tuple[float, float, float, float]:
        """A box of an area (rectified pixels from ``x0, y0``) as the frame's pixel box round it."""
        s = self.config.px_per_mm
        x1, y1, x2, y2 = box
        corners = (np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], np.float64) + [x0, y0]) / s
        px = self.geometry.table_to_pixel(corners)
        lo, hi = px.min(axis=0), px.max(axis=0)
        return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))


@dataclass(frozen=True)
class _Seen:
    """A card remembered on the table: as the reader gave it (frame pixels) and where its box lies
    on the table (mm; a card read from one corner has that index's box)."""

    card: CardInstance
    rect: Rect


@dataclass
class _Area:
    """An area to read: its changed cells grown by the reach (mask over the cells) and the
    rectangle (mm) read round them."""

    owned: npt.NDArray[np.bool_]
    rect: Rect


@dataclass(eq=False)
class _Confirm:
    """An area to read again (:attr:`ZoneConfig.confirm`): from frame ``due`` on (counting the
    frames given), unless before then other readings have read again each of ``cards`` (the cards
    its reading put there and no reading has read again yet: each is struck off as one does), or,
    when its reading put none there (``bare``), one reading has covered each of its cells. A card
    another reading forgot (it did not see it) still waits: the two readings disagree."""

    area: _Area
    due: int
    cards: list[_Seen]
    bare: bool

    def served(self, area: _Area, placed: _Placed) -> bool:
        """Strike off the cards the reading of ``area`` (``placed``) read again; whether nothing
        is left to read: none of them left, or, for a reading that put no card there, ``area``
        covered each of its cells."""
        if self.bare:
            return bool(np.all(area.owned[self.area.owned]))
        self.cards = [k for k in self.cards if all(k is not a for a in placed.again)]
        return not self.cards


@dataclass(frozen=True)
class _Placed:
    """What a reading did (:meth:`ZoneReader._place`): the cards it put in the area (``read``),
    those it saw beside it or cut by its edge and left as remembered (``beside``), and whether the
    area's cards changed (a card of a name it did not replace was laid, or one was taken away)."""

    read: list[_Seen]
    beside: list[_Seen]
    changed: bool
    again: list[_Seen]  # the remembered cards a card of ``read`` claimed: read again


class ZoneReader:
    """Reads a calibrated table's changed areas at one scale (see the module docstring).

    ``reader``: the card reader whose steps read each area (its tiling is replaced by the one level
    of the rectified table, and its grouping learns the card's size in pixels); ``geometry``: the
    table's calibration, or a function giving it at each frame (a new calibration starts afresh);
    ``on_area``: called with each area read (mm) and the cards read in it (frame pixels).
    """

    def __init__(
        self,
        reader: CardReader,
        geometry: TableGeometry | Callable[[], TableGeometry],
        config: ZoneConfig | None = None,
        on_area: Callable[[Rect, list[CardInstance]], None] | None = None,
    ) -> None:
        self.config = config or ZoneConfig()
        self.on_area = on_area
        self.reader = reader
        self._geometry = geometry
        self._maps: TableMaps | None = None
        self.stats = ReadStats()
        self._reset()

    def _reset(self) -> None:
        self._seen: list[_Seen] = []
        self._reference: npt.NDArray[np.float32] | None = None  # each cell as last read
        self._recent: list[npt.NDArray[np.float32]] = []
        self._confirm: list[_Confirm] = []
        self._bare: npt.NDArray[np.float32] | None = None  # each cell as last read bare (NaN: never)

    def maps(self) -> TableMaps:
        """The maps of the current calibration (made again when it changes)."""
        geometry = self._geometry() if callable(self._geometry) else self._geometry
        if self._maps is None or self._maps.geometry is not geometry:
            self._maps = TableMaps(geometry, self.config)
            self._reset()
            s = self.config.px_per_mm
            base = self.reader.config
            instances = replace(
                base.instances, card_size_px=(geometry.card_width_mm * s, geometry.card_height_mm * s)
            )
            self._reader = self.reader.with_view(
                TilingConfig(tile=base.detector.imgsz, levels=(1.0,)), instances, self.config.joker_det_conf
            )
        return self._maps

    def read(self, image: npt.NDArray[np.uint8]) -> list[CardInstance]:
        """The cards on the table in ``image`` (boxes in its pixels): the changed, still areas read
        again, the rest as last read."""
        t = time.perf_counter()
        maps = self.maps()
        sig = maps.signature(image)
        self.stats.frames += 1
        if self._reference is None:  # the first frame: every cell is new
            self._reference = np.full_like(sig, -1000.0)
            self._bare = np.full_like(sig, np.nan)
        changed = _most(np.abs(sig - self._reference)) > self.config.change
        recent = self._recent[-self.config.motion_frames :]
        moving = np.zeros_like(changed)
        if recent:
            moving = _most(np.abs(np.stack(recent) - sig).max(0)) > self.config.change
        self._recent = [*recent, sig]
        astir = _grow(moving, 1)  # cells moving or beside one
        areas = self._areas(changed, astir)
        frame = self.stats.frames
        self.stats.add("signature", time.perf_counter() - t)
        for area in areas:
            placed = self._read_or_know(image, area, sig)
            self._reference[area.owned] = sig[area.owned]
            self.stats.areas += 1
            self._confirm = [c for c in self._confirm if not c.served(area, placed)]
            if self.config.confirm and placed.changed:
                unsure = any(isinstance(k.card.card, UnknownCard) for k in placed.read)
                wait = 1 if unsure else self.config.confirm_after
                self._confirm.append(_Confirm(area, frame + wait, placed.read, not placed.read))
        due = [c for c in self._confirm if c.due <= frame and not (c.area.owned & astir).any()]
        self._confirm = [c for c in self._confirm if all(c is not d for d in due)]
        for confirm in due:  # a reading that found cards is looked at again, never known bare
            placed = self._read_or_know(image, confirm.area, sig, know=confirm.bare)
            self._confirm = [c for c in self._confirm if not c.served(confirm.area, placed)]
            self.stats.confirmations += 1
        return [s.card for s in self._seen]

    def _cells(self, rect: Rect, whole: bool) -> tuple[slice, slice]:
        """The cells (rows, columns) that ``rect`` overlaps, or (``whole``) that lie wholly in it."""
        assert self._maps is not None
        cell = self.config.cell_mm
        if whole:
            c1, r1 = int(np.ceil(rect[0] / cell)), int(np.ceil(rect[1] / cell))
            c2, r2 = int(np.floor(rect[2] / cell)), int(np.floor(rect[3] / cell))
        else:
            c1, r1 = int(rect[0] // cell), int(rect[1] // cell)
            c2, r2 = int(rect[2] // cell) + 1, int(rect[3] // cell) + 1
        rows, cols = self._maps.rows, self._maps.cols
        return slice(max(0, r1), min(rows, max(0, r2))), slice(max(0, c1), min(cols, max(0, c2)))

    def _read_or_know(
        self, image: npt.NDArray[np.uint8], area: _Area, sig: npt.NDArray[np.float32], know: bool = True
    ) -> _Placed:
        """Read an area, or know it holds no card: when each of its cells, and of the boxes of the
        cards remembered on them, shows the colour it had when last read bare (a card still lying
        there would not), unless ``know`` is false; then note the cells this reading found bare."""
        assert self._bare is not None and self._maps is not None
        need = area.owned.copy()  # the area's cells, and those of the cards a reading could forget
        for seen in self._seen:
            if _touches(area, self.config.cell_mm, seen.rect):
                need[self._cells(seen.rect, whole=False)] = True
        if know and np.all(np.abs(sig[need] - self._bare[need]) <= self.config.change):  # NaN: never bare
            self.stats.empty += 1
            return self._place(area, [], self._maps.window(area.rect))
        placed = self._read_area(image, area)
        rows, cols = self._cells(area.rect, whole=True)
        free = np.ones((self._bare.shape[0], self._bare.shape[1]), bool)
        geometry = self._maps.geometry
        for seen in placed.read + placed.beside + self._seen:
            # the card's box, and round it as far as its face may reach: a cell (a card seen whole:
            # its box ends a little inside its edge), a card's length (seen from one corner)
            grow = self.config.cell_mm if seen.card.corners >= 2 else geometry.card_height_mm
            x1, y1, x2, y2 = seen.rect
            free[self._cells((x1 - grow, y1 - grow, x2 + grow, y2 + grow), whole=False)] = False
        mask = np.zeros_like(free)
        mask[rows, cols] = True
        # a cell a card now lies on that shows the colour noted as bare was noted by a reading that
        # missed the card: not known bare (so a later reading cannot forget the card unread). Of a
        # card seen whole, the cells wholly under its box: a cell its edge only grazes shows the
        # table's colour with or without it, and taking its note back left many a trick's
        # clear to be read; of a card seen from one corner (its box that index's), every cell
        # its box touches
        under = np.zeros_like(free)
        for seen in placed.read + placed.beside:
            under[self._cells(seen.rect, whole=seen.card.corners >= 2)] = True
        under &= mask & (_most(np.abs(sig - self._bare)) <= self.config.change)
        self._bare[under] = np.nan
        mask &= free
        self._bare[mask] = sig[mask]
        return placed

    def _areas(self, changed: npt.NDArray[np.bool_], astir: npt.NDArray[np.bool_]) -> list[_Area]:
        """The connected areas of changed cells that nothing moves over (no ``astir`` cell), each
        grown by the reach."""
        if not changed.any():
            return []
        cell = self.config.cell_mm
        near = _grow(changed, 1)  # a cell or two of noise does not split one card's change
        n, labels = cv2.connectedComponents(near.astype(np.uint8), connectivity=8)
        out = []
        reach = int(np.ceil(self.config.reach_mm / cell))
        for k in range(1, n):
            part = labels == k
            if not (part & changed).any():
                continue
            if (part & astir).any():
                self.stats.deferred += 1
                continue
            owned = _grow(part, reach)
            rows, cols = np.nonzero(owned)
            m = self.config.margin_mm
            rect = (
                cols.min() * cell - m,
                rows.min() * cell - m,
                (cols.max() + 1) * cell + m,
                (rows.max() + 1) * cell + m,
            )
            out.append(_Area(owned, rect))
        return out

    def _read_area(self, image: npt.NDArray[np.uint8], area: _Area) -> _Placed:
        """Read one area and put its cards in place of those remembered in it (:meth:`_place`)."""
        maps = self._maps
        assert maps is not None
        t = time.perf_counter()
        crop, x0, y0 = maps.area(image, area.rect)
        self.stats.add("rectify", time.perf_counter() - t)
        cards = self._reader.read(crop, seconds=self.stats.seconds).cards
        return self._place(area, cards, (x0, y0, x0 + crop.shape[1], y0 + crop.shape[0]))

    def _place(self, area: _Area, cards: list[CardInstance], window: tuple[int, int, int, int]) -> _Placed:
        """Put the cards an area's reading found (boxes in the pixels of its crop, which is
        ``window`` of the rectified table) in place of those remembered in it; what it did."""
        maps = self._maps
        assert maps is not None
        x0, y0 = window[0], window[1]
        s = self.config.px_per_mm
        cell = self.config.cell_mm
        h, w = window[3] - window[1], window[2] - window[0]
        x_lo, y_lo = (2 if x0 > 0 else -1), (2 if y0 > 0 else -1)
        x_hi, y_hi = (w - 2 if x0 + w < maps.width else w + 1), (h - 2 if y0 + h < maps.height else h + 1)
        inner = (x0 + x_lo) / s, (y0 + y_lo) / s, (x0 + x_hi) / s, (y0 + y_hi) / s
        read: list[_Seen] = []  # the cards of the area: they replace what was remembered there
        # cards seen whole beside it, and cards cut by the area's edge (not the table's; their own
        # area reads them whole): already remembered, left as they were
        beside: list[_Seen] = []
        for card in cards:
            x1, y1, x2, y2 = card.box
            rect = ((x0 + x1) / s, (y0 + y1) / s, (x0 + x2) / s, (y0 + y2) / s)
            seen = _Seen(replace(card, box=maps.to_frame(card.box, x0, y0)), rect)
            cut = _cut(card.box, (x_lo, y_lo, x_hi, y_hi), (w, h), self.config.edge_slack)
            (read if not cut and _touches(area, cell, rect) else beside).append(seen)
        # a card seen before from one corner and now whole, or from its other corner, is one card:
        # every card of this reading claims the nearest remembered card of its name within a card's
        # diagonal, nearest pairs first, one each (two identical cards read together stay two). A
        # card of the area replaces the one it claims; a card beside it or cut by its edge keeps it
        # (the localiser's box of a card moves by a pixel between readings: one that now touches the
        # edge may lie inside it as remembered, and nothing took it away); a remembered card nobody
        # claims is forgotten when the area could see it whole and did not.
        # A card not (fully) named and a card it may be, boxed in the same place (half their boxes
        # shared), are one card read twice, and claim each other too.
        geometry = maps.geometry
        diagonal = float(np.hypot(geometry.card_width_mm, geometry.card_height_mm))
        same_place = box_iou(_rects(read + beside), _rects(self._seen)) >= 0.5
        candidates = sorted(
            (_distance(old, new), i, k)
            for i, new in enumerate(read + beside)
            for k, old in enumerate(self._seen)
            if (old.card.card == new.card.card and _distance(old, new) <= diagonal)
            or (same_place[i, k] and _may_be(old.card.card, new.card.card))
        )
        claimed_new: set[int] = set()
        claimed: dict[int, int] = {}  # remembered card → the card of this reading that claimed it
        for _, i, k in candidates:
            if i not in claimed_new and k not in claimed:
                claimed_new.add(i)
                claimed[k] = i
        kept, again = [], []
        for k, old in enumerate(self._seen):
            if k in claimed:
                if claimed[k] >= len(read):  # a card beside the area: still there as remembered
                    kept.append(old)
                else:
                    again.append(old)
            elif not (_touches(area, cell, old.rect) and _within(old.rect, inner)):
                kept.append(old)
        # a card not named whose box lies mostly on a card seen whole is a mark of that card (the
        # faces step found the card in an earlier reading; this one boxed a sign of it alone); a
        # joker of unknown size only on a joker
        whole = [k for k in kept + read if isinstance(k.card.card, Card) and k.card.corners >= 2]
        on = box_inside(_rects(read), _rects(whole)) >= 0.5
        joker = np.array([isinstance(k.card.card, Card) and k.card.card.is_joker for k in whole], bool)
        read = [
            k
            for k, row in zip(read, on, strict=True)
            if not isinstance(c := k.card.card, UnknownCard) or not (row & joker if c.joker else row).any()
        ]
        gone = [old for old in self._seen if all(old is not k for k in kept)]
        changed = sorted(str(k.card.card) for k in gone) != sorted(str(k.card.card) for k in read)
        self._seen = kept + read
        if self.on_area is not None:
            self.on_area(area.rect, [seen.card for seen in read])
        return _Placed(read, beside, changed, again)


def _may_be(a: AnyCard, b: AnyCard) -> bool:
    """Whether two cards the reader gave, one of them not (fully) named, may be one card.

    >>> from engine.cards import parse_any
    >>> pairs = [("?J", "SJ"), ("K?", "KC"), ("??", "5H"), ("?J", "KS"), ("5H", "6H")]
    >>> [_may_be(parse_any(a), parse_any(b)) for a, b in pairs]
    [True, True, True, False, False]
    """
    return not (isinstance(a, Card) and isinstance(b, Card)) and may_be_same(a, b)


def _rects(seen: list[_Seen]) -> npt.NDArray[np.float32]:
    """The cards' boxes on the table (N, 4)."""
    return np.array([k.rect for k in seen], np.float32).reshape(-1, 4)


def _distance(a: _Seen, b: _Seen) -> float:
    """Distance (mm) between the middles of two cards' boxes.

    >>> a = _Seen(CardInstance("AH", 0, 1.0, (0, 0, 1, 1), 1), (0.0, 0.0, 10.0, 10.0))
    >>> _distance(a, _Seen(a.card, (30.0, 40.0, 40.0, 50.0)))
    50.0
    """
    ax, ay = (a.rect[0] + a.rect[2]) / 2, (a.rect[1] + a.rect[3]) / 2
    bx, by = (b.rect[0] + b.rect[2]) / 2, (b.rect[1] + b.rect[3]) / 2
    return float(np.hypot(ax - bx, ay - by))


def _within(rect: Rect, outer: Rect) -> bool:
    """Whether a rectangle lies inside another.

    >>> _within((1, 1, 2, 2), (0, 0, 3, 3)), _within((1, 1, 4, 2), (0, 0, 3, 3))
    (True, False)
    """
    return rect[0] >= outer[0] and rect[1] >= outer[1] and rect[2] <= outer[2] and rect[3] <= outer[3]


def _cut(
    box: tuple[float, float, float, float],
    bounds: tuple[float, float, float, float],
    size: tuple[int, int],
    slack: float,
) -> bool:
    """Whether the area's edge cuts a card whose box (crop pixels) reaches past ``bounds`` (the
    crop's inner edge, x1, y1, x2, y2). An outline that passes the crop's own edge (``size``: its
    width and height) by at most ``slack`` of the card's width or height is not cut: only an
    inferred outline passes it, and it shows where the card ends, while a box that stops at the
    edge may go on past it.

    >>> _cut((0, 10, 60, 100), (2, 2, 198, 198), (200, 200), 0.1)  # stops at the edge
    True
    >>> _cut((-4, 10, 56, 100), (2, 2, 198, 198), (200, 200), 0.1)  # 4 px past it, of 60
    False
    >>> _cut((-9, 10, 51, 100), (2, 2, 198, 198), (200, 200), 0.1)
    True
    >>> _cut((150, 110, 204, 202), (2, 2, 198, 198), (200, 200), 0.1)  # past two edges, a little
    False
    """
    x1, y1, x2, y2 = box
    x_lo, y_lo, x_hi, y_hi = bounds
    w, h = size
    sx, sy = slack * (x2 - x1), slack * (y2 - y1)
    low = (x1 < x_lo and not -sx <= x1 < 0) or (y1 < y_lo and not -sy <= y1 < 0)
    high = (x2 > x_hi and not w < x2 <= w + sx) or (y2 > y_hi and not h < y2 <= h + sy)
    return low or high


def _touches(area: _Area, cell: float, rect: Rect) -> bool:
    """Whether a table rectangle (mm) overlaps one of the area's cells: a card touching an area is
    read again with it (and forgotten when that reading no longer sees it)."""
    rows, cols = area.owned.shape
    c1, r1 = max(0, int(rect[0] // cell)), max(0, int(rect[1] // cell))
    c2, r2 = min(cols - 1, int(rect[2] // cell)), min(rows - 1, int(rect[3] // cell))
    return c1 <= c2 and r1 <= r2 and bool(area.owned[r1 : r2 + 1, c1 : c2 + 1].any())


def _most(diff: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The largest of each cell's three colour differences (rows, cols, 3) → (rows, cols); NumPy's
    ``max(-1)`` over so short an axis is some twenty times slower.

    >>> _most(np.array([[[1, 5, 2], [7, 0, 3]]], np.float32)).tolist()
    [[5.0, 7.0]]
    """
    return np.maximum(np.maximum(diff[..., 0], diff[..., 1]), diff[..., 2])


def _grow(mask: npt.NDArray[np.bool_], cells: int) -> npt.NDArray[np.bool_]:
    """``mask`` grown by ``cells`` cells on every side (a square neighbourhood).

    >>> m = np.zeros((5, 5), bool); m[2, 2] = True
    >>> int(_grow(m, 1).sum()), int(_grow(m, 0).sum())
    (9, 1)
    """
    if cells <= 0:
        return mask
    k = np.ones((2 * cells + 1, 2 * cells + 1), np.uint8)
    return cv2.dilate(mask.astype(np.uint8), k).astype(bool)
