"""The ONNX backend on a hand-built ONNX graph whose output is a fixed YOLO head tensor."""

import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import need_module
from vision.detectors import DetectorConfig, WeightsNotFoundError, create_detector

onnx = need_module("onnx")


def head_model(path, anchors, classes=54):
    """A graph (1,3,320,320) → (1, 4 + classes, A): constant predictions (input times 0, added)."""
    from onnx import TensorProto, helper, numpy_helper

    pred = np.zeros((1, 4 + classes, len(anchors)), np.float32)
    for k, (cx, cy, w, h, cls, score) in enumerate(anchors):
        pred[0, :4, k] = (cx, cy, w, h)
        pred[0, 4 + cls, k] = score
    nodes = [
        helper.make_node("ReduceSum", ["images"], ["s"], keepdims=0),
        helper.make_node("Mul", ["s", "zero"], ["z"]),
        helper.make_node("Add", ["pred", "z"], ["output0"]),
    ]
    graph = helper.make_graph(
        nodes,
        "head",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 320, 320])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 4 + classes, len(anchors)])],
        [numpy_helper.from_array(pred, "pred"), numpy_helper.from_array(np.zeros((), np.float32), "zero")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_decodes_letterboxed_output_back_to_image(tmp_path):
    path = head_model(
        tmp_path / "m.onnx",
        [(160, 160, 20, 40, 10, 0.9), (162, 160, 20, 40, 10, 0.6), (50, 60, 10, 10, 53, 0.1)],
    )
    det = create_detector(DetectorConfig(type="onnx", weights=path, conf=0.25, iou=0.5))
    out = det.detect(np.zeros((480, 640, 3), np.uint8))
    # scale 0.5, pad_y 40: the duplicate at 0.6 is suppressed, the 0.1 one is below conf.
    assert out.class_id.tolist() == [10]
    np.testing.assert_allclose(out.xyxy, [[300, 200, 340, 280]], atol=1e-3)
    assert out.confidence.tolist() == pytest.approx([0.9])


def test_missing_weights(tmp_path):
    with pytest.raises(WeightsNotFoundError):
        create_detector(DetectorConfig(type="onnx", weights=tmp_path / "none.onnx"))


def test_onnx_backend_does_not_import_torch(tmp_path):
    path = head_model(tmp_path / "m.onnx", [(160, 160, 20, 40, 3, 0.9)])
    code = (
        "import sys, numpy as np\n"
        "from vision.detectors import DetectorConfig, create_detector\n"
        "from vision.reader import CardReader, ReaderConfig\n"
        "from vision.tiling import TilingConfig\n"
        f"d = DetectorConfig(type='onnx', weights=r'{path}')\n"
        "r = CardReader(ReaderConfig(detector=d, tiling=TilingConfig(levels=(1.0,))))\n"
        "print(len(r.read(np.zeros((320, 320, 3), np.uint8)).cards))\n"
        "print('torch' in sys.modules, 'ultralytics' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["1", "False", "False"]


def test_single_class_detector_needs_the_classifier(tmp_path):
    """A localise-only (1-class) export would call every index "2S" on its own: refused clearly."""
    from vision.detectors.base import ClassifierRequiredError
    from vision.reader import CardReader, ReaderConfig

    path = head_model(tmp_path / "one.onnx", [(160, 160, 20, 40, 0, 0.9)], classes=1)
    assert create_detector(DetectorConfig(type="onnx", weights=path)).classes == 1
    with pytest.raises(ClassifierRequiredError, match="classifier"):
        CardReader(ReaderConfig(detector=DetectorConfig(type="onnx", weights=path)))


def test_every_reader_network_sleeps_between_runs():
    """The localiser's and the crop heads' sessions do not spin after a run (a spinning worker takes
    a core from the OpenCV and NumPy steps between the networks), and keep the thread count asked."""
    from pathlib import Path

    from vision.heads import SUIT, CropHead

    weights = Path(__file__).resolve().parents[2] / "vision" / "weights"
    detector = create_detector(DetectorConfig(type="onnx", weights=str(weights / "best.onnx"), threads=1))
    head = CropHead(weights / "suit.onnx", SUIT, threads=2)
    for session, threads in ((detector.session, 1), (head.session, 2)):
        options = session.get_session_options()
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert options.intra_op_num_threads == threads
