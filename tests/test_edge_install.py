"""The Raspberry Pi's install, built and checked from a copy of the tree (``scripts/check-edge-install``):
no training, synthetic-data or evaluation code, no PyTorch checkpoint, no server or training stack;
the reader's ONNX weights are there and the table service runs on them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_edge_install_holds_the_table_service_and_nothing_of_the_lab(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "check-edge-install"), str(tmp_path / "venv")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "edge install check passed" in done.stderr
    assert "ok: no lab code and no *.pt installed" in done.stderr
