"""The table's configuration file (``run --config``, ``config example|check``) and ``doctor``."""

from __future__ import annotations

import doctest
import json
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

import edge_app.config
import edge_app.doctor
from calibration.table import TableGeometry
from edge_app.config import ConfigError, TableConfig, example, load_config, merged
from edge_app.doctor import check_clock
from models.synth.layout import Table
from tests.edge_app.test_edge_tracking import mm_geometry
from tractorcam_cli.main import app

runner = CliRunner()


def test_module_doctests_run() -> None:
    for module in (edge_app.config, edge_app.doctor):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_a_toml_file_gives_every_key_and_its_relative_paths_from_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "table7"
    folder.mkdir()
    (folder / "table.toml").write_text(
        'source = "picamera2"\ntable = "table.json"\nlog_out = "logs/deals.json"\n'
        'scoreboard = "http://10.0.0.2:8000"\ntoken = "t0k"\nlevel = 5\ntrump = "H"\nevery = 3\n'
        'backend = "ncnn"\noutbox = "/var/lib/tractorcam/outbox.sqlite"\n'
    )
    cfg = load_config(folder / "table.toml")
    assert cfg.source == "picamera2"
    assert cfg.table == folder.resolve() / "table.json"
    assert cfg.log_out == folder.resolve() / "logs" / "deals.json"
    assert cfg.outbox == Path("/var/lib/tractorcam/outbox.sqlite")  # absolute paths stay
    assert (cfg.level, cfg.trump, cfg.every, cfg.inertia, cfg.backend) == ("5", "H", 3, 2, "ncnn")
    assert (cfg.scoreboard, cfg.token) == ("http://10.0.0.2:8000", "t0k")


def test_json_works_too(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"source": "0", "inertia": 4}))
    assert load_config(tmp_path / "c.json").inertia == 4


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('sorce = "0"\n', "unknown key 'sorce'"),
        ("every = 0\n", "every:"),
        ('every = "often"\n', "every:"),
        ('backend = "tflite"\n', "backend:"),
        ("source = [\n", "not valid TOML"),
        ("[seats]\nN = 1\n", "unknown key 'seats'"),
    ],
)
def test_a_bad_file_is_refused_naming_the_key(tmp_path: Path, text: str, named: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="bad.toml") as err:
        load_config(path)
    assert named in str(err.value)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "none.toml")


def test_options_given_win_and_options_not_given_keep_the_file() -> None:
    cfg = merged(TableConfig(source="0", every=3, backend="ncnn"), source="film.mp4", every=None)
    assert (cfg.source, cfg.every, cfg.backend) == ("film.mp4", 3, "ncnn")
    with pytest.raises(ConfigError, match="--every"):
        merged(cfg, every=0)
    with pytest.raises(ConfigError, match="--log-out"):
        merged(cfg, log_out=7)


def test_the_example_names_every_key_and_parses_once_uncommented() -> None:
    text = example()
    body = "\n".join(
        line[2:]
        for line in text.splitlines()
        if line.startswith("# ") and (" = " in line or line.startswith("# ["))
    )
    parsed = tomllib.loads(body)
    assert set(parsed) == set(TableConfig.model_fields)
    TableConfig.model_validate({k: v for k, v in parsed.items()})
    for field in TableConfig.model_fields.values():
        assert field.description and f"# {field.description}" in text
    assert parsed["camera"]["LensPosition"] == 1.0


class FakePicamera2:
    """Stands in for picamera2.Picamera2: records what the source asks of the camera."""

    made: list[FakePicamera2] = []

    def __init__(self) -> None:
        self.controls: dict[str, object] = {}
        self.started = False
        FakePicamera2.made.append(self)

    def create_video_configuration(self, main: dict[str, object]) -> dict[str, object]:
        return {"main": main}

    def configure(self, config: dict[str, object]) -> None:
        self.config = config

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.started = False

    def set_controls(self, controls: dict[str, object]) -> None:
        if "Bogus" in controls:
            raise RuntimeError("unknown control Bogus")
        self.controls.update(controls)

    def capture_array(self, stream: str) -> np.ndarray:
        return np.zeros((1080, 1920, 4), np.uint8)


