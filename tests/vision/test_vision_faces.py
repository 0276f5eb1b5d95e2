"""The faces step (vision.faces): an enrolled deck's court cards and jokers found by their whole
face, where the corners print too little to name them (guyenne-classic's courts: a lone suit sign)."""

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from models.synth.faces import load_faces
from vision.faces import (
    ART_CARDS,
    PROBE_CLOTH,
    PROBE_TURNS,
    FaceMatch,
    FaceMatchConfig,
    FaceMatcher,
    FaceMatcherError,
    corner_named,
    place_faces,
)
from vision.instances import CardInstance, InstanceConfig
from vision.labels import CARD_CLASSES, class_id
from vision.reader import CardReader, default_reader_config, model_options
from vision.tiling import TilingConfig

CARD_H = 176.0  # a 88 mm card at the zone reader's 2 px/mm
CARD_W = 126.0
CLOTH = (60, 110, 40)


@pytest.fixture(scope="module")
def guyenne():
    return load_faces("guyenne-classic")


@pytest.fixture(scope="module")
def enrolled(guyenne, tmp_path_factory):
    """The deck's faces as enrollment writes them (``CARD.png``), unlike the table's: blurred,
    another brightness, some turned half round (a card laid the other way up on the sheet)."""
    folder = tmp_path_factory.mktemp("deck") / "faces"
    folder.mkdir()
    for k, card in enumerate(CARD_CLASSES):
        face = guyenne.faces[card][:, :, :3]
        face = cv2.GaussianBlur(face, (5, 5), 0)
        face = np.clip(face.astype(np.float32) * 0.85 + 20, 0, 255).astype(np.uint8)
        if k % 5 == 0:
            face = face[::-1, ::-1]
        cv2.imwrite(str(folder / f"{card}.png"), face)
    return folder


@pytest.fixture(scope="module")
def matcher(enrolled):
    return FaceMatcher.from_folder(enrolled)


def lay(guyenne, cards, size=(700, 500), seed=0):
    """An image of ``cards`` ((card, (cx, cy), angle in degrees) each, later ones over earlier
    ones) at :data:`CARD_H`, with noise; and each card's outline (4 × 2)."""
    image = np.full((size[1], size[0], 3), CLOTH, np.uint8)
    quads = []
    for card, centre, angle in cards:
        face = np.ascontiguousarray(guyenne.faces[card][:, :, :3])
        fh, fw = face.shape[:2]
        s = CARD_H / fh
        rot = cv2.getRotationMatrix2D((fw * s / 2, fh * s / 2), angle, 1.0)
        m = rot @ np.array([[s, 0, 0], [0, s, 0], [0, 0, 1]])
        m[:, 2] += np.array(centre) - np.array([fw * s / 2, fh * s / 2])
        warped = cv2.warpAffine(face, m, size, flags=cv2.INTER_AREA)
        mask = cv2.warpAffine(np.full((fh, fw), 255, np.uint8), m, size) > 0
        image[mask] = warped[mask]
        quads.append(np.array([[0, 0, 1], [fw, 0, 1], [fw, fh, 1], [0, fh, 1]], np.float64) @ m.T)
    noise = np.random.default_rng(seed).normal(0, 4, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8), quads


def box_of(quad):
    return np.array([*quad.min(0), *quad.max(0)])


@pytest.mark.parametrize("angle", [0, 40, 175, 290])
def test_each_court_card_and_joker_is_found_as_itself_where_it_lies(guyenne, matcher, angle):
    for card in ART_CARDS:
        image, quads = lay(guyenne, [(card, (350, 250), angle)])
        found = matcher.match(image, (CARD_W, CARD_H))
        assert [f.card for f in found] == [card], (card, angle)
        assert np.abs(np.array(found[0].box) - box_of(quads[0])).max() < 6, (card, angle)


def test_faces_alike_but_for_colour_are_twins(matcher):
    """Guyenne's jokers print the same black art; only the big joker's corner emblems are red. In
    grey they are one face (twins), told apart by colour (the test above finds each as itself)."""
    twins = {
        (matcher.cards[i], matcher.cards[j])
        for i, j in zip(*np.nonzero(matcher.twins), strict=True)
        if i != j
    }
    assert twins == {("SJ", "BJ"), ("BJ", "SJ")}


def test_identical_cards_of_a_multi_deck_game_are_each_found(guyenne, matcher):
    image, quads = lay(
        guyenne, [("KS", (180, 250), 10), ("KS", (420, 240), -20), ("QD", (600, 260), 90)], (800, 500)
    )
    found = sorted(matcher.match(image, (CARD_W, CARD_H)), key=lambda f: f.centre[0])
    assert [f.card for f in found] == ["KS", "KS", "QD"]
    for f, q in zip(found, quads, strict=True):
        assert np.linalg.norm(f.centre - q.mean(0)) < 5


