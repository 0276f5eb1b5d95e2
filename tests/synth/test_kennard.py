"""Adrian Kennard's deck: the bundle converter and the face builder (on hand-written stand-ins)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from models.synth import faces, kennard
from models.synth.designs import BY_NAME, KENNARD_TRAIN, TRAIN
from models.synth.faces import CARDS

XLINK = "{http://www.w3.org/1999/xlink}href"
SVG = "{http://www.w3.org/2000/svg}"

# The shape Babel gives the real bundle: imports, a component per card, nested createElement calls
# with null props, camelCase attributes, xlinkHref, a text child, an export line.
FAKE_BUNDLE = """import _extends from '@babel/runtime/helpers/extends';
import * as React from 'react';

const SvgC10 = _ref => {
  let {
    title,
    titleId,
    ...props
  } = _ref;
  return /*#__PURE__*/React.createElement("svg", _extends({
    xmlns: "http://www.w3.org/2000/svg",
    xmlnsXlink: "http://www.w3.org/1999/xlink",
    className: "C-10_svg__card",
    viewBox: "-120 -168 240 336",
    width: 240,
    height: 336,
    "aria-labelledby": titleId
  }, props), title ? /*#__PURE__*/React.createElement("title", {
    id: titleId
  }, title) : null, /*#__PURE__*/React.createElement("defs", null, /*#__PURE__*/React.createElement("symbol", {
    id: "C-10_svg__a",
    viewBox: "-500 -500 1000 1000",
    preserveAspectRatio: "xMinYMid"
  }, /*#__PURE__*/React.createElement("path", {
    d: "M-260 430v-860",
    stroke: "#000",
    strokeWidth: 80,
    fill: "none"
  }))), /*#__PURE__*/React.createElement("rect", {
    width: 239,
    height: 335,
    x: -119.5,
    y: -167.5,
    fill: "#fff"
  }), /*#__PURE__*/React.createElement("use", {
    xlinkHref: "#C-10_svg__a",
    height: 32,
    width: 32,
    x: -114.4,
    y: -156
  }), /*#__PURE__*/React.createElement("text", {
    x: 0,
    y: 0
  }, "a < b & c"));
};

const SvgSA = _ref => /*#__PURE__*/React.createElement("svg", _extends({
  xmlns: "http://www.w3.org/2000/svg",
  viewBox: "0 0 10 14"
}, _ref), /*#__PURE__*/React.createElement("rect", {
  width: 10,
  height: 14,
  fill: "#fff"
}));

