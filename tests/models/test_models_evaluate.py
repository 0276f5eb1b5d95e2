from collections import Counter
from dataclasses import replace

import pytest

from models.evaluate import EvaluationDataError, annotation_truth, load_real_photos

VOC = """<annotation><filename>{name}</filename><size><width>100</width><height>80</height></size>
<object><name>queen</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>30</xmax><ymax>40</ymax></bndbox></object>
<object><name>ace</name><bndbox><xmin>50</xmin><ymin>2</ymin><xmax>90</xmax><ymax>60</ymax></bndbox></object>
</annotation>"""


def test_load_real_photos_reads_voc(tmp_path):
    (tmp_path / "p1.JPG").write_bytes(b"x")
    (tmp_path / "p1.xml").write_text(VOC.format(name="p1.JPG"))
    (photo,) = load_real_photos(tmp_path)
    assert photo.path.name == "p1.JPG"
    assert [(b.rank, b.box) for b in photo.boxes] == [("Q", (1, 2, 30, 40)), ("A", (50, 2, 90, 60))]


def test_load_real_photos_empty_folder(tmp_path):
    with pytest.raises(EvaluationDataError):
        load_real_photos(tmp_path)


def test_annotation_truth_counts_cards_with_a_visible_corner():
    ann = {
        "cards": [
            {"card": "7H", "corners": [{"visible": 1.0}, {"visible": 0.0}]},
            {"card": "7H", "corners": [{"visible": 0.7}, {"visible": 0.2}]},
            {"card": "KS", "corners": [{"visible": 0.1}, {"visible": 0.3}]},  # hidden: not in truth
            {"class_id": 53, "corners": [{"visible": 0.9}]},
        ]
    }
    assert annotation_truth(ann) == Counter({"7H": 2, "BJ": 1})


def _card(name, seat, quad, vis, role="play", face_up=True):
    return {
        "card": name,
        "seat": seat,
        "role": role,
        "face_up": face_up,
        "quad": quad,
        "corners": [{"visible": v} for v in vis],
    }


SQ = [[0, 0], [100, 0], [100, 140], [0, 140]]
SQ2 = [[300, 0], [400, 0], [400, 140], [300, 140]]


def test_face_down_cards_are_not_truth():
    ann = {"cards": [_card("7H", "S", SQ, [1.0], face_up=False), _card("8H", "S", SQ, [0.6])]}
    assert annotation_truth(ann) == Counter({"8H": 1})


def test_plays_group_by_seat_and_assign_by_outline():
    from models.evaluate import annotation_plays, assign_to_plays
    from vision.instances import CardInstance

    ann = {
        "cards": [
            _card("7H", "S", SQ, [1.0, 1.0]),
            _card("7H", "S", SQ, [0.9, 0.0]),
            _card("KS", "N", SQ2, [0.2, 0.1]),  # hidden: part of N's play, not of its truth
            _card("2C", None, SQ2, [1.0], role="captured"),
        ]
    }
    plays = annotation_plays(ann)
    assert [(p.key, p.truth) for p in plays] == [("N", Counter()), ("S", Counter({"7H": 2}))]
    cards = [
        CardInstance("7H", 21, 0.9, (10, 10, 90, 130), 2),
        CardInstance("7H", 21, 0.8, (5, 5, 15, 25), 1),
        CardInstance("AS", 12, 0.7, (310, 10, 320, 30), 1),  # lies on N's card
        CardInstance("AD", 38, 0.7, (600, 600, 610, 620), 1),  # on no play
    ]
    assert assign_to_plays(cards, plays) == [Counter({"AS": 1}), Counter({"7H": 2})]


def test_sweep_confidence_filters_corners_per_threshold():
    import numpy as np

    from models.evaluate import SyntheticScene, annotation_plays, sweep_confidence
    from vision.detections import Detections
    from vision.detectors import DetectorConfig
    from vision.labels import class_id
    from vision.reader import CardReader, ReaderConfig
    from vision.tiling import TilingConfig

    script = (
        Detections([[10, 10, 20, 30], [200, 10, 210, 30]], [0.7, 0.3], [class_id("7H"), class_id("9S")]),
    )
    reader = CardReader(
        ReaderConfig(
            detector=DetectorConfig(type="fake", script=script, conf=0.0), tiling=TilingConfig(levels=(1.0,))
        )
    )
    ann = {"cards": [_card("7H", "S", SQ, [1.0])]}
    scene = SyntheticScene(
        "s", np.zeros((320, 320, 3), np.uint8), annotation_truth(ann), annotation_plays(ann)
    )
    reports = sweep_confidence(reader, [scene], [0.2, 0.5])
    assert (reports[0.2].cards.tp, reports[0.2].cards.fp) == (1, 1)
    assert (reports[0.5].cards.tp, reports[0.5].cards.fp) == (1, 0)
    assert reports[0.5].exact_plays == 1 and reports[0.2].exact_plays == 1  # 9S lies on no play