def test_a_court_card_half_under_another_card_is_still_found(guyenne, matcher):
    """A fanned play: the jack of clubs with the 9 of spades over its right half."""
    image, _ = lay(guyenne, [("JC", (300, 250), 0), ("9S", (365, 255), 0)])
    assert [f.card for f in matcher.match(image, (CARD_W, CARD_H))] == ["JC"]


def test_number_cards_and_the_bare_cloth_give_no_art_card(guyenne, matcher):
    cards = [(c, (110 + 160 * k, 250), 15 * k) for k, c in enumerate(["5H", "7C", "AS", "10D"])]
    image, _ = lay(guyenne, cards, (700, 500))
    assert matcher.match(image, (CARD_W, CARD_H)) == []
    assert matcher.match(np.full((400, 400, 3), CLOTH, np.uint8)) == []


def test_a_location_of_the_wrong_size_for_the_table_is_no_card(guyenne, matcher):
    """The rectified table says how big a card is: a face matched at twice that size is refused."""
    image, _ = lay(guyenne, [("KH", (350, 250), 30)])
    assert [f.card for f in matcher.match(image)] == ["KH"]  # no size given: any card-like outline
    assert matcher.match(image, (CARD_W / 2, CARD_H / 2)) == []


def test_cards_found_by_face_replace_what_the_corners_made_of_them():
    """A guyenne king read from its corners as "a spade of unknown rank" (one corner, ``??``) and
    as a wrong court from both corners is the king; a card lying over its middle is another card."""
    quad = np.array([[100, 100], [226, 100], [226, 276], [100, 276]], np.float64)
    king = FaceMatch("KS", 40, quad)
    one_corner = CardInstance("??", -1, 0.4, (105.0, 108.0, 120.0, 130.0), 1)
    both_corners = CardInstance("JS", 9, 0.7, (104.0, 106.0, 222.0, 272.0), 2)
    over = CardInstance("5H", 16, 0.95, (150.0, 200.0, 276.0, 376.0), 2)
    other_corner = CardInstance("7C", 44, 0.9, (200.0, 300.0, 215.0, 322.0), 1)
    out = place_faces([one_corner, both_corners, over, other_corner], [king])
    assert [str(c.card) for c in out] == ["5H", "7C", "KS"]
    assert out[-1].box == (100.0, 100.0, 226.0, 276.0) and out[-1].corners == 2
    assert place_faces([one_corner], []) == [one_corner]


def test_an_enrolled_folder_with_faces_turns_the_faces_step_on(tmp_path: Path, enrolled):
    (tmp_path / "classifier.onnx").write_bytes(b"")
    assert "faces" not in model_options(tmp_path)
    (tmp_path / "faces").symlink_to(enrolled)
    assert model_options(tmp_path)["faces"] == tmp_path / "faces"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FaceMatcherError, match="JS.png"):
        FaceMatcher.from_folder(empty)
    with pytest.raises(FaceMatcherError, match="min_matches"):
        FaceMatchConfig(min_matches=2)


@pytest.mark.slow
def test_the_reader_with_an_enrolled_deck_names_a_court_card_its_corners_cannot(guyenne, enrolled):
    """The whole chain on a guyenne king of clubs and a 7 of hearts: without the faces step the
    king's corners (a lone club sign) do not name it; with it the king is read, once, and the 7
    still from its corners."""
    image, _ = lay(guyenne, [("KC", (200, 250), 8), ("7H", (480, 250), -12)])
    config = default_reader_config("onnx", faces=enrolled)
    config = replace(
        config,
        tiling=TilingConfig(tile=config.detector.imgsz, levels=(1.0,)),  # one scale, as on a rectified table
        instances=InstanceConfig(card_size_px=(CARD_W, CARD_H)),
    )
    with_faces = [str(c.card) for c in CardReader(config).read(image).cards]
    without = [str(c.card) for c in CardReader(replace(config, faces=None)).read(image).cards]
    assert "KC" not in without and "7H" in without
    assert sorted(with_faces) == ["7H", "KC"]


def test_jokers_whose_corners_print_only_a_star_are_read_by_their_face(tmp_path):
    """Tigullio's jokers print a small star in their corners, no index: the localiser and the
    heads rarely name them. With the deck's faces the reader finds both, each as itself (their
    art differs from each other only in colour)."""
    tigullio = load_faces("tigullio")
    folder = tmp_path / "faces"
    folder.mkdir()
    for card in ART_CARDS:
        face = cv2.GaussianBlur(tigullio.faces[card][:, :, :3], (5, 5), 0)
        cv2.imwrite(str(folder / f"{card}.png"), face)
    image, _ = lay(tigullio, [("BJ", (200, 250), 20), ("SJ", (480, 250), -70)])
    config = default_reader_config("onnx", faces=folder)
    config = replace(
        config,
        tiling=TilingConfig(tile=config.detector.imgsz, levels=(1.0,)),
        instances=InstanceConfig(card_size_px=(CARD_W, CARD_H)),
    )
    cards = sorted(
        (str(c.card), round((c.box[0] + c.box[2]) / 2)) for c in CardReader(config).read(image).cards
    )
    assert [c for c, _ in cards] == ["BJ", "SJ"]
    assert abs(cards[0][1] - 200) < 10 and abs(cards[1][1] - 480) < 10


