"""Training-crop jitter of the index classifier (models.classifier.augment)."""

import numpy as np
import pytest

from models.classifier import AUGMENTATIONS, AugmentationError, augment


def _crops(n: int, colour: tuple[int, int, int]) -> np.ndarray:
    x = np.zeros((n, 3, 40, 40), np.uint8)
    x[:] = np.array(colour, np.uint8)[None, :, None, None]
    return x


def _checkerboard(n: int) -> np.ndarray:
    board = ((np.indices((40, 40)).sum(0) % 2) * 200 + 30).astype(np.uint8)
    return np.broadcast_to(board, (n, 3, 40, 40)).copy()


def test_unknown_augmentation_is_refused():
    with pytest.raises(AugmentationError, match="unknown augmentation 'wild'"):
        augment(_crops(2, (0, 0, 0)), np.random.default_rng(0), "wild")
    assert issubclass(AugmentationError, ValueError)
    assert set(AUGMENTATIONS) == {"basic", "strong"}


def test_basic_is_the_earlier_brightness_and_offset_jitter_draw_for_draw():
    x = (np.random.default_rng(3).random((64, 3, 40, 40)) * 255).astype(np.uint8)
    got = augment(x, np.random.default_rng(11), "basic")
    rng = np.random.default_rng(11)  # the training loop before the fourteenth session, written out
    gain, offset = rng.uniform(0.7, 1.3, (64, 1, 1, 1)), rng.uniform(-0.12, 0.12, (64, 1, 1, 1))
    want = np.clip(x.astype(np.float32) / 255.0 * gain + offset, 0, 1)
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("kind", AUGMENTATIONS)
def test_output_is_float_in_unit_range_and_repeatable(kind):
    x = (np.random.default_rng(4).random((50, 3, 40, 40)) * 255).astype(np.uint8)
    a = augment(x, np.random.default_rng(7), kind)
    b = augment(x, np.random.default_rng(7), kind)
    assert a.dtype == np.float32 and a.shape == x.shape
    assert a.min() >= 0.0 and a.max() <= 1.0
    np.testing.assert_array_equal(a, b)


def test_strong_greys_some_crops_and_keeps_colour_in_the_rest():
    x = _crops(2000, (40, 40, 200))  # BGR red
    y = augment(x, np.random.default_rng(1), "strong")
    red_minus_blue = y[:, 2].mean((1, 2)) - y[:, 0].mean((1, 2))
    grey = np.abs(red_minus_blue) < 0.05
    assert 0.10 < grey.mean() < 0.20  # 15 % grey crops
    assert (red_minus_blue[~grey] > 0.3).all()  # the others stay clearly red
    basic = augment(x, np.random.default_rng(1), "basic")
    assert (basic[:, 2].mean((1, 2)) - basic[:, 0].mean((1, 2)) > 0.3).all()


def test_strong_blurs_about_a_third_of_the_crops():
    x = _checkerboard(1000)
    y = augment(x, np.random.default_rng(2), "strong")
    # pixel-to-pixel contrast of a one-pixel checkerboard: a blurred crop loses most of it
    contrast = np.abs(np.diff(y[:, 1], axis=-1)).mean((1, 2))
    basic = np.abs(np.diff(augment(x, np.random.default_rng(2), "basic")[:, 1], axis=-1)).mean((1, 2))
    assert basic.min() > 0.4
    blurred = contrast < 0.25
    assert 0.2 < blurred.mean() < 0.4
