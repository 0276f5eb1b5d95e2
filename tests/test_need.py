"""A missing asset skips on a developer's machine and fails under the project's test command."""

from __future__ import annotations

import pytest

from tests.conftest import need


def test_present_assets_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACTORCAM_REQUIRE_ASSETS", "1")
    need(True, "anything")


def test_missing_asset_fails_under_scripts_test(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACTORCAM_REQUIRE_ASSETS", "1")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.fail.Exception, match="rsvg-convert is missing"):
        need(False, "rsvg-convert")


def test_missing_asset_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACTORCAM_REQUIRE_ASSETS", raising=False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception):
        need(False, "chromium")


def test_missing_asset_skips_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACTORCAM_REQUIRE_ASSETS", raising=False)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="scripts/test"):
        need(False, "chromium")
