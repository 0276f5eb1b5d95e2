"""The shipped reader's settings: one validated data file beside the weights
(``vision/weights/reader.json``), the one place every threshold, weight and test-time option of
the reader is set. :mod:`models.selection` writes its thresholds when a reader is shipped
(``tractorcam select ... --write``); the reader's steps take their defaults from :data:`SHIPPED`.

>>> SHIPPED.conf, SHIPPED.suit_head.weight, SHIPPED.classifier.file
(0.6, 0.5, 'classifier.onnx')
>>> ReaderSettings.model_validate({**SHIPPED.model_dump(), "confidence": 0.5})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ReaderSettings
confidence
  Extra inputs are not permitted ...
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: Where the shipped weights (ONNX, the NCNN export) and their settings live: package data of the
#: reader, installed on every table.
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
#: The lab's PyTorch checkpoints (``models/weights/*.pt``, which the exports were made from): in a
#: source checkout only, never installed on a table; the ``ultralytics`` backend reads ``best.pt``.
CHECKPOINTS_DIR = Path(__file__).resolve().parents[1] / "models" / "weights"
SETTINGS_FILE = WEIGHTS_DIR / "reader.json"

Probability = float
_STRICT = ConfigDict(extra="forbid", frozen=True)


class SettingsError(ValueError):
    """A reader settings file that cannot be read or does not validate (one line)."""


class Proposals(BaseModel):
    model_config = _STRICT
    contained_overlap: float = Field(
        gt=0,
        le=1,
        description="a localiser box lying this much (intersection / its area) inside a higher-scoring "
        "one is dropped before naming: a rank or suit glyph boxed alone, or the same index at another level",
    )


class Head(BaseModel):
    """A crop network of the reader (:class:`vision.heads.CropHead`)."""

    model_config = _STRICT
    file: str = Field(description="the ONNX file, in the settings file's folder")
    rotate_tta: bool = Field(
        default=False, description="read each crop upright and turned 180°, averaging the log-probabilities"
    )
    weight: float = Field(
        default=1.0,
        ge=0,
        description="how strongly its reading is folded into the card's (vision.heads.fuse)",
    )


class Classifier(Head):
    shifts: tuple[tuple[float, float], ...] = Field(
        min_length=1,
        description="offsets (shares of the box's long side) of the crops a box is read from: the first "
        "for every box, the rest for unsure ones; all readings are averaged",
    )
    shift_below: Probability = Field(
        gt=0,
        description="only boxes whose first reading's top probability is below this get the other shifts",
    )


class Orientation(Head):
    min_strength: float = Field(
        ge=0,
        le=1,
        description="a reading direction is used only when the mean direction is at least this long",
    )


class PairNamingSettings(BaseModel):
    model_config = _STRICT
    joint_conf: Probability = Field(
        gt=0, le=1, description="the probability a joint reading's best card needs"
    )
    floor: Probability = Field(
        ge=0, lt=1, description="the least probability each corner must give that card"
    )


class Grouping(BaseModel):
    model_config = _STRICT
    index_pair_ratio: float = Field(
        gt=0, description="a card's index-to-index distance over an index box's size"
    )
    tolerance: tuple[float, float] = Field(
        description="(below, above): a pair's distance band around the expected one"
    )
    diagonal: tuple[float, float] | None = Field(
        description="(low, high) degrees: a pair on the card's diagonal as both indices read it ..."
    )
    diagonal_tolerance: tuple[float, float] = Field(description="... may lie within this band instead")


class UnknownCardSettings(BaseModel):
    model_config = _STRICT
    floor: Probability = Field(
        ge=0,
        le=1,
        description="an index the classifier cannot name counts as a card (??) from this probability",
    )
    same_card: float = Field(
        gt=0, description="... unless a named index of its best class lies within this many card lengths"
    )


class FaceSettings(BaseModel):
    """The settings of the faces step (an enrolled deck's); each field as :class:`vision.faces.FaceMatchConfig` describes it."""

    model_config = _STRICT
    template_h: int
    ratio: float
    ransac_px: float
    min_matches: int
    size_tolerance: float
    same_card: float
    neighbours: int
    image_scale: float
    max_tries: int
    colour_margin: float
    twin_chroma: float
    resemblance: float
    covered_h: int
    covered_ncc: float
    covered_margin: float
    covered_visible: tuple[float, float]
    covered_shift: float
    covered_turns: tuple[float, ...]
    covered_fine: int
    locate_turn: float
    locate_reach: int
    locate_ncc: float
    under_candidates: int
    under_core: float
    under_contrast: tuple[float, float]
    under_offset: float
    under_edge: float


class ZoneSettings(BaseModel):
    """The settings of the zone reader; each field as :class:`vision.zones.ZoneConfig` describes it."""

    model_config = _STRICT
    px_per_mm: float
    cell_mm: float
    change: float
    motion_frames: int
    reach_mm: float
    margin_mm: float
    edge_slack: float
    confirm: bool
    confirm_after: int


class TilingSettings(BaseModel):
    """The settings of the whole frame's pyramid and tiles; each field as :class:`vision.tiling.TilingConfig` describes it."""

    model_config = _STRICT
    tile: int
    overlap: float
    levels: tuple[float, ...] | None
    max_upscale: float
    nms_iou: float
    agnostic_iou: float
    edge_margin: float


class ReaderSettings(BaseModel):
    """The whole file (``vision/weights/reader.json``); unknown keys are refused."""

    model_config = _STRICT
    det_conf: Probability = Field(ge=0, le=1, description="the localiser's box score a box needs to be named")
    conf: Probability = Field(ge=0, le=1, description="the card probability a named index needs")
    joker_conf: Probability | None = Field(
        description="the probability a joker needs (null: conf): a false joker is a false top trump"
    )
    joker_det_conf: Probability | None = Field(
        description=(
            "the localiser's box score from which a box is named too, and kept only when the "
            "classifier names it a joker surely (at joker_conf), when the reader looks at one scale "
            "(the zone reader): a joker's mark localises weakly, and one scale gives it one chance "
            "where the whole frame's pyramid gives it several (null: no such second look)"
        )
    )
    proposals: Proposals
    classifier: Classifier
    suit_head: Head
    orientation_head: Orientation
    upright_head: Head
    joker_head: Head | None = Field(
        default=None,
        description="the joker head (vision.heads.JOKER): whether a box is a joker's, and which, read on "
        "a window wide enough to see the card's picture; folded into every box's reading (null: none)",
    )
    pair_naming: PairNamingSettings
    grouping: Grouping
    unknown_cards: UnknownCardSettings
    faces: FaceSettings
    zones: ZoneSettings
    tiling: TilingSettings


def load_settings(path: Path = SETTINGS_FILE) -> ReaderSettings:
    """The settings in ``path``; raises :class:`SettingsError` naming the file and the fault."""
    try:
        return ReaderSettings.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SettingsError(f"{path}: {exc.strerror or exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(file)"
        raise SettingsError(f"{path}: {where}: {first['msg']}") from None


def save_settings(settings: ReaderSettings, path: Path = SETTINGS_FILE) -> None:
    """Write ``settings`` (validated) to ``path``, as :func:`load_settings` reads it."""
    Path(path).write_text(settings.model_dump_json(indent=2) + "\n", encoding="utf-8")


#: The settings the shipped weights were selected with.
SHIPPED: ReaderSettings = load_settings()
