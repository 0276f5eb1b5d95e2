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
    (tmp_path / "check").mkdir()
    labels = _labelled_photos(tmp_path / "check", "plain")
    r = runner.invoke(app, ["enroll", "learn", str(deck), "--minutes", "0.1", "--check", str(labels)])
    assert r.exit_code == 0, r.output
    assert (deck / "classifier.onnx").is_file() and json.loads((deck / "learned.json").read_text())[
        "steps"
    ] > 0
    checked = json.loads((deck / "checked.json").read_text())
    assert f"card F1 learned {100 * checked['learned_f1']:.1f} %" in r.stdout
    assert checked["kept"] in ("learned", "shipped") and checked["photos"] == 2
    r = runner.invoke(app, ["detect", "--json", "--model", str(deck), args[1]])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout.splitlines()[0])["image"] == args[1]
    r = runner.invoke(
        app, ["run", "--source", str(tmp_path / "none"), "--model", str(tmp_path), "--table-size", "900x900"]
    )
    assert r.exit_code == 2


def _labelled_photos(tmp_path: Path, look: str, seeds: tuple[int, ...] = (1, 2)) -> Path:
    """Rendered close-ups of a design held out of training, shown in ``look`` (``inverted-swapped``
    makes a light-on-dark deck of it), written with a labels file as ``../shared/real`` has."""
    from models.evaluate import annotation_truth
    from models.synth.scene import render_scene
    from vision.look import apply_look

    lines = []
    (tmp_path / "images").mkdir()
    for seed in seeds:
        scene = render_scene(seed, width=640, height=640, mode="closeup", designs=["paris"], arms=0)
        name = f"images/p{seed}.jpg"
        cv2.imwrite(str(tmp_path / name), apply_look(scene.image, look))
        cards = sorted(annotation_truth({"cards": [c.to_dict() for c in scene.cards]}).elements())
        lines.append(json.dumps({"image": name, "cards": cards}))
    (tmp_path / "labels.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path / "labels.jsonl"


@pytest.mark.slow
def test_a_light_on_dark_deck_is_learned_from_labelled_photos(tmp_path: Path) -> None:
    """``enroll --labels``: the photos of a deck printed light on dark read best inverted with red
    and blue swapped; the deck's folder keeps that look and a localiser taught on the photos, and
    ``--model`` reads with both."""
    labels = _labelled_photos(tmp_path, "inverted-swapped")
    deck = tmp_path / "deck"
    r = runner.invoke(
        app,
        [
            "enroll",
            "--labels",
            str(labels),
            "--out",
            str(deck),
            "--minutes",
            "0.1",
            "--localiser-epochs",
            "1",
        ],
    )
    assert r.exit_code == 0, r.output
    # the localiser taught on the photos' pseudo-boxes, which --model then localises with
    taught = json.loads((deck / "localiser.json").read_text())
    assert taught["epochs"] == 1 and taught["indices"] > 0 and taught["index_tiles"] > 0
    assert taught["cards_found"] <= taught["cards"]
    assert (deck / "localiser.onnx").stat().st_size > 100_000
    learned = json.loads((deck / "learned.json").read_text())
    assert learned["look"] == "inverted-swapped" and learned["indices"] > 0 and learned["steps"] > 0
    assert learned["looks_f1"]["inverted-swapped"] > learned["looks_f1"]["plain"]
    assert learned["despeckle"] in (0, 3, 5)
    assert json.loads((deck / "deck.json").read_text()) == {
        "look": "inverted-swapped",
        "despeckle": learned["despeckle"],
    }
    r = runner.invoke(app, ["detect", "--json", "--model", str(deck), str(tmp_path / "images" / "p1.jpg")])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout.splitlines()[0])["cards"]  # read in the deck's look


def test_enroll_labels_refuses_what_it_cannot_learn_from(tmp_path: Path) -> None:
    r = runner.invoke(app, ["enroll", "--labels", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "d")])
    assert r.exit_code == 2 and "labels file not found" in r.stderr
    (tmp_path / "labels.jsonl").write_text('{"image": "images/x.jpg", "cards": ["ZZ"]}\n')
    r = runner.invoke(
        app, ["enroll", "--labels", str(tmp_path / "labels.jsonl"), "--out", str(tmp_path / "d")]
    )
    assert r.exit_code == 2 and "ZZ" in r.stderr
    r = runner.invoke(app, ["enroll", "--labels", str(tmp_path / "labels.jsonl")])
    assert r.exit_code == 2 and "--out" in r.stderr
    assert not (tmp_path / "d").exists()


def test_a_deck_folder_with_an_unknown_look_is_refused(tmp_path: Path) -> None:
    from vision.reader import ModelFolderError, model_options

    (tmp_path / "classifier.onnx").write_bytes(b"")
    # the deck's own classifier, and no joker head: the shipped one is for designs never seen
    assert model_options(tmp_path) == {"classifier": tmp_path / "classifier.onnx", "joker_head": None}
    (tmp_path / "deck.json").write_text('{"look": "inverted-swapped"}')
    assert model_options(tmp_path)["look"] == "inverted-swapped"
    (tmp_path / "deck.json").write_text('{"look": "sepia"}')
    with pytest.raises(ModelFolderError, match="sepia"):
        model_options(tmp_path)
    (tmp_path / "deck.json").write_text('{"look": "inverted", "despeckle": 3}')
    assert model_options(tmp_path)["despeckle"] == 3
    (tmp_path / "deck.json").write_text('{"look": "inverted", "despeckle": 4}')
    with pytest.raises(ModelFolderError, match="despeckle 4"):
        model_options(tmp_path)


