"""The two runs on the GPU machine, each within one wall-clock budget: ``gpu train`` (:func:`run`:
render on every core, train the classifier variants on the device, the localiser in a subprocess)
and ``gpu localisers`` (:func:`run_localisers`: render first, then localiser variants side by side)."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from models.classifier import CropSet
from models.gpu.bank import BANK_VARIANTS_FROM, BankJob, FaceBank, bank_job
from models.gpu.common import REPO, GpuRunError, art_designs, fonts_here, random_designs
from models.gpu.config import GpuLocalisersConfig, GpuTrainConfig
from models.gpu.render import (
    RenderJob,
    TileJob,
    _worker_init,
    render_job,
    scene_seeds,
    tile_job,
    trained_head,
)
from models.gpu.trainers import LOC_SCALES, CropPool, accuracy_on, build_variants, train_classifiers
from vision.classifier import JOKER_IDS


def _run_log(out: Path, t0: float | None = None) -> Callable[[str], None]:
    """A run's log: each line printed and appended to ``out/log.txt``, stamped with the clock (and
    the seconds since ``t0`` when given)."""
    logf = (out / "log.txt").open("a")

    def log(msg: str) -> None:
        since = "" if t0 is None else f" [{time.time() - t0:5.0f}s]"
        line = f"{time.strftime('%H:%M:%S')}{since} {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    return log


def _start_localiser(
    data: Path, project: str, minutes: float, device: str, batch: int, workers: int, log: Path, *extra: str
) -> subprocess.Popen[bytes]:
    """The ``gpu localiser`` subprocess (:func:`train_localiser`), its output in ``log``."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tractorcam_cli",
            "gpu",
            "localiser",
            str(data),
            project,
            "--minutes",
            f"{minutes:.3f}",
            "--device",
            device,
            "--batch",
            str(batch),
            "--workers",
            str(workers),
            *extra,
        ],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        cwd=REPO,
    )


def _finish_localiser(
    proc: subprocess.Popen[bytes], deadline: float, weights: Path, dest: Path
) -> str | None:
    """Wait for a localiser until ``deadline`` (then interrupt it, then kill it), and copy its
    ``last.pt`` (else ``best.pt``) from ``weights`` to ``dest``; the name copied, or None."""
    try:
        proc.wait(timeout=max(1.0, deadline - time.time()))
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
    found = [p for p in (weights / "last.pt", weights / "best.pt") if p.is_file()]
    if found:
        shutil.copy(found[0], dest)
    return found[0].name if found else None


@dataclass(frozen=True)
class LocVariant:
    """One localiser of a ``gpu localisers`` run: ``NAME:ARCH:LR``."""

    name: str
    arch: str
    lr: float

    @classmethod
    def parse(cls, spec: str) -> LocVariant:
        """``NAME:ARCH:LR``, ARCH ``shipped`` or a scale of :data:`LOC_SCALES`.

        >>> LocVariant.parse("n:n:0.002")
        LocVariant(name='n', arch='n', lr=0.002)
        """
        parts = spec.split(":")
        if len(parts) != 3 or not parts[0].isidentifier():
            raise GpuRunError(f"localiser variant {spec!r}: NAME:ARCH:LR")
        if parts[1] != "shipped" and parts[1] not in LOC_SCALES:
            raise GpuRunError(f"localiser variant {spec!r}: ARCH is shipped or one of {sorted(LOC_SCALES)}")
        try:
            lr = float(parts[2])
        except ValueError:
            raise GpuRunError(f"localiser variant {spec!r}: LR is a number") from None
        return cls(parts[0], parts[1], lr)