@pytest.mark.slow
def test_jokers_the_colours_do_not_tell_apart_are_a_joker_of_unknown_size(guyenne, tmp_path):
    """Enrolled jokers whose faces are the same picture (here: the small joker's face twice): the
    card found is a joker, ``?J``, never a guess at its size (a big joker read wrongly is a wrong
    top trump)."""
    folder = tmp_path / "faces"
    folder.mkdir()
    for card in ART_CARDS:
        cv2.imwrite(str(folder / f"{card}.png"), guyenne.faces["SJ" if card == "BJ" else card][:, :, :3])
    image, _ = lay(guyenne, [("BJ", (350, 250), 30)])
    found = FaceMatcher.from_folder(folder).match(image, (CARD_W, CARD_H))
    assert [f.card for f in found] == ["?J"]
    (card,) = place_faces([], found)
    assert (str(card.card), card.class_id) == ("?J", -1)


@pytest.mark.parametrize("angle", [0, 35, 170, 260])
def test_twin_jokers_whose_art_sits_a_little_apart_are_told_by_where_their_colours_differ(tmp_path, angle):
    """gnomangelo_bitmap's jokers: one jester, drawn a few pixels apart on the two faces, under the
    word JOKER in black (small) or red (big). Enrolled faces are blurred and lighter than the table's.
    Cut in one joker's frame, the other's art lies misplaced and looks farther in colour than the
    word makes it: each twin must be compared in its own frame, and only where the twins differ
    once laid onto each other (the word). Read the other way, the small joker is the big one."""
    deck = load_faces("gnomangelo_bitmap")
    folder = tmp_path / "faces"
    folder.mkdir()
    for card in ART_CARDS:
        face = cv2.GaussianBlur(deck.faces[card][:, :, :3], (7, 7), 0)
        face = np.clip(face.astype(np.float32) * 0.85 + 20, 0, 255).astype(np.uint8)
        cv2.imwrite(str(folder / f"{card}.png"), face)
    matcher = FaceMatcher.from_folder(folder)
    for card in ("SJ", "BJ"):
        image, _ = lay(deck, [(card, (350, 250), angle)], seed=angle)
        assert [f.card for f in matcher.match(image, (CARD_W, CARD_H))] == [card], (card, angle)


@pytest.mark.parametrize(
    ("card", "shift", "turn"),
    [("KH", (0.3, 0.03), 0), ("JD", (0.22, 0.0), 5), ("QC", (-0.28, 0.05), -6), ("KS", (0.05, 0.25), 3)],
)
def test_the_covered_copy_of_a_fanned_pair_is_found_under_the_top_card(guyenne, matcher, card, shift, turn):
    """A pair laid as a fan: the lower card shows a strip too narrow for its keypoints (a fifth to
    a third of it); it is found as the top card's copy where it lies."""
    base = 20
    lower = (300.0, 250.0)
    offset = np.array(shift) * np.array([CARD_W, CARD_H])
    a = np.deg2rad(-base)  # the offset in the top card's frame, turned with it
    top = np.array(lower) + np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ offset
    image, quads = lay(guyenne, [(card, lower, base - turn), (card, tuple(top), base)])
    found = matcher.match(image, (CARD_W, CARD_H))
    assert [f.card for f in found] == [card, card]
    centres = sorted((f.centre for f in found), key=lambda c: float(np.linalg.norm(c - quads[0].mean(0))))
    assert np.linalg.norm(centres[0] - quads[0].mean(0)) < 6  # the copy where the lower card lies
    assert np.linalg.norm(centres[1] - quads[1].mean(0)) < 6


def test_a_covered_copy_is_looked_for_only_while_the_decks_hold_another(guyenne, matcher):
    """A fan of two K♥ read for a game of unknown decks, of one deck and of two: a game of one deck
    has no second K♥ to find under the first (a "copy" there is always something else); in two
    decks the copy is found when the top card alone is, and none when both are found already."""
    image, _ = lay(guyenne, [("KH", (300.0, 250.0), 20), ("KH", (300.0 + 0.3 * CARD_W, 240.0), 20)])
    assert [f.card for f in matcher.match(image, (CARD_W, CARD_H))] == ["KH", "KH"]  # not known
    assert [f.card for f in matcher.match(image, (CARD_W, CARD_H), decks=1)] == ["KH"]
    assert [f.card for f in matcher.match(image, (CARD_W, CARD_H), decks=2)] == ["KH", "KH"]
    side_by_side, _ = lay(guyenne, [("KH", (150, 250), 0), ("KH", (330, 250), 5)], (700, 500))
    found = matcher.match(side_by_side, (CARD_W, CARD_H), decks=2)
    assert [f.card for f in found] == ["KH", "KH"]  # two found: no third looked for


