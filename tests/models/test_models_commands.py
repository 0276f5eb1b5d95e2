"""The training commands are ``tractorcam`` subcommands (typer), and no argparse is left.

``tractorcam heads classifier|orientation|upright``, ``tractorcam select``,
``tractorcam synth tiles|facetiles|kennard`` and ``tractorcam gpu pack|train|check`` live in the
light ``cli`` modules. A GPU machine has no install, only the wheels ``gpu pack`` puts beside the
tree: it runs the same entry point from the tree, ``python3 -m tractorcam_cli gpu ...``.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import subprocess
import sys
from importlib.metadata import requires, version
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from typer.testing import CliRunner

from models import cli as models_cli
from models import gpu
from models.gpu import packing
from models.synth import cli as synth_cli

ROOT = Path(__file__).resolve().parents[2]
#: Folders that hold no project code: tools' and build output, and the benchmark scripts (run as
#: files, ``python benchmarks/X.py``, outside the ``tractorcam`` command line).
NOT_SCANNED = {"benchmarks", "build", "dist", "node_modules", "__pycache__"}

#: What a GPU machine does not have (``docs/gpu.md``): the scoreboard's stack and the test tools.
NOT_ON_THE_GPU = (
    "fastapi",
    "starlette",
    "sqlalchemy",
    "alembic",
    "uvicorn",
    "psycopg",
    "schemathesis",
    "playwright",
)


def _project_sources() -> list[Path]:
    out = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not (d.startswith(".") or d.endswith(".egg-info") or d in NOT_SCANNED)]
        out += [Path(folder) / f for f in files if f.endswith(".py")]
    return out


def _imports_argparse(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "argparse" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "argparse":
            return True
    return False


def test_no_project_module_imports_argparse() -> None:
    sources = _project_sources()
    assert ROOT / "models" / "gpu" / "runs.py" in sources and ROOT / "tests" / "test_imports.py" in sources
    assert [str(p.relative_to(ROOT)) for p in sources if _imports_argparse(p)] == []


def test_the_scan_finds_argparse(tmp_path: Path) -> None:
    for text in ("import argparse\n", "def main():\n    from argparse import ArgumentParser\n"):
        (tmp_path / "m.py").write_text(text)
        assert _imports_argparse(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("import typer  # argparse\n")
    assert not _imports_argparse(tmp_path / "m.py")


def _help(*args: str) -> str:
    from tractorcam_cli.main import app

    result = CliRunner().invoke(app, [*args, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.stdout


def _commands(text: str) -> set[str]:
    """The command names listed in a help text's Commands panel."""
    panel = text.split("Commands")[1]
    return set(re.findall(r"^\S ([a-z][a-z-]*)\s", panel, re.M))


def test_tractorcam_lists_the_training_groups() -> None:
    assert {"heads", "select", "synth", "gpu", "eval", "train"} <= _commands(_help())
    assert _commands(_help("heads")) == {"classifier", "orientation", "upright"}
    assert {"dataset", "deal", "tiles", "facetiles", "kennard"} <= _commands(_help("synth"))
    # `localiser` is the run's own subprocess: there, not listed
    assert _commands(_help("gpu")) == {"pack", "train", "localisers", "check", "soup", "export"}
    assert "--minutes" in _help("gpu", "localiser") and "--arch" in _help("gpu", "localiser")
    assert "--variant" in _help("gpu", "localisers")


def test_the_gpu_machine_runs_the_entry_point_from_the_tree() -> None:
    """``python3 -m tractorcam_cli gpu train --help`` from the tree, the server's packages missing
    (as on the GPU machine), shows the options of ``tractorcam gpu train``; no training module runs
    as a program of its own (no ``__main__`` block: the entry point is the one way in)."""
    block = (
        "import importlib.abc, runpy, sys\n"
        f"BLOCK = {set(NOT_ON_THE_GPU)!r}\n"
        "class B(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] in BLOCK: raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, B())\n"
        "sys.argv = ['tractorcam', 'gpu', 'train', '--help']\n"
        "runpy.run_module('tractorcam_cli', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", block],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "1000"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    import typer.main

    from tractorcam_cli.main import app

    train = typer.main.get_command(app).commands["gpu"].commands["train"]  # type: ignore[attr-defined]
    expected = {o for p in train.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}
    assert set(re.findall(r"--[a-z][a-z-]*", done.stdout)) - {"--help"} == expected and "--budget" in expected
    shims = [p for p in (ROOT / "models").rglob("*.py") if 'if __name__ == "__main__"' in p.read_text()]
    assert [p.relative_to(ROOT).as_posix() for p in shims] == [
        "models/synth/contact.py"
    ]  # its own sheet tool


