"""The NCNN plug-in's input checks (its agreement with ONNX Runtime: tests/models/test_models_weights.py)."""

import pytest

from tests.conftest import need_module
from vision.detectors import DetectorConfig, WeightsNotFoundError, create_detector

need_module("ncnn")


def test_missing_folder(tmp_path):
    with pytest.raises(WeightsNotFoundError, match="not found"):
        create_detector(DetectorConfig(type="ncnn", weights=tmp_path / "none_ncnn_model"))


def test_folder_without_an_ncnn_model(tmp_path):
    (tmp_path / "m_ncnn_model").mkdir()
    with pytest.raises(WeightsNotFoundError, match="not an NCNN export"):
        create_detector(DetectorConfig(type="ncnn", weights=tmp_path / "m_ncnn_model"))
