from collections import Counter

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