def test_sweep_thresholds_separates_localiser_and_classifier_scores(tmp_path):
    """A weak localiser box (score 0.03) counts only at det_conf <= 0.03; the classifier's colour
    probability decides the rest. Expected tallies worked out from the scripted boxes by hand."""
    import numpy as np

    from models.evaluate import SyntheticScene, annotation_plays, sweep_thresholds
    from tests.vision.test_vision_classifier import colour_classifier
    from vision.detections import Detections
    from vision.detectors import DetectorConfig
    from vision.reader import CardReader, ReaderConfig
    from vision.tiling import TilingConfig

    img = np.zeros((320, 320, 3), np.uint8)
    img[0:50, 0:40] = (255, 0, 0)  # blue: the classifier says 7H (p ~ 0.99)
    img[90:140, 90:130] = (0, 0, 255)  # red: KS, but no KS is on the table
    script = (Detections([[10, 10, 30, 40], [100, 100, 120, 130]], [0.03, 0.5], [0, 0]),)
    reader = CardReader(
        ReaderConfig(
            detector=DetectorConfig(
                type="fake", script=script, classifier=colour_classifier(tmp_path / "c.onnx"), det_conf=0.01
            ),
            tiling=TilingConfig(levels=(1.0,)),
        )
    )
    ann = {"cards": [_card("7H", "S", SQ, [1.0])]}
    scene = SyntheticScene("s", img, annotation_truth(ann), annotation_plays(ann))
    reports = sweep_thresholds(reader, [scene], [0.01, 0.1], [0.5])
    assert set(reports) == {(0.01, 0.5, None), (0.1, 0.5, None)}  # no joker thresholds asked for
    low, high = reports[(0.01, 0.5, None)], reports[(0.1, 0.5, None)]
    assert (low.cards.tp, low.cards.fp, low.cards.fn) == (1, 1, 0)
    assert (high.cards.tp, high.cards.fp, high.cards.fn) == (0, 1, 1)
    assert low.exact_plays == 1 and high.exact_plays == 0


def test_report_prints_undefined_precision_as_dash_not_100():
    """A class nobody predicted must not print as a perfect precision (jokers: tp 0, fp 0)."""
    from models.evaluate import format_scene_report
    from models.metrics import SceneReport

    report = SceneReport()
    report.add_cards(Counter({"5H": 1}), Counter({"5H": 1, "BJ": 2}))
    text = format_scene_report(report, per_class=True)
    jokers = next(line for line in text.splitlines() if line.strip().startswith("jokers:"))
    assert "precision – recall 0.00%" in jokers
    assert "BJ: P – R 0.00% (tp 0 fp 0 fn 2)" in text
    assert "5H: P 100.00% R 100.00%" in text


def test_sweep_tries_joker_thresholds_above_conf_only(tmp_path):
    """One SJ on the table; the reader sees it surely (p ≈ 0.998) and a dim-blue patch unsurely as a
    second SJ (p ≈ 0.74) and a dim-red one as KS (p ≈ 0.74). Tallies worked out by hand."""
    from models.evaluate import SyntheticScene, annotation_plays, sweep_thresholds
    from tests.vision.test_vision_classifier import joker_classifier, joker_scene
    from vision.detectors import DetectorConfig
    from vision.instances import InstanceConfig
    from vision.reader import CardReader, ReaderConfig
    from vision.tiling import TilingConfig

    img, boxes = joker_scene()
    reader = CardReader(
        ReaderConfig(
            detector=DetectorConfig(
                type="fake", script=(boxes,), classifier=joker_classifier(tmp_path / "j.onnx"), det_conf=0.01
            ),
            tiling=TilingConfig(tile=300, levels=(1.0,)),
            instances=InstanceConfig(card_size_px=(10.0, 15.0)),  # tiny cards: no two corners pair up
        )
    )
    ann = {"cards": [_card("SJ", "S", SQ, [1.0])]}
    scene = SyntheticScene("s", img, annotation_truth(ann), annotation_plays(ann))
    reports = sweep_thresholds(reader, [scene], [0.01], [0.5], joker_confs=[0.3, 0.9])
    assert set(reports) == {(0.01, 0.5, None), (0.01, 0.5, 0.9)}  # 0.3 is not above conf 0.5
    plain, strict = reports[(0.01, 0.5, None)], reports[(0.01, 0.5, 0.9)]
    assert (plain.jokers.tp, plain.jokers.fp) == (1, 1) and (strict.jokers.tp, strict.jokers.fp) == (1, 0)
    assert (plain.cards.fp, strict.cards.fp) == (2, 1)  # the unsure KS stays false in both


