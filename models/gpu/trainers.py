"""The two trainers: the classifier variants on the device from the growing crop pool and the face
bank (:func:`train_classifiers`), and the localiser through ultralytics (:func:`train_localiser`,
the ``gpu localiser`` subprocess)."""

from __future__ import annotations

import os
import sys
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from models.classifier import CropSet
from models.gpu.common import WEIGHTS, GpuRunError
from models.loop import Plan
from vision.crops import CROP_PAD, CROP_SIZE

if TYPE_CHECKING:
    from models.gpu.bank import FaceBank

# --------------------------------------------------------------------------- classifier (GPU)


def augment_torch(x: Any, gen: Any) -> Any:
    """The ``strong`` jitter of :func:`models.classifier.augment`, on the device: uint8 (N, 3, S, S)
    → float in [0, 1] (brightness and offset, colour cast, 15 % grey, 30 % lost resolution, noise)."""
    import torch
    import torch.nn.functional as F

    n, dev = x.shape[0], x.device

    def u(lo: float, hi: float, *shape: int) -> Any:
        return torch.rand(*shape, generator=gen, device=dev) * (hi - lo) + lo

    out = x.float() / 255.0
    out = out * u(0.7, 1.3, n, 1, 1, 1) + u(-0.12, 0.12, n, 1, 1, 1)
    out = out * u(0.85, 1.15, n, 3, 1, 1)
    grey = torch.rand(n, generator=gen, device=dev) < 0.15
    out = torch.where(grey[:, None, None, None], out.mean(1, keepdim=True).expand_as(out), out)
    low = torch.rand(n, generator=gen, device=dev) < 0.3
    if bool(low.any()):
        size = out.shape[-1]
        small = max(4, round(size * float(u(0.45, 0.9, 1))))
        sub = F.interpolate(
            F.interpolate(out[low], size=(small, small), mode="area"), size=(size, size), mode="bilinear"
        )
        out[low] = sub
    out = out + torch.randn(out.shape, generator=gen, device=dev) * u(0.0, 0.04, n, 1, 1, 1)
    return out.clamp(0, 1)


@dataclass
class Variant:
    """One classifier trained in the run."""

    name: str
    width: float
    lr: float
    init: str = ""  # a state dict to start from ("" = from scratch)
    net: Any = field(default=None, repr=False)
    opt: Any = field(default=None, repr=False)
    steps: int = 0
    loss: float = 0.0


def _lr(frac: float, peak: float) -> float:
    """Warm-up over the first 5 % of the time, then a cosine down to 2 % of ``peak``."""
    if frac < 0.05:
        return peak * max(frac / 0.05, 0.02)
    t = min(1.0, (frac - 0.05) / 0.95)
    return peak * (0.02 + 0.98 * 0.5 * (1 + float(np.cos(np.pi * t))))