def run_localisers(args: GpuLocalisersConfig) -> dict[str, Any]:
    """``gpu localisers``: every core renders detection scenes first (``args.render`` seconds; a share
    ``args.tiles`` of the jobs make face tiles instead, :func:`tile_job`), then
    each localiser variant trains on them in its own ultralytics subprocess with an equal share of
    the cores, until the budget's end less ``args.tail``. Writes ``loc_<name>.pt``,
    ``localiser_<name>.txt``, ``metrics.json`` and ``log.txt`` into ``args.out``."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    end = t0 + args.budget
    log = _run_log(out, t0)
    variants = [LocVariant.parse(v) for v in args.variant]
    if not variants:
        raise GpuRunError("no localiser variant given (--variant NAME:ARCH:LR)")
    art, rand = art_designs(), random_designs()
    if not art:
        raise GpuRunError("no training art deck here: run `tractorcam gpu pack` and set TRACTORCAM_CACHE")
    data = Path(args.loc_data)
    for split in ("train", "val"):
        for k in ("images", "labels"):
            (data / k / split).mkdir(parents=True, exist_ok=True)
    log(f"{len(art)} art decks, {len(rand)} random decks; {args.workers} workers render for {args.render}s")
    # 1. every core renders scenes (no classifier crops: a scene is only an image and its labels)
    scenes = tiles = 0
    next_scene = 0
    tiles_rng = np.random.default_rng([args.seed, 640])
    stop = t0 + args.render
    with ProcessPoolExecutor(
        args.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init
    ) as ex:
        futures: set[Future[Any]] = set()
        while time.time() < stop or futures:
            while time.time() < stop and len(futures) < args.workers * 2:
                split = "val" if next_scene % (50 * args.chunk) == 0 else "train"
                seeds = scene_seeds(args.seed, next_scene, args.chunk)
                next_scene += args.chunk
                if tiles_rng.random() < args.tiles:
                    decks: tuple[str, ...] = (art[int(tiles_rng.integers(len(art)))],)
                    if rand:
                        decks += (rand[int(tiles_rng.integers(len(rand)))],)
                    tile = TileJob(seeds[0], decks, args.chunk, str(data), split)
                    futures.add(ex.submit(tile_job, tile))
                    continue
                job = RenderJob(
                    seeds,
                    art,
                    rand,
                    jitter=0,
                    negatives=0,
                    mine_share=0.0,
                    loc_dir=str(data),
                    loc_split=split,
                    art_share=args.art_share,
                )
                futures.add(ex.submit(render_job, job))
            done, futures = wait(futures, timeout=1.0, return_when=FIRST_COMPLETED)
            for f in done:
                made = f.result()
                if isinstance(made, int):
                    tiles += made
                else:
                    scenes += made[2]
    n_train = len(list((data / "images" / "train").glob("*.jpg")))
    n_val = len(list((data / "images" / "val").glob("*.jpg")))
    log(f"{scenes} scenes and {tiles} face tiles rendered ({n_train} train, {n_val} val)")
    # 2. the variants train side by side, each with its share of the cores
    minutes = max(0.5, (end - args.tail - time.time()) / 60)
    workers = max(1, args.workers // len(variants))
    procs: dict[str, subprocess.Popen[bytes]] = {}
    for v in variants:
        log(f"localiser {v.name} ({v.arch}, lr {v.lr}) trains for {minutes:.2f} min, {workers} loaders")
        procs[v.name] = _start_localiser(
            data,
            str(args.loc_project),
            minutes,
            args.device,
            args.batch,
            workers,
            out / f"localiser_{v.name}.txt",
            *("--arch", v.arch, "--lr", str(v.lr), "--name", v.name, "--cache", args.cache),
        )
    metrics: dict[str, Any] = {
        "budget_s": args.budget,
        "scenes": scenes,
        "face_tiles": tiles,
        "train_scenes": n_train,
        "val_scenes": n_val,
        "variants": {},
        "args": {f.name: str(getattr(args, f.name)) for f in fields(args)},
    }
    # 3. wait, stop what overruns, keep each one's weights
    for v in variants:
        proc = procs[v.name]
        kept = _finish_localiser(
            proc, end - 8, Path(args.loc_project) / v.name / "weights", out / f"loc_{v.name}.pt"
        )
        metrics["variants"][v.name] = {
            "arch": v.arch,
            "lr": v.lr,
            "rc": proc.returncode,
            "weights": kept,
        }
        log(f"localiser {v.name}: rc {proc.returncode}, weights {kept}")
    metrics["wall_s"] = round(time.time() - t0, 1)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1))
    log(json.dumps({k: v for k, v in metrics.items() if k != "args"}))
    return metrics


# --------------------------------------------------------------------------- the run


def run(args: GpuTrainConfig) -> dict[str, Any]:
    """The whole run (``gpu train``) with that command's options (:class:`GpuTrainConfig`)."""
    import torch

    head = trained_head(args.head)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    end = t0 + args.budget
    log = _run_log(out)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    art, rand = art_designs(), random_designs()
    if not art:
        raise GpuRunError("no training art deck here: run `tractorcam gpu pack` and set TRACTORCAM_CACHE")
    log(
        f"device {device} ({torch.cuda.get_device_name(0) if device == 'cuda' else 'cpu'}); "
        f"{len(art)} art decks, {len(rand)} random decks; budget {args.budget}s, {args.workers} workers"
    )
    loc_dir = Path(args.loc_data)
    for split in ("train", "val"):
        for k in ("images", "labels"):
            (loc_dir / k / split).mkdir(parents=True, exist_ok=True)

    from models.synth.designs import HELDOUT_VAL_PROC

    labels, pad, size = head.labels, head.pad, head.size
    # selection crops: unseen random decks (the selection split's designs, never the test's)
    val_seeds = scene_seeds(args.seed + 1, 0, args.val_scenes)
    val_jobs = [
        RenderJob(
            val_seeds[i::4],
            fonts_here(d.name for d in HELDOUT_VAL_PROC),
            (),
            jitter=1,
            negatives=1,
            mine_share=0.0,
            pad=pad,
            size=size,
        )
        for i in range(4)
    ]
    pool = CropPool(device)
    stats = {"scenes": 0, "loc_scenes": 0, "crops": 0}
    ex = ProcessPoolExecutor(
        args.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init
    )
    futures: set[Future[Any]] = set()
    val_futures = [ex.submit(render_job, job) for job in val_jobs]
    bank_futures: list[Future[Any]] = []
    if args.bank_share > 0:
        bank_variants = [
            int(n[4:])
            for n in fonts_here(
                f"proc{v}" for v in range(BANK_VARIANTS_FROM, BANK_VARIANTS_FROM + args.bank_decks)
            )
        ]
        proposals = args.bank_proposals
        bank_futures.append(ex.submit(bank_job, BankJob(names=art, proposals=proposals)))
        bank_futures += [
            ex.submit(bank_job, BankJob(variants=tuple(bank_variants[i : i + 8]), proposals=proposals))
            for i in range(0, len(bank_variants), 8)
        ]
    face_bank: list[FaceBank] = []

    def current_bank() -> FaceBank | None:
        """The bank once every deck is drawn (built on the device once)."""
        if not face_bank and bank_futures and all(f.done() for f in bank_futures):
            parts = [f.result() for f in bank_futures]
            faces = np.concatenate([p[0] for p in parts])
            props = np.concatenate([p[3] for p in parts])
            face_bank.append(
                FaceBank(
                    faces,
                    np.concatenate([p[1] for p in parts]),
                    np.concatenate([p[2] for p in parts]),
                    device,
                    art=len(parts[0][0]),  # the art decks' job comes first
                    proposals=props,
                )
            )
            stats["bank_faces_proposed"] = int((~np.isnan(props[:, 0, 0])).sum())
            log(
                f"[{time.time() - t0:5.0f}s] face bank: {len(faces) // 54} decks, {len(face_bank[0])} faces,"
                f" {stats['bank_faces_proposed']} with localiser proposals off the index"
            )
        return face_bank[0] if face_bank else None

    next_scene = 0
    loc_until = t0 + args.loc_render
    loc_proc: subprocess.Popen[bytes] | None = None

    def submit() -> None:
        nonlocal next_scene
        limit = args.workers * 2 if loc_proc is None else max(2, args.workers - args.loc_workers)
        while len(futures) < limit and time.time() < end - 30:
            to_loc = time.time() < loc_until and args.localiser
            split = "val" if to_loc and next_scene % 50 == 0 else "train"
            job = RenderJob(
                scene_seeds(args.seed, next_scene, args.chunk),
                art,
                rand,
                loc_dir=str(loc_dir) if to_loc else "",
                loc_split=split,
                mine_share=args.mine_share,
                mined_background=args.mined_background,
                art_share=args.art_share,
                tile_share=args.tile_share,
                pad=pad,
                size=size,
            )
            next_scene += args.chunk
            futures.add(ex.submit(render_job, job))

    def poll(block: float = 0.0) -> None:
        done, _ = wait(futures, timeout=block, return_when=FIRST_COMPLETED) if futures else (set(), None)
        for f in done:
            futures.discard(f)
            x, y, n = f.result()
            pool.add(x, y)
            stats["scenes"] += n
            stats["crops"] += len(y)
        submit()

    submit()
    # 1. the first scenes: enough crops to start on, the localiser's data
    while time.time() < t0 + args.warmup or not pool.pending:
        poll(1.0)
    pool.flush()
    log(f"[{time.time() - t0:5.0f}s] {stats['scenes']} scenes, {len(pool)} crops; classifiers start")
    variants = build_variants(args.variant, device, head.classes, size)
    val_parts = [f.result() for f in val_futures]
    val = CropSet(np.concatenate([p[0] for p in val_parts]), np.concatenate([p[1] for p in val_parts]))

    def poll_and_launch() -> None:
        nonlocal loc_proc
        poll()
        if loc_proc is None and args.localiser and time.time() >= loc_until:
            stats["loc_scenes"] = len(list((loc_dir / "images" / "train").glob("*.jpg")))
            minutes = max(0.5, (end - time.time() - args.loc_tail) / 60)
            log(
                f"[{time.time() - t0:5.0f}s] localiser starts on {stats['loc_scenes']} scenes for {minutes:.1f} min"
            )
            loc_proc = _start_localiser(
                loc_dir,
                str(args.loc_project),
                minutes,
                "0" if device == "cuda" else "cpu",
                args.loc_batch,
                args.loc_workers,
                out / "localiser.txt",
            )

    # 2. and 3. classifiers on the growing pool; the localiser once its scenes are in
    def save_all() -> None:
        for v in variants:
            state = {k: t.detach().float().cpu() for k, t in v.net.state_dict().items()}
            torch.save(state, out / f"cls_{v.name}.pt")

    train_classifiers(
        variants,
        pool,
        poll_and_launch,
        t0,
        end - args.tail,
        device,
        args.batch,
        log,
        save_all,
        current_bank,
        args.bank_share,
        args.bank_art_share,
        args.bank_background,
        args.bank_joker_share,
        pad,
        labels,
    )
    for f in futures:
        f.cancel()
    ex.shutdown(wait=False, cancel_futures=True)
    # 4. results
    metrics: dict[str, Any] = {
        "device": device,
        "budget_s": args.budget,
        **stats,
        "pool": len(pool),
        "pool_jokers": 0 if pool.y is None else int(np.isin(pool.y.cpu().numpy(), JOKER_IDS).sum()),
        "val_crops": int(len(val.y)),
        "bank_faces": len(face_bank[0]) if face_bank else 0,
        "head": {"name": args.head, "classes": head.classes, "pad": pad, "size": size},
        "variants": {},
        "args": {f.name: str(getattr(args, f.name)) for f in fields(args)},
    }
    save_all()
    for v in variants:
        acc = accuracy_on(v.net, val, device, labels=labels)
        metrics["variants"][v.name] = {
            "width": v.width,
            "lr": v.lr,
            "init": v.init,
            "steps": v.steps,
            "loss": v.loss,
            "heldout_val_proc_crop_acc": acc,
        }
        if labels is not None:  # the joker head: how many of the jokers' crops it names
            jokers = labels[val.y] > 0
            acc_j = accuracy_on(v.net, CropSet(val.x[jokers], val.y[jokers]), device, labels=labels)
            metrics["variants"][v.name]["heldout_val_proc_joker_acc"] = acc_j
            log(f"{v.name}: jokers' crops {acc_j:.4f} of {int(jokers.sum())}")
        log(f"{v.name}: {v.steps} steps, selection crop accuracy {acc:.4f}")
    if loc_proc is not None:
        metrics["localiser_weights"] = _finish_localiser(
            loc_proc, t0 + args.budget - 5, Path(args.loc_project) / "loc" / "weights", out / "loc.pt"
        )
        metrics["localiser_rc"] = loc_proc.returncode
        log(f"localiser rc {loc_proc.returncode}, weights {metrics['localiser_weights']}")
    metrics["wall_s"] = round(time.time() - t0, 1)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1))
    log(json.dumps({k: v for k, v in metrics.items() if k != "args"}))
    return metrics
