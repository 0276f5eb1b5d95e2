"""Average index classifiers into one ONNX file, a drop-in ``--classifier`` for the reader.

The ensemble's output is the mean of its members' log-softmax: the reader's own log-softmax of it is
the normalised geometric mean of the members' probabilities, the same way it averages a crop with
its 180° turn (:func:`vision.classifier._mean_log_softmax`). The members are state dicts of
:func:`models.classifier.build_net` at one width, crop size and class count (a ``--init`` file of
``tractorcam heads classifier``, e.g. ``models/weights/classifier.pt`` of an earlier commit).

Usage::

    tractorcam heads ensemble OUT.onnx A.pt B.pt [C.pt ...] [--width 2]

OUT.pt (the members' state dicts under ``members.K.``) is written beside it, so
:func:`load_ensemble` can rebuild the torch module.
"""

from __future__ import annotations

from pathlib import Path

from models.classifier import CROP_PAD, CROP_SIZE, build_net, export_onnx


class EnsembleError(ValueError):
    """A member file is missing or does not fit the network the ensemble builds."""


def build_ensemble(members: list[Path], width: float = 2.0, size: int = CROP_SIZE, classes: int = 55):  # noqa: ANN201
    """A torch module whose output is the mean log-softmax of the member networks.

    Raises :class:`EnsembleError` for fewer than one member, a missing file or a state dict that
    does not fit ``build_net(classes, size, width)``.
    """
    import torch

    if not members:
        raise EnsembleError("an ensemble needs at least one member")
    nets = []
    for path in members:
        if not Path(path).is_file():
            raise EnsembleError(f"ensemble member not found: {path}")
        net = build_net(classes=classes, size=size, width=width)
        state = torch.load(path, map_location="cpu", weights_only=True)
        try:
            net.load_state_dict({k: v.float() for k, v in state.items()})
        except RuntimeError as e:
            raise EnsembleError(f"{path} does not fit build_net(width={width}, size={size}): {e}") from e
        nets.append(net.eval())
    return _mean_log_softmax(nets)


def _mean_log_softmax(nets):  # noqa: ANN001, ANN202 - torch is imported lazily
    """A module over ``nets`` whose output is the mean of their log-softmax."""
    import torch
    import torch.nn as nn

    class MeanLogSoftmax(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.members = nn.ModuleList(nets)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.stack([torch.log_softmax(m(x), dim=1) for m in self.members]).mean(0)

    return MeanLogSoftmax()


def load_ensemble(path: Path, width: float = 2.0, size: int = CROP_SIZE, classes: int = 55):  # noqa: ANN201
    """The ensemble saved by :func:`write_ensemble` at ``path`` (its ``.pt``)."""
    import torch

    if not Path(path).is_file():
        raise EnsembleError(f"ensemble not found: {path}")
    state = torch.load(path, map_location="cpu", weights_only=True)
    count = 1 + max(int(k.split(".")[1]) for k in state)
    module = _mean_log_softmax([build_net(classes=classes, size=size, width=width) for _ in range(count)])
    module.load_state_dict({k: v.float() for k, v in state.items()})
    return module.eval()


def write_ensemble(members: list[Path], out: Path, width: float = 2.0, size: int = CROP_SIZE) -> None:
    """Write the ensemble of ``members`` as ``out`` (ONNX, input ``crops``, output ``logits``) and its
    state dict as ``out`` with suffix ``.pt``."""
    import torch

    module = build_ensemble(members, width=width, size=size)
    export_onnx(module, size, out, CROP_PAD)
    torch.save({k: v.half() for k, v in module.state_dict().items()}, out.with_suffix(".pt"))


if __name__ == "__main__":
    import typer

    from models.cli import ensemble_command

    typer.run(ensemble_command)
