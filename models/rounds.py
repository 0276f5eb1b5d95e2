"""Train the index classifier in rounds, each on data it has never seen (``tractorcam heads rounds``).

The classifier memorises its training scenes (label-box crops of scenes it was trained on read
97.4 % right, new scenes of the same decks 93.1 %; docs/experiments/reader-history.md). New scenes cost
little (the renderer draws 4,800 in 3.5 min), so each *round* here makes its own data from its own
seeds and trains one epoch on it, starting from the previous round's weights:

1. ``scenes``: ``--scenes`` training-design scenes (:func:`models.synth.dataset.make_dataset`, split
   ``train``, ``--text-share`` of them with printed sheets);
2. ``tiles-<group>``: ``--tiles`` face tiles of each ``--tile-group`` (:mod:`models.facetiles`; the
   random decks that carry design variety the scenes do not);
3. ``mined.npz``: the localiser's boxes on ``--mine`` of the new scenes through the inference pyramid
   (:func:`models.mining.mine_crops`, ``--workers`` processes), so the classifier learns to name and
   reject the boxes it will really be given;
4. ``classifier.{onnx,pt}``: one epoch (:func:`models.classifier.train_classifier`) on the labelled
   crops of 1 and 2 (``--jitter`` copies each, ``--negatives`` random background boxes per image)
   plus 3, from ``--init`` in the first round and from the round before in every later one;
   ``round.json`` records the settings, crop counts, accuracies on the ``--val`` crops and timings.

Everything lands under ``WORK/round-NN/``; a step whose output is complete is skipped, so a stopped
run resumes where it stopped (a half-written step is redone: outputs are renamed into place only
when complete). Seeds derive from ``--seed`` and the round number, so a round is the same data
whatever ran before it. Choosing whether a round's classifier ships is the selection rule's job
(:mod:`models.selection`), not this module's.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from models.classifier import CropSet, _sources, extract_crops, load_crops, train_classifier
from models.facetiles import DESIGN_GROUPS
from vision.classifier import BACKGROUND

#: Face-tile groups a round may render (``--tile-group``), as named by ``tractorcam synth facetiles --designs``.
TILE_GROUPS = tuple(DESIGN_GROUPS)


class RoundsError(ValueError):
    """Settings that cannot make a round (unknown tile group, nothing to train on, missing init)."""


@dataclass(frozen=True)
class RoundSettings:
    """What every round renders, mines and trains (the command line's options)."""

    localiser: Path
    init: Path
    val: tuple[str, ...]
    scenes: int = 4800
    text_share: float = 0.2
    tiles: int = 2000
    tile_groups: tuple[str, ...] = ("glyphs", "fonts")
    mine: int = 2400
    mine_conf: float = 0.2
    mine_background: int | None = None
    jitter: int = 3
    negatives: int = 3
    lr: float = 3e-4
    width: float = 2.0
    seed: int = 100
    workers: int = 2
    keep_images: bool = True
    extra_crops: tuple[Path, ...] = field(default_factory=tuple)

    def check(self) -> None:
        """Raise :class:`RoundsError` for settings no round can run with."""
        unknown = [g for g in self.tile_groups if g not in TILE_GROUPS]
        if unknown:
            raise RoundsError(f"unknown tile group(s) {unknown}; known: {', '.join(TILE_GROUPS)}")
        if self.scenes < 1 and not (self.tiles and self.tile_groups):
            raise RoundsError("a round needs scenes or face tiles to train on")
        if not 0 <= self.mine <= self.scenes:
            raise RoundsError(f"--mine must lie in [0, --scenes], got {self.mine}")
        if not Path(self.init).is_file():
            raise RoundsError(f"--init: no such file {self.init}")
        if self.mine and not Path(self.localiser).is_file():
            raise RoundsError(f"--localiser: no such file {self.localiser}")
        if self.workers < 1:
            raise RoundsError("--workers must be at least 1")

    def round_seed(self, number: int, step: int) -> int:
        """The seed of one step of one round: the same whatever ran before."""
        return int(np.random.SeedSequence([self.seed, number, step]).generate_state(1)[0] % (1 << 31))


def round_dir(work: Path, number: int) -> Path:
    """``WORK/round-NN``."""
    return Path(work) / f"round-{number:02d}"


def _done(path: Path) -> bool:
    return (path / ".done").is_file()


def _mark_done(path: Path) -> None:
    (path / ".done").write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) + "\n")


def _fresh(path: Path) -> Path:
    """An empty directory at ``path`` (a half-written one from a stopped run is removed)."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def render_scenes(out: Path, s: RoundSettings, number: int) -> None:
    """Step 1: the round's training-design scenes (skipped when complete)."""
    from models.synth.dataset import make_dataset

    if _done(out):
        return
    make_dataset(
        _fresh(out), s.scenes, s.round_seed(number, 1), "train", workers=s.workers, printed=s.text_share
    )
    _mark_done(out)


def render_tiles(out: Path, group: str, s: RoundSettings, number: int) -> None:
    """Step 2: the round's face tiles of one group (skipped when complete)."""
    from models.facetiles import FaceTileSettings, design_group, make_face_tiles

    if _done(out):
        return
    names = [d.name for d in design_group(group)]
    seed = s.round_seed(number, 2 + TILE_GROUPS.index(group))
    make_face_tiles(_fresh(out), "train", s.tiles, names, seed, FaceTileSettings(text_share=s.text_share))
    _mark_done(out)


def _tiles_job(args: tuple[Path, str, RoundSettings, int]) -> None:
    import cv2

    cv2.setNumThreads(1)
    render_tiles(*args)


