"""Every docstring example in the project runs: each package's modules through :mod:`doctest`.

A module that cannot be imported fails here too (a broken import never becomes a skip).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = (
    "engine",
    "games",
    "contract",
    "calibration",
    "vision",
    "edge_app",
    "scoreboard",
    "models",
    "tractorcam_cli",
    "tourney",
)


def modules(package: str) -> list[str]:
    root = importlib.import_module(package)
    return [package] + [
        m.name for m in pkgutil.walk_packages(root.__path__, package + ".") if not m.name.endswith("__main__")
    ]


@pytest.mark.parametrize("package", PACKAGES)
def test_docstring_examples_run(package: str) -> None:
    failed: list[str] = []
    attempted = 0
    for name in modules(package):
        result = doctest.testmod(importlib.import_module(name), report=True)
        attempted += result.attempted
        if result.failed:
            failed.append(f"{name}: {result.failed} of {result.attempted}")
    assert not failed, failed
    if package != "tractorcam_cli":
        assert attempted > 0, f"no docstring example in {package}"
