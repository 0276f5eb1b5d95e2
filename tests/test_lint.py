"""The code as CI checks it: ``ruff check``, ``ruff format --check`` and ``mypy`` on every package
(``mypy --strict`` where ``pyproject.toml`` says so: the engine, the contract and the tournament
core). Each runs as a developer would run it, from the repository's root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_imports import PACKAGES

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)


def test_ruff_finds_nothing() -> None:
    done = _run(str(BIN / "ruff"), "check", ".")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_the_code_is_formatted() -> None:
    done = _run(str(BIN / "ruff"), "format", "--check", ".")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


@pytest.mark.slow
def test_mypy_finds_nothing_in_any_package() -> None:
    done = _run(str(BIN / "mypy"), *PACKAGES)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
    assert "Success: no issues found" in done.stdout