def _render_all_tiles(rdir: Path, s: RoundSettings, number: int) -> None:
    """Step 2 for every group, up to ``s.workers`` groups at once (each builds its decks' faces,
    which for the 200 random decks of a group costs minutes whatever the number of tiles)."""
    jobs = [(rdir / f"tiles-{g}", g, s, number) for g in s.tile_groups]
    if s.workers == 1 or len(jobs) == 1:
        for job in jobs:
            render_tiles(*job)
        return
    import multiprocessing as mp

    with ProcessPoolExecutor(min(s.workers, len(jobs)), mp_context=mp.get_context("spawn")) as pool:
        list(pool.map(_tiles_job, jobs))


def _mine_shard(args: tuple[Path, Path, int, float, int, int, int]) -> CropSet:
    from models.mining import mine_crops

    localiser, scenes, seed, conf, limit, k, n = args
    import cv2

    cv2.setNumThreads(1)
    return mine_crops(localiser, [(scenes, "train")], seed, det_conf=conf, limit=limit, shard=(k, n))


def mine_round(out: Path, scenes: Path, s: RoundSettings, number: int) -> None:
    """Step 3: the localiser's boxes on ``s.mine`` scenes as crops, ``out`` (.npz; skipped if there)."""
    from models.mining import keep_background

    if out.is_file():
        return
    seed = s.round_seed(number, 10)
    jobs = [(s.localiser, scenes, seed, s.mine_conf, s.mine, k, s.workers) for k in range(s.workers)]
    if s.workers == 1:
        parts = [_mine_shard(jobs[0])]
    else:
        import multiprocessing as mp

        with ProcessPoolExecutor(s.workers, mp_context=mp.get_context("spawn")) as pool:
            parts = list(pool.map(_mine_shard, jobs))
    mined = CropSet(np.concatenate([p.x for p in parts]), np.concatenate([p.y for p in parts]))
    if s.mine_background is not None:
        mined = keep_background(mined, s.mine_background, seed)
    tmp = out.with_suffix(".part.npz")
    np.savez(tmp, x=mined.x, y=mined.y)
    tmp.replace(out)


def round_crops(rdir: Path, s: RoundSettings, number: int) -> CropSet:
    """The round's training crops: labelled (and random background) crops of its scenes and tiles,
    its mined crops, and ``s.extra_crops``."""
    sources = []
    if s.scenes:
        sources.append(f"{rdir / 'scenes'}:train")
    sources += [f"{rdir / f'tiles-{g}'}:train" for g in s.tile_groups if s.tiles]
    parts = [extract_crops(_sources(sources), s.jitter, s.round_seed(number, 20), negatives=s.negatives)]
    if (rdir / "mined.npz").is_file():
        parts.append(load_crops(rdir / "mined.npz"))
    parts += [load_crops(p) for p in s.extra_crops]
    return CropSet(np.concatenate([p.x for p in parts]), np.concatenate([p.y for p in parts]))


def run_round(
    work: Path, number: int, s: RoundSettings, log: Callable[[str], None] = print
) -> dict[str, object]:
    """Run (or finish) round ``number``; return its record (also written as ``round.json``)."""
    rdir = round_dir(work, number)
    record_path = rdir / "round.json"
    if record_path.is_file():
        return dict(json.loads(record_path.read_text()))
    rdir.mkdir(parents=True, exist_ok=True)
    init = s.init if number == 1 else round_dir(work, number - 1) / "classifier.pt"
    if not init.is_file():
        raise RoundsError(f"round {number} starts from {init}, which does not exist: run round {number - 1}")
    times: dict[str, float] = {}
    t = time.time()
    if s.scenes:
        render_scenes(rdir / "scenes", s, number)
    times["scenes"] = time.time() - t
    t = time.time()
    if s.tiles:
        _render_all_tiles(rdir, s, number)
    times["tiles"] = time.time() - t
    t = time.time()
    if s.mine:
        mine_round(rdir / "mined.npz", rdir / "scenes", s, number)
    times["mine"] = time.time() - t
    t = time.time()
    train = round_crops(rdir, s, number)
    times["crops"] = time.time() - t
    log(f"round {number}: {len(train.y)} crops, {int((train.y == BACKGROUND).sum())} background, from {init}")
    val = [(v, extract_crops(_sources([v]), 1, s.seed + 1, negatives=s.negatives)) for v in s.val]
    t = time.time()
    scores = train_classifier(
        train, val, 1, rdir / "classifier.onnx", s.round_seed(number, 30), lr=s.lr, init=init, width=s.width
    )
    times["train"] = time.time() - t
    if not s.keep_images:
        for sub in ["scenes"] + [f"tiles-{g}" for g in s.tile_groups]:
            shutil.rmtree(rdir / sub, ignore_errors=True)
    record = {
        "round": number,
        "init": str(init),
        "crops": int(len(train.y)),
        "background": int((train.y == BACKGROUND).sum()),
        "val_accuracy": scores,
        "seconds": {k: round(v, 1) for k, v in times.items()},
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(s).items()},
    }
    record["settings"]["extra_crops"] = [str(p) for p in s.extra_crops]  # type: ignore[index]
    text = json.dumps(record, indent=2) + "\n"
    tmp = record_path.with_suffix(".part")
    tmp.write_text(text)
    tmp.replace(record_path)
    log(f"round {number} done: " + ", ".join(f"{k} {v:.4f}" for k, v in scores.items()))
    return dict(json.loads(text))  # as a later call reads it back (tuples become lists)


def run_rounds(work: Path, rounds: int, s: RoundSettings, log: Callable[[str], None] = print) -> list[dict]:
    """Rounds 1 … ``rounds`` (finished ones are read back, not redone)."""
    s.check()
    return [run_round(work, r, s, log) for r in range(1, rounds + 1)]


if __name__ == "__main__":
    import typer

    from models.cli import rounds_command

    typer.run(rounds_command)
