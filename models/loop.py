"""The one training loop of the crop networks (the index classifier; the suit, joker, orientation
and upright heads).

Every trainer is a :class:`Plan` run by :func:`train`:

- :func:`models.classifier.train_classifier`: epochs over a crop set (one plan per epoch,
  numpy jitter, a one-cycle schedule stepped after each batch);
- :func:`models.gpu.trainers.train_classifiers`: several networks at once, to a deadline on the
  clock, from the growing crop pool and the face bank, jittered on the device in bf16;
- :func:`models.enroll.fine_tune`: the shipped classifier for a number of steps or minutes on an
  enrolled deck's crops, the learning rate falling linearly.

The loop owns what they share: each network in training mode, then rounds of one step per network
(:func:`train_step`: AdamW with :data:`WEIGHT_DECAY`, cross-entropy with
:data:`LABEL_SMOOTHING`) until the plan stops. The plan owns the rest: when to stop, the batches,
the learning rates, and what happens between steps (taking in data, logging, saving).

>>> import torch
>>> from models.classifier import build_net
>>> net = build_net(classes=2, size=40, width=0.25)
>>> class Three(Plan):
...     def begin_round(self, trainees):
...         return trainees[0].steps < 3
...     def batch(self, trainee):
...         return torch.rand(4, 3, 40, 40), torch.tensor([0, 1, 0, 1])
...     def lr(self, trainee):
...         return 1e-3
>>> one = Single(net, crop_optimiser(net, 1e-3))
>>> train([one], Three())
>>> one.steps, float(one.opt.param_groups[0]["lr"])
(3, 0.001)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

#: The crop networks' optimiser and loss, for every trainer: AdamW with this weight decay,
#: cross-entropy with this label smoothing.
WEIGHT_DECAY = 5e-4
LABEL_SMOOTHING = 0.05


def crop_optimiser(net: Any, lr: float) -> Any:
    """The crop networks' optimiser: AdamW at ``lr`` with :data:`WEIGHT_DECAY`."""
    import torch

    return torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=WEIGHT_DECAY)


def crop_loss() -> Any:
    """The crop networks' loss: cross-entropy with :data:`LABEL_SMOOTHING`."""
    import torch

    return torch.nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING)


def train_step(
    net: Any,
    opt: Any,
    loss_fn: Any,
    x: Any,
    y: Any,
    lr: float | None = None,
    autocast: Callable[[], AbstractContextManager[Any]] = nullcontext,
) -> Any:
    """One optimiser step of a crop network on a batch already jittered (``x`` float, ``y``
    classes): the learning rate set to ``lr`` when given (else the optimiser's or its scheduler's),
    the loss under ``autocast()`` (bf16 on a GPU), gradients zeroed, backward, step. Returns the
    loss (a tensor)."""
    if lr is not None:
        for g in opt.param_groups:
            g["lr"] = lr
    with autocast():
        loss = loss_fn(net(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


class Trainee(Protocol):
    """A network in training: the network, its optimiser, the steps taken so far."""

    net: Any
    opt: Any
    steps: int


@dataclass(eq=False)
class Single:
    """One network trained alone (the epochs of ``heads``, enrolment's fine-tune)."""

    net: Any
    opt: Any
    steps: int = 0


class Plan:
    """What a trainer decides; :func:`train` does the rest.

    Each round: :meth:`begin_round` (take in data, work out the progress; ``False`` stops), then for
    each network :meth:`lr`, :meth:`batch` and one :func:`train_step`, then :meth:`stepped`; then
    :meth:`end_round` (log, save). :attr:`autocast` wraps the forward pass.
    """

    autocast: Callable[[], AbstractContextManager[Any]] = nullcontext

    def begin_round(self, trainees: Sequence[Any]) -> bool:
        """Whether to take another round (one step per network), after any work before it."""
        raise NotImplementedError

    def batch(self, trainee: Any) -> tuple[Any, Any]:
        """The next batch for ``trainee``: crops already jittered (float tensor) and classes."""
        raise NotImplementedError

    def lr(self, trainee: Any) -> float | None:
        """The learning rate of ``trainee``'s next step (``None``: the optimiser's own)."""
        return None

    def stepped(self, trainee: Any, loss: Any) -> None:
        """After one step of ``trainee`` (its ``steps`` already counted) with this ``loss``."""

    def end_round(self, trainees: Sequence[Any]) -> None:
        """After a round."""


def train(trainees: Sequence[Trainee], plan: Plan) -> None:
    """Train ``trainees`` as ``plan`` says, one step each per round (see :class:`Plan`)."""
    loss_fn = crop_loss()
    for t in trainees:
        t.net.train()
    while plan.begin_round(trainees):
        for t in trainees:
            lr = plan.lr(t)
            x, y = plan.batch(t)
            loss = train_step(t.net, t.opt, loss_fn, x, y, lr, plan.autocast)
            t.steps += 1
            plan.stepped(t, loss)
        plan.end_round(trainees)
