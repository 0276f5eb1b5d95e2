"""The table service's tests write nothing outside their temporary folders: its default outbox
(``~/.cache/tractorcam/outbox-*.sqlite``) goes under a per-test cache folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from engine.cards import parse_any, parse_rank
from engine.deal_log import DealLog, Play, Trick
from engine.rules import get_rule_set
from engine.seats import parse_seat


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def as_read(log: Mapping[str, Any]) -> DealLog:
    """A JSON deal log typed the way the table service holds a reading: not checked, so it may be
    one the engine refuses (``DealLog.checked`` tells).

    >>> as_read({"rules": "national-1deck", "level": "2", "trump": "NT", "dealer": "S",
    ...     "tricks": [{"plays": [["S", ["AS"]], ["E", ["AS"]]]}]}).tricks[0].plays[1].cards
    (Card('AS'),)
    """
    return DealLog(
        get_rule_set(log["rules"]),
        parse_rank(log["level"]),
        None if log["trump"] == "NT" else log["trump"],
        parse_seat(log["dealer"]),
        tuple(
            Trick(
                tuple(
                    Play(parse_seat(seat), tuple(parse_any(c) for c in cards))
                    for seat, cards, *_ in t["plays"]
                )
            )
            for t in log.get("tricks", [])
        ),
        None if log.get("bottom") is None else tuple(parse_any(c) for c in log["bottom"]),
        bool(log.get("finished", False)),
    )
