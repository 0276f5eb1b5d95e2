"""``tractorcam enroll``: the event's deck from photos of its 54 cards (:mod:`calibration.enroll`).

``tractorcam enroll sheet --out FILE [--table-size WxH]`` writes where each card goes in the three
photos; ``tractorcam enroll --images P1 P2 P3 --out DIR [--table-size WxH] [--marker-mm M]`` cuts
each card's face from the photos into ``DIR/faces/CARD.png`` with a contact sheet
(``DIR/contact.png``) for a person to confirm, and ``DIR/enrollment.json``
(``../shared/spec/cli.md``, *Table set-up commands*); ``tractorcam enroll learn DIR [--minutes M]``
fine-tunes the reader's index classifier on them (the ``train`` extra) into ``DIR/classifier.onnx``,
which ``run --model DIR`` and ``detect --model DIR`` read with.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

from tractorcam_cli.calibrate import fail, table_size_mm

enroll_app = typer.Typer(
    help="The event's deck from photos of its cards (enroll sheet; enroll --images).",
    invoke_without_command=True,
)


def register(app: typer.Typer) -> None:
    """Add ``enroll`` to ``app``."""
    app.add_typer(enroll_app, name="enroll")


@enroll_app.callback()
def enroll(
    ctx: typer.Context,
    images: Annotated[
        list[Path] | None, typer.Option("--images", help="the sheet's photos, in its order (give it 3 times)")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="the deck's folder (faces, contact sheet)")
    ] = None,
    table_size: Annotated[str, typer.Option("--table-size", help="table W x H in mm")] = "900x900",
    marker_mm: Annotated[float, typer.Option("--marker-mm", help="the corner markers' side, mm")] = 60.0,
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            help="learn the deck from labelled photos of it in play instead: one JSON line per photo, "
            '{"image": "images/x.jpg", "cards": ["10H", "SJ"]} (paths relative to the file)',
        ),
    ] = None,
    minutes: Annotated[
        float, typer.Option("--minutes", help="--labels: fine-tuning time (CPU)", min=0.1, max=240)
    ] = 10.0,
    localiser_epochs: Annotated[
        int,
        typer.Option(
            "--localiser-epochs",
            help="--labels: then teach the localiser on the photos for this many epochs (0: keep the shipped one)",
            min=0,
            max=100,
        ),
    ] = 8,
) -> None:
    """Cut the 54 faces of the event's deck from the photos of ``enroll sheet`` (or, with
    ``--labels``, learn the deck from labelled photos of it in play)."""
    if ctx.invoked_subcommand is not None:
        return
    if labels is not None:
        if out is None:
            raise fail("give --out DIR for the deck learned from --labels")
        _learn_labelled(labels, out, minutes, localiser_epochs)
        return
    import json
    import time

    import cv2

    from calibration.enroll import EnrollError, contact_sheet, enroll_photos

    if not images or out is None:
        raise fail(
            "give --images P1 --images P2 --images P3 and --out DIR (or: tractorcam enroll sheet --out FILE)"
        )
    width, height = table_size_mm(table_size)
    pictures: list[npt.NDArray[np.uint8]] = []
    for path in images:
        picture = cv2.imread(str(path))
        if picture is None:
            raise fail(f"cannot read image {path}")
        pictures.append(cast("npt.NDArray[np.uint8]", picture))
    start = time.perf_counter()
    try:
        faces = enroll_photos(pictures, width, height, marker_mm)
    except EnrollError as exc:
        raise fail(str(exc)) from None
    (out / "faces").mkdir(parents=True, exist_ok=True)
    for f in faces:
        cv2.imwrite(str(out / "faces" / f"{f.card}.png"), f.face)
    cv2.imwrite(str(out / "contact.png"), contact_sheet(faces))
    sizes = [f.card_mm for f in faces]
    record: dict[str, Any] = {
        "cards": [f.card for f in faces],
        "card_mm": [
            round(sum(s[0] for s in sizes) / len(sizes), 1),
            round(sum(s[1] for s in sizes) / len(sizes), 1),
        ],
        "photos": [str(p) for p in images],
        "table_mm": [width, height],
    }
    (out / "enrollment.json").write_text(json.dumps(record, indent=1))
    typer.echo(
        f"{out}: the 54 faces cut ({record['card_mm'][0]:g} x {record['card_mm'][1]:g} mm cards) in "
        f"{time.perf_counter() - start:.1f} s; check {out / 'contact.png'}: each card above its own name"
    )


def _labelled_photos(labels: Path) -> list[tuple[Any, list[str]]]:
    """The photos a labels file lists (``enroll --labels``), each with its cards; exit 2 naming
    what cannot be read."""
    from models.evaluate import EvaluationDataError, load_real_cards
    from vision.capture import UnreadableImageError, read_image

    try:
        listed = load_real_cards(labels.parent, labels.name)
    except EvaluationDataError as exc:
        raise fail(str(exc)) from None
    photos = []
    for photo in listed:
        try:
            photos.append((read_image(photo.path), list(photo.cards)))
        except UnreadableImageError as exc:
            raise fail(str(exc)) from None
    return photos


def _learn_labelled(labels: Path, out: Path, minutes: float, localiser_epochs: int) -> None:
    """``enroll --labels FILE --out DIR``: the look and the index classifier learned from the
    photos FILE lists (:func:`models.enroll.learn_from_photos`), then the localiser taught on them
    with pseudo-boxes (:func:`models.deck_localiser.learn_localiser`) unless ``localiser_epochs``
    is 0."""
    from models.deck_localiser import LocaliserLearnError, learn_localiser
    from models.enroll import LearnError, learn_from_photos

    photos = _labelled_photos(labels)
    (out / "localiser.onnx").unlink(missing_ok=True)  # a localiser taught before this deck's classifier
    try:
        record = learn_from_photos(photos, out, minutes, log=lambda line: typer.echo(line, err=True))
        taught = (
            learn_localiser(photos, out, localiser_epochs, log=lambda line: typer.echo(line, err=True))
            if localiser_epochs
            else None
        )
    except (LearnError, LocaliserLearnError) as exc:
        raise fail(str(exc)) from None
    localiser = (
        f"; localiser taught on {taught['indices']} indices in {taught['minutes']:g} min"
        if taught is not None
        else ""
    )
    typer.echo(
        f"{out / 'classifier.onnx'}: look {record['look']}, {record['indices']} indices of "
        f"{record['photos']} photos, {record['steps']} steps in {record['minutes']:g} min{localiser}; "
        f"use it with tractorcam run --model {out}"
    )


@enroll_app.command("sheet")
def sheet_cmd(
    out: Annotated[Path, typer.Option("--out", help="the picture to print or show (PNG)")],
    table_size: Annotated[str, typer.Option("--table-size", help="table W x H in mm")] = "900x900",
) -> None:
    """Write where each of the 54 cards goes in the three enrollment photos."""
    import cv2
    import numpy as np

    from calibration.enroll import layout_sheet

    width, height = table_size_mm(table_size)
    pages = layout_sheet(width, height)
    gap = np.full((20, pages[0].shape[1], 3), 255, np.uint8)
    picture = np.vstack([p for page in pages for p in (page, gap)][:-1])
    if not cv2.imwrite(str(out), picture):
        raise fail(f"cannot write {out} (give a .png name)")
    typer.echo(
        f"{out}: lay the table's corner markers, then for each of the 3 photos the 18 cards named in "
        "their cells, face up; photograph from the table camera; then tractorcam enroll --images ..."
    )


@enroll_app.command("learn")
def learn_cmd(
    folder: Annotated[Path, typer.Argument(help="the enrolled deck (tractorcam enroll --out DIR)")],
    minutes: Annotated[
        float, typer.Option("--minutes", help="fine-tuning time (CPU)", min=0.1, max=240)
    ] = 20.0,
    seed: Annotated[int, typer.Option("--seed", help="the crops' and the network's seed")] = 0,
    check: Annotated[
        Path | None,
        typer.Option(
            "--check",
            help="labelled photos of the deck in play (as enroll --labels reads them): keep the learned "
            "classifier only if it reads them at least as well as the shipped one",
        ),
    ] = None,
) -> None:
    """Teach the reader the enrolled deck: the index classifier fine-tuned on crops cut from its
    faces, written as DIR/classifier.onnx for run --model DIR and detect --model DIR."""
    from models.enroll import LearnError, check_learned, learn

    photos = _labelled_photos(check) if check is not None else []
    try:
        record = learn(folder, minutes, seed=seed, log=lambda line: typer.echo(line, err=True))
        checked = check_learned(folder, photos) if check is not None else None
    except LearnError as exc:
        raise fail(str(exc)) from None
    typer.echo(
        f"{folder / 'classifier.onnx'}: {record['steps']} steps over {record['crops']} crops in "
        f"{record['minutes']:g} min; use it with tractorcam run --model {folder}"
    )
    if checked is not None:
        verdict = (
            "the learned classifier is kept"
            if checked["kept"] == "learned"
            else "the learned classifier reads them worse: set aside as classifier.refused.onnx, "
            "the shipped one reads the deck (with its faces and look)"
        )
        typer.echo(
            f"checked on {checked['photos']} labelled photos: card F1 learned {100 * checked['learned_f1']:.1f} %, "
            f"shipped {100 * checked['shipped_f1']:.1f} %; {verdict}"
        )
