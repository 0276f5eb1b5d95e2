"""Scene renderer: determinism by seed and labels that match the pixels."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.table import LensDistortion
from models.synth.layout import Placement, Table
from models.synth.scene import Look, Renderer, _raster, apply_h, camera_homography, render_scene

PROC = ["proc0", "proc1", "proc2", "proc3", "proc4"]


def test_same_seed_same_bytes_different_seed_different() -> None:
    a = render_scene(11, width=320, height=240, designs=PROC)
    b = render_scene(11, width=320, height=240, designs=PROC)
    c = render_scene(12, width=320, height=240, designs=PROC)
    assert a.image.tobytes() == b.image.tobytes()
    assert [x.to_dict() for x in a.cards] == [x.to_dict() for x in b.cards]
    assert a.image.tobytes() != c.image.tobytes()


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", ["table", "tile", "closeup", "loose"])
def test_labels_match_pixels(seed: int, mode: str) -> None:
    """Every pixel a card owns lies inside its outline quad; visible fractions recount exactly;
    fully visible cards fill their quad; face-up indices sit on printed ink."""
    sc = render_scene(seed, width=480, height=480, designs=PROC, effects=False, keep_ids=True, mode=mode)
    ids = sc.id_map
    assert ids is not None and sc.cards
    h, w = ids.shape
    labelled = {lab.z for lab in sc.cards}
    assert set(np.unique(ids[ids >= 0]).tolist()) <= labelled
    for lab in sc.cards:
        quad = np.array(lab.quad)
        mask = ids == lab.z
        ys, xs = np.nonzero(mask)
        pts = np.stack([xs + 0.5, ys + 0.5], axis=1)
        assert _inside_all(pts, quad, tol=1.0), f"pixels of {lab.card} outside its quad"
        area = _poly_area(quad)
        in_image = _raster(quad, 0, 0, w, h)
        # visible fraction = owned pixels / card area (rounded corners excluded), recounted here
        assert abs(lab.visible * area - (mask & in_image).sum()) <= 0.03 * area + 4, lab.card
        if lab.visible > 0.99:
            assert abs(mask.sum() - area) / area < 0.05
        if lab.face_up:
            for ix in lab.corners:
                iq = np.array(ix.quad)
                owned = (_raster(iq, 0, 0, w, h) & mask).sum()
                assert abs(ix.visible * _poly_area(iq) - owned) <= 0.06 * _poly_area(iq) + 6
                if ix.visible > 0.95 and _poly_area(iq) > 150:
                    x1, y1, x2, y2 = (int(round(v)) for v in ix.box)
                    crop = sc.image[max(0, y1) : y2, max(0, x1) : x2].astype(int)
                    assert crop.std() > 12, f"no ink in the {ix.corner} index of {lab.card}"
        else:
            assert all(ix.visible == 0 for ix in lab.corners)


def _poly_area(q: np.ndarray) -> float:
    x, y = q[:, 0], q[:, 1]
    return float(abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1))) / 2)


def _inside_all(pts: np.ndarray, quad: np.ndarray, tol: float) -> bool:
    c = quad.mean(axis=0)
    for k in range(4):
        a, b = quad[k], quad[(k + 1) % 4]
        n = np.array([b[1] - a[1], a[0] - b[0]])
        n /= np.linalg.norm(n)
        if np.dot(c - a, n) < 0:
            n = -n
        if ((pts - a) @ n < -tol).any():
            return False
    return True


def _single_card_renderer(k1: float, size=(400, 300)) -> tuple[Renderer, list[Placement]]:
    rng = np.random.default_rng(0)
    table = Table(900, 900)
    w, h = size
    view = camera_homography(rng, table, w, h, tilt=0.05, fill=2.5, turn=17)
    look = Look.random(rng, effects=False)
    look.k1 = k1
    r = Renderer(rng, w, h, table, view, look, surface="laminate")
    r.base[:] = 0
    return r, [Placement("BJ", False, 450, 450, 33, "proc0")]


def _white_card(k1: float):
    r, pl = _single_card_renderer(k1)
    from models.synth import faces

    fs = faces.load_faces("proc0")
    white = fs.back.copy()
    white[:, :, :3] = 255
    fs_white = faces.FaceSet("proc0", fs.faces, white, fs.index_box)
    old = faces.load_faces
    try:
        import models.synth.scene as scene_mod

        scene_mod.load_faces = lambda name: fs_white  # type: ignore[assignment]
        return r.render(pl, [], np.random.default_rng(1), jpeg=False, keep_ids=True)
    finally:
        scene_mod.load_faces = old  # type: ignore[assignment]


@pytest.mark.parametrize("k1", [0.0, -0.08, 0.06])
def test_card_quad_matches_blob(k1: float) -> None:
    """A white card on black: its pixel blob's area and centroid agree with the labelled quad,
    also through lens distortion."""
    sc = _white_card(k1)
    lab = sc.cards[0]
    m = sc.image[:, :, 0] > 127
    ys, xs = np.nonzero(m)
    quad = np.array(lab.quad)
    cx, cy = xs.mean() + 0.5, ys.mean() + 0.5
    qc = quad.mean(axis=0)
    assert abs(cx - qc[0]) < 1.0 and abs(cy - qc[1]) < 1.0
    assert abs(m.sum() - _poly_area(quad)) / _poly_area(quad) < 0.04
    assert abs(lab.visible - 1.0) < 0.03


def test_lens_round_trip() -> None:
    d = LensDistortion(k1=-0.05, k2=0.01, cx=640, cy=480, norm=800)
    p = np.random.default_rng(0).uniform(0, 1280, (50, 2))
    assert np.abs(d.undistort(d.distort(p)) - p).max() < 1e-4


def test_occlusion_reduces_visibility() -> None:
    """Two cards, the second covering the first's top-left corner: the first's tl index is hidden,
    its br index is not, and the visible fractions add up with the pixel counts."""
    rng = np.random.default_rng(0)
    table = Table(900, 900)
    view = np.diag([2.0, 2.0, 1.0]) @ np.array([[1, 0, -300], [0, 1, -300], [0, 0, 1.0]])
    r = Renderer(rng, 600, 600, table, view, Look.random(rng, effects=False))
    pl = [Placement("7H", True, 450, 450, 0, "proc1"), Placement("KS", True, 430, 420, 0, "proc1")]
    sc = r.render(pl, [], rng, jpeg=False, keep_ids=True)
    bottom, top = sc.cards
    corners = {c.corner: c for c in bottom.corners}
    assert corners["tl"].visible < 0.05 and corners["br"].visible > 0.99
    assert top.visible > 0.98 and 0.3 < bottom.visible < 0.9
    n0 = (sc.id_map == 0).sum()
    assert abs(bottom.visible - n0 / (_poly_area(np.array(bottom.quad)) * 0.99)) < 0.03
    q = apply_h(view, np.array([[450.0, 450.0]]))[0]
    assert np.allclose(
        np.array(top.quad).mean(axis=0), apply_h(view, np.array([[430.0, 420.0]]))[0], atol=0.01
    )
    assert np.allclose(np.array(bottom.quad).mean(axis=0), q, atol=0.01)


def test_arms_hide_cards() -> None:
    sc = render_scene(5, width=400, height=400, designs=PROC, arms=2, keep_ids=True, effects=False)
    assert (sc.id_map == -2).any()


def test_many_seeds_render() -> None:
    """Robustness: many dataset-style renders (all modes) succeed and give sane fractions."""
    from models.synth.dataset import image_seed, render_example

    for i in range(40):
        sc = render_example(image_seed(3, "train", i), 160, tuple(PROC))
        assert sc.image.shape == (160, 160, 3)
        for c in sc.cards:
            assert 0 <= c.visible <= 1 and all(0 <= ix.visible <= 1 for ix in c.corners)


def test_shadow_of_a_sliver_at_the_edge() -> None:
    """Regression: a card clipped to a few pixels at the image edge whose shadow offset is larger
    than what is left of it."""
    from models.synth.scene import available_designs
    from tests.conftest import need
    from tests.synth.conftest import aisleriot_ok

    need(aisleriot_ok("anglo_modern"), "gnome-cards-data / rsvg-convert")
    from models.synth.dataset import image_seed, render_example
    from models.synth.designs import TRAIN

    render_example(image_seed(7, "train", 116), 320, tuple(available_designs(TRAIN)))
