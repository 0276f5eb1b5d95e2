"""The committed weights: both backends load, agree, and read cards in rendered close-ups."""

from collections import Counter

import numpy as np
import pytest

from tests.conftest import need_module
from vision.detectors.base import DetectorConfig, create_detector, default_weights

ONNX = default_weights("onnx")
PT = default_weights("ultralytics")


@pytest.fixture(autouse=True)
def committed_weights() -> None:
    """The weights are committed: their absence is a failure, never a skip."""
    assert ONNX.is_file() and PT.is_file(), f"committed weights missing: {ONNX}, {PT}"


def test_weights_are_small():
    assert ONNX.stat().st_size < 15e6 and PT.stat().st_size < 15e6


def _closeup(seed):
    from models.synth.scene import render_scene

    return render_scene(seed, width=640, height=640, mode="closeup", designs=["anglo_poker"], arms=0)


def test_onnx_and_pytorch_agree_on_a_tile():
    need_module("ultralytics")
    from vision.detections import box_iou

    scene = _closeup(7)
    tile = np.ascontiguousarray(scene.image[160:480, 160:480])
    onnx_det = create_detector(DetectorConfig(type="onnx", conf=0.005)).detect(tile).sorted_by_confidence()
    torch_det = (
        create_detector(DetectorConfig(type="ultralytics", conf=0.005)).detect(tile).sorted_by_confidence()
    )
    # Same network, different letterbox/NMS code (FP32 ONNX vs FP16-stored weights run in FP32).
    assert len(onnx_det) > 0 and abs(len(onnx_det) - len(torch_det)) <= max(2, len(onnx_det) // 5)
    top = min(5, len(onnx_det), len(torch_det))
    iou = box_iou(onnx_det.xyxy[:top], torch_det.xyxy[:top])
    assert iou.max(1).min() > 0.8
    assert onnx_det.confidence[0] == pytest.approx(torch_det.confidence[0], abs=0.02)


@pytest.mark.slow
def test_reads_some_cards_of_rendered_closeups():
    from models.evaluate import annotation_truth
    from models.metrics import multiset_tally
    from vision.instances import count_cards
    from vision.reader import CardReader, default_reader_config

    reader = CardReader(default_reader_config())
    tp = truth_n = pred_n = 0
    for seed in (1, 2):
        scene = _closeup(seed)
        truth = annotation_truth({"cards": [c.to_dict() for c in scene.cards]})
        tally = multiset_tally(count_cards(reader.read(scene.image).cards), Counter(truth))
        tp += tally.tp
        truth_n += sum(truth.values())
        pred_n += tally.tp + tally.fp
    assert truth_n > 0
    # Regression floors, under what the shipped weights measured here on 2026-11-23
    # (recall 25/26, precision 25/26); the evaluated figures are in docs/experiments/reader-history.md.
    assert tp / truth_n >= 0.8
    assert tp / pred_n >= 0.75


def _visible_indices(corners=("tl", "tr", "br", "bl")):
    """For the close-ups of seeds 1 and 2: the scene and its (card, index) pairs of face-up indices
    of the given corners at least 60 % visible."""
    for seed in (1, 2):
        scene = _closeup(seed)
        yield (
            scene,
            [
                (card, ix)
                for card in scene.cards
                for ix in card.corners
                if card.face_up and ix.corner in corners and ix.visible >= 0.6
            ],
        )


def assert_state_dict_matches_onnx(pt, session, classes, size, width):
    """The committed FP16 state dict, loaded into ``build_net`` (FP32 on load), gives the committed ONNX
    network's probabilities on random crops: the file to fine-tune from is the network that ships."""
    torch = need_module("torch")
    from models.classifier import build_net

    net = build_net(classes=classes, size=size, width=width)
    net.load_state_dict(torch.load(pt, map_location="cpu"))
    crop = np.random.default_rng(0).random((2, 3, size, size), dtype=np.float32)
    net.eval()
    with torch.no_grad():
        p_torch = torch.softmax(net(torch.from_numpy(crop)), 1).numpy()
    (logits,) = session.run(None, {session.get_inputs()[0].name: crop})
    e = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(p_torch, e / e.sum(1, keepdims=True), atol=0.02)


def test_the_committed_suit_head_loads_with_its_pad_and_fine_tunes_from_its_state_dict():
    from vision.detectors.base import default_suit_head
    from vision.heads import SUIT, CropHead
    from vision.settings import CHECKPOINTS_DIR

    path = default_suit_head()
    assert path is not None, "vision/weights/suit.onnx is committed since the fifteenth session"
    head = CropHead(path, SUIT)
    assert head.pad == 1.0 and head.size == 80
    assert_state_dict_matches_onnx(CHECKPOINTS_DIR / "suit.pt", head.session, classes=4, size=80, width=2.0)


def test_the_committed_orientation_head_reads_the_corners_of_rendered_closeups():
    """Every visible ``tl`` / ``br`` index of two close-ups: the head's direction within 45° of the
    renderer's (its labels: models.orientation.index_up); and its state dict gives the same network."""
    from models.orientation import index_up
    from vision.detectors.base import default_orientation_head
    from vision.heads import ORIENTATION, CropHead
    from vision.orientation import up_vectors
    from vision.settings import CHECKPOINTS_DIR

    path = default_orientation_head()
    assert path is not None, "vision/weights/orientation.onnx is committed since the eighteenth session"
    head = CropHead(path, ORIENTATION)
    right = total = 0
    for scene, indices in _visible_indices(("tl", "br")):
        boxes = np.array([ix.box for _, ix in indices], np.float32)
        truth = [index_up(ix.quad, ix.corner) for _, ix in indices]
        up = up_vectors(head.box_probabilities(scene.image, boxes))
        right += int((np.nan_to_num(np.sum(up * np.array(truth), 1)) > np.cos(np.pi / 4)).sum())
        total += len(truth)
    assert total >= 10
    assert (
        right / total >= 0.9
    )  # 99.9 / 99.6 % on val / heldout_val detections (docs/experiments/reader-history.md)
    assert_state_dict_matches_onnx(
        CHECKPOINTS_DIR / "orientation.pt", head.session, classes=8, size=40, width=0.75
    )


def test_the_committed_upright_head_names_the_indices_of_rendered_closeups():
    """Every visible index of two close-ups, turned upright by the committed orientation head and read
    by the upright head alone: mostly right; and its state dict gives the same network."""
    from vision.detectors.base import default_orientation_head, default_upright_head
    from vision.heads import ORIENTATION, UPRIGHT, CropHead
    from vision.labels import class_id
    from vision.orientation import up_vectors
    from vision.settings import CHECKPOINTS_DIR

    path, turn = default_upright_head(), default_orientation_head()
    assert path is not None and turn is not None, (
        "vision/weights/upright.onnx is committed since the twenty-fourth session"
    )
    head, orientation = CropHead(path, UPRIGHT), CropHead(turn, ORIENTATION)
    right = total = 0
    for scene, indices in _visible_indices():
        xyxy = np.array([ix.box for _, ix in indices], np.float32)
        truth = [class_id(card.card) for card, _ in indices]
        q = head.box_probabilities(
            scene.image, xyxy, up_vectors(orientation.box_probabilities(scene.image, xyxy))
        )
        right += int((q.argmax(1) == np.array(truth)).sum())
        total += len(truth)
    assert total >= 10
    assert (
        right / total >= 0.85
    )  # label-box crops of the val split: 96.1 % (docs/experiments/reader-history.md)
    assert_state_dict_matches_onnx(
        CHECKPOINTS_DIR / "upright.pt", head.session, classes=54, size=40, width=1.0
    )
