"""The zone reader (:mod:`vision.zones`): one scale, only what changed and lies still.

The reader behind it is a stand-in that "reads" coloured squares (one colour per card name), so
these tests check what the zone reader asks it to read and what it remembers, not the networks.
The table is 300 × 300 mm filmed at 2 px per mm, so the rectified table at the default scale is
the frame itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from calibration.table import LensDistortion, TableGeometry, default_zones
from vision.classifier import BACKGROUND
from vision.detections import Detections
from vision.detectors.base import DetectorConfig
from vision.detectors.fake import FakeDetector
from vision.instances import CardInstance
from vision.labels import class_id
from vision.reader import CardReader, ReaderConfig, Reading
from vision.zones import TableMaps, ZoneConfig, ZoneConfigError, ZoneReader

COLOURS = {"AH": (0, 0, 255), "KS": (255, 0, 0), "2C": (0, 255, 0), "SJ": (0, 255, 255)}  # BGR, one per card
TABLE_GREY = 110


def geometry(size_mm: float = 300.0, px_per_mm: float = 2.0) -> TableGeometry:
    zones, centre = default_zones(size_mm, size_mm)
    px = int(size_mm * px_per_mm)
    return TableGeometry(
        image_width=px,
        image_height=px,
        image_to_table=[[1 / px_per_mm, 0, 0], [0, 1 / px_per_mm, 0], [0, 0, 1]],
        table_to_image=[[px_per_mm, 0, 0], [0, px_per_mm, 0], [0, 0, 1]],
        table_width_mm=size_mm,
        table_height_mm=size_mm,
        zones=zones,
        centre=centre,
        card_width_mm=40.0,
        card_height_mm=56.0,
    )


@dataclass
class SquareReader:
    """Reads a card wherever a pure colour of :data:`COLOURS` is (the blobs of one colour within
    60 mm are one card's two corner indices: its box spans them); keeps the images it was given."""

    config: Any = None
    images: list[tuple[int, int]] = field(default_factory=list)
    grow: int = 0  # pixels every box is grown by (the localiser's box is a pixel off now and then)

    def __post_init__(self) -> None:
        from vision.reader import ReaderConfig

        self.config = ReaderConfig()

    def with_view(self, tiling: Any, instances: Any, joker_det_conf: float | None = None) -> SquareReader:
        return self

    def read(self, image: npt.NDArray[np.uint8], seconds: dict[str, float] | None = None) -> Reading:
        self.images.append(image.shape[:2])
        cards = []
        for name, colour in COLOURS.items():
            mask = np.all(np.abs(image.astype(int) - colour) < 40, axis=-1).astype(np.uint8)
            n, _, stats, _ = cv2.connectedComponentsWithStats(mask)
            boxes = [(x, y, x + w, y + h) for x, y, w, h, area in stats[1:n] if area >= 12]
            while boxes:
                x1, y1, x2, y2 = boxes.pop(0)
                near = [b for b in boxes if abs(b[0] - x1) < 120 and abs(b[1] - y1) < 120]
                for b in near:
                    boxes.remove(b)
                    x1, y1, x2, y2 = min(x1, b[0]), min(y1, b[1]), max(x2, b[2]), max(y2, b[3])
                g = self.grow
                box = (float(x1 - g), float(y1 - g), float(x2 + g), float(y2 + g))
                cards.append(CardInstance(name, 0, 0.9, box, 1 + len(near)))
        return Reading(Detections.empty(), cards)


def table(
    *cards: tuple[str, float, float], hand: tuple[float, float] | None = None, hand_mm: float = 30.0
) -> npt.NDArray[np.uint8]:
    """A 600 × 600 px frame: grey table, each card a white 40 × 56 mm face at (x, y) mm (its
    top-left corner) with its colour as two 8 × 10 mm corner indices; ``hand``: a dark disc of
    radius ``hand_mm`` round (x, y) mm."""
    image = np.full((600, 600, 3), TABLE_GREY, np.uint8)
    for name, x, y in cards:
        x0, y0 = int(x * 2), int(y * 2)
        image[y0 : y0 + 112, x0 : x0 + 80] = 240
        image[y0 + 4 : y0 + 24, x0 + 4 : x0 + 20] = COLOURS[name]
        image[y0 + 88 : y0 + 108, x0 + 60 : x0 + 76] = COLOURS[name]
    if hand is not None:
        cv2.circle(image, (int(hand[0] * 2), int(hand[1] * 2)), int(hand_mm * 2), (40, 60, 90), -1)
    return image


def names(cards: list[CardInstance]) -> list[str]:
    return sorted(str(c.card) for c in cards)


def settle(zr: ZoneReader, image: npt.NDArray[np.uint8]) -> list[CardInstance]:
    """Read ``image`` until it has been read and read again (the confirmation is due
    ``confirm_after`` frames after the reading); the cards."""
    for _ in range(3 + zr.config.confirm_after):
        out = zr.read(image)
    return out


def test_a_card_laid_is_read_once_the_hand_has_gone_and_once_more() -> None:
    reads: list[list[str]] = []
    zr = ZoneReader(SquareReader(), geometry(), on_area=lambda rect, cards: reads.append(names(cards)))
    assert zr.read(table()) == [] and reads == [[]]  # the first frame: the whole table is read
    reads.clear()
    # the hand lays the ace: while it moves, the area is not read and the table is as it was
    for hand in [(130, 60), (140, 70), (150, 80)]:
        assert zr.read(table(("AH", 120, 30), hand=hand)) == []
    assert reads == [] and zr.stats.deferred == 3
    outputs = [names(zr.read(table(("AH", 120, 30)))) for _ in range(3)]
    # the hand left: the frames after it differ from the one with the hand, so the area waits
    # until it has lain still against the last motion_frames frames, then is read
    assert outputs == [[], [], ["AH"]] and reads == [["AH"]]
    # and read again confirm_after frames later, not before
    wait = ZoneConfig().confirm_after
    assert wait > 1
    for _ in range(wait - 1):
        assert names(zr.read(table(("AH", 120, 30)))) == ["AH"]
    assert reads == [["AH"]]
    assert names(zr.read(table(("AH", 120, 30)))) == ["AH"]
    assert reads == [["AH"], ["AH"]]
    assert zr.stats.areas == 2 and zr.stats.confirmations == 1  # the first frame's and this one


def test_a_hand_resting_after_laying_a_card_its_going_is_the_confirmation() -> None:
    """The hand that laid a card rests beside it, still: the area is read with the hand there.
    When it goes, its cells are read again with the card, and that reading is the card's second:
    no third one follows."""
    reads: list[list[str]] = []
    zr = ZoneReader(SquareReader(), geometry(), on_area=lambda rect, cards: reads.append(names(cards)))
    zr.read(table())
    reads.clear()
    for hand in [(150, 90), (150, 85)]:
        zr.read(table(("AH", 120, 30), hand=hand, hand_mm=12))
    for _ in range(3):  # resting on a corner: still, read with it
        zr.read(table(("AH", 120, 30), hand=(150, 80), hand_mm=12))
    assert reads == [["AH"]]
    for _ in range(3 + ZoneConfig().confirm_after):
        assert names(zr.read(table(("AH", 120, 30)))) == ["AH"]
    # the bare table's reading, the one with the hand, the one when it went; no confirmation
    assert reads == [["AH"], ["AH"]] and zr.stats.areas == 3 and zr.stats.confirmations == 0


@dataclass
class MissingReader(SquareReader):
    """:class:`SquareReader` that sees nothing in the readings numbered in ``miss`` (1-based)."""

    miss: tuple[int, ...] = ()
    calls: int = 0

    def read(self, image: npt.NDArray[np.uint8], seconds: dict[str, float] | None = None) -> Reading:
        self.calls += 1
        reading = super().read(image, seconds)
        return Reading(reading.corners, []) if self.calls in self.miss else reading


def test_a_card_another_reading_missed_is_still_confirmed() -> None:
    """A card is read; a card laid beside it makes an area that holds it too, and that reading misses
    both (the ace is forgotten). The two readings disagree: the ace's reading is still confirmed when
    due, by looking (not by the table's bare colours, which the miss noted under the cards), and
    both cards stay read."""
    reads: list[tuple[int, list[str]]] = []
    reader = MissingReader(miss=(3,))
    zr = ZoneReader(
        reader, geometry(), on_area=lambda rect, cards: reads.append((zr.stats.frames, names(cards)))
    )
    zr.read(table())  # reading 1: the bare table
    for hand in [(130, 60), (140, 70)]:
        zr.read(table(("AH", 120, 30), hand=hand))
    for _ in range(3):
        zr.read(table(("AH", 120, 30)))
    laid, seen = reads[-1]  # reading 2 saw the ace
    assert seen == ["AH"]
    for hand in [(185, 60), (190, 70)]:
        zr.read(table(("AH", 120, 30), ("KS", 168, 40), hand=hand))
    first = zr.stats.frames + 1
    out = [
        names(zr.read(table(("AH", 120, 30), ("KS", 168, 40)))) for _ in range(3 + ZoneConfig().confirm_after)
    ]
    missed = [f for f, cards in reads if f >= first and cards == []]
    assert missed and reader.calls >= 4  # reading 3 missed them; the confirmation looked again
    assert all(o == ["AH", "KS"] for o in out[missed[0] - first + 1 :])
    assert missed[0] <= laid + ZoneConfig().confirm_after  # seen again when the ace's reading was due


def test_a_still_table_is_not_read_again() -> None:
    reader = SquareReader()
    zr = ZoneReader(reader, geometry())
    settle(zr, table(("KS", 40, 40)))
    before = len(reader.images)
    for _ in range(10):
        assert names(zr.read(table(("KS", 40, 40)))) == ["KS"]
    assert len(reader.images) == before


def test_a_hand_over_a_play_leaves_it_as_read_never_empty() -> None:
    zr = ZoneReader(SquareReader(), geometry())
    for _ in range(4):
        zr.read(table(("KS", 120, 200)))
    # a hand moving over the card hides it: the zone says what was read, not "empty"
    for hand in [(130, 220), (145, 230), (160, 225), (150, 215)]:
        assert names(zr.read(table(("KS", 120, 200), hand=hand))) == ["KS"]
    for _ in range(4):
        assert names(zr.read(table(("KS", 120, 200)))) == ["KS"]


def test_a_card_taken_away_is_forgotten_and_the_rest_of_the_table_kept() -> None:
    reads: list[tuple[tuple[float, float, float, float], list[str]]] = []
    zr = ZoneReader(
        SquareReader(), geometry(), on_area=lambda rect, cards: reads.append((rect, names(cards)))
    )
    settle(zr, table(("KS", 20, 20), ("AH", 230, 220)))
    reads.clear()
    for _ in range(4):
        out = names(zr.read(table(("KS", 20, 20))))
    assert out == ["KS"]
    # only the ace's corner of the table was read: the king's area lies far outside it
    assert reads and all(rect[0] > 100 and rect[1] > 100 for rect, _ in reads)


def test_a_card_taken_up_from_a_bare_table_is_forgotten_without_a_reading() -> None:
    """The cells a reading found bare keep that colour: when an area shows it again in each of its
    cells and under each card remembered there, nothing lies there and nothing is read; anything
    else laid there (here a blank white face the reader names no card in) is read."""
    reader = SquareReader()
    zr = ZoneReader(reader, geometry())
    for _ in range(4):
        zr.read(table())  # the bare table, read whole once
    out = settle(zr, table(("AH", 120, 30)))  # read, and read again
    assert names(out) == ["AH"]
    before = len(reader.images)
    for _ in range(4):
        out = zr.read(table())
    assert out == [] and len(reader.images) == before and zr.stats.empty >= 1
    blank = table()
    blank[60:172, 240:320] = 240
    for _ in range(4):
        assert zr.read(blank) == []
    assert len(reader.images) > before
    # a card laid on a spot read bare is read as before
    for _ in range(4):
        out = zr.read(table(("KS", 120, 30)))
    assert names(out) == ["KS"]


def test_a_box_grazing_bare_cells_does_not_keep_the_clear_from_being_known_bare() -> None:
    """The localiser's box of a card seen whole often ends a little outside the card, on cells that
    still show the table's bare colour. Those cells keep their note (only cells wholly under the box
    that show the bare colour lose it: a reading missed the card there), so taking the card up is
    known bare without a reading."""
    reader = SquareReader(grow=6)  # every box 3 mm larger than its indices: 1 mm past the card's edge
    zr = ZoneReader(reader, geometry())
    for _ in range(4):
        zr.read(table())
    assert names(settle(zr, table(("AH", 120, 30)))) == ["AH"]
    before, empty = len(reader.images), zr.stats.empty
    for _ in range(4):
        out = zr.read(table())
    assert out == [] and len(reader.images) == before and zr.stats.empty > empty


def test_a_card_seen_first_from_a_corner_then_whole_is_one_card() -> None:
    """A hand resting on one corner: the card is read from the other; when the hand goes, only its
    part of the table changed, and the card read whole there replaces the corner read before."""
    zr = ZoneReader(SquareReader(), geometry())
    for _ in range(3):
        zr.read(table())
    corner = (154.0, 79.0)  # the lower right index of a card laid at (120, 30)
    for _ in range(4):
        out = zr.read(table(("2C", 120, 30), hand=corner, hand_mm=12))
    assert names(out) == ["2C"] and out[0].corners == 1
    for _ in range(4):
        out = zr.read(table(("2C", 120, 30)))
    assert names(out) == ["2C"] and out[0].corners == 2


def test_the_rectified_table_samples_the_frame_where_the_calibration_says() -> None:
    """With perspective and a lens, the rectified pixel (u, v) shows the frame where
    ``table_to_pixel`` puts its middle (cv2 puts a pixel's middle at its integer index)."""
    h = np.array([[1.9, 0.12, 140.0], [0.05, 1.8, 60.0], [0.00008, 0.00011, 1.0]])
    g = geometry().model_copy(
        update={
            "image_width": 1280,
            "image_height": 960,
            "table_to_image": h.tolist(),
            "image_to_table": np.linalg.inv(h).tolist(),
            "distortion": LensDistortion(k1=-0.06, cx=640.0, cy=480.0, norm=800.0),
        }
    )
    maps = TableMaps(g, ZoneConfig(px_per_mm=2.0))
    frame = np.zeros((960, 1280, 3), np.float32)
    frame[..., 0] = np.arange(1280)[None, :]
    frame[..., 1] = np.arange(960)[:, None]
    crop, x0, y0 = maps.area(frame, (50.0, 80.0, 250.0, 260.0))  # type: ignore[arg-type]
    assert (x0, y0) == (100, 160)
    for u, v in [(0, 0), (37, 211), (399, 359)]:
        want = g.table_to_pixel(np.array([[(x0 + u + 0.5) / 2, (y0 + v + 0.5) / 2]]))[0] - 0.5
        assert np.allclose(crop[v, u, :2], want, atol=0.05), (u, v, crop[v, u, :2], want)
    # and a box of the area comes back as the frame's box round the same table rectangle
    box = maps.to_frame((10.0, 20.0, 50.0, 80.0), x0, y0)
    corners = g.table_to_pixel(np.array([[55.0, 90.0], [75.0, 90.0], [75.0, 120.0], [55.0, 120.0]]))
    assert np.allclose(box, [*corners.min(axis=0), *corners.max(axis=0)], atol=1e-6)


def test_a_new_calibration_starts_afresh() -> None:
    current = {"g": geometry()}
    zr = ZoneReader(SquareReader(), lambda: current["g"])
    for _ in range(3):
        zr.read(table(("AH", 50, 50)))
    current["g"] = geometry()  # the camera moved and was calibrated again
    out = names(zr.read(table(("AH", 50, 50))))
    assert out == ["AH"] and zr.stats.areas >= 2


@pytest.mark.parametrize("bad", [{"px_per_mm": 0}, {"cell_mm": -1}, {"motion_frames": 0}, {"margin_mm": -5}])
def test_bad_settings_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ZoneConfigError):
        ZoneConfig(**bad)  # type: ignore[arg-type]


