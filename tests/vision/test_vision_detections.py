import numpy as np
import pytest

from vision.detections import Detections, DetectionsShapeError, box_iou


def det(boxes, conf, cls):
    return Detections(np.array(boxes, np.float32), np.array(conf), np.array(cls))


def test_shapes_and_dtypes():
    d = det([[0, 0, 10, 10], [5, 5, 15, 15]], [0.9, 0.8], [3, 4])
    assert len(d) == 2
    assert d.xyxy.dtype == np.float32 and d.class_id.dtype == np.int64
    assert d.names == ["5S", "6S"]
    np.testing.assert_allclose(d.centers, [[5, 5], [10, 10]])
    np.testing.assert_allclose(d.area, [100, 100])


def test_mismatched_lengths_raise():
    with pytest.raises(DetectionsShapeError):
        det([[0, 0, 1, 1]], [0.5, 0.6], [1])
    with pytest.raises(DetectionsShapeError):
        Detections(np.zeros((2, 3)), np.zeros(2), np.zeros(2))


def test_empty_and_concat():
    e = Detections.empty()
    assert len(e) == 0 and e.xyxy.shape == (0, 4)
    d = det([[0, 0, 1, 1]], [0.5], [1])
    c = Detections.concat([e, d, d])
    assert len(c) == 2 and list(c.class_id) == [1, 1]
    assert len(Detections.concat([])) == 0


def test_filters_and_transforms():
    d = det([[0, 0, 10, 10], [20, 20, 30, 30], [0, 0, 4, 4]], [0.9, 0.2, 0.5], [1, 2, 1])
    assert list(d.filter_confidence(0.5).confidence) == pytest.approx([0.9, 0.5])
    assert list(d.filter_classes([2]).class_id) == [2]
    np.testing.assert_allclose(d[0].shifted(5, -5).xyxy, [[5, -5, 15, 5]])
    np.testing.assert_allclose(d[0].scaled(2).xyxy, [[0, 0, 20, 20]])
    np.testing.assert_allclose(d[1].clipped(25, 25).xyxy, [[20, 20, 25, 25]])
    assert list(d.sorted_by_confidence().confidence) == pytest.approx([0.9, 0.5, 0.2])


def test_iou_known_values():
    iou = box_iou(np.array([[0, 0, 10, 10]]), np.array([[5, 0, 15, 10], [20, 20, 30, 30], [0, 0, 10, 10]]))
    np.testing.assert_allclose(iou, [[50 / 150, 0.0, 1.0]], rtol=1e-6)


def test_nms_is_per_class_unless_agnostic():
    d = det([[0, 0, 10, 10], [1, 0, 11, 10], [0, 1, 10, 11]], [0.9, 0.8, 0.7], [1, 1, 2])
    kept = d.with_nms(0.5)
    assert sorted(kept.class_id.tolist()) == [1, 2]
    assert kept.confidence.max() == pytest.approx(0.9)
    assert len(d.with_nms(0.5, class_agnostic=True)) == 1
