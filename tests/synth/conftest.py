"""Shared fixtures of the renderer tests."""

from __future__ import annotations

import pytest

from models.synth.designs import BY_NAME
from models.synth.faces import is_available


def aisleriot_ok(name: str = "tigullio") -> bool:
    """Whether the gnome-cards-data art (and rsvg-convert) is usable here."""
    return is_available(BY_NAME[name])


#: Use on a test that renders aisleriot / KDE art: skipped where it is missing, failed under
#: scripts/test and in CI (tests/conftest.py).
needs_aisleriot = pytest.mark.usefixtures("aisleriot_art")
needs_kde = pytest.mark.usefixtures("kde_art")
