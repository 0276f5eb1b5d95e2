"""models.ensemble: several index classifiers averaged into one ONNX file the reader takes as is."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from models.cli import heads_app
from models.ensemble import EnsembleError, build_ensemble, load_ensemble, write_ensemble
from tests.conftest import need_module

torch = need_module("torch")
need_module("onnx")


def _member(tmp_path: Path, seed: int, width: float = 0.5) -> tuple[Path, object]:
    from models.classifier import build_net

    torch.manual_seed(seed)
    net = build_net(classes=55, size=40, width=width).eval()
    path = tmp_path / f"m{seed}.pt"
    torch.save(net.state_dict(), path)
    return path, net


def _crops(n: int = 6) -> np.ndarray:
    return np.random.default_rng(3).random((n, 3, 40, 40), dtype=np.float32)


def test_the_onnx_ensemble_reads_as_the_geometric_mean_of_its_members(tmp_path: Path) -> None:
    from vision.classifier import IndexClassifier

    (a, net_a), (b, net_b) = _member(tmp_path, 1), _member(tmp_path, 2)
    out = tmp_path / "ens.onnx"
    write_ensemble([a, b], out, width=0.5)
    x = _crops()
    with torch.no_grad():
        t = torch.from_numpy(x)
        mean = (torch.log_softmax(net_a(t), 1) + torch.log_softmax(net_b(t), 1)) / 2
    expected = torch.softmax(mean, 1).numpy()
    got = IndexClassifier(out, threads=1, rotate_tta=False).probabilities(x)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    # and it is neither member alone
    alone = torch.softmax(net_a(torch.from_numpy(x)), 1).detach().numpy()
    assert np.abs(got - alone).max() > 1e-3


def test_a_one_member_ensemble_reads_like_the_member(tmp_path: Path) -> None:
    from models.classifier import export_onnx
    from vision.classifier import IndexClassifier

    a, net = _member(tmp_path, 4)
    export_onnx(net, 40, tmp_path / "single.onnx")
    write_ensemble([a], tmp_path / "ens.onnx", width=0.5)
    x = _crops()
    one = IndexClassifier(tmp_path / "single.onnx", threads=1).probabilities(x)
    ens = IndexClassifier(tmp_path / "ens.onnx", threads=1).probabilities(x)
    np.testing.assert_allclose(ens, one, atol=1e-5)


def test_the_saved_state_rebuilds_the_ensemble(tmp_path: Path) -> None:
    (a, _), (b, _) = _member(tmp_path, 5), _member(tmp_path, 6)
    out = tmp_path / "ens.onnx"
    write_ensemble([a, b], out, width=0.5)
    x = torch.from_numpy(_crops())
    with torch.no_grad():
        built = build_ensemble([a, b], width=0.5)(x)
        loaded = load_ensemble(out.with_suffix(".pt"), width=0.5)(x)
    assert len(load_ensemble(out.with_suffix(".pt"), width=0.5).members) == 2
    np.testing.assert_allclose(loaded.numpy(), built.numpy(), atol=0.05)  # stored as FP16


def test_bad_members_are_refused_with_the_reason(tmp_path: Path) -> None:
    a, _ = _member(tmp_path, 7)
    with pytest.raises(EnsembleError, match="not found"):
        build_ensemble([a, tmp_path / "missing.pt"], width=0.5)
    with pytest.raises(EnsembleError, match="does not fit"):
        build_ensemble([a], width=1.0)
    with pytest.raises(EnsembleError, match="at least one"):
        build_ensemble([], width=0.5)
    with pytest.raises(EnsembleError, match="not found"):
        load_ensemble(tmp_path / "none.pt")


def test_the_command_line_names_a_missing_member(tmp_path: Path) -> None:
    a, _ = _member(tmp_path, 8)
    out = tmp_path / "ens.onnx"
    runner = CliRunner()
    args = ["ensemble", str(out), str(a), str(tmp_path / "gone.pt"), "--width", "0.5"]
    result = runner.invoke(heads_app, args)
    assert result.exit_code == 2 and "gone.pt" in result.stderr
    assert not out.exists()
    result = runner.invoke(heads_app, ["ensemble", str(out), str(a), "--width", "0.5"])
    assert result.exit_code == 0, result.output
    assert out.is_file() and out.with_suffix(".pt").is_file()
