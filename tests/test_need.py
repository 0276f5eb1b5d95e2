"""A missing asset skips on a developer's machine and fails under the project's test command."""

from __future__ import annotations

import json

import pytest

from tests.conftest import need, need_module


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


def test_need_module_returns_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACTORCAM_REQUIRE_ASSETS", "1")
    assert need_module("json") is json


def test_missing_module_fails_under_scripts_test(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACTORCAM_REQUIRE_ASSETS", "1")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(
        pytest.fail.Exception, match="the Python package tractorcam_no_such_module is missing"
    ):
        need_module("tractorcam_no_such_module")


def test_missing_module_skips_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACTORCAM_REQUIRE_ASSETS", raising=False)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="tractorcam_no_such_module is missing") as skipped:
        need_module("tractorcam_no_such_module")
    # so that a test module may call it at its top (as pytest.importorskip is called)
    assert skipped.value.allow_module_level
