"""The options of the two runs (``gpu train``, ``gpu localisers``) as typed, frozen records that
:mod:`models.cli` builds from the command line; their defaults are the command line's (a test pins
them). Only the standard library here."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from models.gpu.common import ART_SHARE


def default_workers() -> int:
    """Rendering processes by default: every core but one (at least one)."""
    return max(1, (os.cpu_count() or 2) - 1)


#: ``gpu train --variant`` by default: NAME:WIDTH:LR[:init] of each classifier trained.
CLASSIFIER_VARIANTS = ("w2init:2:0.001:init", "w2:2:0.003", "w3:3:0.003")
#: ``gpu localisers --variant`` by default: NAME:ARCH:LR of each localiser trained.
LOCALISER_VARIANTS = ("pft:shipped:0.001", "n:n:0.002")


@dataclass(frozen=True)
class GpuTrainConfig:
    """The options of ``gpu train`` (:func:`models.gpu.runs.run`), with the command line's defaults (a test pins
    them to :func:`models.cli.gpu_train_command`'s)."""

    out: Path  #: folder of the run's weights, metrics.json and logs
    budget: float = 510.0  #: wall-clock seconds for the whole run
    workers: int = field(default_factory=default_workers)  #: rendering processes
    seed: int = 44  #: seeds the run's scenes
    chunk: int = 4  #: scenes per worker job
    warmup: float = 45.0  #: seconds of rendering before training
    tail: float = 25.0  #: seconds kept at the end for saving
    batch: int = 1024  #: classifier crops per step
    mine_share: float = 0.6  #: share of scenes the shipped localiser's boxes are cut from
    mined_background: int = 12  #: the localiser's boxes on no index kept per mined scene, at most
    val_scenes: int = 200  #: selection scenes whose crops score the classifiers
    #: NAME:WIDTH:LR[:init] of each classifier trained
    variant: list[str] = field(default_factory=lambda: list(CLASSIFIER_VARIANTS))
    device: str = ""  #: torch device ("": cuda if there, else cpu)
    bank_share: float = 0.5  #: share of each batch cut on the device from the face bank (0: none)
    bank_decks: int = 1000  #: randomised decks drawn for the face bank (plus the art decks)
    art_share: float = ART_SHARE  #: share of rendered scenes dealt from the art decks
    #: share of the face bank's crops cut from the art decks' faces (None: every face alike)
    bank_art_share: float | None = 0.5
    bank_background: float = 0.12  #: share of the face bank's crops that are background
    bank_joker_share: float = 0.0  #: share of the face bank's crops cut from jokers
    tile_share: float = 0.0  #: share of rendered examples that are face tiles, not scenes
    bank_proposals: bool = True  #: cut the bank's background where the shipped localiser proposes
    loc_data: str = "/tmp/gpu_loc"  #: folder of the scenes written for the localiser
    loc_project: str = "/tmp/gpu_loc_run"  #: folder of the localiser's ultralytics run
    loc_render: float = 120.0  #: seconds of scenes written for the localiser
    localiser: bool = True  #: train the localiser too (``--no-localiser``: False)
    loc_tail: float = 40.0  #: seconds before the end at which the localiser's time ends
    loc_batch: int = 128  #: the localiser's batch
    loc_workers: int = 6  #: the localiser's data-loader processes
    head: str = "cards"  #: what the variants are: ``cards`` or ``joker`` (:data:`models.gpu.render.HEADS`)


@dataclass(frozen=True)
class GpuLocalisersConfig:
    """The options of ``gpu localisers`` (:func:`models.gpu.runs.run_localisers`), with the command line's defaults
    (a test pins them to :func:`models.cli.gpu_localisers_command`'s)."""

    out: Path  #: folder of the run's weights, metrics.json and logs
    budget: float = 510.0  #: wall-clock seconds for the whole run
    workers: int = field(default_factory=default_workers)  #: rendering and data-loader processes
    render: float = 140.0  #: seconds every core renders scenes first
    seed: int = 45  #: seeds the run's scenes
    chunk: int = 4  #: scenes per worker job
    tail: float = 20.0  #: seconds kept at the end for saving
    batch: int = 64  #: images per step of each localiser
    art_share: float = ART_SHARE  #: share of scenes drawn from the training art decks
    tiles: float = 0.0  #: share of the render jobs that make face tiles
    cache: str = "ram"  #: ultralytics image cache: ram, disk or none
    device: str = "0"  #: ultralytics device
    #: NAME:ARCH:LR of each localiser trained
    variant: list[str] = field(default_factory=lambda: list(LOCALISER_VARIANTS))
    loc_data: str = "/tmp/gpu_loc_scenes"  #: folder of the scenes written for the localisers
    loc_project: str = "/tmp/gpu_loc_runs"  #: folder of the localisers' ultralytics runs
