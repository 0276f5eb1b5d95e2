"""Shared fixtures of the renderer tests."""

from __future__ import annotations

import pytest

from models.synth.designs import BY_NAME
from models.synth.faces import is_available


def aisleriot_ok(name: str = "tigullio") -> bool:
    """Whether the gnome-cards-data art (and rsvg-convert) is usable here."""
    return is_available(BY_NAME[name])


needs_aisleriot = pytest.mark.skipif(
    not aisleriot_ok(), reason="gnome-cards-data / rsvg-convert not installed"
)


needs_kde = pytest.mark.skipif(
    not aisleriot_ok("kde_standard"), reason="kdegames-card-data-kf5 / rsvg-convert not installed"
)
