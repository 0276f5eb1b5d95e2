"""Enrolling a deck from photos (``tractorcam enroll``): the photos are rendered from a held-out
design's cards laid as ``enroll sheet`` says, and each face cut from them must be that card's face
(the design's own art is only the truth here)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from calibration.enroll import CutFace, EnrollError, cards_of_photo, enroll_photos
from models.synth.designs import HELDOUT_NAMES
from tractorcam_cli.main import app

runner = CliRunner()


def test_the_three_photos_hold_the_54_cards_once_jokers_last() -> None:
    cards = [c for k in range(3) for c in cards_of_photo(k)]
    assert len(cards) == len(set(cards)) == 54
    assert cards[:3] == ["2S", "3S", "4S"] and cards[12] == "AS" and cards[13] == "2H"
    assert cards[-2:] == ["SJ", "BJ"]


def _vector(face: np.ndarray) -> np.ndarray:
    """A face at 64 × 90 px without its outer edge (the cut may hold a sliver of cloth), each colour
    channel normalised: a vector whose dot product with another is their correlation."""
    f = cv2.resize(face, (64, 90), interpolation=cv2.INTER_AREA).astype(np.float32)[4:-4, 4:-4]
    f = (f - f.mean(axis=(0, 1))) / (f.std(axis=(0, 1)) + 1e-6)
    return f.ravel() / np.sqrt(f.size)


def _identify(cut: CutFace, candidates: dict[str, np.ndarray]) -> str:
    """Of the ``candidates`` (the cards lying in the same photo), the one whose face the cut face
    matches best, either way up."""
    names = list(candidates)
    ref = np.stack([_vector(candidates[n]) for n in names])
    scores = [ref @ _vector(f) for f in (cut.face, cv2.rotate(cut.face, cv2.ROTATE_180))]
    return names[int(np.argmax(np.maximum(*scores)))]


def _faces(design: str) -> dict[str, np.ndarray]:
    from models.synth.faces import load_faces

    out = {}
    for card, bgra in load_faces(design).faces.items():
        a = bgra[..., 3:4].astype(np.float32) / 255
        out[card] = (bgra[..., :3] * a + 255 * (1 - a)).astype(np.uint8)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("design", HELDOUT_NAMES)
def test_each_face_cut_from_the_photos_is_its_card(design: str) -> None:
    from models.synth.setup_frames import enrollment_photos

    faces = enroll_photos(enrollment_photos(design, seed=len(design)))
    assert [f.card for f in faces] == [c for k in range(3) for c in cards_of_photo(k)]
    truth = _faces(design)
    wrong = []
    for k in range(3):  # each cut face is the card of its cell, not another lying in that photo
        photo = {c: truth[c] for c in cards_of_photo(k)}
        wrong += [(f.card, got) for f in faces if f.card in photo and (got := _identify(f, photo)) != f.card]
    assert wrong == []
    for f in faces:  # the design's cards are 88 mm long (the renderer's card height)
        assert 82 <= f.card_mm[1] <= 94, (f.card, f.card_mm)


@pytest.mark.slow
def test_enroll_writes_the_faces_and_a_contact_sheet(tmp_path: Path) -> None:
    from models.synth.setup_frames import enrollment_photos

    photos = []
    for k, image in enumerate(enrollment_photos("paris", seed=3, width=1280, height=960)):
        photos += ["--images", str(tmp_path / f"p{k}.jpg")]
        cv2.imwrite(photos[-1], image)
    r = runner.invoke(app, ["enroll", *photos, "--out", str(tmp_path / "deck")])
    assert r.exit_code == 0, r.output
    faces = sorted(p.stem for p in (tmp_path / "deck" / "faces").glob("*.png"))
    assert len(faces) == 54 and "SJ" in faces and "BJ" in faces
    assert cv2.imread(str(tmp_path / "deck" / "contact.png")) is not None
    record = json.loads((tmp_path / "deck" / "enrollment.json").read_text())
    assert record["cards"][-1] == "BJ" and 82 <= record["card_mm"][1] <= 94


@pytest.mark.slow
def test_a_forgotten_card_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    from models.synth.setup_frames import enrollment_photos

    photos = enrollment_photos("paris", seed=4, width=1280, height=960, skip=frozenset({"QS", "BJ"}))
    with pytest.raises(
        EnrollError,
        match=r"no card found where 2 belong: QS \(photo 1, row 2, column 5\), BJ \(photo 3, row 3, column 6\)",
    ):
        enroll_photos(photos)
    args = []
    for k, image in enumerate(photos):
        args += ["--images", str(tmp_path / f"p{k}.jpg")]
        cv2.imwrite(args[-1], image)
    r = runner.invoke(app, ["enroll", *args, "--out", str(tmp_path / "deck")])
    assert r.exit_code == 2 and r.stderr.startswith("error: no card found where 2 belong: QS")
    assert not (tmp_path / "deck").exists()
    r = runner.invoke(app, ["enroll", *args[:4], "--out", str(tmp_path / "deck")])
    assert r.exit_code == 2 and "give the 3 photos" in r.stderr


def test_the_sheet_shows_where_each_card_goes(tmp_path: Path) -> None:
    r = runner.invoke(app, ["enroll", "sheet", "--out", str(tmp_path / "sheet.png")])
    assert r.exit_code == 0, r.output
    picture = cv2.imread(str(tmp_path / "sheet.png"))
    assert picture is not None and picture.shape[0] > 2 * picture.shape[1]  # three table views, stacked


@pytest.mark.slow
def test_a_learned_deck_is_read_with_by_detect_and_run(tmp_path: Path) -> None:
    """``enroll learn`` writes a classifier the reader takes with ``--model``; a folder without
    one is refused in one line."""
    from models.synth.setup_frames import enrollment_photos

    photos = enrollment_photos("paris", seed=3, width=1280, height=960)
    args = []
    for k, image in enumerate(photos):
        args += ["--images", str(tmp_path / f"p{k}.jpg")]
        cv2.imwrite(args[-1], image)
    deck = tmp_path / "deck"
    assert runner.invoke(app, ["enroll", *args, "--out", str(deck)]).exit_code == 0
    r = runner.invoke(app, ["detect", "--model", str(deck), args[1]])
    assert r.exit_code == 2 and "no classifier.onnx" in r.stderr
    r = runner.invoke(app, ["enroll", "learn", str(deck), "--minutes", "0.1"])
    assert r.exit_code == 0, r.output
    assert (deck / "classifier.onnx").is_file() and json.loads((deck / "learned.json").read_text())[
        "steps"
    ] > 0
    r = runner.invoke(app, ["detect", "--json", "--model", str(deck), args[1]])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout.splitlines()[0])["image"] == args[1]
    r = runner.invoke(
        app, ["run", "--source", str(tmp_path / "none"), "--model", str(tmp_path), "--table-size", "900x900"]
    )
    assert r.exit_code == 2