def fan(card_under, card, step=0.3, base=20.0):
    """Three cards fanned left to right, each a ``step`` of a card's width over the one before:
    ``card_under`` lowest, then two ``card``."""
    return [
        (c, (250.0 + k * step * CARD_W, 250.0 - 5 * k), base) for k, c in enumerate((card_under, card, card))
    ]


@pytest.mark.parametrize("card", ["KS", "QH", "JD"])
def test_a_fanned_triple_of_three_decks_is_found_copy_under_copy(guyenne, matcher, card):
    """A triple laid as a fan in a game of three decks: the copy under the top card is found, and
    the copy under that one too, from the strip left between the two cards over it; where each
    lies. Two decks hold no third copy to look for."""
    image, quads = lay(guyenne, fan(card, card))
    found = matcher.match(image, (CARD_W, CARD_H), decks=3)
    assert [f.card for f in found] == [card] * 3
    for quad in quads:
        assert min(np.linalg.norm(f.centre - quad.mean(0)) for f in found) < 6
    assert [f.card for f in matcher.match(image, (CARD_W, CARD_H), decks=2)] == [card] * 2


@pytest.mark.parametrize("under", ["5H", "QH", "KD"])
def test_another_card_under_a_fanned_pair_is_no_third_copy(guyenne, matcher, under):
    image, _ = lay(guyenne, fan(under, "KH"))
    found = [f.card for f in matcher.match(image, (CARD_W, CARD_H), decks=3)]
    assert found.count("KH") == 2, found


@pytest.mark.parametrize("under", ["5H", "QH", "KD", "10S"])
def test_another_card_under_a_court_card_is_no_copy_of_it(guyenne, matcher, under):
    """What shows of the lower card is another card's (a number card, another court, the same
    rank in another suit): no copy of the top card is made of it."""
    image, _ = lay(guyenne, [(under, (300, 250), 0), ("KH", (300 + 0.3 * CARD_W, 252), 2)])
    found = [f.card for f in matcher.match(image, (CARD_W, CARD_H))]
    assert found.count("KH") == 1, found


def test_court_cards_side_by_side_have_no_covered_copies(guyenne, matcher):
    cards = [("KH", (150, 250), 0), ("KH", (330, 250), 5), ("JS", (520, 250), -5)]
    image, _ = lay(guyenne, cards, (700, 500))
    assert sorted(f.card for f in matcher.match(image, (CARD_W, CARD_H))) == ["JS", "KH", "KH"]


@pytest.mark.slow
def test_a_faces_folder_without_every_card_looks_for_no_covered_copies(guyenne, enrolled, tmp_path):
    folder = tmp_path / "faces"
    folder.mkdir()
    for card in ART_CARDS:
        (folder / f"{card}.png").write_bytes((enrolled / f"{card}.png").read_bytes())
    assert FaceMatcher.from_folder(folder).deck_grey == {}
    assert len(FaceMatcher.from_folder(enrolled).deck_grey) == 54


def test_a_face_located_askew_on_another_card_does_not_resemble_it(guyenne, matcher):
    """The check every face located by its keypoints must pass (``resemblance``). A dozen matches
    on repeated signs can agree on a location that lies askew on the card under it (the plastic
    deck's small joker, whose art is made of suit signs, found turned across a three of spades):
    its face does not correlate with what lies there. A card where its face says, even half under
    another, does."""
    image, quads = lay(guyenne, [("3S", (200, 250), 10), ("KH", (480, 250), -5), ("5C", (480, 330), 0)])
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)

    def placed(card: str, quad: np.ndarray) -> tuple[int, np.ndarray]:
        face = matcher.cards.index(card)
        fh, fw = matcher.colour[face].shape[:2]
        corners = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float64)
        m, _ = cv2.estimateAffinePartial2D(corners, quad.astype(np.float64))
        return face, np.vstack([m, [0.0, 0.0, 1.0]])

    assert matcher.resembles(*placed("KH", quads[1]), grey)  # its lower half under the five
    centre = quads[0].mean(0)
    a = np.deg2rad(72)
    askew = (quads[0] - centre) @ (
        0.88 * np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
    ) + centre
    for card in ("SJ", "BJ", "KS"):
        assert not matcher.resembles(*placed(card, askew), grey), card


@pytest.fixture(scope="module")
def plastic():
    return load_faces("plastic")


@pytest.fixture(scope="module")
def plastic_matcher(plastic, tmp_path_factory):
    """The plastic deck enrolled: its faces blurred and in another brightness, as photographed."""
    folder = tmp_path_factory.mktemp("plastic") / "faces"
    folder.mkdir()
    for card in CARD_CLASSES:
        face = cv2.GaussianBlur(plastic.faces[card][:, :, :3], (5, 5), 0)
        cv2.imwrite(str(folder / f"{card}.png"), np.clip(face.astype(np.float32) * 0.85 + 20, 0, 255))
    return FaceMatcher.from_folder(folder)


