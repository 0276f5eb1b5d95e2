"""The reader's settings file (vision/weights/reader.json): validated, one place for every threshold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision.settings import SETTINGS_FILE, SHIPPED, SettingsError, load_settings, save_settings


def shipped_json() -> dict:
    return json.loads(SETTINGS_FILE.read_text())


def test_the_shipped_file_validates_and_names_files_that_are_committed() -> None:
    settings = load_settings()
    assert settings == SHIPPED
    heads = (settings.classifier, settings.suit_head, settings.orientation_head, settings.upright_head)
    for head in (*heads, *([settings.joker_head] if settings.joker_head is not None else [])):
        assert (SETTINGS_FILE.parent / head.file).is_file(), head.file
    assert settings.joker_conf is not None and settings.joker_conf >= 0.8  # models.selection.JOKER_FLOOR


@pytest.mark.parametrize(
    ("change", "fault"),
    [
        ({"confidence": 0.5}, "confidence: Extra inputs are not permitted"),
        ({"conf": 1.5}, "conf: Input should be less than or equal to 1"),
        ({"classifier": {"file": "c.onnx", "shifts": [], "shift_below": 0.8}}, "classifier.shifts"),
        ({"suit_head": {"file": "s.onnx", "weight": 0.5, "pad": 1.0}}, "suit_head.pad: Extra inputs"),
    ],
)
def test_a_bad_file_is_refused_naming_the_field(tmp_path: Path, change: dict, fault: str) -> None:
    path = tmp_path / "reader.json"
    path.write_text(json.dumps({**shipped_json(), **change}))
    with pytest.raises(SettingsError, match=fault.replace(".", r"\.")) as exc:
        load_settings(path)
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)


def test_a_missing_or_broken_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="No such file"):
        load_settings(tmp_path / "none.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(SettingsError, match="broken.json"):
        load_settings(tmp_path / "broken.json")


def test_saved_settings_read_back_the_same(tmp_path: Path) -> None:
    changed = SHIPPED.model_copy(update={"conf": 0.55})
    save_settings(changed, tmp_path / "r.json")
    assert load_settings(tmp_path / "r.json") == changed != SHIPPED


def test_the_reader_takes_its_thresholds_and_weights_from_the_settings() -> None:
    from vision.reader import default_reader_config

    other = SHIPPED.model_copy(
        update={
            "conf": 0.42,
            "det_conf": 0.21,
            "joker_conf": 0.9,
            "suit_head": SHIPPED.suit_head.model_copy(update={"weight": 0.7}),
        }
    )
    d = default_reader_config("onnx", settings=other).detector
    assert (d.conf, d.det_conf, d.joker_conf, d.suit_weight) == (0.42, 0.21, 0.9, 0.7)
    d = default_reader_config("onnx").detector
    assert (d.conf, d.det_conf, d.joker_conf) == (SHIPPED.conf, SHIPPED.det_conf, SHIPPED.joker_conf)
    assert d.upright_weight == SHIPPED.upright_head.weight


def test_a_joker_head_is_taken_only_when_the_settings_name_one_that_is_there() -> None:
    from vision.reader import default_reader_config
    from vision.settings import Head, ReaderSettings

    named = SHIPPED.model_copy(update={"joker_head": Head(file="upright.onnx", weight=0.7)})
    d = default_reader_config("onnx", settings=named).detector
    assert d.joker_head == SETTINGS_FILE.parent / "upright.onnx" and d.joker_weight == 0.7
    absent = SHIPPED.model_copy(update={"joker_head": Head(file="no-such-head.onnx")})
    assert default_reader_config("onnx", settings=absent).detector.joker_head is None
    none = SHIPPED.model_copy(update={"joker_head": None})
    assert default_reader_config("onnx", settings=none).detector.joker_head is None
    # a file without the key reads as no joker head
    without = {k: v for k, v in shipped_json().items() if k != "joker_head"}
    assert ReaderSettings.model_validate(without).joker_head is None


@pytest.mark.parametrize(
    ("section", "config"),
    [
        ("faces", "vision.faces:FaceMatchConfig"),
        ("zones", "vision.zones:ZoneConfig"),
        ("tiling", "vision.tiling:TilingConfig"),
    ],
)
def test_the_faces_zones_and_tiling_settings_are_the_files(section: str, config: str) -> None:
    """Each step's settings take their defaults from the file's section, every field of it: the
    file is the one place their numbers are set."""
    import dataclasses
    import importlib

    module, name = config.split(":")
    cls = getattr(importlib.import_module(module), name)
    raw = shipped_json()[section]
    made = dataclasses.asdict(cls())
    made.pop("joker_det_conf", None)  # the zone reader's comes from the reader's own (above)
    assert set(made) == set(raw)
    for key, value in raw.items():
        assert made[key] == (tuple(value) if isinstance(value, list) else value), key


def test_a_step_setting_the_file_does_not_know_is_refused(tmp_path: Path) -> None:
    data = shipped_json()
    data["faces"] = {**data["faces"], "ransac": 3.0}
    path = tmp_path / "reader.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SettingsError, match="faces.ransac: Extra inputs are not permitted"):
        load_settings(path)