def test_a_card_the_edge_of_an_area_cuts_by_a_pixel_is_not_forgotten() -> None:
    """The localiser's box of a card moves by a pixel from one reading to the next. Read whole
    with the table, a card lies just inside the area a card laid below it later reads; read there
    a pixel larger, its box touches that area's edge and the reading leaves it to its own area,
    so the card remembered must stay: nothing took it away."""
    reader = SquareReader()
    zr = ZoneReader(reader, geometry())
    for _ in range(3):
        assert names(zr.read(table(("KS", 100, 94)))) == ["KS"]
    reader.grow = 1  # the boxes of the readings from now on: one pixel larger on every side
    for _ in range(5):
        out = names(zr.read(table(("KS", 100, 94), ("AH", 150, 150))))
    assert out == ["AH", "KS"]
    assert zr.stats.areas >= 2  # the ace's area was read (it cut the king's box at its top edge)


@dataclass
class StubClassifier:
    """Reads a box by where it starts (x1 → card and probability; anything else: background)."""

    names: dict[int, tuple[str, float]]

    def read(self, image: Any, boxes: Detections) -> tuple[Detections, npt.NDArray[np.float32]]:
        p = np.zeros((len(boxes), 55), np.float32)
        p[:, BACKGROUND] = 1.0
        for k, box in enumerate(boxes.xyxy):
            if int(box[0]) in self.names:
                card, prob = self.names[int(box[0])]
                p[k] = (1 - prob) / 54
                p[k, class_id(card)] = prob
        return boxes, p