def fanned_pair(deck, under, card, base=80.0, shift=(0.33, 0.02), turn=2.0):
    """``under`` with ``card`` laid over it, moved by ``shift`` (shares of the card's width and
    height, in the top card's frame) and turned ``turn`` degrees from it."""
    lower = (300.0, 250.0)
    a = np.deg2rad(-base)
    offset = np.array(shift) * np.array([CARD_W, CARD_H])
    top = np.array(lower) + np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ offset
    return lay(deck, [(under, lower, base - turn), (card, tuple(top), base)])


@pytest.mark.parametrize(("card", "shift"), [("QS", (0.33, 0.02)), ("KC", (0.3, -0.03)), ("JH", (-0.3, 0.0))])
def test_a_covered_copy_whose_strip_other_courts_of_the_art_match_too_is_told_by_where_they_differ(
    plastic, plastic_matcher, card, shift
):
    """Filmed deal p60 (plastic, 3 decks): E's Q♠ pair laid as a fan, the lower card a third
    showing along its long side. At the search's size the strip (the card's edge, its two
    indices) matches every queen, jack and king of the deck about as well (Q♠ 0.97, Q♣ 0.90, J♠
    0.88); where the faces differ, at twice the size, the Q♠ stands out. Rendered fans of three
    of the deck's courts: each copy is found, where the lower card lies."""
    image, quads = fanned_pair(plastic, card, card, shift=shift)
    found = plastic_matcher.match(image, (CARD_W, CARD_H), decks=3)
    assert [f.card for f in found] == [card, card]
    assert min(float(np.linalg.norm(f.centre - quads[0].mean(0))) for f in found) < 6


@pytest.mark.parametrize(
    ("under", "card"), [("QC", "QS"), ("JS", "QS"), ("KS", "QS"), ("QH", "KH"), ("5S", "QS")]
)
def test_another_court_of_the_same_art_under_a_court_card_is_no_copy_of_it(
    plastic, plastic_matcher, under, card
):
    """The lower card is another court (the same rank in another suit, another rank of the suit)
    or a number card: where its face differs from the top card's it is itself, so no copy of the
    top card is made of it."""
    image, _ = fanned_pair(plastic, under, card)
    found = [f.card for f in plastic_matcher.match(image, (CARD_W, CARD_H), decks=3)]
    assert found.count(card) == 1, found


def corners_read(card, quad, corners=2):
    """The corners' reading of ``card`` lying at ``quad``: read from both corners, a box round the
    card; from one, a small box round its top-left index."""
    if corners >= 2:
        return CardInstance(card, class_id(card), 0.9, tuple(float(v) for v in box_of(quad)), 2)
    at = quad[0] + 0.1 * (quad[1] - quad[0]) + 0.1 * (quad[3] - quad[0])
    return CardInstance(card, class_id(card), 0.9, (at[0] - 8, at[1] - 10, at[0] + 8, at[1] + 10), 1)


@pytest.mark.parametrize(
    ("under", "top", "shift", "turn", "corners"),
    [
        ("QS", "7S", (0.0, -0.28), 2, 2),  # g25: W's Q♠ under a 7♠, the strip along its long side
        ("KD", "7D", (0.3, 0.02), -5, 1),  # g25: N's K♦ under a 7♦ read from one corner
        ("JS", "8D", (0.02, -0.25), 184, 2),  # the lower card the other way up
        ("SJ", "9C", (-0.3, 0.0), 4, 2),
    ],
)
def test_an_art_card_fanned_under_a_number_card_is_found_under_it(
    guyenne, matcher, under, top, shift, turn, corners
):
    """Filmed deal g25 (guyenne-classic, 3 decks): a court card or a joker laid under a number card,
    a quarter to a third of it showing. Only a suit sign shows in a guyenne court's corner, and the
    strip is too narrow for its keypoints; the number card, named by its corners, is located by its
    face and what shows round it is matched with the deck's art faces: the lower card is found where
    it lies, and the number card keeps its reading."""
    image, quads = fanned_pair(guyenne, under, top, base=30.0, shift=shift, turn=turn)
    read = [corners_read(top, quads[1], corners)]
    found = matcher.match(image, (CARD_W, CARD_H), decks=3, read=read)
    hidden = [f for f in found if f.covered]
    assert [f.card for f in hidden] == ([under] if under not in ("SJ", "BJ") else ["?J"]), found
    assert np.linalg.norm(hidden[0].centre - quads[0].mean(0)) < 8
    located = [f for f in found if f.located]
    assert [f.card for f in located] == [top]
    assert np.abs(located[0].quad.mean(0) - quads[1].mean(0)).max() < 6
    placed = place_faces(read, found)
    assert sorted(str(c.card) for c in placed) == sorted([top, under if under not in ("SJ", "BJ") else "?J"])
    assert [c.box for c in placed if str(c.card) == top] == [read[0].box]  # the corners' reading stands


