"""Training, resuming and fine-tuning the corner-index detector with ultralytics (CPU, from scratch).

No pretrained weights can be downloaded here, so the network is built from a model YAML
(``yolo11n.yaml``) and trained on the synthetic renderer's data, preferably cut into tiles
(:mod:`models.tiles`) so corner indices are as large as the tiled inference sees them.

Checkpoints: ``<project>/<name>/weights/{last,best,epochN}.pt`` every epoch (``save_period=1``);
:func:`resume` continues an interrupted run from ``last.pt`` with its original settings.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

#: The default network: YOLO11 at half YOLO11n's width (0.83 M parameters), see the YAML's header.
PICO_YAML = Path(__file__).resolve().parent / "weights" / "yolo11p-cards.yaml"


class TrainConfigError(ValueError):
    """Bad training settings or missing inputs."""


@dataclass(frozen=True)
class TrainConfig:
    """Settings passed to ``YOLO.train`` (CPU defaults chosen for a 2-core machine)."""

    data: Path
    model: str = str(PICO_YAML)
    imgsz: int = 320
    epochs: int = 30
    batch: int = 32
    workers: int = 1
    project: Path = Path("runs/detect")
    name: str = "cards"
    cache: str | bool = "ram"
    patience: int = 100
    optimizer: str = "AdamW"  # "auto" would pick a tiny LR for short runs with 54 classes
    lr0: float = 0.002
    warmup_epochs: float = 1.0
    freeze: int | None = None
    # Augmentation: no left-right/up-down flips (a mirrored index is not a card); the 180° turn of the
    # second index is in the data itself. Small rotations and scale changes only; no mosaic.
    fliplr: float = 0.0
    flipud: float = 0.0
    degrees: float = 10.0
    scale: float = 0.3
    mosaic: float = 0.0  # training tiles are already crops at index scale
    close_mosaic: int = 0
    seed: int = 0
    # One class, "index": YOLO only localises corner indices and the classifier
    # (vision.classifier) names them. Much faster to learn from scratch than 54 classes.
    single_cls: bool = False

    def __post_init__(self) -> None:
        if not Path(self.data).is_file():
            raise TrainConfigError(f"data.yaml not found: {self.data}")
        if self.epochs < 1 or self.batch < 1 or self.imgsz < 32:
            raise TrainConfigError("epochs and batch must be >= 1, imgsz >= 32")

    def train_kwargs(self) -> dict[str, object]:
        """Keyword arguments of ``YOLO.train``."""
        kw = asdict(self)
        kw.pop("model")
        if kw["freeze"] is None:
            kw.pop("freeze")
        kw.update(
            data=str(self.data),
            project=str(Path(self.project).resolve()),
            device="cpu",
            amp=False,
            plots=False,
            save_period=1,
            exist_ok=True,
            pretrained=str(self.model).endswith(".pt"),
            verbose=False,
        )
        return kw


def _offline() -> None:
    os.environ["YOLO_OFFLINE"] = "1"


def run_dir(config: TrainConfig) -> Path:
    """Where the run writes ``weights/``."""
    return Path(config.project).resolve() / config.name


def train(config: TrainConfig) -> Path:
    """Train from ``config.model`` (a YAML from scratch, or a ``.pt`` to start from); returns best.pt."""
    _offline()
    from ultralytics.models import YOLO

    model = YOLO(config.model, task="detect")
    model.train(**config.train_kwargs())
    return run_dir(config) / "weights" / "best.pt"


def resume(last_checkpoint: Path) -> Path:
    """Continue an interrupted run from its ``last.pt`` (same settings, same run folder)."""
    _offline()
    if not Path(last_checkpoint).is_file():
        raise TrainConfigError(f"checkpoint not found: {last_checkpoint}")
    from ultralytics.models import YOLO

    model = YOLO(str(last_checkpoint), task="detect")
    model.train(resume=True)
    return Path(last_checkpoint).parent / "best.pt"


def finetune(
    data: Path,
    weights: Path,
    epochs: int = 10,
    imgsz: int = 320,
    name: str = "finetune",
    project: Path = Path("runs/detect"),
    freeze: int = 10,
    lr0: float = 0.002,
) -> Path:
    """Fine-tune shipped weights on a new deck's data (deck enrollment): backbone frozen, low LR.

    A one-class localiser (the shipped detector) stays one-class (``single_cls``) even though the
    deck's labels name 54 cards; the new deck's names are learnt by the index classifier
    (``tractorcam heads classifier ... --init models/weights/classifier.pt``).
    """
    if not Path(weights).is_file():
        raise TrainConfigError(f"weights not found: {weights}")
    config = TrainConfig(
        data=Path(data),
        model=str(weights),
        imgsz=imgsz,
        epochs=epochs,
        name=name,
        project=project,
        freeze=freeze,
        lr0=lr0,
        single_cls=checkpoint_classes(weights) == 1,
    )
    return train(config)


def checkpoint_classes(weights: Path) -> int:
    """How many classes an ultralytics ``.pt`` checkpoint detects."""
    _offline()
    from ultralytics.models import YOLO

    return len(YOLO(str(weights), task="detect").names)
