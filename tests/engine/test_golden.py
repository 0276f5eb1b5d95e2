"""Golden files: hand-worked deal logs (the reasoning is in each ``_why``) and their expected
``score`` results. Only the contract's fields are compared; extra fields may be added."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import score_log

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name.removesuffix(".log.json") for p in GOLDEN.glob("*.log.json"))
VIOLATION_KEYS = ("kind", "seat", "trick", "proven_at")


def contract_view(result: dict) -> dict:
    out = {k: result[k] for k in ("tricks", "captured", "defender_total", "bottom", "outcome") if k in result}
    if "outcome" in out:
        out["outcome"] = {k: out["outcome"][k] for k in ("side", "levels", "next_dealer")}
    out["violations"] = [{k: v[k] for k in VIOLATION_KEYS} for v in result["violations"]]
    return out


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 3


@pytest.mark.parametrize("name", CASES)
def test_golden(name: str) -> None:
    log = json.loads((GOLDEN / f"{name}.log.json").read_text(encoding="utf-8"))
    expected = json.loads((GOLDEN / f"{name}.expected.json").read_text(encoding="utf-8"))
    expected.pop("_why", None)
    assert contract_view(score_log(log)) == expected
