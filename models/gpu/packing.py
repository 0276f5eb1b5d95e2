"""What travels to the GPU machine (run here): ``gpu pack`` writes the training designs' face
atlases as WebP, the randomised decks' outline fonts up to a size, and the wheels the machine's
image lacks (:data:`WHEELS`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from models.gpu.common import GpuRunError, art_designs

#: Fonts larger than this stay behind (the working tree that travels is at most 64 MiB); the
#: randomised decks drawn in one of them are left out of the run's designs.
FONT_KB = 200


#: Wheels that travel, pure Python: ultralytics; pydantic (``calibration.table`` imports it) and its
#: requirements; typer (the command line) and its requirements (``pip show typer rich``).
WHEELS = (
    "ultralytics",
    "ultralytics-thop",
    "pydantic",
    "annotated-types",
    "typing-inspection",
    "typing-extensions",
    "typer",
    "annotated-doc",
    "shellingham",
    "rich",
    "markdown-it-py",
    "mdurl",
    "pygments",
)
#: Wheels that travel built for the GPU machine's Python (3.12, x86-64): pydantic's core.
BUILT_WHEELS = ("pydantic-core",)
#: The wheels only the localiser's training needs (``pack --no-localiser`` leaves them out).
LOCALISER_WHEELS = ("ultralytics", "ultralytics-thop")
#: WebP quality of the face atlases that travel: the tracked tree and ``.gpu`` together must stay
#: under the 64 MiB that travels (80: 7.5 MB for the 23 training decks; 92: 11.0 MB).
WEBP_QUALITY = 80


# --------------------------------------------------------------------------- pack (here)


def pack(
    dest: Path,
    font_kb: int = FONT_KB,
    wheels: bool = True,
    webp_quality: int = WEBP_QUALITY,
    localiser: bool = True,
) -> dict[str, Any]:
    """Write the folder that travels with the repository to the GPU machine (``carry``): the face
    atlases as WebP of ``webp_quality``, the fonts up to ``font_kb``, and the wheels (without
    :data:`LOCALISER_WHEELS` unless ``localiser``)."""
    import cv2

    from models.synth.designs import BY_NAME, HELDOUT_NAMES, HELDOUT_VAL
    from models.synth.faces import _atlas_paths, cache_dir, load_faces
    from models.synth.fonts import FONT_FILES, SUIT_FONT_FILES

    faces = dest / "cache" / "faces"
    faces.mkdir(parents=True, exist_ok=True)
    kept = []
    barred = set(HELDOUT_NAMES) | {d.name for d in HELDOUT_VAL}
    for name in art_designs():
        if name in barred:  # never: art_designs draws from the training lists only
            raise GpuRunError(f"held-out design {name} in the training designs")
        load_faces(name)
        png, meta = _atlas_paths(BY_NAME[name])
        atlas = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
        if atlas is None:
            raise GpuRunError(f"could not read the atlas of {name}: {png}")
        ok, data = cv2.imencode(".webp", atlas, [cv2.IMWRITE_WEBP_QUALITY, webp_quality])
        if not ok:
            raise GpuRunError(f"could not encode the atlas of {name}")
        (faces / png.name).write_bytes(data.tobytes())  # cv2.imread reads it by content
        shutil.copy(meta, faces / meta.name)
        kept.append(name)
    fonts = []
    for f in sorted(set(FONT_FILES) | set(SUIT_FONT_FILES)):
        if Path(f).is_file() and Path(f).stat().st_size <= font_kb * 1000:
            target = dest / "fonts" / f.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, target)
            fonts.append(f)
    if wheels:
        from importlib.metadata import version

        wheel_dir = dest / "wheels"
        wheel_dir.mkdir(exist_ok=True)
        for pkg in WHEELS:
            if localiser or pkg not in LOCALISER_WHEELS:
                _download(wheel_dir, f"{pkg}=={version(pkg)}")
        for pkg in BUILT_WHEELS:
            _download(wheel_dir, f"{pkg}=={version(pkg)}", python="3.12")
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    summary = {"designs": kept, "fonts": len(fonts), "bytes": size, "cache_dir_here": str(cache_dir())}
    print(json.dumps(summary, indent=1))
    return summary


def _download(dest: Path, requirement: str, python: str = "") -> None:
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(dest)]
    if python:
        cmd += ["--python-version", python, "--implementation", "cp"]
        cmd += [
            f"--platform={p}"
            for p in ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
        ]
    subprocess.run([*cmd, requirement], check=True)
