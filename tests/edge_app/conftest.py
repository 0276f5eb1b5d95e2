"""The table service's tests write nothing outside their temporary folders: its default outbox
(``~/.cache/tractorcam/outbox-*.sqlite``) goes under a per-test cache folder."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
