"""The face bank: every face of the run's decks drawn by the workers (:func:`bank_job`, with the
shipped localiser's proposals off the index, :func:`face_proposals`), kept on the device, and
crops cut from it there like a scene's crops of corner indices (:class:`FaceBank`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from models.gpu.render import _detector
from vision.classifier import BACKGROUND
from vision.crops import CROP_PAD, CROP_SIZE

# --------------------------------------------------------------------------- crops made on the GPU

#: Face size in the bank (height, width): every deck's faces resized to it (cards are about 1.5 : 1).
BANK_FACE = (240, 160)
#: Randomised deck variants drawn for the bank only: far from every documented, selection and
#: held-out variant (proc0–proc5, proc100–proc639).
BANK_VARIANTS_FROM = 10_000


@dataclass(frozen=True)
class BankJob:
    """Decks whose faces a worker draws for the bank: art decks by name, randomised decks by variant."""

    names: tuple[str, ...] = ()
    variants: tuple[int, ...] = ()
    proposals: bool = True  # also find where the localiser proposes off the index (face_proposals)


def faceset_arrays(fs: Any) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """A face set as (54, 4, H, W) BGRA faces at :data:`BANK_FACE`, (54, 4) top-left index boxes
    normalised to the face, and which cards the deck shows face up."""
    import cv2

    from vision.labels import CARD_CLASSES

    h, w = BANK_FACE
    fw, fh = fs.size
    faces = np.zeros((54, 4, h, w), np.uint8)
    boxes = np.zeros((54, 4), np.float32)
    shown = set(fs.cards())
    valid = np.array([c in shown for c in CARD_CLASSES])
    for k, card in enumerate(CARD_CLASSES):
        face = fs.faces[card]
        if face.shape[2] == 3:
            face = np.dstack([face, np.full(face.shape[:2], 255, np.uint8)])
        faces[k] = cv2.resize(face, (w, h), interpolation=cv2.INTER_AREA).transpose(2, 0, 1)
        x1, y1, x2, y2 = fs.index_boxes(card)["tl"]
        boxes[k] = (x1 / fw, y1 / fh, x2 / fw, y2 / fh)
    return faces, boxes, valid


#: Background boxes the localiser proposes on one bank face, at most (the best scoring kept).
BANK_PROPOSALS = 6
#: Face height in the mosaic the localiser reads (pixels of a 640-px image): a card's size in a scene.
MOSAIC_FACE_H = 100


def face_proposals(
    faces: npt.NDArray[np.uint8],
    boxes: npt.NDArray[np.float32],
    detector: Any,
    k: int = BANK_PROPOSALS,
    face_h: int = MOSAIC_FACE_H,
    min_conf: float = 0.05,
) -> npt.NDArray[np.float32]:
    """Where the localiser proposes a box on each face that is on neither corner index: the hard
    background of a face (pips, court art, a lone suit sign). ``faces`` (N, 4, H, W) BGRA and their
    normalised top-left index ``boxes`` (N, 4); the faces are laid out as a mosaic on a grey table,
    ``detector`` (a :class:`vision.tiling.TiledDetector`) reads it, and each face keeps its ``k``
    best boxes scoring ≥ ``min_conf`` whose centre is on the face and off both indices, that hold
    neither index's centre and are at most 2.5 times an index's size (not a whole card). Returns (N, k, 4) boxes normalised
    to the face, NaN where a face has fewer."""
    import cv2

    n, _, h, w = faces.shape
    fh, fw = face_h, int(round(face_h * w / h))
    gap = 6
    cols = max(1, 640 // (fw + gap))
    rows = -(-n // cols)
    canvas = np.full((rows * (fh + gap) + gap, cols * (fw + gap) + gap, 3), 96, np.uint8)
    out = np.full((n, k, 4), np.nan, np.float32)
    origin = np.zeros((n, 2), np.float32)
    for i in range(n):
        r, c = divmod(i, cols)
        y0, x0 = gap + r * (fh + gap), gap + c * (fw + gap)
        face = cv2.resize(faces[i].transpose(1, 2, 0), (fw, fh), interpolation=cv2.INTER_AREA)
        a = face[:, :, 3:].astype(np.float32) / 255.0
        region = canvas[y0 : y0 + fh, x0 : x0 + fw]
        canvas[y0 : y0 + fh, x0 : x0 + fw] = (face[:, :, :3] * a + region * (1 - a)).astype(np.uint8)
        origin[i] = (x0, y0)
    det = detector.detect(canvas).with_nms(0.5, class_agnostic=True)
    det = det[det.confidence >= min_conf]
    if len(det) == 0:
        return out
    order = np.argsort(-det.confidence)
    xyxy = det.xyxy[order]
    cx, cy = (xyxy[:, 0] + xyxy[:, 2]) / 2, (xyxy[:, 1] + xyxy[:, 3]) / 2
    filled = np.zeros(n, np.int64)
    for j in range(len(xyxy)):
        c, r = int((cx[j] - gap / 2) // (fw + gap)), int((cy[j] - gap / 2) // (fh + gap))
        i = r * cols + c
        if not (0 <= c < cols and 0 <= i < n) or filled[i] >= k:
            continue
        x0, y0 = origin[i]
        u = (xyxy[j] - [x0, y0, x0, y0]) / np.array([fw, fh, fw, fh], np.float32)
        mx, my = (u[0] + u[2]) / 2, (u[1] + u[3]) / 2
        if not (0 < mx < 1 and 0 < my < 1):
            continue
        tl = boxes[i]
        br = 1 - tl[[2, 3, 0, 1]]
        grow = (
            0.5
            * np.array([-1, -1, 1, 1], np.float32)
            * np.array([tl[2] - tl[0], tl[3] - tl[1]] * 2, np.float32)
        )
        on_index = any(
            b[0] + grow[0] <= mx <= b[2] + grow[2] and b[1] + grow[1] <= my <= b[3] + grow[3]
            for b in (tl, br)
        )
        holds_index = any(
            u[0] <= (b[0] + b[2]) / 2 <= u[2] and u[1] <= (b[1] + b[3]) / 2 <= u[3] for b in (tl, br)
        )
        too_big = u[2] - u[0] > 2.5 * (tl[2] - tl[0]) or u[3] - u[1] > 2.5 * (tl[3] - tl[1])
        if on_index or holds_index or too_big:  # a box on an index, or a whole card: not background
            continue
        out[i, filled[i]] = np.clip(u, 0, 1)
        filled[i] += 1
    return out


def bank_job(
    job: BankJob,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.float32]]:
    """The faces, index boxes, face-up cards and localiser proposals off the index
    (:func:`face_proposals`, unless ``job.proposals`` is False: all NaN) of a few decks, stacked
    (decks × 54 first)."""
    from models.synth.designs import procedural_design
    from models.synth.faces import build_faces, load_faces

    parts = [faceset_arrays(load_faces(n)) for n in job.names]
    for v in job.variants:
        try:
            parts.append(faceset_arrays(build_faces(procedural_design(v))))
        except RuntimeError:  # a deck whose corner index the renderer cannot locate: left out
            continue
    if not parts:
        h, w = BANK_FACE
        return (
            np.zeros((0, 4, h, w), np.uint8),
            np.zeros((0, 4), np.float32),
            np.zeros(0, bool),
            np.zeros((0, BANK_PROPOSALS, 4), np.float32),
        )
    faces, boxes, valid = (np.concatenate([p[i] for p in parts]) for i in range(3))
    if job.proposals:
        props = np.concatenate(
            [
                face_proposals(faces[i : i + 54], boxes[i : i + 54], _detector())
                for i in range(0, len(faces), 54)
            ]
        )
    else:
        props = np.full((len(faces), BANK_PROPOSALS, 4), np.nan, np.float32)
    return faces, boxes, valid, props


class FaceBank:
    """Every face of the run's decks on the device, and crops cut from them like a scene's crops of
    corner indices: each face turned to any angle, its index box jittered like a localiser's, the
    square crop around it (:data:`vision.classifier.CROP_PAD`) over a random table, sometimes half
    covered by a neighbouring card as in a fan; a share of crops lie on the face away from the index
    (pips, court art) and are background."""

    def __init__(
        self, faces: Any, boxes: Any, valid: Any, device: Any, art: int = 0, proposals: Any = None
    ) -> None:
        """``art``: the first ``art`` faces are the art decks' (``crops(art_share=)`` weights them).
        ``proposals`` (F, K, 4, NaN-padded; :func:`face_proposals`): where the localiser proposes on
        each face off its index; background crops are cut there where a face has any."""
        import torch

        self.faces = torch.as_tensor(faces).to(device)  # (F, 4, H, W) uint8
        self.boxes = torch.as_tensor(boxes).to(device)  # (F, 4) normalised tl boxes
        if proposals is None:
            proposals = np.full((len(valid), BANK_PROPOSALS, 4), np.nan, np.float32)
        self.proposals = torch.as_tensor(np.asarray(proposals, np.float32)).to(device)
        self.n_proposals = (~self.proposals[:, :, 0].isnan()).sum(1)  # (F,)
        self.ids = torch.arange(len(valid), device=device)[torch.as_tensor(valid).to(device)]
        self.art_ids = self.ids[self.ids < art]
        self.rand_ids = self.ids[self.ids >= art]
        self.art = art
        joker = self.ids % 54 >= 52
        self.art_jokers = self.ids[joker & (self.ids < art)]
        self.rand_jokers = self.ids[joker & (self.ids >= art)]
        self.device = device

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def _cut(self, idx: Any, centre: Any, side: Any, angle: Any, size: int) -> Any:
        """Crops (N, 4, size, size) float of faces ``idx``: squares of ``side`` (face heights) about
        ``centre`` (normalised x, y), turned by ``angle``; outside the face alpha is 0."""
        import torch
        import torch.nn.functional as F

        _, _, h, w = self.faces.shape
        cos, sin = torch.cos(angle), torch.sin(angle)
        sx, sy = 2 * side * h / w, 2 * side  # the half side (face heights) in grid units (2 per face side)
        theta = torch.stack(
            [
                torch.stack([sx * cos, -sx * sin, 2 * centre[:, 0] - 1], 1),
                torch.stack([sy * sin, sy * cos, 2 * centre[:, 1] - 1], 1),
            ],
            1,
        )
        grid = F.affine_grid(theta, [len(idx), 4, size, size], align_corners=False)
        return F.grid_sample(self.faces[idx].float() / 255.0, grid, mode="bilinear", align_corners=False)

    def crops(
        self,
        n: int,
        gen: Any,
        size: int = CROP_SIZE,
        background_share: float = 0.12,
        art_share: float | None = None,
        joker_share: float = 0.0,
        pad: float = CROP_PAD,
    ) -> tuple[Any, Any]:
        """``n`` crops as uint8 (n, 3, size, size) and their classes; ``art_share`` of them from the
        art decks' faces when given (else every face alike), and ``joker_share`` of them from the
        jokers of the same decks (every deck's jokers, whatever their style); ``pad``: the window
        around the box, as :func:`~vision.crops.crop_boxes` takes it."""
        import torch
        import torch.nn.functional as F

        dev = self.device

        def u(lo: float, hi: float, *shape: int) -> Any:
            return torch.rand(*shape, generator=gen, device=dev) * (hi - lo) + lo

        if art_share is not None and len(self.art_ids) and len(self.rand_ids):
            from_art = torch.rand(n, generator=gen, device=dev) < art_share
            pick_art = self.art_ids[torch.randint(0, len(self.art_ids), (n,), generator=gen, device=dev)]
            pick_rand = self.rand_ids[torch.randint(0, len(self.rand_ids), (n,), generator=gen, device=dev)]
            idx = torch.where(from_art, pick_art, pick_rand)
        else:
            idx = self.ids[torch.randint(0, len(self), (n,), generator=gen, device=dev)]
        if joker_share > 0 and len(self.art_jokers) + len(self.rand_jokers):
            from_art = idx < self.art  # a joker of the same kind of deck as the face it replaces
            art_j = self.art_jokers if len(self.art_jokers) else self.rand_jokers
            rand_j = self.rand_jokers if len(self.rand_jokers) else self.art_jokers
            pick = torch.where(
                from_art,
                art_j[torch.randint(0, len(art_j), (n,), generator=gen, device=dev)],
                rand_j[torch.randint(0, len(rand_j), (n,), generator=gen, device=dev)],
            )
            idx = torch.where(torch.rand(n, generator=gen, device=dev) < joker_share, pick, idx)
        box = self.boxes[idx].clone()
        _, _, h, w = self.faces.shape
        turn = torch.rand(n, generator=gen, device=dev) < 0.5  # the bottom-right index: the face turned 180°
        box[turn] = 1 - box[turn][:, [2, 3, 0, 1]]
        bw, bh = (box[:, 2] - box[:, 0]) * w / h, box[:, 3] - box[:, 1]  # in face heights
        angle = u(-np.pi, np.pi, n)
        ext = torch.maximum(
            bw * angle.cos().abs() + bh * angle.sin().abs(), bw * angle.sin().abs() + bh * angle.cos().abs()
        )
        side = ext * (0.5 + pad) * u(0.87, 1.15, n)  # half the crop's side, like crop_boxes
        centre = torch.stack([(box[:, 0] + box[:, 2]) / 2, (box[:, 1] + box[:, 3]) / 2], 1)
        centre = centre + u(-0.12, 0.12, n, 2) * torch.stack([bw * h / w, bh], 1)
        label = (idx % 54).long()
        bg = torch.rand(n, generator=gen, device=dev) < background_share
        if bool(bg.any()):  # a point of the face's middle: pips, court art, no index
            centre[bg] = torch.stack([u(0.3, 0.7, int(bg.sum())), u(0.28, 0.72, int(bg.sum()))], 1)
            label[bg] = BACKGROUND
            # where the localiser proposes off the index: that box, jittered like a localiser's
            has = bg & (self.n_proposals[idx] > 0)
            m = int(has.sum())
            if m:
                count = self.n_proposals[idx[has]]
                pick = (torch.rand(m, generator=gen, device=dev) * count).long().clamp(max=count - 1)
                pb = self.proposals[idx[has], pick]  # (m, 4) normalised to the face
                pw, ph = (pb[:, 2] - pb[:, 0]) * w / h, pb[:, 3] - pb[:, 1]
                a = angle[has]
                pext = torch.maximum(
                    pw * a.cos().abs() + ph * a.sin().abs(), pw * a.sin().abs() + ph * a.cos().abs()
                )
                side[has] = pext * (0.5 + pad) * u(0.87, 1.15, m)
                jitter = u(-0.12, 0.12, m, 2) * torch.stack([pw * h / w, ph], 1)
                centre[has] = torch.stack([(pb[:, 0] + pb[:, 2]) / 2, (pb[:, 1] + pb[:, 3]) / 2], 1) + jitter
        crop = self._cut(idx, centre, side, angle + torch.where(turn, np.pi, 0.0), size)
        # a table under the card: a colour with low-frequency shading
        table = u(0.05, 0.8, n, 3, 1, 1) * (
            1 + 0.25 * F.interpolate(u(-1, 1, n, 1, 3, 3), size=(size, size), mode="bilinear")
        )
        out = crop[:, :3] * crop[:, 3:] + table * (1 - crop[:, 3:])
        # a neighbour in a fan: another face over a half-plane that leaves the index's centre free
        cover = torch.rand(n, generator=gen, device=dev) < 0.3
        k = int(cover.sum())
        if k:
            other = self.ids[torch.randint(0, len(self), (k,), generator=gen, device=dev)]
            over = self._cut(
                other, u(0.2, 0.8, k, 2), side[cover] * u(0.8, 1.5, k), u(-np.pi, np.pi, k), size
            )
            yy, xx = torch.meshgrid(
                torch.linspace(-1, 1, size, device=dev),
                torch.linspace(-1, 1, size, device=dev),
                indexing="ij",
            )
            phi = u(-np.pi, np.pi, k)
            dist = xx[None] * phi.cos()[:, None, None] + yy[None] * phi.sin()[:, None, None]
            mask = ((dist - u(0.45, 0.95, k)[:, None, None]) * 12).sigmoid()[:, None] * over[:, 3:]
            shade = 1 - 0.35 * ((dist - u(0.3, 0.8, k)[:, None, None]) * 6).sigmoid()[:, None] * (1 - mask)
            out[cover] = (over[:, :3] * mask + out[cover] * (1 - mask)) * shade
        return (out.clamp(0, 1) * 255 + 0.5).to(torch.uint8), label