def test_camera_controls_from_the_file_reach_the_pi_camera(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys
    import types

    from vision.capture import CameraUnavailableError, SourceNotFoundError, open_source

    monkeypatch.setitem(sys.modules, "picamera2", types.SimpleNamespace(Picamera2=FakePicamera2))
    path = tmp_path / "t.toml"
    path.write_text(
        'source = "picamera2"\n[camera]\nAfMode = 0\nLensPosition = 1.0\nColourGains = [1.9, 1.6]\n'
    )
    cfg = load_config(path)
    src = open_source(cfg.source or "", cfg.camera)
    cam = FakePicamera2.made[-1]
    assert cam.started and cam.controls == {"AfMode": 0, "LensPosition": 1.0, "ColourGains": [1.9, 1.6]}
    frame = next(iter(src))
    assert frame.image.shape == (1080, 1920, 3)
    src.close()
    with pytest.raises(CameraUnavailableError, match="refuses the controls"):
        open_source("picamera2", {"Bogus": 1})
    assert not FakePicamera2.made[-1].started
    with pytest.raises(SourceNotFoundError, match="picamera2"):
        open_source(str(tmp_path), {"LensPosition": 1.0})  # a folder cannot take them: said, not ignored
    path.write_text('[camera]\nLensPosition = "near"\n')
    with pytest.raises(ConfigError, match="camera"):
        load_config(path)


def test_config_example_and_check_commands(tmp_path: Path) -> None:
    r = runner.invoke(app, ["config", "example"])
    assert r.exit_code == 0 and "# every = 5" in r.output
    good = tmp_path / "t.toml"
    good.write_text('source = "0"\nevery = 2\n')
    r = runner.invoke(app, ["config", "check", str(good)])
    assert r.exit_code == 0 and "every = 2" in r.output and "source = 0" in r.output
    bad = tmp_path / "b.toml"
    bad.write_text("evry = 2\n")
    r = runner.invoke(app, ["config", "check", str(bad)])
    assert r.exit_code == 2 and "unknown key 'evry'" in r.output


def _table_and_frames(tmp_path: Path) -> tuple[Path, Path, TableGeometry]:
    table = tmp_path / "table.json"
    geometry = mm_geometry(Table(900.0, 900.0))
    geometry.save(table)
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(
        str(frames / "f0.png"), np.full((geometry.image_height, geometry.image_width, 3), 90, np.uint8)
    )
    return table, frames, geometry


@pytest.mark.slow
def test_run_reads_source_and_table_from_the_file(tmp_path: Path) -> None:
    table, frames, _ = _table_and_frames(tmp_path)
    cfg = tmp_path / "table.toml"
    cfg.write_text(
        f'source = "{frames}"\ntable = "table.json"\nlog_out = "read.json"\nlevel = 2\ntrump = "S"\n'
    )
    r = runner.invoke(app, ["run", "--config", str(cfg)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "read.json").is_file()  # log_out from the file, relative to its folder
    assert "1 frames" in r.output


def test_run_refuses_a_bad_file_or_a_bad_override_before_any_frame(tmp_path: Path) -> None:
    table, frames, _ = _table_and_frames(tmp_path)
    cfg = tmp_path / "table.toml"
    cfg.write_text('backend = "tflite"\n')
    r = runner.invoke(app, ["run", "--config", str(cfg), "--source", str(frames), "--table", str(table)])
    assert r.exit_code == 2 and "backend" in r.output and "table.toml" in r.output
    cfg.write_text(f'source = "{frames}"\ntable = "table.json"\n')
    r = runner.invoke(app, ["run", "--config", str(cfg), "--every", "0"])
    assert r.exit_code == 2 and "--every" in r.output
    cfg.write_text('table = "table.json"\n')
    r = runner.invoke(app, ["run", "--config", str(cfg)])
    assert r.exit_code == 2 and "no source" in r.output


@pytest.mark.slow
def test_doctor_passes_a_ready_table(tmp_path: Path) -> None:
    table, frames, geometry = _table_and_frames(tmp_path)
    r = runner.invoke(app, ["doctor", "--source", str(frames), "--table", str(table)])
    lines = r.output.strip().splitlines()
    assert [line.split(":")[0].split()[-1] for line in lines] == ["source", "calibration", "model", "clock"]
    for name in ("source", "calibration", "model"):
        assert any(line.startswith("ok") and f" {name}:" in line for line in lines), r.output
    assert f"{geometry.image_width}×{geometry.image_height}" in r.output


def test_doctor_fails_with_one_line_per_problem(tmp_path: Path) -> None:
    table, frames, geometry = _table_and_frames(tmp_path)
    small = tmp_path / "small"
    small.mkdir()
    cv2.imwrite(str(small / "f.png"), np.zeros((48, 64, 3), np.uint8))
    r = runner.invoke(
        app,
        [
            "doctor",
            "--source",
            str(small),
            "--table",
            str(table),
            "--scoreboard",
            "http://127.0.0.1:9",
            "--token",
            "x",
        ],
    )
    assert r.exit_code == 1
    assert "FAIL  calibration:" in r.output and "calibrate again" in r.output
    assert "FAIL  scoreboard: http://127.0.0.1:9 cannot be reached" in r.output
    r = runner.invoke(app, ["doctor", "--source", str(tmp_path / "none.mp4"), "--table", str(table)])
    assert r.exit_code == 1 and "FAIL  source:" in r.output and "FAIL  model:" in r.output


def test_a_clock_before_the_release_or_unsynchronised_fails() -> None:
    assert not check_clock(datetime(2025, 6, 1, tzinfo=UTC), lambda: True).ok
    assert not check_clock(datetime(2027, 1, 1, tzinfo=UTC), lambda: False).ok
    ok = check_clock(datetime(2027, 1, 1, tzinfo=UTC), lambda: None)
    assert ok.ok and "not known" in ok.detail


def test_a_table_plays_a_game_tractorcam_knows() -> None:
    """``game`` defaults to Shengji; another name is refused with the key named, and the table
    service of the game is the one ``run`` starts."""
    from edge_app.games import table_service
    from edge_app.service import run_service

    assert TableConfig.model_validate({}).game == "shengji"
    assert table_service("shengji") is run_service
    with pytest.raises(ConfigError, match="game: .*not a game tractorcam knows"):
        merged(None, game="mahjong")