@pytest.mark.parametrize("joker_det_conf", [0.1, None])
def test_a_joker_mark_the_localiser_scores_weakly_is_taken_when_the_classifier_is_sure(
    joker_det_conf: float | None,
) -> None:
    """A joker's corner mark localises weakly (a star, an emblem; the whole-frame pyramid gives it
    a chance at every level, the zone reader's one scale one chance): the zone reader names the
    boxes from ``joker_det_conf`` too and keeps those the classifier is sure are jokers, and only
    those."""
    boxes = Detections(
        [[40, 40, 60, 60], [200, 200, 224, 224], [300, 40, 320, 60], [41, 300, 61, 320]],
        [0.9, 0.15, 0.15, 0.15],  # the localiser's scores: only the first reaches det_conf 0.3
        [0, 0, 0, 0],
    )
    # the ace; a big joker; a weak box the classifier is sure of but no joker; a joker it is unsure of
    named = {40: ("AH", 0.95), 200: ("BJ", 0.9), 300: ("5C", 0.99), 41: ("SJ", 0.7)}
    detector = FakeDetector(DetectorConfig(type="fake", conf=0.3, script=(boxes,)))
    config = ReaderConfig(
        detector=DetectorConfig(type="fake", imgsz=640, det_conf=0.3, conf=0.6, joker_conf=0.8),
        pair_naming=None,
    )
    reader = CardReader(config, detector=detector)
    reader.classifier = StubClassifier(named)  # type: ignore[assignment]
    zr = ZoneReader(reader, geometry(), ZoneConfig(joker_det_conf=joker_det_conf))
    out = names(zr.read(table()))
    assert out == (["AH", "BJ"] if joker_det_conf is not None else ["AH"])


