"""Train the reader's networks in one command on a lent GPU machine, with only what travels there.

A GPU machine is lent now and then for a few minutes: no package index, no ``rsvg-convert``, no
fonts, a working tree of at most 64 MiB. ``pack`` (run here) puts what the renderer needs beside the
repository: the training designs' face atlases (WebP inside the ``.png`` names the renderer reads;
never a held-out design), the outline fonts of the randomised decks up to a size, and the wheels
the machine's image lacks (ultralytics, pydantic, and typer for the command line itself,
:data:`~models.gpu.packing.WHEELS`). ``train`` (run there, or here with a tiny budget as a test) then, within one
wall-clock budget:

1. renders fresh training scenes on every core (:func:`models.synth.dataset.render_example`; half
   from the training art decks, half from the randomised decks whose fonts travelled), and cuts
   classifier crops from each: every labelled index jittered like a localiser's box, random
   background boxes, and on a share of scenes the shipped localiser's own boxes (hard examples,
   :func:`models.mining.mine_image`); the first scenes are also written as a detection dataset;
2. trains the localiser (ultralytics, one class, from the shipped ``best.pt``) on those scenes in a
   subprocess, while
3. the index classifier variants (:func:`models.classifier.build_net`) train on the GPU from the
   growing crop pool with the ``strong`` jitter done on the GPU, while the workers keep rendering;
4. writes each network's weights, a metrics file and the log into the output folder.

Nothing is chosen there: the weights come back and are evaluated here with the selection rule
(:mod:`models.selection`) before anything ships (``docs/gpu.md``).

    tractorcam gpu pack .gpu                                  # here
    python3 -m tractorcam_cli gpu train OUT --budget 510 --workers 15  # there: no install

The commands are :data:`models.cli.gpu_app`'s, run there through the project's entry point from the
tree (``python3 -m tractorcam_cli``).

The parts, one module each (this package re-exports their public names):

* :mod:`models.gpu.config`: the runs' options, typed (:class:`GpuTrainConfig`,
  :class:`GpuLocalisersConfig`), with the command line's defaults;
* :mod:`models.gpu.common`: the repository's paths, :class:`GpuRunError`, the training designs;
* :mod:`models.gpu.packing`: what travels (``gpu pack``: atlases, fonts, wheels);
* :mod:`models.gpu.render`: the workers' scenes, face tiles and crops, the heads' windows;
* :mod:`models.gpu.bank`: the face bank and its crops cut on the device;
* :mod:`models.gpu.trainers`: the classifier variants' trainer and the localiser's;
* :mod:`models.gpu.runs`: the two runs, ``gpu train`` (:func:`run`) and ``gpu localisers``
  (:func:`run_localisers`);
* :mod:`models.gpu.checks`: here, on the weights that come back: ``gpu check``, ``soup``, ``export``.
"""

from __future__ import annotations

from models.gpu.bank import (
    BANK_FACE,
    BANK_PROPOSALS,
    BANK_VARIANTS_FROM,
    MOSAIC_FACE_H,
    BankJob,
    FaceBank,
    bank_job,
    face_proposals,
    faceset_arrays,
)
from models.gpu.checks import check_classifiers, check_localisers, export_head, interpolate_weights, soup
from models.gpu.common import (
    ART_SHARE,
    REPO,
    SHIPPED_WEIGHTS,
    WEIGHTS,
    GpuRunError,
    art_designs,
    fonts_here,
    random_designs,
)
from models.gpu.config import (
    CLASSIFIER_VARIANTS,
    LOCALISER_VARIANTS,
    GpuLocalisersConfig,
    GpuTrainConfig,
    default_workers,
)
from models.gpu.packing import BUILT_WHEELS, FONT_KB, LOCALISER_WHEELS, WEBP_QUALITY, WHEELS, pack
from models.gpu.render import (
    HEADS,
    JOKER_PAD,
    JOKER_SIZE,
    RenderJob,
    TileJob,
    TrainedHead,
    render_job,
    scene_seeds,
    tile_example,
    tile_job,
    trained_head,
)
from models.gpu.runs import LocVariant, run, run_localisers
from models.gpu.trainers import (
    LOC_SCALES,
    CropPool,
    Variant,
    accuracy_on,
    augment_torch,
    build_variants,
    localiser_model,
    train_classifiers,
    train_localiser,
)

__all__ = [
    "ART_SHARE",
    "BANK_FACE",
    "BANK_PROPOSALS",
    "BANK_VARIANTS_FROM",
    "BUILT_WHEELS",
    "BankJob",
    "CLASSIFIER_VARIANTS",
    "CropPool",
    "FONT_KB",
    "FaceBank",
    "GpuLocalisersConfig",
    "GpuRunError",
    "GpuTrainConfig",
    "HEADS",
    "JOKER_PAD",
    "JOKER_SIZE",
    "LOCALISER_VARIANTS",
    "LOCALISER_WHEELS",
    "LOC_SCALES",
    "LocVariant",
    "MOSAIC_FACE_H",
    "REPO",
    "RenderJob",
    "SHIPPED_WEIGHTS",
    "TileJob",
    "TrainedHead",
    "Variant",
    "WEBP_QUALITY",
    "WEIGHTS",
    "WHEELS",
    "accuracy_on",
    "art_designs",
    "augment_torch",
    "bank_job",
    "build_variants",
    "check_classifiers",
    "check_localisers",
    "default_workers",
    "export_head",
    "face_proposals",
    "faceset_arrays",
    "fonts_here",
    "interpolate_weights",
    "localiser_model",
    "pack",
    "random_designs",
    "render_job",
    "run",
    "run_localisers",
    "scene_seeds",
    "soup",
    "tile_example",
    "tile_job",
    "train_classifiers",
    "train_localiser",
    "trained_head",
]