def test_the_localiser_sees_the_deck_despeckled() -> None:
    """With ``despeckle`` the localiser gets the median-filtered image (a lone bright speck gone),
    without it the image as it is; the photo itself is not changed."""
    from vision.detections import Detections
    from vision.reader import CardReader, default_reader_config

    image = np.zeros((64, 64, 3), np.uint8)
    image[30, 30] = 255
    seen: dict[str, np.ndarray] = {}
    for size in (0, 3):
        reader = CardReader(default_reader_config("onnx", despeckle=size))

        def detect(img: np.ndarray, size: int = size) -> Detections:
            seen[f"loc{size}"] = img
            return Detections.empty()

        reader.tiled.detect = detect  # type: ignore[method-assign]
        reader.read(image)
    assert int(seen["loc0"].max()) == 255 and int(seen["loc3"].max()) == 0
    assert int(image.max()) == 255  # the photo itself is left as it is


@pytest.mark.slow
def test_enrollment_despeckles_a_deck_on_glittering_stock() -> None:
    """Close-ups of a held-out design with a dark speck on 3 % of the pixels (glitter): the shipped
    reader's localiser reads them worse than through a median filter, so enrollment keeps one."""
    from models.enroll import harvest
    from models.evaluate import annotation_truth
    from models.synth.scene import render_scene

    rng = np.random.default_rng(0)
    photos = []
    for seed in (1, 2, 3):
        scene = render_scene(seed, width=640, height=640, mode="closeup", designs=["paris"], arms=0)
        image = scene.image.copy()
        image[rng.random(image.shape[:2]) < 0.03] = 20
        cards = sorted(annotation_truth({"cards": [c.to_dict() for c in scene.cards]}).elements())
        photos.append((image, cards))
    got = harvest(photos, log=lambda _line: None)
    assert got.look == "plain" and got.despeckle in (3, 5)
    assert got.scores[f"plain, despeckle {got.despeckle}"] > got.scores["plain"] + 0.05


@pytest.mark.slow
def test_a_learned_classifier_that_reads_the_decks_photos_worse_is_set_aside(tmp_path: Path) -> None:
    """``enroll learn --check``: on labelled photos of the deck, a learned classifier that reads
    them worse than the shipped one is set aside and the shipped one reads the deck; one at least
    as good is kept."""
    import shutil

    from models.classifier import build_net, export_onnx
    from models.enroll import check_learned
    from vision.crops import CROP_PAD, CROP_SIZE
    from vision.settings import WEIGHTS_DIR

    labels = _labelled_photos(tmp_path, "plain")
    photos = [
        (cv2.imread(str(tmp_path / json.loads(line)["image"])), json.loads(line)["cards"])
        for line in labels.read_text().splitlines()
    ]
    deck = tmp_path / "deck"
    deck.mkdir()
    shutil.copyfile(WEIGHTS_DIR / "classifier.onnx", deck / "classifier.onnx")  # as good: kept
    record = check_learned(deck, photos)
    assert record["kept"] == "learned" and record["learned_f1"] == record["shipped_f1"] > 0.3
    export_onnx(build_net(width=2.0), CROP_SIZE, deck / "classifier.onnx", CROP_PAD)  # untrained: worse
    made = (deck / "classifier.onnx").read_bytes()
    record = check_learned(deck, photos)
    assert record["kept"] == "shipped" and record["learned_f1"] < record["shipped_f1"]
    assert (deck / "classifier.refused.onnx").read_bytes() == made
    assert (deck / "classifier.onnx").read_bytes() == (WEIGHTS_DIR / "classifier.onnx").read_bytes()
    assert json.loads((deck / "checked.json").read_text())["kept"] == "shipped"


@pytest.mark.slow
def test_fine_tuning_can_run_a_set_number_of_steps_whatever_the_time(tmp_path: Path) -> None:
    """``fine_tune(..., steps=N)`` (comparisons on a busy machine) runs exactly N steps even with
    no time given; without ``steps`` no time means no step. Either way the classifier is written."""
    import torch

    from models.enroll import fine_tune
    from vision.crops import CROP_SIZE

    def batch(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randint(0, 256, (4, 3, CROP_SIZE, CROP_SIZE), generator=gen, dtype=torch.uint8)
        return x, torch.randint(0, 55, (4,), generator=gen)

    assert fine_tune(tmp_path / "a", batch, 0.0, steps=3, log=lambda _s: None) == 3
    assert (tmp_path / "a" / "classifier.onnx").stat().st_size > 100_000
    assert fine_tune(tmp_path / "b", batch, 0.0, log=lambda _s: None) == 0
    assert (tmp_path / "b" / "classifier.onnx").is_file()