def test_module_doctests() -> None:
    import doctest

    import models.evaluate

    result = doctest.testmod(models.evaluate)
    assert result.attempted >= 3 and result.failed == 0


def _split(root, scenes):
    """A rendered-dataset folder: ``scenes`` = [(stem, designs)], one blank image each."""
    import json

    import cv2
    import numpy as np

    (root / "annotations" / "heldout").mkdir(parents=True)
    (root / "images" / "heldout").mkdir(parents=True)
    for stem, designs in scenes:
        ann = {"designs": designs, "cards": [_card("7H", "S", SQ, [1.0])]}
        (root / "annotations" / "heldout" / f"{stem}.json").write_text(json.dumps(ann))
        cv2.imwrite(str(root / "images" / "heldout" / f"{stem}.png"), np.zeros((8, 8, 3), np.uint8))


def test_split_scenes_carry_their_design_and_can_be_filtered(tmp_path):
    from models.evaluate import load_synthetic_split

    _split(tmp_path, [("a", ["paris"]), ("b", ["plastic", "paris"]), ("c", ["tigullio"])])
    assert [(s.name, s.design) for s in load_synthetic_split(tmp_path)] == [
        ("a", "paris"),
        ("b", "paris+plastic"),
        ("c", "tigullio"),
    ]
    assert [s.name for s in load_synthetic_split(tmp_path, designs=["paris"])] == ["a", "b"]
    assert [s.name for s in load_synthetic_split(tmp_path, designs=["plastic", "tigullio"])] == ["b", "c"]
    assert [s.name for s in load_synthetic_split(tmp_path, limit=1, designs=["tigullio"])] == ["c"]
    with pytest.raises(EvaluationDataError, match="no scene .* shows gnomangelo"):
        list(load_synthetic_split(tmp_path, designs=["gnomangelo"]))


def test_report_keeps_figures_per_design(tmp_path):
    """Two scenes of two designs, each holding one 7H: the scripted reader reads 7H on the first and
    7H + 9S on the second, so paris (1 scene) is all right and plastic gets one true and one false card."""
    import numpy as np

    from models.evaluate import SyntheticScene, annotation_plays, evaluate_synthetic, format_scene_report
    from vision.detections import Detections
    from vision.detectors import DetectorConfig
    from vision.labels import class_id
    from vision.reader import CardReader, ReaderConfig
    from vision.tiling import TilingConfig

    seven = Detections([[10, 10, 20, 30]], [0.9], [class_id("7H")])
    nine = Detections([[10, 10, 20, 30], [200, 10, 210, 30]], [0.9, 0.9], [class_id("7H"), class_id("9S")])
    reader = CardReader(
        ReaderConfig(
            detector=DetectorConfig(type="fake", script=(seven, nine), conf=0.0),
            tiling=TilingConfig(levels=(1.0,)),
        )
    )
    ann = {"cards": [_card("7H", "S", SQ, [1.0])]}
    img = np.zeros((320, 320, 3), np.uint8)
    scenes = [
        SyntheticScene("p", img, annotation_truth(ann), annotation_plays(ann), "paris"),
        SyntheticScene("q", img, annotation_truth(ann), annotation_plays(ann), "plastic"),
    ]
    report = evaluate_synthetic(reader, scenes)
    assert (report.cards.tp, report.cards.fp) == (2, 1)
    assert set(report.by_design) == {"paris", "plastic"}
    paris, plastic = report.by_design["paris"], report.by_design["plastic"]
    assert (paris.images, paris.cards.tp, paris.cards.fp, paris.exact_plays) == (1, 1, 0, 1)
    assert (plastic.images, plastic.cards.tp, plastic.cards.fp, plastic.exact_plays) == (1, 1, 1, 1)
    assert paris.by_design == {} and plastic.by_design == {}  # one level only
    lines = format_scene_report(report, per_design=True).splitlines()
    rows = [
        line.strip()
        for line in lines[
            lines.index("  per design (scenes with two designs under both names joined by +):") + 1 :
        ]
    ]
    assert rows[0].startswith("plastic: 1 images, 1 plays, exact 100.00%, cards P 50.00% R 100.00%")
    assert rows[1].startswith("paris: 1 images")  # the worse design first
    assert "per design" not in format_scene_report(report)


