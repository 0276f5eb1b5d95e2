"""Fixtures every test directory shares: what a test needs that the project's set-up installs.

A test that needs card art, a tool or a service calls :func:`need` (or takes one of the fixtures
below); one that needs a Python package the set-up installs imports it with :func:`need_module`.
Where it is missing the test is skipped on a developer's machine, but under the project's test
command (``scripts/test`` sets ``TRACTORCAM_REQUIRE_ASSETS=1``, and CI runs that command) or with
``CI=true`` it fails: CI can never pass by skipping what it should have tested.
"""

from __future__ import annotations

import importlib
import os
import shutil
from types import ModuleType

import pytest


def strict() -> bool:
    """Whether a missing asset fails the test (the project's test command, CI) rather than skipping it."""
    return os.environ.get("TRACTORCAM_REQUIRE_ASSETS") == "1" or os.environ.get("CI", "").lower() == "true"


def need(ok: bool, what: str) -> None:
    """Go on when ``ok``; else fail (:func:`strict`) or skip, naming ``what`` is missing."""
    if ok:
        return
    if strict():
        pytest.fail(f"{what} is missing; bash scripts/setup installs it (scripts/apt-packages.txt)")
    # allowed at module level too: a test module that needs a package skips as a whole
    pytest.skip(
        f"{what} is missing (the project's test command, scripts/test, fails instead)",
        allow_module_level=True,
    )


def need_module(name: str) -> ModuleType:
    """The module ``name``, imported; where it cannot be, :func:`need` fails (:func:`strict`) or skips.

    In place of ``pytest.importorskip``, which skips even under the project's test command. It may
    be called at a test module's top (``torch = need_module("torch")``): the whole module is then
    skipped, or fails to collect under ``scripts/test``.
    """
    try:
        return importlib.import_module(name)
    except ImportError:
        need(False, f"the Python package {name}")
        raise  # not reached: need fails or skips


def _design_ok(name: str) -> bool:
    from models.synth.designs import BY_NAME
    from models.synth.faces import is_available

    return is_available(BY_NAME[name])


@pytest.fixture
def aisleriot_art() -> None:
    """The gnome-cards-data themes and rsvg-convert."""
    need(_design_ok("tigullio") and _design_ok("anglo_modern"), "gnome-cards-data / rsvg-convert")


@pytest.fixture
def kde_art() -> None:
    """The kdegames-card-data-kf5 decks and rsvg-convert."""
    need(_design_ok("kde_standard"), "kdegames-card-data-kf5 / rsvg-convert")


@pytest.fixture
def node() -> None:
    """Node.js, which converts Adrian Kennard's card art."""
    need(shutil.which("node") is not None, "Node.js (Debian nodejs)")


@pytest.fixture
def rsvg() -> None:
    """rsvg-convert (Debian librsvg2-bin)."""
    need(shutil.which("rsvg-convert") is not None, "rsvg-convert (Debian librsvg2-bin)")