@pytest.mark.parametrize(("under", "top"), [("5H", "7S"), ("10S", "8D"), ("7S", "7S"), ("AC", "3H")])
def test_a_number_card_under_a_number_card_gives_no_art_card(guyenne, matcher, under, top):
    """What shows under the number card is another number card (its corners read it): no court
    card or joker is made of it."""
    image, quads = fanned_pair(guyenne, under, top, base=30.0, shift=(0.3, 0.02))
    found = matcher.match(image, (CARD_W, CARD_H), decks=3, read=[corners_read(top, quads[1])])
    assert [f.card for f in found if not f.located] == [], found


def test_a_court_card_under_another_court_card_is_found_under_it(guyenne, matcher):
    """Filmed deal d1: N's Q♦ under a Q♠ (both guyenne courts, the top one found by its keypoints):
    the lower card is found as itself, not as a copy of the top one."""
    image, quads = fanned_pair(guyenne, "QD", "QS", base=30.0, shift=(0.3, 0.02))
    found = matcher.match(image, (CARD_W, CARD_H), decks=2)
    assert sorted(f.card for f in found) == ["QD", "QS"], found
    assert np.linalg.norm(next(f for f in found if f.card == "QD").centre - quads[0].mean(0)) < 8


def test_a_single_corner_of_another_name_on_the_card_over_it_is_not_taken_for_the_covered_card():
    """A card found under another replaces a single corner reading of another name only where that
    corner lies on no card over it: the top card's own corner, read alone, stays the top card."""
    top = np.array([[100, 100], [226, 100], [226, 276], [100, 276]], np.float64)
    under = top + np.array([30.0, -50.0])
    own = CardInstance("7S", class_id("7S"), 0.9, (105.0, 105.0, 121.0, 125.0), 1)  # the top's corner
    outside = CardInstance("JC", class_id("JC"), 0.4, (232.0, 58.0, 248.0, 78.0), 1)  # the strip's
    found = [FaceMatch("7S", 12, top, located=True), FaceMatch("KS", 12, under, covered=True)]
    cards = place_faces([own, outside], found)
    assert sorted(str(c.card) for c in cards) == ["7S", "KS"]


def wood(size=(700, 500), seed=0):
    """A table of wood: fine grain, light and dark, in orange and brown."""
    rng = np.random.default_rng(seed)
    x = np.arange(size[0])[None, :] + 6 * np.sin(np.arange(size[1])[:, None] / 40)
    grain = 18 * np.sin(x / 3.5) + 10 * np.sin(x / 11 + 1) + rng.normal(0, 3, (size[1], size[0]))
    colour = np.array([40, 90, 170], np.float32) + grain[..., None] * np.array([0.3, 0.6, 1.0])
    return np.clip(colour, 0, 255).astype(np.uint8)


def alone_on_wood(deck, card, angle, size=(700, 500)):
    """``card`` alone in the middle of a :func:`wood` table of ``size``, turned ``angle`` degrees,
    at :data:`CARD_H`; and its outline (4 × 2)."""
    image = wood(size=size)
    face = np.ascontiguousarray(deck.faces[card][:, :, :3])
    fh, fw = face.shape[:2]
    s = CARD_H / fh
    m = cv2.getRotationMatrix2D((fw * s / 2, fh * s / 2), angle, 1.0) @ np.diag([s, s, 1.0])
    m[:, 2] += np.array([size[0] / 2, size[1] / 2]) - np.array([fw * s / 2, fh * s / 2])
    warped = cv2.warpAffine(face, m, size, flags=cv2.INTER_AREA)
    on = cv2.warpAffine(np.full((fh, fw), 255, np.uint8), m, size) > 0
    image[on] = warped[on]
    return image, np.array([[0, 0, 1], [fw, 0, 1], [fw, fh, 1], [0, fh, 1]], np.float64) @ m.T


@pytest.mark.parametrize("top", ["7H", "8C", "6S", "10C"])
def test_the_table_beside_a_number_card_is_no_art_card_under_it(guyenne, matcher, top):
    """Filmed deal g25: a number card alone on a wood table. Normalised correlation ignores
    contrast and brightness, so a sliver of grain beside the card matched a court's face about as
    well as a court's strip does (JS 0.85, QC 0.94 on g25's frames) and false courts were made
    under lone cards. What shows must have its face's contrast and brightness in the light the
    card over it shows: the grain has a fifth to a third of a face's contrast."""
    made = []
    for angle in (0, 85):
        image, quad = alone_on_wood(guyenne, top, angle)
        found = matcher.match(image, (CARD_W, CARD_H), decks=3, read=[corners_read(top, quad)])
        made += [f.card for f in found if not f.located]
    assert made == []