def test_report_keeps_figures_per_card_size():
    """Three scenes holding one 7H each, with cards 140, 140 and 350 px high (SQ's quad is 100 × 140):
    the scripted reader adds a false 9S on the second, so the 120-160 px bin has one false card in two
    scenes and the 300 px bin none; a scene with no face-up card (None) is in no bin."""
    import numpy as np

    from models.evaluate import (
        SyntheticScene,
        annotation_plays,
        evaluate_synthetic,
        format_scene_report,
        scene_card_px,
    )
    from vision.detections import Detections
    from vision.detectors import DetectorConfig
    from vision.labels import class_id
    from vision.reader import CardReader, ReaderConfig
    from vision.tiling import TilingConfig

    seven = Detections([[10, 10, 20, 30]], [0.9], [class_id("7H")])
    nine = Detections([[10, 10, 20, 30], [200, 10, 210, 30]], [0.9, 0.9], [class_id("7H"), class_id("9S")])
    reader = CardReader(
        ReaderConfig(
            detector=DetectorConfig(type="fake", script=(seven, nine, seven, seven), conf=0.0),
            tiling=TilingConfig(levels=(1.0,)),
        )
    )
    small = {"cards": [_card("7H", "S", SQ, [1.0])]}
    big = {"cards": [_card("7H", "S", [[0, 0], [250, 0], [250, 350], [0, 350]], [1.0])]}
    assert (scene_card_px(small), scene_card_px(big)) == (140.0, 350.0)
    img = np.zeros((320, 320, 3), np.uint8)  # one tile: one scripted reading per scene

    def scene(name, ann, px):
        return SyntheticScene(name, img, annotation_truth(ann), annotation_plays(ann), "paris", px)

    scenes = [
        scene("a", small, scene_card_px(small)),
        scene("b", small, scene_card_px(small)),
        scene("c", big, scene_card_px(big)),
        scene("d", small, None),
    ]
    report = evaluate_synthetic(reader, scenes)
    assert report.images == 4 and set(report.by_size) == {"120-160 px", "300 px and more"}
    mid, top = report.by_size["120-160 px"], report.by_size["300 px and more"]
    # the 9S lies off the play's card outline: a false card of the scene, not of the play
    assert (mid.images, mid.cards.tp, mid.cards.fp, mid.exact_plays) == (2, 2, 1, 2)
    assert (top.images, top.cards.tp, top.cards.fp, top.exact_plays) == (1, 1, 0, 1)
    lines = format_scene_report(report, per_size=True).splitlines()
    start = lines.index("  per card size (median height of a scene's face-up cards):") + 1
    rows = [line.strip() for line in lines[start:]]
    assert rows[0].startswith("120-160 px: 2 images, 2 plays, exact 100.00%, cards P 66.67% R 100.00%")
    assert rows[1].startswith("300 px and more: 1 images")  # smallest cards first
    assert "per card size" not in format_scene_report(report)


def _reader_at(setting, **config):
    """A reader of the scripted two-stage kind at ``setting`` (det_conf, conf, joker_conf)."""
    from vision.reader import CardReader, ReaderConfig

    det_conf, conf, joker_conf = setting
    detector = config.pop("detector")
    return CardReader(
        ReaderConfig(
            detector=replace(detector, det_conf=det_conf, conf=conf, joker_conf=joker_conf), **config
        )
    )