def test_choices_and_defaults_are_the_modules() -> None:
    """The command line keeps no heavy import, so it spells out the modules' choices and defaults."""
    from models.classifier import AUGMENTATIONS, TARGETS
    from models.facetiles import DESIGN_GROUPS, FaceTileSettings
    from models.selection import JOKER_FLOOR
    from vision.crops import CROP_PAD, CROP_SIZE

    assert tuple(models_cli.Target) == TARGETS
    assert tuple(models_cli.Augmentation) == AUGMENTATIONS
    assert tuple(synth_cli.DesignGroup) == tuple(DESIGN_GROUPS)

    def default(command: Any, name: str) -> Any:
        return inspect.signature(command).parameters[name].default

    assert default(models_cli.classifier_command, "size") == CROP_SIZE
    assert default(models_cli.classifier_command, "pad") == CROP_PAD
    assert default(models_cli.select_command, "joker_floor") == JOKER_FLOOR
    assert default(models_cli.gpu_pack_command, "font_kb") == gpu.FONT_KB
    assert default(synth_cli.facetiles_command, "index_px") == FaceTileSettings.index_px


def test_gpu_train_hands_run_every_option_it_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read = set(re.findall(r"\bargs\.(\w+)", inspect.getsource(gpu.run)))
    seen = []
    monkeypatch.setattr(gpu, "run", seen.append)
    args = [
        "train",
        str(tmp_path / "out"),
        "--budget",
        "60",
        "--variant",
        "a:1:0.01",
        "--variant",
        "b:2:0.02:init",
    ]
    result = CliRunner().invoke(models_cli.gpu_app, [*args, "--no-localiser"])
    assert result.exit_code == 0, result.output
    (ns,) = seen
    assert isinstance(ns, gpu.GpuTrainConfig)
    assert ns.out == tmp_path / "out" and ns.budget == 60.0 and ns.localiser is False
    assert ns.variant == ["a:1:0.01", "b:2:0.02:init"] and ns.loc_data == "/tmp/gpu_loc"
    assert read and read <= set(vars(ns)), read - set(vars(ns))


def test_the_runs_typed_options_default_as_the_command_line_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gpu train OUT`` and ``gpu localisers OUT`` with no option hand their runs the configs built
    from OUT alone: every default of :class:`~models.gpu.GpuTrainConfig` and
    :class:`~models.gpu.GpuLocalisersConfig` is the command line's."""
    seen: list[Any] = []
    monkeypatch.setattr(gpu, "run", seen.append)
    monkeypatch.setattr(gpu, "run_localisers", seen.append)
    for command in ("train", "localisers"):
        result = CliRunner().invoke(models_cli.gpu_app, [command, str(tmp_path / command)])
        assert result.exit_code == 0, result.output
    assert seen == [gpu.GpuTrainConfig(tmp_path / "train"), gpu.GpuLocalisersConfig(tmp_path / "localisers")]
    assert seen[0].variant == models_cli.GPU_VARIANTS and seen[0].bank_art_share == 0.5
    assert tuple(seen[1].variant) == models_cli.GPU_LOC_VARIANTS
    # a negative --bank-art-share: every face alike (None)
    CliRunner().invoke(models_cli.gpu_app, ["train", str(tmp_path / "t"), "--bank-art-share", "-1"])
    assert seen[-1].bank_art_share is None