@pytest.mark.parametrize(("under", "top"), [("5C", "5C"), ("9D", "3D")])
def test_what_shows_of_a_number_card_read_under_another_is_no_art_card(guyenne, matcher, under, top):
    """A pair of number cards fanned, both read by their corners: round each, what shows of the
    other is that card's, so no court or joker is made of it. (Filmed deal g16 made a Q♣ of the
    lower 5♣ of such a pair before what shows of the cards known was masked; this rendered pair
    guards the outcome, it did not make that mistake.)"""
    image, quads = fanned_pair(guyenne, under, top, base=10.0, shift=(0.05, -0.35), turn=4.0)
    read = [corners_read(under, quads[0]), corners_read(top, quads[1])]
    found = matcher.match(image, (CARD_W, CARD_H), decks=2, read=read)
    assert [f.card for f in found if not f.located] == [], found
    assert sorted(str(c.card) for c in place_faces(read, found)) == sorted([under, top])


@pytest.mark.parametrize("card", ["QD", "KS"])
def test_a_fanned_court_pair_whose_corners_name_both_cards_keeps_both(plastic, plastic_matcher, card):
    """A fanned pair of plastic courts (whose corners name them), both read by their corners: both
    stay, the lower one found as the top card's copy. (In filmed deals p14 and p60 such a copy was
    refused for lying where the corners had named a card, its own; this rendered pair guards the
    outcome, it did not make that mistake.)"""
    image, quads = fanned_pair(plastic, card, card, shift=(0.3, 0.02))
    read = [corners_read(card, quads[0]), corners_read(card, quads[1])]
    found = plastic_matcher.match(image, (CARD_W, CARD_H), decks=2, read=read)
    assert [str(c.card) for c in place_faces(read, found)] == [card, card]


@pytest.mark.slow
def test_a_joker_of_unknown_size_beside_a_number_card_is_looked_round(guyenne, tmp_path):
    """A joker found without its size (``?J``, its twin's face the same picture) and a number card
    the corners named, in one area: looking under the number card masks what shows of the joker
    (either joker's face stands for it), and the joker stays ``?J``."""
    folder = tmp_path / "faces"
    folder.mkdir()
    for card in CARD_CLASSES:
        cv2.imwrite(str(folder / f"{card}.png"), guyenne.faces["SJ" if card == "BJ" else card][:, :, :3])
    image, quads = lay(guyenne, [("BJ", (200, 250), 10), ("7S", (420, 250), -5)])
    read = [corners_read("7S", quads[1])]
    found = FaceMatcher.from_folder(folder).match(image, (CARD_W, CARD_H), decks=2, read=read)
    assert sorted((f.card, f.located) for f in found) == [("7S", True), ("?J", False)]
    assert sorted(str(c.card) for c in place_faces(read, found)) == ["7S", "?J"]


def stripes(size=(700, 500), width=90):
    """A cloth of broad pink and grey stripes."""
    image = np.zeros((size[1], size[0], 3), np.uint8)
    for k, x in enumerate(range(0, size[0], width)):
        image[:, x : x + width] = (200, 170, 225) if k % 2 else (140, 130, 130)
    noise = np.random.default_rng(5).normal(0, 3, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("width", [60, 90])
def test_a_card_under_another_shows_its_outline_where_the_cloth_does_not(guyenne, matcher, width):
    """Filmed deal d1: a lone 9♥ on a cloth of pink and grey stripes. A band of the stripes beside
    it has a face's contrast and brightness, and a Q♦ laid over it by chance correlated 0.83; but
    that outline crosses no step from card stock to cloth (0.03 of the step round the 9♥, true
    strips 0.25 and more). Here the same outline, with the Q♦ fanned under the 9♥ and without it."""
    image, quads = lay(guyenne, [("QD", (300.0, 215.0), 4.0), ("9H", (300.0, 260.0), 0.0)])
    cloth = stripes(width=width)
    bare = cloth.copy()
    top_only, both = np.zeros(image.shape[:2], np.uint8), np.zeros(image.shape[:2], np.uint8)
    cv2.fillConvexPoly(top_only, np.round(quads[1]).astype(np.int32), 1)
    for q in quads:
        cv2.fillConvexPoly(both, np.round(q).astype(np.int32), 1)
    cloth[both > 0] = image[both > 0]
    bare[top_only > 0] = image[top_only > 0]
    top, under = FaceMatch("9H", 12, quads[1], located=True), FaceMatch("QD", 12, quads[0], covered=True)
    for picture, shows in ((cloth, True), (bare, False)):
        grey = cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY).astype(np.float32)
        assert matcher.under._outlined(top, under, grey, ()) is shows