def test_the_sweep_scores_the_shipped_read_at_every_setting(tmp_path):
    """The sweep's report at a setting is the report of ``CardReader.read`` at that setting, with
    every step of the read: pair naming, unknown cards (the unsure SJ and KS written ``?J``/``??``
    at conf 0.8) and the second look for jokers (the weak bright-blue box, score 0.05, kept as a sure
    SJ at det_conf 0.1, where the weak dim-red KS at 0.06 is not)."""
    import numpy as np

    from models.evaluate import SyntheticScene, annotation_plays, evaluate_synthetic, sweep_thresholds
    from tests.vision.test_vision_classifier import joker_classifier
    from vision.detections import Detections
    from vision.detectors import DetectorConfig
    from vision.instances import InstanceConfig
    from vision.reader import UnknownCards
    from vision.tiling import TilingConfig

    img = np.zeros((400, 400, 3), np.uint8)
    img[0:100, 0:100] = (255, 0, 0)  # sure SJ (localiser 0.9)
    img[0:100, 150:250] = (128, 0, 0)  # unsure SJ (0.9)
    img[150:250, 0:100] = (0, 0, 128)  # unsure KS (0.9)
    img[150:250, 150:250] = (255, 0, 0)  # sure SJ the localiser barely sees (0.05)
    img[150:250, 280:380] = (0, 0, 128)  # unsure KS it barely sees (0.06)
    img[280:380, 280:380] = (255, 0, 0)  # sure SJ below the second look (0.025)
    xyxy = [
        [30, 30, 60, 70],
        [180, 30, 210, 70],
        [30, 180, 60, 220],
        [180, 180, 210, 220],
        [310, 180, 340, 220],
        [310, 310, 340, 350],
    ]
    every = Detections(xyxy, [0.9, 0.9, 0.9, 0.05, 0.06, 0.025], [0] * 6)
    script = (every, every[[0, 2, 3]])  # scene a, scene b
    config = {
        "detector": DetectorConfig(
            type="fake", script=script, classifier=joker_classifier(tmp_path / "j.onnx")
        ),
        "tiling": TilingConfig(tile=400, levels=(1.0,)),
        "instances": InstanceConfig(card_size_px=(10.0, 15.0)),  # tiny cards: no two corners pair up
        "unknown_cards": UnknownCards(),
        "joker_det_conf": 0.03,
    }
    ann = {"cards": [_card("SJ", "S", SQ, [1.0]), _card("KS", "N", SQ2, [1.0])]}
    scenes = [SyntheticScene(n, img, annotation_truth(ann), annotation_plays(ann)) for n in "ab"]
    reports = sweep_thresholds(
        _reader_at((0.02, 0.05, None), **config), scenes, [0.02, 0.1], [0.5, 0.8], [0.9]
    )
    assert len(reports) == 8
    for setting, report in reports.items():
        assert report == evaluate_synthetic(_reader_at(setting, **config), scenes), setting
    # the steps the sweep must not skip are taken in this scene
    names = {s: sorted(str(c.card) for c in _reader_at(s, **config).read(img).cards) for s in reports}
    assert names[(0.1, 0.5, None)] == ["KS", "SJ", "SJ", "SJ"]  # the second look's SJ, not its KS
    assert names[(0.02, 0.5, None)] == ["KS", "KS", "SJ", "SJ", "SJ", "SJ"]  # all named in the first
    assert any("?" in card for card in names[(0.1, 0.8, None)])  # unknown cards


def test_the_sweep_needs_the_stages_of_its_lowest_det_conf(tmp_path):
    from models.evaluate import sweep_thresholds
    from tests.vision.test_vision_classifier import colour_classifier
    from vision.detectors import DetectorConfig

    config = {
        "detector": DetectorConfig(type="fake", script=(), classifier=colour_classifier(tmp_path / "c.onnx"))
    }
    with pytest.raises(ValueError, match="below the reader's det_conf 0.1"):
        sweep_thresholds(_reader_at((0.1, 0.5, None), **config), [], [0.05, 0.1], [0.5])


@pytest.mark.slow
def test_the_sweep_scores_the_shipped_reader_as_it_reads():
    """With the committed networks on rendered held-out tables, as the table service reads them
    (unknown cards, the second look for jokers): the sweep's report at the shipped thresholds is
    the report of the shipped reader's ``read``."""
    from models.evaluate import evaluate_synthetic, render_heldout_scenes, sweep_thresholds
    from vision.reader import CardReader, default_reader_config
    from vision.settings import SHIPPED

    scenes = list(render_heldout_scenes(2, width=640, height=480))
    shipped = (SHIPPED.det_conf, SHIPPED.conf, SHIPPED.joker_conf)

    def reader(**thresholds):
        config = default_reader_config(unknown_cards=True, **thresholds)
        return CardReader(replace(config, joker_det_conf=SHIPPED.joker_det_conf))

    sweep = reader(det_conf=0.3, conf=0.05, joker_conf=None)
    reports = sweep_thresholds(sweep, scenes, [0.3, SHIPPED.det_conf], [SHIPPED.conf], [SHIPPED.joker_conf])
    read = evaluate_synthetic(reader(), scenes)
    assert read.cards.tp > 0
    assert reports[shipped] == read