class CropPool:
    """The crops rendered so far, on the device, grown as workers deliver."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.pending: list[tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]] = []
        self.x: Any = None
        self.y: Any = None

    def add(self, x: npt.NDArray[np.uint8], y: npt.NDArray[np.int64]) -> None:
        if len(y):
            self.pending.append((x, y))

    def flush(self) -> None:
        import torch

        if not self.pending:
            return
        x = torch.from_numpy(np.concatenate([p[0] for p in self.pending])).to(self.device)
        y = torch.from_numpy(np.concatenate([p[1] for p in self.pending])).to(self.device)
        self.pending.clear()
        self.x = x if self.x is None else torch.cat([self.x, x])
        self.y = y if self.y is None else torch.cat([self.y, y])

    def __len__(self) -> int:
        return 0 if self.y is None else int(self.y.shape[0])


def build_variants(specs: list[str], device: Any, classes: int = 55, size: int = CROP_SIZE) -> list[Variant]:
    """``NAME:WIDTH:LR[:init]`` specs → variants with their nets (``classes`` outputs, ``size`` px
    crops) and optimisers (``init`` takes the shipped ``classifier.pt``, or a state dict's path;
    its shape must match)."""
    import torch

    from models.classifier import build_net
    from models.loop import crop_optimiser

    out: list[Variant] = []
    for spec in specs:
        parts = spec.split(":")
        if len(parts) not in (3, 4):
            raise GpuRunError(f"variant {spec!r}: NAME:WIDTH:LR[:init]")
        v = Variant(parts[0], float(parts[1]), float(parts[2]), parts[3] if len(parts) == 4 else "")
        torch.manual_seed(len(out))
        v.net = build_net(classes, size, width=v.width)
        if v.init:
            path = WEIGHTS / "classifier.pt" if v.init == "init" else Path(v.init)
            v.net.load_state_dict(torch.load(path, map_location="cpu"))
        v.net = v.net.to(device).to(memory_format=torch.channels_last)
        v.opt = crop_optimiser(v.net, v.lr)
        out.append(v)
    return out


def accuracy_on(
    net: Any, data: CropSet, device: Any, batch: int = 4096, labels: npt.NDArray[np.int64] | None = None
) -> float:
    """Top-1 of ``net`` on ``data`` (its classes through ``labels`` when given: the joker head's)."""
    import torch

    net.eval()
    right = 0
    y = data.y if labels is None else labels[data.y]
    with torch.no_grad():
        for i in range(0, len(data.y), batch):
            x = torch.from_numpy(data.x[i : i + batch]).to(device).float() / 255.0
            right += int((net(x).argmax(1).cpu().numpy() == y[i : i + batch]).sum())
    net.train()
    return right / max(1, len(data.y))


def train_classifiers(
    variants: list[Variant],
    pool: CropPool,
    poll: Callable[[], None],
    start: float,
    end: float,
    device: Any,
    batch: int,
    log: Callable[[str], None],
    checkpoint: Callable[[], None] = lambda: None,
    bank: Callable[[], FaceBank | None] = lambda: None,
    bank_share: float = 0.0,
    bank_art_share: float | None = None,
    bank_background: float = 0.12,
    bank_joker_share: float = 0.0,
    pad: float = CROP_PAD,
    labels: npt.NDArray[np.int64] | None = None,
) -> None:
    """Train every variant on batches drawn from ``pool`` until ``end`` (``time.time()``), calling
    ``poll`` now and then to take in new crops and ``checkpoint`` to save; the learning rate follows
    the time left. Once ``bank`` gives a :class:`FaceBank`, ``bank_share`` of each batch is cut from
    it on the device (with the window ``pad``). ``labels`` maps the 55 classes to the nets' own
    (the joker head's: :data:`vision.heads.JOKER_HEAD_LABELS`)."""
    import torch

    from models.loop import train

    shares = (bank_share, bank_art_share, bank_background, bank_joker_share)
    plan = _ToDeadline(pool, poll, start, end, device, batch, log, checkpoint, bank, shares, pad, labels)
    if torch.device(device).type == "cuda":
        plan.autocast = lambda: torch.autocast("cuda", dtype=torch.bfloat16)
    train(variants, plan)


class _ToDeadline(Plan):
    """:func:`train_classifiers`' plan: rounds until ``end``; before a round, new crops taken in
    every 5 s and the progress read off the clock; after one, a checkpoint every 90 s and a log
    line every 20 s. ``shares`` are the face bank's: of the batch, and within it of art, bare
    table and jokers (see :meth:`FaceBank.crops`)."""

    def __init__(
        self,
        pool: CropPool,
        poll: Callable[[], None],
        start: float,
        end: float,
        device: Any,
        batch: int,
        log: Callable[[str], None],
        checkpoint: Callable[[], None],
        bank: Callable[[], FaceBank | None],
        shares: tuple[float, float | None, float, float],
        pad: float,
        labels: npt.NDArray[np.int64] | None,
    ) -> None:
        import torch

        self.pool, self.poll, self.start, self.end, self.device = pool, poll, start, end, device
        self.size, self.log, self.checkpoint, self.bank, self.pad = batch, log, checkpoint, bank, pad
        self.shares = shares
        self.gen = torch.Generator(device=device)
        self.gen.manual_seed(0)
        self.to_net = None if labels is None else torch.as_tensor(labels).to(device)
        self.last_poll = self.last_log = self.last_save = time.time()
        self.now = self.frac = 0.0
        self.n = self.made = 0
        self.faces: FaceBank | None = None

    def begin_round(self, trainees: Sequence[Any]) -> bool:
        if time.time() >= self.end:
            return False
        self.now = now = time.time()
        if now - self.last_poll > 5:
            self.poll()
            self.pool.flush()
            self.last_poll = now
        self.n = len(self.pool)
        self.frac = (now - self.start) / max(1e-6, self.end - self.start)
        share = self.shares[0]
        self.faces = self.bank() if share > 0 else None
        self.made = int(round(self.size * share)) if self.faces is not None and len(self.faces) else 0
        return True

    def lr(self, trainee: Any) -> float:
        return _lr(self.frac, trainee.lr)

    def batch(self, trainee: Any) -> tuple[Any, Any]:
        import torch

        idx = torch.randint(0, self.n, (self.size - self.made,), generator=self.gen, device=self.device)
        xb, yb = self.pool.x[idx], self.pool.y[idx]
        if self.made:
            _share, art, background, joker = self.shares
            xs, ys = self.faces.crops(  # type: ignore[union-attr]
                self.made,
                self.gen,
                size=int(xb.shape[-1]),
                background_share=background,
                art_share=art,
                joker_share=joker,
                pad=self.pad,
            )
            xb, yb = torch.cat([xb, xs]), torch.cat([yb, ys])
        if self.to_net is not None:
            yb = self.to_net[yb]
        return augment_torch(xb, self.gen).contiguous(memory_format=torch.channels_last), yb

    def stepped(self, trainee: Any, loss: Any) -> None:
        if trainee.steps % 50 == 0:
            trainee.loss = float(loss.item())

    def end_round(self, trainees: Sequence[Any]) -> None:
        now = self.now
        if now - self.last_save > 90:  # a run cut short still leaves weights
            self.checkpoint()
            self.last_save = now
        if now - self.last_log > 20:
            self.log(
                f"[{now - self.start:5.0f}s] pool {self.n} crops; "
                + "; ".join(f"{v.name} step {v.steps} loss {v.loss:.3f}" for v in trainees)
            )
            self.last_log = now


# --------------------------------------------------------------------------- localiser (subprocess)


def _stub_polars() -> None:
    """ultralytics reads its results CSV with polars inside a ``try``; without polars (not on the
    GPU machine) that read fails first, so stand in a module whose ``read_csv`` raises."""
    try:
        import polars  # noqa: F401
    except ImportError:
        stub = types.ModuleType("polars")

        def read_csv(*_a: object, **_k: object) -> None:
            raise RuntimeError("polars is not installed")

        stub.read_csv = read_csv  # type: ignore[attr-defined]
        sys.modules["polars"] = stub


#: Localiser architectures by name (``gpu localisers --variant NAME:ARCH:LR``): YOLO11 at these
#: (depth, width) scales, built from the shipped architecture file with one class; ``shipped``
#: starts from the shipped ``best.pt`` instead.
LOC_SCALES = {"p": (0.50, 0.125), "n": (0.50, 0.25), "s": (0.50, 0.50)}


def localiser_model(arch: str, folder: Path) -> str:
    """What ultralytics builds the localiser from: the shipped weights (``shipped``), or a
    ``yolo11<letter>-cards.yaml`` written into ``folder`` at a scale of :data:`LOC_SCALES` (the
    letter in the file name picks the scale, as ultralytics reads it)."""
    if arch == "shipped":
        return str(WEIGHTS / "best.pt")
    if arch not in LOC_SCALES:
        raise GpuRunError(f"localiser architecture {arch!r}: shipped or one of {sorted(LOC_SCALES)}")
    depth, width = LOC_SCALES[arch]
    text = (WEIGHTS / "yolo11p-cards.yaml").read_text()
    text = text.replace("p: [0.50, 0.125, 1024]", f"{arch}: [{depth:.2f}, {width}, 1024]")
    if f"{arch}: [" not in text:
        raise GpuRunError("the shipped architecture file no longer holds the pico scale line")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"yolo11{arch}-cards.yaml"
    path.write_text(text)
    return str(path)


def train_localiser(
    data_dir: Path,
    project: Path,
    minutes: float,
    device: str,
    batch: int,
    workers: int,
    arch: str = "shipped",
    lr0: float = 0.001,
    name: str = "loc",
    cache: str | bool = False,
) -> Path:
    """Train the one-class localiser on ``data_dir`` for ``minutes`` (ultralytics ``time``), from
    the shipped weights or from scratch at a scale (:func:`localiser_model`); returns the run's
    ``last.pt``."""
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_AUTOINSTALL"] = "False"
    _stub_polars()
    from ultralytics.models import YOLO

    from models.synth.dataset import write_data_yaml
    from models.train import TrainConfig

    yaml = write_data_yaml(data_dir)
    model = localiser_model(arch, project / f"{name}_arch")
    config = TrainConfig(
        data=yaml,
        model=model,
        imgsz=640,
        epochs=100,
        batch=batch,
        workers=workers,
        project=project,
        name=name,
        cache=cache,
        single_cls=True,
        scale=0.5,
        lr0=lr0,
        warmup_epochs=0.5 if arch == "shipped" else 1.0,
    )
    kw = config.train_kwargs()
    kw.update(device=device, amp=False, time=minutes / 60, val=False, save_period=-1, deterministic=False)
    YOLO(config.model, task="detect").train(**kw)
    return project / name / "weights" / "last.pt"