def test_gpu_check_takes_repeated_options(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, Any]] = []

    def classifiers(nets: list[str], splits: list[str]) -> dict[str, dict[str, float]]:
        calls.append(("classifiers", (nets, splits)))
        return {"w2": {"val cards": 0.5, "val jokers": 3.0}}

    def localisers(models: list[str], splits: list[str], every: int) -> dict[str, dict[str, float]]:
        calls.append(("localisers", (models, splits, every)))
        return {}

    monkeypatch.setattr(gpu, "check_classifiers", classifiers)
    monkeypatch.setattr(gpu, "check_localisers", localisers)
    args = ["check", "--classifier", "a=a.pt:2", "--classifier", "b=b.pt:3", "--split", "v=D:val"]
    result = CliRunner().invoke(models_cli.gpu_app, [*args, "--split", "h=E:heldout_val"])
    assert result.exit_code == 0, result.output
    assert calls == [("classifiers", (["a=a.pt:2", "b=b.pt:3"], ["v=D:val", "h=E:heldout_val"]))]
    assert "w2: val cards 0.5000, val jokers 3" in result.stdout
    # the old form, several values after one flag, is refused, not half read
    result = CliRunner().invoke(models_cli.gpu_app, ["check", "--classifier", "a=a.pt:2", "b=b.pt:3"])
    assert result.exit_code == 2


def _requirement_closure(names: tuple[str, ...]) -> set[str]:
    """Distributions ``names`` need on the GPU machine (Linux, CPython 3.12), by normalised name."""
    env = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux"}
    env |= {"platform_system": "Linux", "platform_machine": "x86_64", "extra": ""}
    seen: set[str] = set()
    todo = [re.sub(r"[-_.]+", "-", n).lower() for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for line in requires(name) or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate(env):
                todo.append(re.sub(r"[-_.]+", "-", req.name).lower())
    return seen


def test_pack_takes_the_command_line_and_what_it_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gpu pack`` downloads typer and its requirements (and pydantic's) at this install's versions:
    the GPU machine installs the wheels with --no-deps and then runs ``python3 -m tractorcam_cli gpu``."""
    downloads: list[tuple[str, str]] = []
    monkeypatch.setattr(packing, "art_designs", lambda: ())
    monkeypatch.setattr(packing, "_download", lambda dest, req, python="": downloads.append((req, python)))
    gpu.pack(tmp_path, font_kb=0)
    packed = {req.partition("==")[0]: (req.partition("==")[2], python) for req, python in downloads}
    needed = _requirement_closure(("typer", "pydantic"))
    assert {"typer", "rich", "pygments", "pydantic-core"} <= needed
    assert needed <= set(packed), needed - set(packed)
    assert all(packed[name][0] == version(name) for name in needed)
    assert packed["pydantic-core"][1] == "3.12" and packed["typer"][1] == ""


def test_pack_leaves_the_localisers_wheels_out_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    downloads: list[str] = []
    monkeypatch.setattr(packing, "art_designs", lambda: ())
    monkeypatch.setattr(
        packing, "_download", lambda dest, req, python="": downloads.append(req.partition("==")[0])
    )
    gpu.pack(tmp_path / "a", font_kb=0, localiser=False)
    assert not set(gpu.LOCALISER_WHEELS) & set(downloads) and {"typer", "pydantic"} <= set(downloads)
    downloads.clear()
    gpu.pack(tmp_path / "b", font_kb=0)
    assert set(gpu.LOCALISER_WHEELS) <= set(downloads)


def test_packed_atlases_are_webp_of_the_quality_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One training deck's atlas at two qualities: WebP (read back by content), the lower one smaller."""
    import cv2

    monkeypatch.setattr(packing, "art_designs", lambda: ("anglo",))
    sizes = {}
    for q in (92, 60):
        out = tmp_path / f"q{q}"
        gpu.pack(out, font_kb=0, wheels=False, webp_quality=q)
        atlases = sorted((out / "cache" / "faces").glob("*.png"))
        assert atlases and all(p.read_bytes()[8:12] == b"WEBP" for p in atlases)
        assert cv2.imread(str(atlases[0]), cv2.IMREAD_UNCHANGED) is not None
        sizes[q] = sum(p.stat().st_size for p in atlases)
    assert sizes[60] < 0.8 * sizes[92]


def test_eval_refuses_a_det_conf_beside_the_sweep_in_one_line(tmp_path):
    """The sweep tries its own localiser thresholds from its lowest up; one given beside it would
    leave the stages above the lowest swept and is refused before anything runs."""
    from tractorcam_cli.main import app

    result = CliRunner().invoke(app, ["eval", "--sweep", "--det-conf", "0.3", "--heldout", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "--det-conf with --sweep" in result.output
