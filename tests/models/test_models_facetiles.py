import numpy as np

from models.facetiles import FaceTileSettings, compose_tile
from models.synth.faces import load_faces


def test_composed_tiles_have_in_tile_labels_of_the_drawn_cards():
    fs = load_faces("proc0")
    rng = np.random.default_rng(3)
    settings = FaceTileSettings(face_down_share=0.0, index_px=(30.0, 40.0))
    n_labels = 0
    for _ in range(5):
        image, labels = compose_tile(rng, [fs], settings)
        assert image.shape == (320, 320, 3) and image.dtype == np.uint8
        for cid, (x1, y1, x2, y2) in labels:
            assert 0 <= cid < 54
            assert 0 <= x1 < x2 <= 320 and 0 <= y1 < y2 <= 320
            # an index 30-40 px tall (rotation can widen the box up to ~1.5x)
            assert 20 <= max(x2 - x1, y2 - y1) <= 65
        n_labels += len(labels)
    assert n_labels >= 5
