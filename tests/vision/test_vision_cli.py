import json

import cv2
import numpy as np
from typer.testing import CliRunner

from tractorcam_cli.main import app

runner = CliRunner()


def test_detect_unreadable_image_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"garbage")
    result = runner.invoke(app, ["detect", "--json", str(bad)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "bad.jpg" in result.stderr


def test_detect_json_line_per_image_with_fake_backend(tmp_path):
    paths = []
    for name in ("a.png", "b.png"):
        cv2.imwrite(str(tmp_path / name), np.zeros((40, 60, 3), np.uint8))
        paths.append(str(tmp_path / name))
    result = runner.invoke(app, ["detect", "--json", "--backend", "fake", *paths])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in result.stdout.strip().splitlines()]
    assert lines == [{"image": paths[0], "cards": []}, {"image": paths[1], "cards": []}]


def test_detect_unknown_backend_exits_2(tmp_path):
    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((4, 4, 3), np.uint8))
    result = runner.invoke(app, ["detect", "--backend", "nope", str(tmp_path / "a.png")])
    assert result.exit_code == 2 and "unknown detector type" in result.stderr
