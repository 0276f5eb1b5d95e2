"""The faces step's masked correlation (vision.faces.ncc) against a plain per-place computation:
the Pearson correlation of the image and the template over the pixels both cover."""

from __future__ import annotations

import numpy as np
import pytest

from vision.faces.ncc import Spectra, masked_ncc, masked_nccs, whole_ncc


def _by_hand(image, usable, templ, alpha):
    """Per place: Pearson's r over the pixels usable in the image and inside the template."""
    h, w = alpha.shape
    out = np.full((image.shape[0] - h + 1, image.shape[1] - w + 1), -1.0)
    count = np.zeros(out.shape)
    for y in range(out.shape[0]):
        for x in range(out.shape[1]):
            both = (usable[y : y + h, x : x + w] * alpha) > 0
            count[y, x] = both.sum()
            a = image[y : y + h, x : x + w][both].astype(np.float64)
            b = templ[both].astype(np.float64)
            if both.sum() >= 16 and a.std() > 1e-6 and b.std() > 1e-6:
                out[y, x] = float(np.corrcoef(a, b)[0, 1])
    return out, count


@pytest.mark.parametrize(
    ("image_shape", "templ_shape"), [((37, 53), (20, 11)), ((109, 86), (64, 41)), ((24, 24), (24, 24))]
)
def test_the_correlations_are_pearsons_r_over_the_pixels_both_cover(image_shape, templ_shape):
    rng = np.random.default_rng(sum(image_shape) + sum(templ_shape))
    image = rng.normal(size=image_shape).astype(np.float32)
    usable = (rng.random(image_shape) > 0.3).astype(np.float32)
    usable[: image_shape[0] // 3, : image_shape[1] // 2] = 0  # a hidden block, as a top card leaves
    alpha = (rng.random(templ_shape) > 0.1).astype(np.float32)
    planted = image[: templ_shape[0], image_shape[1] - templ_shape[1] :] * alpha
    templs = [rng.normal(size=templ_shape).astype(np.float32) * alpha, planted]
    nccs, n = Spectra(image, usable).nccs(templs, alpha)
    for templ, got in zip(templs, nccs, strict=True):
        want, count = _by_hand(image, usable, templ, alpha)
        assert got.shape == want.shape
        assert np.array_equal(n, count)  # whole pixel counts
        assert np.abs(got - want).max() < 1e-4
    assert nccs[1][0, image_shape[1] - templ_shape[1]] == pytest.approx(1.0, abs=1e-5)


def test_one_image_serves_templates_of_several_sizes():
    rng = np.random.default_rng(7)
    image = rng.normal(size=(60, 50)).astype(np.float32)
    usable = np.ones_like(image)
    spectra = Spectra(image, usable)
    for shape in [(30, 20), (33, 25), (18, 40)]:
        templ = rng.normal(size=shape).astype(np.float32)
        alpha = np.ones(shape, np.float32)
        (got,), _ = spectra.nccs([templ], alpha)
        assert np.abs(got - whole_ncc(image, templ, alpha)).max() < 1e-4
        assert np.abs(got - masked_nccs(image, usable, [templ], alpha)[0][0]).max() < 1e-4


def test_too_few_pixels_or_a_flat_patch_reads_minus_one():
    image = np.zeros((30, 30), np.float32)  # no variance anywhere
    image[:, 20:] = np.random.default_rng(1).normal(size=(30, 10))
    usable = np.ones_like(image)
    templ = np.random.default_rng(2).normal(size=(10, 10)).astype(np.float32)
    ncc, n = masked_ncc(image, usable, templ, np.ones_like(templ))
    assert ncc[0, 0] == -1.0 and ncc[0, 20] > -1.0
    sparse = np.zeros_like(templ)
    sparse[0, : 15 // 2] = 1  # 7 pixels: too few to judge
    ncc, n = masked_ncc(image, usable, templ, sparse)
    assert n.max() == 7 and (ncc == -1.0).all()


def test_a_template_larger_than_the_image_is_refused():
    with pytest.raises(ValueError, match="does not fit"):
        Spectra(np.zeros((10, 10), np.float32), np.ones((10, 10), np.float32)).nccs(
            [np.zeros((11, 5), np.float32)], np.ones((11, 5), np.float32)
        )
