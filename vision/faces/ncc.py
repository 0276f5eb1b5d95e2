"""Normalised cross-correlation of an enrolled deck's faces with what the camera sees, where both
show (a face turned onto its canvas, a template slid over a window of the image): the one
correlation the faces step uses, from the sliding sums of the image, the template, their squares
and their product (``cv2.matchTemplate``'s plain correlation).
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt


def _sums(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """The sum of ``a * b`` with ``b`` placed at every place it fits wholly in ``a``."""
    return np.asarray(cv2.matchTemplate(a, b, cv2.TM_CCORR), np.float64)


def turned(
    face: npt.NDArray[np.float32], degrees: float
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float64]]:
    """A face turned by ``degrees`` about its middle on a canvas that holds it whole: the face (its
    visible pixels standardised), where it lies (0 or 1), and the 2 × 3 map face → that canvas."""
    h, w = face.shape
    a = np.deg2rad(degrees)
    ch = int(np.ceil(abs(w * np.sin(a)) + abs(h * np.cos(a))))
    cw = int(np.ceil(abs(w * np.cos(a)) + abs(h * np.sin(a))))
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    rot[:, 2] += (cw / 2 - w / 2, ch / 2 - h / 2)
    templ = cv2.warpAffine(face, rot, (cw, ch), flags=cv2.INTER_LINEAR)
    alpha = (cv2.warpAffine(np.ones_like(face), rot, (cw, ch), flags=cv2.INTER_LINEAR) > 0.99).astype(
        np.float32
    )
    inside = alpha > 0
    templ = np.where(inside, (templ - templ[inside].mean()) / (templ[inside].std() + 1e-6), 0.0)
    return templ.astype(np.float32), alpha, np.asarray(rot, np.float64)


def masked_ncc(
    image: npt.NDArray[np.float32],
    usable: npt.NDArray[np.float32],
    templ: npt.NDArray[np.float32],
    alpha: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Normalised cross-correlation of ``templ`` (where ``alpha``) with ``image`` (where ``usable``)
    at every place the template fits wholly, over the pixels both cover; and how many those are.

    >>> rng = np.random.default_rng(0)
    >>> img = rng.normal(size=(30, 30)).astype(np.float32)
    >>> t = img[5:15, 8:20].copy()
    >>> ncc, n = masked_ncc(img, np.ones_like(img), t, np.ones_like(t))
    >>> tuple(int(v) for v in np.unravel_index(np.argmax(ncc), ncc.shape)), round(float(ncc.max()), 3)
    ((5, 8), 1.0)
    """

    nccs, n = masked_nccs(image, usable, [templ], alpha)
    return nccs[0], n


def whole_ncc(
    image: npt.NDArray[np.float32], templ: npt.NDArray[np.float32], alpha: npt.NDArray[np.float32]
) -> npt.NDArray[np.float64]:
    """:func:`masked_ncc` where the whole image is usable: the template's sums are the same at
    every place, so only the image's are slid.

    >>> rng = np.random.default_rng(1)
    >>> img = rng.normal(size=(30, 30)).astype(np.float32)
    >>> t, a = rng.normal(size=(10, 12)).astype(np.float32), (rng.random((10, 12)) > 0.3).astype(np.float32)
    >>> bool(np.allclose(whole_ncc(img, t, a), masked_ncc(img, np.ones_like(img), t, a)[0], atol=1e-5))
    True
    """

    at = alpha * templ
    s_i, s_i2, s_ti = _sums(image, alpha), _sums(image * image, alpha), _sums(image, at)
    n, s_t, s_t2 = (np.full_like(s_i, float(v.sum(dtype=np.float64))) for v in (alpha, at, at * at))
    return ncc_of_sums(n, s_i, s_i2, s_t, s_t2, s_ti)


def masked_nccs(
    image: npt.NDArray[np.float32],
    usable: npt.NDArray[np.float32],
    templs: Sequence[npt.NDArray[np.float32]],
    alpha: npt.NDArray[np.float32],
) -> tuple[list[npt.NDArray[np.float64]], npt.NDArray[np.float64]]:
    """:func:`masked_ncc` of several templates that lie where the same ``alpha``, the image's sums
    taken once: each one's correlations, and how many pixels both cover (:class:`Spectra`).

    >>> rng = np.random.default_rng(3)
    >>> img = rng.normal(size=(30, 30)).astype(np.float32)
    >>> one, two = img[5:15, 8:20].copy(), rng.normal(size=(10, 12)).astype(np.float32)
    >>> alpha = np.ones_like(one)
    >>> nccs, n = masked_nccs(img, np.ones_like(img), [one, two], alpha)
    >>> bool(np.allclose(nccs[1], masked_ncc(img, np.ones_like(img), two, alpha)[0]))
    True
    """

    return Spectra(image, usable).nccs(templs, alpha)


