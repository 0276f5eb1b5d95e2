"""Deck enrollment fine-tuning keeps the shipped localiser a localiser."""

from tests.conftest import need_module


def test_finetune_keeps_the_shipped_one_class_localiser_one_class(tmp_path, monkeypatch):
    need_module("ultralytics")
    from models import train as tr
    from vision.detectors.base import default_weights

    weights = default_weights("ultralytics")
    assert tr.checkpoint_classes(weights) == 1  # the shipped detector only localises indices
    data = tmp_path / "data.yaml"  # a new deck's labels name cards (54 classes)
    data.write_text("path: .\ntrain: images\nval: images\nnames:\n  0: 2S\n  1: 3S\n")
    seen = []
    monkeypatch.setattr(tr, "train", lambda config: seen.append(config) or tmp_path / "best.pt")
    tr.finetune(data, weights, epochs=1)
    (config,) = seen
    assert config.single_cls is True
    assert config.freeze == 10 and config.model == str(weights)
