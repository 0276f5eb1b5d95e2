"""Classifier training in rounds of fresh data (models.rounds): each round renders, mines and trains
on data of its own seeds, starts from the round before, and a stopped run resumes without redoing
finished steps."""

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import need_module

need_module("torch")

from models.classifier import build_net  # noqa: E402
from models.mining import mine_crops  # noqa: E402
from models.rounds import RoundsError, RoundSettings, round_dir, run_rounds  # noqa: E402
from models.synth.dataset import make_dataset  # noqa: E402
from vision.tiling import TilingConfig  # noqa: E402

LOCALISER = Path(__file__).resolve().parents[2] / "models" / "weights" / "best.onnx"
WIDTH = 0.25


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A tiny classifier to start from and a two-scene val set."""
    import torch

    root = tmp_path_factory.mktemp("rounds")
    init = root / "init.pt"
    torch.save(build_net(width=WIDTH).state_dict(), init)
    make_dataset(root / "val", 2, seed=5, split="val", progress=False)
    return root, init


def settings(start: Path, val: Path, **kw) -> RoundSettings:
    base = dict(
        localiser=LOCALISER,
        init=start,
        val=(f"{val}:val",),
        scenes=2,
        tiles=2,
        tile_groups=("kde",),
        mine=1,
        jitter=1,
        negatives=1,
        width=WIDTH,
        workers=1,
        seed=7,
    )
    base.update(kw)
    return RoundSettings(**base)


@pytest.mark.slow
def test_rounds_use_fresh_data_chain_their_weights_and_resume(small, tmp_path):
    root, init = small
    s = settings(init, root / "val")
    work = tmp_path / "work"
    records = run_rounds(work, 2, s, log=lambda _: None)
    assert [r["round"] for r in records] == [1, 2]
    r1, r2 = round_dir(work, 1), round_dir(work, 2)
    assert records[0]["init"] == str(init)
    assert records[1]["init"] == str(r1 / "classifier.pt")
    for r in (r1, r2):
        assert (r / "classifier.onnx").is_file() and (r / "classifier.pt").is_file()
        assert len(list((r / "scenes" / "images" / "train").glob("*.jpg"))) == 2
        assert len(list((r / "tiles-kde" / "images" / "train").glob("*.jpg"))) == 2
        with np.load(r / "mined.npz") as z:
            assert len(z["y"]) > 0
    # each round renders its own scenes
    a = sorted((r1 / "scenes" / "images" / "train").glob("*.jpg"))[0].read_bytes()
    b = sorted((r2 / "scenes" / "images" / "train").glob("*.jpg"))[0].read_bytes()
    assert a != b
    # round 2 trained on its own crops: the counts add up to what its folders hold
    assert records[1]["crops"] > 0 and records[1]["background"] > 0
    assert set(records[1]["val_accuracy"]) == {f"{root / 'val'}:val"}
    # a second call redoes nothing: the same records, the same files
    stamps = {
        p: p.stat().st_mtime_ns for p in (r1 / "classifier.pt", r2 / "mined.npz", r1 / "scenes" / ".done")
    }
    again = run_rounds(work, 2, s, log=lambda _: None)
    assert again == records
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps


def test_a_stopped_round_redoes_half_written_steps_and_keeps_finished_ones(small, tmp_path):
    root, init = small
    s = settings(init, root / "val", tiles=0, tile_groups=())
    work = tmp_path / "work"
    r1 = round_dir(work, 1)
    # as if a run stopped while rendering: a stray file, no completion mark
    (r1 / "scenes").mkdir(parents=True)
    (r1 / "scenes" / "half-written.jpg").write_bytes(b"not an image")
    run_rounds(work, 1, s, log=lambda _: None)
    assert not (r1 / "scenes" / "half-written.jpg").exists()
    assert (r1 / "round.json").is_file()
    # a stop after mining, before training: the mined crops are reused, training runs
    (r1 / "round.json").unlink()
    mined = (r1 / "mined.npz").stat().st_mtime_ns
    run_rounds(work, 1, s, log=lambda _: None)
    assert (r1 / "round.json").is_file() and (r1 / "mined.npz").stat().st_mtime_ns == mined


@pytest.mark.parametrize(
    "change, message",
    [
        ({"tile_groups": ("nope",)}, "unknown tile group"),
        ({"mine": 5}, "--mine"),
        ({"init": Path("/nonexistent/init.pt")}, "--init"),
        ({"workers": 0}, "--workers"),
        ({"scenes": 0, "mine": 0, "tiles": 0}, "needs scenes or face tiles"),
    ],
)
def test_settings_no_round_can_use_are_refused(small, tmp_path, change, message):
    root, init = small
    with pytest.raises(RoundsError, match=message):
        run_rounds(tmp_path / "w", 1, settings(init, root / "val", **change), log=lambda _: None)
    assert not (tmp_path / "w").exists()


def test_mining_shards_split_the_images_between_them(small):
    root, _ = small
    src = [(root / "val", "val")]
    one = TilingConfig(levels=(1.0,))
    whole = mine_crops(LOCALISER, src, 0, det_conf=0.2, tiling=one)
    parts = [mine_crops(LOCALISER, src, 0, det_conf=0.2, tiling=one, shard=(k, 2)) for k in range(2)]
    assert sorted(np.concatenate([p.y for p in parts]).tolist()) == sorted(whole.y.tolist())
    assert all(len(p.y) for p in parts)  # each shard mined an image of its own
    with pytest.raises(ValueError, match="shard"):
        mine_crops(LOCALISER, src, 0, shard=(2, 2))
