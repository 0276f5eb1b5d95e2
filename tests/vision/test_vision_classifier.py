"""The two-stage detector with a hand-built ONNX "classifier": logits = mean colour @ W."""

import numpy as np
import pytest

from tests.conftest import need_module
from vision.classifier import IndexClassifier
from vision.crops import crop_boxes
from vision.detections import Detections
from vision.detectors import DetectorConfig, create_detector
from vision.heads import ClassifierNotFoundError
from vision.labels import class_id

onnx = need_module("onnx")


def linear_model(path, w, metadata=None):
    """An ONNX model whose logits are a crop's BGR channel means times ``w`` (3, K), with optional
    metadata properties (key → value)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [
        helper.make_node("ReduceMean", ["crops"], ["m"], axes=[2, 3], keepdims=0),
        helper.make_node("MatMul", ["m", "w"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "lin",
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["n", 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", w.shape[1]])],
        [numpy_helper.from_array(np.asarray(w, np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    for key, value in (metadata or {}).items():
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, str(path))
    return path


def channel_classifier(path, cards):
    """A linear ONNX classifier on a crop's BGR channel means: channel k's mean times 10 is the logit
    of card ``cards[k]`` (every other logit 0)."""
    w = np.zeros((3, 54), np.float32)
    for channel, card in cards.items():
        w[channel, class_id(card)] = 10.0
    return linear_model(path, w)


def colour_classifier(path):
    """Blue-dominant crops → 7H, red-dominant → KS (BGR channel means times a weight matrix)."""
    return channel_classifier(path, {0: "7H", 2: "KS"})


def test_crop_boxes_square_padded_and_scaled():
    img = np.zeros((100, 100, 3), np.uint8)
    img[40:60, 45:55] = 255
    (crop,) = crop_boxes(img, np.array([[45, 40, 55, 60]], np.float32), size=32, pad=0.0)
    assert crop.shape == (3, 32, 32)
    # a 20x20 window centred on the 10x20 white bar: the middle columns are white, the edges black
    assert crop[:, 16, 16].min() == pytest.approx(1.0) and crop[:, 16, 0].max() == pytest.approx(0.0)


def test_a_window_leaving_the_image_keeps_its_square_and_centre():
    # An index lying at the photo's (or a table area's) border is cut as it would be inside a
    # larger image whose hidden part continues the edge: not stretched to fill the window.
    rng = np.random.default_rng(3)
    inside = np.full((120, 120, 3), 40, np.uint8)
    inside[50:80, 30:50] = rng.integers(0, 255, (30, 20, 3), dtype=np.uint8)  # the index
    inside[50:80, :30] = inside[50:80, 30:31]  # left of the index: its edge column continued
    box = np.array([[30, 50, 50, 80]], np.float32)
    whole = crop_boxes(inside, box, size=32)
    cut = crop_boxes(inside[:, 30:], box - np.array([30, 0, 30, 0], np.float32), size=32)
    np.testing.assert_allclose(cut, whole, atol=1 / 255)
    # a window with almost nothing of the image left is zeros, as before
    far = crop_boxes(inside, np.array([[-60, 50, -40, 80]], np.float32), size=32)
    assert not far.any()


def named(config: DetectorConfig, image: np.ndarray) -> Detections:
    """The reader's two stages: the localiser the config builds, its boxes named by the classifier
    (and the heads) the config names."""
    boxes = create_detector(config).detect(image)
    classifier = IndexClassifier.from_config(config)
    return classifier.name_boxes(image, boxes, config.det_conf, config.conf, config.joker_conf)


def test_two_stage_detector_renames_boxes(tmp_path):
    path = colour_classifier(tmp_path / "c.onnx")
    img = np.zeros((320, 320, 3), np.uint8)
    img[0:50, 0:40] = (255, 0, 0)  # blue around the first box
    img[90:140, 90:130] = (0, 0, 255)  # red around the second box
    script = (
        Detections(
            [[10, 10, 30, 40], [100, 100, 120, 130], [200, 200, 220, 230]], [0.05, 0.5, 0.005], [1, 1, 1]
        ),
    )
    out = named(DetectorConfig(type="fake", script=script, classifier=path, det_conf=0.01, conf=0.5), img)
    # the third box is below det_conf; the others are renamed by colour with high probability
    assert sorted(out.names) == ["7H", "KS"]
    assert out.confidence.min() > 0.5


def test_missing_classifier(tmp_path):
    with pytest.raises(ClassifierNotFoundError):
        IndexClassifier(tmp_path / "none.onnx")


def test_background_output_drops_boxes(tmp_path):
    """A 55-output classifier: green-dominant crops are background (index 54) and disappear."""
    w = np.zeros((3, 55), np.float32)
    w[0, class_id("7H")] = 10.0
    w[1, 54] = 10.0  # green → background
    linear_model(tmp_path / "bg.onnx", w)
    img = np.zeros((200, 200, 3), np.uint8)
    img[0:60, 0:60] = (255, 0, 0)
    img[100:160, 100:160] = (0, 255, 0)
    det = Detections([[10, 10, 40, 40], [110, 110, 140, 140]], [0.5, 0.5], [0, 0])
    out = IndexClassifier(tmp_path / "bg.onnx").classify(img, det)
    assert out.names == ["7H"]


def test_reader_names_merged_boxes_on_the_original_image(tmp_path):
    """With a classifier the reader proposes boxes on every pyramid tile, maps them back, and names
    them on the full-resolution image (not on the downscaled tile they were found in)."""
    from vision.reader import CardReader, ReaderConfig
    from vision.tiling import TilingConfig

    path = colour_classifier(tmp_path / "c.onnx")
    img = np.zeros((640, 640, 3), np.uint8)
    img[180:280, 180:260] = (0, 0, 255)  # red where the tile box lands in the original image
    script = (Detections([[100, 100, 120, 130], [5, 5, 9, 9]], [0.3, 0.001], [3, 3]),)
    reader = CardReader(
        ReaderConfig(
            detector=DetectorConfig(type="fake", script=script, classifier=path, det_conf=0.01, conf=0.5),
            tiling=TilingConfig(tile=320, overlap=0.0, levels=(0.5,)),
        )
    )
    seen = []
    read = reader.classifier.read
    reader.classifier.read = lambda image, det: seen.append(image.shape) or read(image, det)
    corners = reader.read(img).corners
    assert seen == [(640, 640, 3)]
    assert corners.names == ["KS"]  # the 0.001 box is below det_conf; the other renamed from class 3
    np.testing.assert_allclose(corners.xyxy[0], [200, 200, 240, 260])


def test_boxes_inside_a_stronger_box_are_dropped_before_naming(tmp_path):
    path = colour_classifier(tmp_path / "c.onnx")
    img = np.zeros((200, 200, 3), np.uint8)
    img[:, :] = (0, 0, 255)
    boxes = Detections(
        [[10, 10, 50, 90], [12, 12, 48, 45], [100, 10, 140, 90], [130, 10, 170, 90]],
        [0.9, 0.95 * 0.9, 0.8, 0.7],
        [0, 0, 0, 0],
    )
    # the second box (the rank glyph alone, entirely inside the first) goes although it scores well;
    # the last one overlaps the third by 25 % of its area only, so it stays
    out = IndexClassifier(path).name_boxes(img, boxes, det_conf=0.01, conf=0.5)
    np.testing.assert_allclose(out.xyxy, [[10, 10, 50, 90], [100, 10, 140, 90], [130, 10, 170, 90]])


def half_classifier(path):
    """Blue in the top half of a crop → 7H, blue in the bottom half → KS: a reading that flips when
    the crop is turned 180°."""
    from onnx import TensorProto, helper, numpy_helper

    w = np.zeros((6, 54), np.float32)
    w[0, class_id("7H")] = 10.0  # top half, blue channel
    w[3, class_id("KS")] = 10.0  # bottom half, blue channel
    inits = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([16], np.int64), "mid"),
        numpy_helper.from_array(np.array([32], np.int64), "end"),
        numpy_helper.from_array(np.array([2], np.int64), "axis"),
    ]
    nodes = [
        helper.make_node("Slice", ["crops", "zero", "mid", "axis"], ["top"]),
        helper.make_node("Slice", ["crops", "mid", "end", "axis"], ["bottom"]),
        helper.make_node("ReduceMean", ["top"], ["mt"], axes=[2, 3], keepdims=0),
        helper.make_node("ReduceMean", ["bottom"], ["mb"], axes=[2, 3], keepdims=0),
        helper.make_node("Concat", ["mt", "mb"], ["m"], axis=1),
        helper.make_node("MatMul", ["m", "w"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "cls",
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["n", 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", 54])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_rotation_averaging_reads_the_turned_crop_too(tmp_path):
    """With ``rotate_tta`` a crop and its 180°-turned copy are averaged: a top-half-only cue that the
    turned copy reads as the other card leaves both cards equally likely; without it, 7H wins."""
    path = half_classifier(tmp_path / "h.onnx")
    crops = np.zeros((1, 3, 32, 32), np.float32)
    crops[0, 0, :16] = 1.0  # blue, top half only
    plain = IndexClassifier(path, rotate_tta=False).probabilities(crops)[0]
    assert plain[class_id("7H")] > 0.9
    tta = IndexClassifier(path).probabilities(crops)[0]
    assert tta[class_id("7H")] == pytest.approx(tta[class_id("KS")], rel=1e-5)
    assert tta.sum() == pytest.approx(1.0, rel=1e-5)
    # a cue that looks the same turned (blue everywhere) is read the same with or without averaging
    crops[0, 0] = 1.0
    np.testing.assert_allclose(
        IndexClassifier(path).probabilities(crops),
        IndexClassifier(path, rotate_tta=False).probabilities(crops),
        rtol=1e-5,
    )


def test_shifted_crops_are_averaged_with_the_centred_one(tmp_path):
    """A box read from its own crop and one shifted right by half its side: blue just right of the box
    is seen only by the shifted crop, and the result is the normalised geometric mean of both readings."""
    path = colour_classifier(tmp_path / "c.onnx")
    img = np.zeros((200, 200, 3), np.uint8)
    img[90:130, 126:140] = (255, 0, 0)  # blue, outside the centred crop (97..123), inside the shifted one
    box = np.array([[100, 100, 120, 120]], np.float32)
    centred = IndexClassifier(path, rotate_tta=False, shifts=((0.0, 0.0),)).box_probabilities(img, box)[0]
    assert centred[class_id("7H")] == pytest.approx(1 / 54, rel=1e-4)  # sees black only: uniform
    both = IndexClassifier(path, rotate_tta=False, shifts=((0.0, 0.0), (0.5, 0.0))).box_probabilities(
        img, box
    )[0]
    assert both[class_id("7H")] > 2 * both[class_id("KS")]
    shifted = IndexClassifier(path, rotate_tta=False).probabilities(
        crop_boxes(img, np.array([[110, 100, 130, 120]], np.float32), 32)
    )[0]
    expected = np.sqrt(centred * shifted)
    np.testing.assert_allclose(both, expected / expected.sum(), rtol=1e-4)


def test_only_unsure_boxes_are_read_at_the_other_offsets(tmp_path):
    """Of two boxes, the one whose centred reading is sure (red: KS at 0.87) keeps that reading even
    though its shifted crop sees blue; the unsure one (black) is averaged over both offsets. With
    ``shift_below`` above 1 both are averaged."""
    path = colour_classifier(tmp_path / "c.onnx")
    img = np.zeros((200, 300, 3), np.uint8)
    img[100:120, 100:120] = (0, 0, 255)  # red box
    img[90:130, 126:140] = (255, 0, 0)  # blue right of it, seen only by its shifted crop
    img[90:130, 226:240] = (255, 0, 0)  # blue right of the black box
    boxes = np.array([[100, 100, 120, 120], [200, 100, 220, 120]], np.float32)
    shifts = ((0.0, 0.0), (0.5, 0.0))
    centred = IndexClassifier(path, rotate_tta=False, shifts=shifts[:1]).box_probabilities(img, boxes)
    assert centred[0, class_id("KS")] > 0.85 and centred[1].max() < 0.8
    everywhere = IndexClassifier(path, rotate_tta=False, shifts=shifts, shift_below=1.01)
    adaptive = IndexClassifier(path, rotate_tta=False, shifts=shifts, shift_below=0.8)
    p_all, p_adaptive = everywhere.box_probabilities(img, boxes), adaptive.box_probabilities(img, boxes)
    np.testing.assert_allclose(p_adaptive[0], centred[0], rtol=1e-5)  # sure: not re-read
    assert p_all[0, class_id("KS")] < centred[0, class_id("KS")]  # re-read, the blue pulls it down
    np.testing.assert_allclose(p_adaptive[1], p_all[1], rtol=1e-5)  # unsure: re-read either way
    assert p_adaptive[1, class_id("7H")] > 2 * p_adaptive[1, class_id("KS")]


def test_shift_tta_needs_an_offset(tmp_path):
    with pytest.raises(ValueError, match="at least one offset"):
        IndexClassifier(colour_classifier(tmp_path / "c.onnx"), shifts=())


def joker_classifier(path):
    """Blue-dominant crops → SJ, red-dominant → KS; a dimmer colour gives a less sure reading
    (channel mean 1.0: p ≈ 0.998, mean 0.5: p ≈ 0.74)."""
    return channel_classifier(path, {0: "SJ", 2: "KS"})


def joker_scene():
    """A bright-blue box (sure SJ), a dim-blue box (unsure SJ) and a dim-red box (unsure KS)."""
    img = np.zeros((300, 300, 3), np.uint8)
    img[0:100, 0:100] = (255, 0, 0)
    img[0:100, 150:250] = (128, 0, 0)
    img[150:250, 0:100] = (0, 0, 128)
    boxes = Detections([[30, 30, 60, 70], [180, 30, 210, 70], [30, 180, 60, 220]], [0.9, 0.9, 0.9], [0, 0, 0])
    return img, boxes


def test_joker_conf_holds_only_jokers_to_a_higher_probability(tmp_path):
    clf = IndexClassifier(joker_classifier(tmp_path / "j.onnx"))
    img, boxes = joker_scene()
    plain = clf.name_boxes(img, boxes, det_conf=0.1, conf=0.5)
    assert sorted(plain.names) == ["KS", "SJ", "SJ"]
    strict = clf.name_boxes(img, boxes, det_conf=0.1, conf=0.5, joker_conf=0.9)
    # the unsure joker goes; the equally unsure KS stays, it is held to conf only
    assert sorted(strict.names) == ["KS", "SJ"]
    np.testing.assert_allclose(strict[strict.class_id == class_id("SJ")].xyxy, [[30, 30, 60, 70]])


def test_naming_at_several_det_confs_matches_naming_at_each(tmp_path):
    """One reading for a whole det_conf sweep gives what a reading per det_conf gives: overlapping,
    nested and tied boxes at many scores, some blue (7H), some red (KS), some black (background-ish)."""
    clf = IndexClassifier(colour_classifier(tmp_path / "c.onnx"))
    rng = np.random.default_rng(3)
    img = rng.integers(0, 2, (240, 240, 3), np.uint8) * 255
    xy = rng.uniform(0, 200, (40, 2))
    wh = rng.uniform(10, 40, (40, 2))
    scores = np.round(rng.uniform(0, 1, 40), 1)  # ties on purpose
    boxes = Detections(np.hstack([xy, xy + wh]).astype(np.float32), scores, np.zeros(40, np.int64))
    det_confs = (0.05, 0.2, 0.3, 0.5, 0.8)

    def by_count(det, p):
        """An adjustment that depends on the other boxes (here: how many there are)."""
        return np.roll(p, len(det), axis=1)

    for adjust in (None, by_count):
        at = clf.name_boxes_at(img, boxes, det_confs, conf=0.3, adjust=adjust)
        for d in det_confs:
            one = clf.name_boxes(img, boxes, det_conf=d, conf=0.3, adjust=adjust)
            np.testing.assert_array_equal(at[d].xyxy, one.xyxy)
            np.testing.assert_array_equal(at[d].class_id, one.class_id)
            np.testing.assert_allclose(at[d].confidence, one.confidence, rtol=1e-5)
        assert len(at[0.05]) > len(at[0.8]) > 0
    plain = clf.name_boxes(img, boxes, det_conf=0.05, conf=0.3)
    rolled = clf.name_boxes(img, boxes, det_conf=0.05, conf=0.3, adjust=by_count)
    assert not np.array_equal(plain.class_id, rolled.class_id)