MARK = (255, 0, 255)  # BGR: a sign the classifier cannot name


@dataclass
class MarkReader(SquareReader):
    """:class:`SquareReader` that also reads each :data:`MARK` blob as a card written ``??``."""

    def read(self, image: npt.NDArray[np.uint8], seconds: dict[str, float] | None = None) -> Reading:
        reading = super().read(image, seconds)
        mask = np.all(np.abs(image.astype(int) - MARK) < 40, axis=-1).astype(np.uint8)
        n, _, stats, _ = cv2.connectedComponentsWithStats(mask)
        marks = [
            CardInstance("??", -1, 0.4, (float(x), float(y), float(x + w), float(y + h)), 1)
            for x, y, w, h, area in stats[1:n]
            if area >= 12
        ]
        return Reading(reading.corners, reading.cards + marks)


def marked(image: npt.NDArray[np.uint8], *at: tuple[float, float]) -> npt.NDArray[np.uint8]:
    """``image`` with a 6 × 6 mm :data:`MARK` at each (x, y) mm."""
    out = image.copy()
    for x, y in at:
        out[int(y * 2) : int(y * 2) + 12, int(x * 2) : int(x * 2) + 12] = MARK
    return out


def test_a_card_not_named_is_looked_at_again_on_the_next_frame() -> None:
    """A reading that left a card not named in full is confirmed at once, not ``confirm_after``
    frames later: another look may name it."""
    reads: list[list[str]] = []
    zr = ZoneReader(MarkReader(), geometry(), on_area=lambda rect, cards: reads.append(names(cards)))
    zr.read(table())
    reads.clear()
    for hand in [(130, 60), (140, 70)]:
        zr.read(marked(table(hand=hand), (120, 30)))
    outputs = [names(zr.read(marked(table(), (120, 30)))) for _ in range(4)]
    assert outputs == [[], [], ["??"], ["??"]] and reads == [["??"], ["??"]]
    assert zr.stats.confirmations == 1


