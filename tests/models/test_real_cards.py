"""The card-labelled real photos (``labels.jsonl``): loader errors and the per-photo multiset counts,
on a fabricated folder and a fake reader (expected figures counted by hand)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from models.evaluate import (
    CardPhoto,
    EvaluationDataError,
    evaluate_real_cards,
    format_real_cards_report,
    load_real_cards,
)
from vision.instances import CardInstance

#: photo stem → (grey level of its image, view, labelled cards, cards the fake reader returns)
PHOTOS = {
    # AS twice labelled, read three times (one extra), 10H right, SJ missed, an unknown ??
    "a": (10, "phone", ["AS", "AS", "10H", "SJ"], ["AS", "AS", "AS", "10H", "??"]),
    # the big joker found, 3C missed, QS extra
    "b": (20, "phone", ["BJ", "KD", "3C"], ["BJ", "KD", "QS"]),
    # a false small joker
    "c": (30, "phone2022", ["5C"], ["5C", "SJ"]),
    # read exactly
    "d": (40, "phone2022", ["7D"], ["7D"]),
}


def _folder(root: Path, lines: list[str] | None = None) -> Path:
    """``root`` with images/*.png (one grey level each) and labels.jsonl (``lines``, else PHOTOS)."""
    (root / "images").mkdir()
    for stem, (grey, _, _, _) in PHOTOS.items():
        cv2.imwrite(str(root / "images" / f"{stem}.png"), np.full((8, 8, 3), grey, np.uint8))
    if lines is None:
        lines = [
            json.dumps({"image": f"images/{stem}.png", "cards": cards, "view": view})
            for stem, (_, view, cards, _) in PHOTOS.items()
        ]
    (root / "labels.jsonl").write_text("\n".join(lines) + "\n")
    return root


class FakeReader:
    """Returns the chosen cards of the photo whose grey level the image has."""

    def __init__(self) -> None:
        self.by_grey = {grey: read for grey, _, _, read in PHOTOS.values()}
        self.calls = 0

    def read(self, image: np.ndarray) -> SimpleNamespace:
        self.calls += 1
        names = self.by_grey[int(image[0, 0, 0])]
        cards = [CardInstance(n, -1, 0.9, (0.0, 0.0, 1.0, 1.0), 1) for n in names]
        return SimpleNamespace(cards=cards, corners=None)


def test_loader_reads_paths_cards_and_views_and_skips_blank_lines(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    with (folder / "labels.jsonl").open("a") as f:
        f.write("\n   \n")
    photos = load_real_cards(folder)
    assert [p.path for p in photos] == [folder / "images" / f"{s}.png" for s in "abcd"]
    assert photos[0] == CardPhoto(folder / "images" / "a.png", ("AS", "AS", "10H", "SJ"), "phone")
    assert [p.view for p in photos] == ["phone", "phone", "phone2022", "phone2022"]


def test_a_line_without_view_has_the_empty_view(tmp_path: Path) -> None:
    folder = _folder(tmp_path, ['{"image": "images/a.png", "cards": ["2S"]}'])
    (photo,) = load_real_cards(folder)
    assert (photo.cards, photo.view) == (("2S",), "")


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ('{"image": "images/b.png", "cards": ["KD"', "not a JSON line"),
        ('["images/b.png", ["KD"]]', "not a JSON object"),
        ('{"cards": ["KD"]}', 'no "image" path'),
        ('{"image": "images/b.png", "cards": "KD"}', '"cards" is not a list'),
        ('{"image": "images/b.png", "cards": ["KD", "1H"]}', "unknown card name(s) 1H"),
        ('{"image": "images/b.png", "cards": ["KD"], "view": 3}', '"view" is not a string'),
    ],
)
def test_a_malformed_line_is_named_by_file_and_line(tmp_path: Path, bad: str, says: str) -> None:
    good = '{"image": "images/a.png", "cards": ["AS"], "view": "phone"}'
    folder = _folder(tmp_path, [good, "", bad, good])
    with pytest.raises(EvaluationDataError) as err:
        load_real_cards(folder)
    assert str(err.value).startswith(f"{folder / 'labels.jsonl'}:3: ")
    assert says in str(err.value)


def test_a_missing_image_is_named_with_its_line(tmp_path: Path) -> None:
    good = '{"image": "images/a.png", "cards": ["AS"]}'
    folder = _folder(tmp_path, [good, '{"image": "images/gone.jpg", "cards": ["AS"]}'])
    with pytest.raises(EvaluationDataError, match=r"labels\.jsonl:2: image not found: .*gone\.jpg"):
        load_real_cards(folder)


def test_a_missing_or_empty_labels_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(EvaluationDataError, match="labels file not found"):
        load_real_cards(tmp_path)
    folder = _folder(tmp_path, [""])
    with pytest.raises(EvaluationDataError, match="no labelled photos"):
        load_real_cards(folder)


def test_counts_per_view_and_pooled_by_hand(tmp_path: Path) -> None:
    reader = FakeReader()
    seen: list[str] = []
    report = evaluate_real_cards(
        reader,  # type: ignore[arg-type]
        load_real_cards(_folder(tmp_path)),
        on_photo=lambda photo, image, reading: seen.append(photo.path.stem),
    )
    assert reader.calls == 4 and seen == ["a", "b", "c", "d"]
    phone, p2022 = report.by_view["phone"], report.by_view["phone2022"]
    # a: AS 2 of 2 (+1 extra), 10H, ?? extra, SJ missed; b: BJ, KD, QS extra, 3C missed
    assert (phone.cards.tp, phone.cards.fp, phone.cards.fn) == (5, 3, 2)
    assert (phone.jokers.tp, phone.jokers.fp, phone.jokers.fn) == (1, 0, 1)
    assert (phone.photos, phone.perfect) == (2, 0)
    # c: 5C, SJ extra (a false joker); d: 7D exactly
    assert (p2022.cards.tp, p2022.cards.fp, p2022.cards.fn) == (2, 1, 0)
    assert (p2022.jokers.tp, p2022.jokers.fp, p2022.jokers.fn) == (0, 1, 0)
    assert (p2022.photos, p2022.perfect) == (2, 1)
    assert (report.cards.tp, report.cards.fp, report.cards.fn) == (7, 4, 2)
    assert (report.jokers.tp, report.jokers.fp, report.jokers.fn) == (1, 1, 1)
    assert (report.photos, report.perfect) == (4, 1)
    assert report.cards.precision == pytest.approx(7 / 11)
    assert report.cards.recall == pytest.approx(7 / 9)
    assert report.cards.f1 == pytest.approx(14 / 20)  # 2·tp / (2·tp + fp + fn)
    assert report.seconds >= phone.seconds > 0

    text = format_real_cards_report(report)
    lines = text.splitlines()
    assert lines[0].startswith("real card-labelled photos: 4 photos, 9 labelled cards, ")
    assert lines[1] == (
        "  all: 4 photos, 9 cards: P 63.64% R 77.78% F1 70.00% (tp 7 fp 4 fn 2); "
        "jokers P 50.00% R 50.00% (tp 1 fp 1 fn 1); all correct 1/4"
    )
    assert lines[2].startswith("  phone: 2 photos, 7 cards: P 62.50% R 71.43% F1 66.67% (tp 5 fp 3 fn 2)")
    assert lines[3].startswith(
        "  phone2022: 2 photos, 2 cards: P 66.67% R 100.00% F1 80.00% (tp 2 fp 1 fn 0)"
    )


def test_a_joker_read_as_the_other_joker_is_one_false_and_one_missed(tmp_path: Path) -> None:
    class Swapped(FakeReader):
        def read(self, image: np.ndarray) -> SimpleNamespace:
            reading = super().read(image)
            reading.cards = [
                CardInstance("SJ" if str(c.card) == "BJ" else c.card, -1, 0.9, c.box, 1)
                for c in reading.cards
            ]
            return reading

    photos = [p for p in load_real_cards(_folder(tmp_path)) if p.path.stem == "b"]
    report = evaluate_real_cards(Swapped(), photos)  # type: ignore[arg-type]
    assert (report.cards.tp, report.cards.fp, report.cards.fn) == (1, 2, 2)
    assert (report.jokers.tp, report.jokers.fp, report.jokers.fn) == (0, 1, 1)


@pytest.mark.slow
def test_eval_prints_the_card_labelled_photos_and_can_skip_them(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tractorcam_cli.main import app

    (tmp_path / "cards").mkdir()
    folder = _folder(tmp_path / "cards")
    edje = tmp_path / "edje"
    edje.mkdir()
    cv2.imwrite(str(edje / "p.png"), np.full((64, 64, 3), 90, np.uint8))
    (edje / "p.xml").write_text(
        "<annotation><filename>p.png</filename><object><name>ace</name><bndbox><xmin>1</xmin>"
        "<ymin>1</ymin><xmax>30</xmax><ymax>40</ymax></bndbox></object></annotation>"
    )
    base = ["eval", "--n", "0", "--real", str(edje)]
    r = CliRunner().invoke(app, [*base, "--real-cards", str(folder), "--limit", "2"])
    assert r.exit_code == 0, r.output
    assert "real photos: 1 photos" in r.output
    # blank images: the shipped reader reads nothing, so 0 of the 7 labelled cards of a and b
    assert "real card-labelled photos: 2 photos, 7 labelled cards" in r.output
    assert "  phone: 2 photos, 7 cards: P – R 0.00% F1 0.00% (tp 0 fp 0 fn 7)" in r.output
    missing = tmp_path / "nowhere"
    r = CliRunner().invoke(app, [*base, "--real-cards", str(missing)])
    assert r.exit_code == 2 and f"labels file not found: {missing / 'labels.jsonl'}" in r.output
    r = CliRunner().invoke(app, [*base, "--real-cards", str(missing), "--skip-real-cards"])
    assert r.exit_code == 0 and "real photos: 1 photos" in r.output and "card-labelled" not in r.output
    r = CliRunner().invoke(app, ["eval", "--n", "0", "--skip-real", "--real-cards", str(missing)])
    assert r.exit_code == 0 and "real" not in r.output.split("\n", 1)[1]