export { SvgC10 as C10, SvgSA as SA };
"""

needs_node = pytest.mark.usefixtures("node")


@needs_node
def test_convert_bundle_writes_valid_svg(tmp_path: Path) -> None:
    bundle = tmp_path / "index.esm.js"
    bundle.write_text(FAKE_BUNDLE)
    assert kennard.convert_bundle(bundle, tmp_path / "out") == 2
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["C10.svg", "SA.svg"]
    root = ET.parse(tmp_path / "out" / "C10.svg").getroot()
    assert root.tag == f"{SVG}svg" and root.get("viewBox") == "-120 -168 240 336"
    assert root.get("class") == "C-10_svg__card" and root.get("aria-labelledby") is None
    assert root.find(f"{SVG}title") is None  # no title was passed
    path = root.find(f"{SVG}defs/{SVG}symbol/{SVG}path")
    assert path is not None and path.get("stroke-width") == "80" and path.get("d") == "M-260 430v-860"
    symbol = root.find(f"{SVG}defs/{SVG}symbol")
    assert symbol is not None and symbol.get("preserveAspectRatio") == "xMinYMid"
    use = root.find(f"{SVG}use")
    assert use is not None and use.get(XLINK) == "#C-10_svg__a" and use.get("x") == "-114.4"
    text = root.find(f"{SVG}text")
    assert text is not None and text.text == "a < b & c"  # escaped in the file, parsed back


@needs_node
def test_convert_bundle_refuses_a_bundle_without_cards(tmp_path: Path) -> None:
    bundle = tmp_path / "index.esm.js"
    bundle.write_text("export const x = 1;\n")
    with pytest.raises(kennard.KennardArtError, match="no Svg components"):
        kennard.convert_bundle(bundle, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_missing_node_or_npm_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kennard.shutil, "which", lambda exe: None)
    with pytest.raises(kennard.KennardArtError, match="node not found"):
        kennard.convert_bundle(tmp_path / "index.esm.js", tmp_path / "out")
    with pytest.raises(kennard.KennardArtError, match="npm not found"):
        kennard.fetch_bundle(tmp_path)


def test_names_and_art_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert [kennard.kennard_name(c) for c in ("10C", "AS", "QH", "2D")] == ["C10", "SA", "HQ", "D2"]
    monkeypatch.delenv("TRACTORCAM_KENNARD_DIR", raising=False)
    monkeypatch.setenv("TRACTORCAM_CACHE", str(tmp_path))
    assert faces.kennard_dir() == tmp_path / "art" / "kennard"
    monkeypatch.setenv("TRACTORCAM_KENNARD_DIR", str(tmp_path / "k"))
    assert faces.kennard_dir() == tmp_path / "k"


def test_missing_art_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACTORCAM_KENNARD_DIR", str(tmp_path / "none"))
    with pytest.raises(kennard.KennardArtError, match="tractorcam synth kennard"):
        faces._build_kennard(BY_NAME["kennard"])
    with pytest.raises(FileNotFoundError, match="card art not found"):
        faces.render_sheet(tmp_path / "none" / "SA.svg", 100)


def test_design_is_training_only() -> None:
    (design,) = KENNARD_TRAIN
    assert BY_NAME["kennard"] is design and design.kind == "kennard" and not design.jokers
    assert design not in TRAIN  # face tiles only: the documented scene splits never draw it


def _card_svg(label: str, colour: str) -> str:
    # a card whose top-left index is a coloured block, sized by the label so that each face differs
    w = 4 + 2 * (sum(map(ord, label)) % 9)
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="336" viewBox="0 0 240 336">'
        '<rect width="240" height="336" fill="#fff"/>'
        f'<rect x="8" y="8" width="{w}" height="40" fill="{colour}"/>'
        f'<rect x="8" y="52" width="24" height="{8 + w}" fill="{colour}"/></svg>'
    )


@pytest.mark.usefixtures("rsvg")
def test_build_kennard_faces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for card in CARDS[:52]:
        colour = "#d00000" if card[-1] in "HD" else "#000000"
        (tmp_path / f"{kennard.kennard_name(card)}.svg").write_text(_card_svg(card, colour))
    (tmp_path / "B1.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="336"><rect width="240" height="336" fill="#36c"/></svg>'
    )
    monkeypatch.setenv("TRACTORCAM_KENNARD_DIR", str(tmp_path))
    got, back = faces._build_kennard(BY_NAME["kennard"])
    assert set(got) == set(CARDS)
    h, w = back.shape[:2]
    assert h == faces.FACE_H and abs(w / h - 240 / 336) < 0.01
    assert all(f.shape == back.shape for f in got.values())
    assert got["SJ"] is back and got["BJ"] is back  # jokers never face up
    assert back[h // 2, w // 2, 0] > 150 and back[h // 2, w // 2, 2] < 100  # the blue back (BGRA)
    red, black = got["7H"][20, 12, :3].astype(int), got["7S"][20, 12, :3].astype(int)
    assert red[2] > 150 and red[0] < 60 and black.max() < 60
    assert len({got[c].tobytes() for c in CARDS[:52]}) > 1
    assert np.array_equal(got["7H"][faces.FACE_H // 2, w // 2, :3], [255, 255, 255])


def test_module_doctests() -> None:
    import doctest

    result = doctest.testmod(kennard)
    assert result.attempted > 0 and result.failed == 0