def test_a_sign_not_named_on_a_card_seen_whole_is_no_card_of_its_own() -> None:
    """A card read whole; a later reading of its area (a card laid beside it) boxes a sign on it that
    the classifier cannot name: that is a mark of the card, not another card. The same sign on the
    bare table is a card the camera could not name."""
    zr = ZoneReader(MarkReader(), geometry())
    for _ in range(3):
        assert names(zr.read(table(("KS", 100, 94)))) == ["KS"]
    for _ in range(5):
        out = names(zr.read(marked(table(("KS", 100, 94), ("AH", 150, 150)), (115, 120))))
    assert out == ["AH", "KS"]
    for _ in range(5):
        out = names(zr.read(marked(table(("KS", 100, 94), ("AH", 150, 150)), (115, 120), (40, 220))))
    assert out == ["??", "AH", "KS"]


@dataclass
class JokerReader(SquareReader):
    """:class:`SquareReader` that reads the small joker as a joker of unknown size (``?J``) until
    ``named`` is set."""

    named: bool = False

    def read(self, image: npt.NDArray[np.uint8], seconds: dict[str, float] | None = None) -> Reading:
        reading = super().read(image, seconds)
        cards = [c if str(c.card) != "SJ" or self.named else replace(c, card="?J") for c in reading.cards]
        return Reading(reading.corners, cards)


def test_a_card_read_unnamed_then_named_in_the_same_place_is_one_card() -> None:
    """A joker read first as a joker of unknown size; a card laid beside it has its area read
    again, which names it the small joker with its box a few pixels smaller (so the first box pokes
    out of the area read): one card, the small joker, not two."""
    reader = JokerReader(grow=4)
    zr = ZoneReader(reader, geometry())
    for _ in range(3):
        assert names(zr.read(table(("SJ", 60, 100)))) == ["?J"]
    reader.named, reader.grow = True, 0
    for _ in range(6):
        out = names(zr.read(table(("SJ", 60, 100), ("AH", 112, 100))))
    assert out == ["AH", "SJ"]