def _dft_size(n: int) -> int:
    """The least 2^k or 3 · 2^k at least ``n``: a size OpenCV's DFT is quickest at."""
    power = 1 << max(0, n - 1).bit_length()
    return power * 3 // 4 if power >= 4 and power * 3 // 4 >= n else power


class Spectra:
    """An image and where it is usable, Fourier-transformed once, to be correlated with many
    templates of any size up to the image's (:func:`masked_ncc` for each): the sliding sums of the
    image, the template, their squares and their product are each one product of transforms and
    one inverse transform. A template's place in the image is found wholly inside it, so the
    transforms' wrap-round touches no sum that is kept.

    >>> rng = np.random.default_rng(4)
    >>> img = rng.normal(size=(40, 33)).astype(np.float32)
    >>> usable = (rng.random(img.shape) > 0.2).astype(np.float32)
    >>> t, a = img[7:27, 4:19].copy(), (rng.random((20, 15)) > 0.1).astype(np.float32)
    >>> nccs, n = Spectra(img, usable).nccs([t * a], a)
    >>> slow = ncc_of_sums(*(_sums(x, y) for x in (usable, usable * img, usable * img * img) for y in (a,)),
    ...     _sums(usable, a * t), _sums(usable, a * t * t), _sums(usable * img, a * t))
    >>> n.shape, bool(np.allclose(nccs[0], slow, atol=1e-5)), int(n[7, 4]) == int((usable[7:27, 4:19] * a).sum())
    ((21, 19), True, True)
    """

    def __init__(self, image: npt.NDArray[np.float32], usable: npt.NDArray[np.float32]) -> None:
        self.shape = (int(image.shape[0]), int(image.shape[1]))
        self.size = (_dft_size(self.shape[0]), _dft_size(self.shape[1]))
        ui = usable * image
        self._usable, self._ui, self._ui2 = (
            self._spectrum(usable),
            self._spectrum(ui),
            self._spectrum(ui * image),
        )

    def _spectrum(self, a: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        padded = np.zeros(self.size, np.float32)
        padded[: a.shape[0], : a.shape[1]] = a
        return np.asarray(cv2.dft(padded), np.float32)

    def _sums(
        self, image: npt.NDArray[np.float32], templ: npt.NDArray[np.float32], out: tuple[int, int]
    ) -> npt.NDArray[np.float64]:
        product = cv2.mulSpectrums(image, templ, 0, conjB=True)
        whole = cv2.idft(product, flags=cv2.DFT_REAL_OUTPUT | cv2.DFT_SCALE)
        return np.asarray(whole[: out[0], : out[1]], np.float64)

    def nccs(
        self, templs: Sequence[npt.NDArray[np.float32]], alpha: npt.NDArray[np.float32]
    ) -> tuple[list[npt.NDArray[np.float64]], npt.NDArray[np.float64]]:
        """:func:`masked_nccs` on this image: each template's correlations at every place it fits
        wholly (all lying where ``alpha``, 0 or 1), and how many pixels both cover there."""
        out = (self.shape[0] - alpha.shape[0] + 1, self.shape[1] - alpha.shape[1] + 1)
        if out[0] < 1 or out[1] < 1:
            raise ValueError(f"a template of {alpha.shape} does not fit in an image of {self.shape}")
        a = self._spectrum(alpha)
        n = np.rint(self._sums(self._usable, a, out))  # a count of pixels, whole
        s_i, s_i2 = self._sums(self._ui, a, out), self._sums(self._ui2, a, out)
        nccs = []
        for templ in templs:
            at = alpha * templ
            t, t2 = self._spectrum(at), self._spectrum(at * at)
            s_t, s_t2, s_ti = (
                self._sums(x, y, out) for x, y in ((self._usable, t), (self._usable, t2), (self._ui, t))
            )
            nccs.append(ncc_of_sums(n, s_i, s_i2, s_t, s_t2, s_ti))
        return nccs, n


def ncc_of_sums(
    n: npt.NDArray[np.float64],
    s_i: npt.NDArray[np.float64],
    s_i2: npt.NDArray[np.float64],
    s_t: npt.NDArray[np.float64],
    s_t2: npt.NDArray[np.float64],
    s_ti: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """Normalised cross-correlation from the masked sums of the image, the template, their squares
    and their product over ``n`` pixels; -1 where fewer than 16 pixels or no variance."""
    safe = np.maximum(n, 1.0)
    var = (s_t2 - s_t**2 / safe) * (s_i2 - s_i**2 / safe)
    cov = s_ti - s_t * s_i / safe
    return np.asarray(np.where((n >= 16) & (var > 1e-9), cov / np.sqrt(np.maximum(var, 1e-9)), -1.0))


def near(
    image: npt.NDArray[np.float32],
    usable: npt.NDArray[np.float32],
    shape: tuple[int, int],
    x: int,
    y: int,
    reach: int,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], int, int]:
    """The part of ``image`` and ``usable`` where a template of ``shape`` (h, w) placed with its
    corner within ``reach`` pixels of (``x``, ``y``) lies, and that part's corner (x0, y0)."""
    h, w = shape
    y0, x0 = max(0, y - reach), max(0, x - reach)
    window = (slice(y0, y + reach + h), slice(x0, x + reach + w))
    return image[window], usable[window], x0, y0


def ncc_near(
    image: npt.NDArray[np.float32],
    usable: npt.NDArray[np.float32],
    templs: npt.NDArray[np.float32],
    alpha: npt.NDArray[np.float32],
    x: int,
    y: int,
    reach: int = 3,
) -> npt.NDArray[np.float64]:
    """For each of ``templs`` (F, h, w, all lying where ``alpha``), its best :func:`masked_ncc`
    placed within ``reach`` pixels of (``x``, ``y``); -1 each where the template does not fit.

    >>> rng = np.random.default_rng(1)
    >>> img = rng.normal(size=(40, 40)).astype(np.float32)
    >>> templs = np.stack([rng.normal(size=(10, 8)), img[12:22, 20:28]]).astype(np.float32)
    >>> ncc_near(img, np.ones_like(img), templs, np.ones((10, 8), np.float32), 18, 10).round(3)[1]
    np.float64(1.0)
    """
    from numpy.lib.stride_tricks import sliding_window_view

    h, w = alpha.shape
    img, use, _, _ = near(image, usable, (h, w), x, y, reach)
    if img.shape[0] < h or img.shape[1] < w:
        return np.full(len(templs), -1.0)
    patches = sliding_window_view(img, (h, w)).reshape(-1, h * w)  # (places, pixels)
    mask = (sliding_window_view(use, (h, w)) * alpha).reshape(-1, h * w)
    t = templs.reshape(len(templs), h * w).T  # (pixels, F)
    n = mask.sum(1)[:, None]
    s_i = (mask * patches).sum(1)[:, None]
    s_i2 = (mask * patches * patches).sum(1)[:, None]
    s_t, s_t2, s_ti = mask @ t, mask @ (t * t), (mask * patches) @ t
    return np.asarray(ncc_of_sums(n, s_i, s_i2, s_t, s_t2, s_ti).max(axis=0), np.float64)


def best_place(
    image: npt.NDArray[np.float32],
    usable: npt.NDArray[np.float32],
    templ: npt.NDArray[np.float32],
    alpha: npt.NDArray[np.float32],
    x: int,
    y: int,
    reach: int,
) -> tuple[int, int]:
    """Where (its corner) ``templ`` correlates best with ``image`` (:func:`masked_ncc`) within
    ``reach`` pixels of (``x``, ``y``); (``x``, ``y``) when it fits nowhere there.

    >>> rng = np.random.default_rng(2)
    >>> img = rng.normal(size=(40, 40)).astype(np.float32)
    >>> best_place(img, np.ones_like(img), img[12:22, 20:28], np.ones((10, 8), np.float32), 18, 10, 3)
    (20, 12)
    """
    h, w = alpha.shape
    img, use, x0, y0 = near(image, usable, (h, w), x, y, reach)
    if img.shape[0] < h or img.shape[1] < w:
        return x, y
    ncc, _ = masked_ncc(img, use, templ, alpha)
    row, col = np.unravel_index(int(np.argmax(ncc)), ncc.shape)
    return x0 + int(col), y0 + int(row)
