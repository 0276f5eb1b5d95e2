"""The table geometry model (table.json)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from calibration.table import LensDistortion, TableGeometry, default_zones


def _geom() -> TableGeometry:
    h = np.array([[1.5, 0.1, 100], [-0.05, 1.4, 50], [1e-5, 2e-5, 1.0]])
    zones, centre = default_zones(900, 900)
    return TableGeometry(
        image_width=1600,
        image_height=1200,
        image_to_table=np.linalg.inv(h).tolist(),
        table_to_image=h.tolist(),
        table_width_mm=900,
        table_height_mm=900,
        zones=zones,
        centre=centre,
        distortion=LensDistortion(k1=-0.03, cx=800, cy=600, norm=1000),
    )


def test_round_trip(tmp_path) -> None:
    g = _geom()
    g.save(tmp_path / "table.json")
    assert TableGeometry.load(tmp_path / "table.json") == g
    pts = np.array([[10.0, 20.0], [450, 450], [880, 870]])
    assert np.allclose(g.pixel_to_table(g.table_to_pixel(pts)), pts, atol=1e-5)


def test_zones() -> None:
    g = _geom()
    assert g.seat_of((450, 850)) == "S" and g.seat_of((450, 50)) == "N"
    assert g.seat_of((850, 450)) == "E" and g.seat_of((50, 450)) == "W"
    assert g.seat_of((450, 450)) is None and g.in_centre((450, 450))


def test_strict_and_documented() -> None:
    data = _geom().model_dump()
    data["unknown"] = 1
    with pytest.raises(ValidationError):
        TableGeometry.model_validate(data)
    for model in (TableGeometry, LensDistortion):
        for name, f in model.model_fields.items():
            assert f.title and f.description, f"{model.__name__}.{name}"