def test_a_card_is_corner_named_only_when_every_lay_reads_it_and_nothing_else():
    """:func:`corner_named` lays the art faces apart on a cloth, once per turn, and asks a reading
    of each lay. A stub reading names the cards it sees in the order they lie, but misreads the
    Q♥ in the second lay and reads a big joker over the small one as well: only the K♠ is named
    (an index read as a king of some suit beside it is no other card)."""
    faces = {card: np.full((88, 63, 3), 230, np.uint8) for card in ("KS", "QH", "SJ")}
    lays = []

    def read(image):
        lays.append(image.copy())
        card = np.any(image != PROBE_CLOTH, axis=2).astype(np.uint8)
        n, _, stats, _ = cv2.connectedComponentsWithStats(card)
        out = []
        for name, i in zip(("KS", "QH", "SJ"), sorted(range(1, n), key=lambda i: stats[i][0]), strict=True):
            x, y, w, h = (float(v) for v in stats[i][:4])
            names = {"KS": ["KS", "K?"], "QH": ["QD"] if len(lays) == 2 else ["QH"], "SJ": ["SJ", "BJ"]}[name]
            out += [
                CardInstance(c, class_id(c) if "?" not in c else -1, 0.9, (x, y, x + w, y + h), 2)
                for c in names
            ]
        return out

    assert corner_named(faces, read, (CARD_W, CARD_H)) == frozenset({"KS"})
    assert len(lays) == len(PROBE_TURNS)
    assert lays[0].shape[0] >= CARD_H and lays[0].shape[1] >= 3 * CARD_H  # each face whole, apart


@pytest.mark.slow
def test_a_deck_whose_courts_print_a_suit_sign_alone_has_no_court_its_corners_name(guyenne, enrolled):
    """The reader's view of a rectified table learns which art cards the deck's corners name, once
    per card size: none of guyenne-classic's courts (a lone suit sign in their corners), each of
    which is then looked for under other cards."""
    config = default_reader_config("onnx", faces=enrolled)
    reader = CardReader(config)
    view = reader.with_view(
        TilingConfig(tile=config.detector.imgsz, levels=(1.0,)), InstanceConfig(card_size_px=(CARD_W, CARD_H))
    )
    courts = set(ART_CARDS) - {"SJ", "BJ"}
    assert not courts & view.faces.corner_named
    assert courts <= set(view.faces.under._under("7S"))
    assert reader.faces.corner_named == frozenset()  # the reader itself is unchanged
    again = reader.with_view(
        TilingConfig(tile=config.detector.imgsz, levels=(1.0,)), InstanceConfig(card_size_px=(CARD_W, CARD_H))
    )
    assert again.faces.corner_named is view.faces.corner_named  # learned once for the size


def test_art_cards_the_corners_name_are_not_looked_for_under_other_cards(guyenne, matcher):
    """Where the deck's corners name its courts, a court fanned under a number card shows its own
    corner, which names it: the faces step does not locate the number card nor look under it (the
    search costs about 0.1 s a card). Where they do not, it does (g25's Q♠ under a 7♠)."""
    image, quads = fanned_pair(guyenne, "QS", "7S", base=30.0, shift=(0.0, -0.28), turn=2)
    read = [corners_read("7S", quads[1])]
    named = matcher.with_corner_named(frozenset(ART_CARDS))
    assert named.match(image, (CARD_W, CARD_H), decks=3, read=read) == []
    assert matcher.corner_named == frozenset()
    but_queen = matcher.with_corner_named(frozenset(ART_CARDS) - {"QS"})
    found = but_queen.match(image, (CARD_W, CARD_H), decks=3, read=read)
    assert sorted((f.card, f.covered, f.located) for f in found) == [("7S", False, True), ("QS", True, False)]


@pytest.mark.parametrize("shift", [(-0.02, 0.3), (0.0, -0.3)])
def test_a_joker_under_its_twin_is_found_where_the_corners_name_the_jokers(guyenne, matcher, shift):
    """Filmed deal g25: N's small joker fanned under the other small joker. The copy search refuses
    the strip (the big joker's face, its twin in grey, fits it as well), so it is looked for as the
    twin under the joker even where the corners name both jokers, and found as a joker of unknown
    size."""
    image, _ = fanned_pair(guyenne, "SJ", "SJ", base=20.0, shift=shift, turn=3)
    named = matcher.with_corner_named(frozenset(ART_CARDS))
    found = named.match(image, (CARD_W, CARD_H), decks=3)
    assert sorted((f.card, f.covered) for f in found) == [("?J", True), ("SJ", False)]


@pytest.mark.parametrize(("card", "angle"), [("QS", 0), ("JS", 180), ("KD", 90)])
def test_a_lone_court_card_on_wood_has_no_covered_copy(guyenne, matcher, card, angle):
    """Filmed deal rtg25: a lone J♠ on a wood table, and a copy of it made of the grain beside it
    (the grain correlated with the dark band across the top of its face), which made N's play two
    cards. A copy must show its face's contrast and brightness in the light of the card over it,
    and its outline, as an art card under another must: here a Q♠ on grain running along it had a
    copy beside it with the outline check alone."""
    image, _ = alone_on_wood(guyenne, card, angle, size=(700, 700))
    assert [(f.card, f.covered) for f in matcher.match(image, (CARD_W, CARD_H), decks=3)] == [(card, False)]
