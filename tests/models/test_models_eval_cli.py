"""``tractorcam eval`` on a tiny rendered split with the committed reader."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from models.synth.dataset import make_dataset


def test_eval_passes_the_joker_threshold_to_the_reader(tmp_path: Path) -> None:
    from tractorcam_cli.main import app

    make_dataset(tmp_path, n=1, seed=2, split="val", imgsz=160, progress=False)
    args = ["eval", "--heldout", str(tmp_path), "--split", "val", "--n", "0", "--skip-real"]
    r = CliRunner().invoke(app, [*args, "--joker-conf", "0.9"])
    assert r.exit_code == 0, r.output
    assert "joker_conf 0.9" in r.output.splitlines()[0]
    assert "synthetic val" in r.output and "jokers:" in r.output
    from vision.settings import SHIPPED

    plain = CliRunner().invoke(app, args)  # the shipped default, printed only when it is set
    assert plain.exit_code == 0
    assert ("joker_conf" in plain.output.splitlines()[0]) == (SHIPPED.joker_conf is not None)


def test_eval_refuses_a_missing_suit_head_before_reading_anything(tmp_path: Path) -> None:
    from tractorcam_cli.main import app

    missing = tmp_path / "suit.onnx"
    r = CliRunner().invoke(app, ["eval", "--n", "0", "--skip-real", "--suit-head", str(missing)])
    assert r.exit_code == 2
    assert f"suit head not found: {missing}" in r.output


def test_eval_names_the_orientation_head_and_refuses_a_missing_or_wrong_one(tmp_path: Path) -> None:
    import numpy as np

    from tests.vision.test_vision_classifier import linear_model
    from tractorcam_cli.main import app

    base = ["eval", "--n", "0", "--skip-real"]
    missing = tmp_path / "o.onnx"
    r = CliRunner().invoke(app, [*base, "--orientation-head", str(missing)])
    assert r.exit_code == 2 and f"orientation head not found: {missing}" in r.output
    four = linear_model(tmp_path / "four.onnx", np.ones((3, 4), np.float32))
    r = CliRunner().invoke(app, [*base, "--orientation-head", str(four)])
    assert r.exit_code == 2 and "8 sectors" in r.output
    r = CliRunner().invoke(app, [*base, "--no-orientation-head"])
    assert r.exit_code == 0 and "orientation head" not in r.output


def test_a_sweep_can_be_limited_to_given_det_confs(tmp_path: Path) -> None:
    from tractorcam_cli.main import app

    make_dataset(tmp_path, n=1, seed=2, split="val", imgsz=160, progress=False)
    args = ["eval", "--heldout", str(tmp_path), "--split", "val", "--n", "0", "--skip-real", "--sweep"]
    r = CliRunner().invoke(app, [*args, "--sweep-det-conf", "0.3", "--sweep-det-conf", "0.4"])
    assert r.exit_code == 0, r.output
    rows = [line for line in r.output.splitlines() if line.startswith("det_conf")]
    assert {line.split()[1] for line in rows} == {"0.300", "0.400"}
    assert "det_conf 0.3," in r.output.splitlines()[0]  # the reader keeps boxes down to the lowest


def test_eval_prints_per_design_rows_and_filters_by_design(tmp_path: Path) -> None:
    import json

    from tractorcam_cli.main import app

    make_dataset(tmp_path, n=2, seed=2, split="val", imgsz=160, progress=False)
    shown = sorted(
        {
            d
            for f in (tmp_path / "annotations" / "val").glob("*.json")
            for d in json.loads(f.read_text())["designs"]
        }
    )
    args = ["eval", "--heldout", str(tmp_path), "--split", "val", "--n", "0", "--skip-real"]
    r = CliRunner().invoke(app, [*args, "--per-design"])
    assert r.exit_code == 0, r.output
    rows = r.output.split("per design")[1].splitlines()[1:]
    assert sorted(row.split(":")[0].strip() for row in rows if row.strip()) == sorted(
        {
            "+".join(sorted(json.loads(f.read_text())["designs"]))
            for f in (tmp_path / "annotations" / "val").glob("*.json")
        }
    )
    one = CliRunner().invoke(app, [*args, "--design", shown[0]])
    assert one.exit_code == 0, one.output
    assert f"; {shown[0]})" in one.output
    missing = CliRunner().invoke(app, [*args, "--design", "no_such_deck"])
    assert missing.exit_code == 2 and "shows no_such_deck" in missing.output
    rendered = CliRunner().invoke(app, ["eval", "--n", "1", "--skip-real", "--design", shown[0]])
    assert rendered.exit_code == 2 and "--design needs a rendered dataset" in rendered.output


def test_the_progress_bar_passes_every_item_and_stays_out_of_logs(tmp_path: Path, capsys) -> None:
    from models.cli import _progress

    assert list(_progress(iter("abc"), total=2)) == ["a", "b", "c"]
    assert list(_progress([1, 2], total=2)) == [1, 2]
    assert capsys.readouterr().err == ""  # standard error is not a terminal here: no bar


def test_the_progress_total_counts_the_split_unless_designs_filter_it(tmp_path: Path, monkeypatch) -> None:
    import tqdm

    from models import evaluate as ev
    from models.cli import _synthetic_scenes

    (tmp_path / "annotations" / "val").mkdir(parents=True)
    for k in range(3):
        (tmp_path / "annotations" / "val" / f"{k}.json").write_text("{}")
    totals = []

    def fake_tqdm(items, total=None, **_):
        totals.append(total)
        return items

    monkeypatch.setattr(tqdm, "tqdm", fake_tqdm)
    monkeypatch.setattr(ev, "load_synthetic_split", lambda *a: iter(["scene"]))
    assert list(_synthetic_scenes(tmp_path, "val", None, None)) == ["scene"]
    assert list(_synthetic_scenes(tmp_path, "val", 2, None)) == ["scene"]
    assert list(_synthetic_scenes(tmp_path, "val", None, ["paris"])) == ["scene"]
    assert totals == [3, 2, None]  # a design filter keeps an unknown share of the split


def test_eval_prints_per_size_rows(tmp_path: Path) -> None:
    import json

    from models.evaluate import scene_card_px, size_bin
    from tractorcam_cli.main import app

    make_dataset(tmp_path, n=2, seed=2, split="val", imgsz=160, progress=False)
    expected = {
        size_bin(px)
        for f in (tmp_path / "annotations" / "val").glob("*.json")
        if (px := scene_card_px(json.loads(f.read_text()))) is not None
    }
    args = ["eval", "--heldout", str(tmp_path), "--split", "val", "--n", "0", "--skip-real", "--per-size"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    rows = r.output.split("per card size")[1].splitlines()[1:]
    assert expected and {row.split(":")[0].strip() for row in rows if row.strip()} == expected
