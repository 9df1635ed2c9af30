r"""Learning-rate schedulers with torch.optim.lr_scheduler's names, signatures and numbers.

Every scheduler follows torch 2.13 step for step:

- Constructing a scheduler already applies epoch 0 (the *initial step*): ``last_epoch``
  becomes 0, and schedulers such as :class:`LinearLR` change ``group["lr"]`` at once.
  The first scheduler built on an optimizer writes ``group["initial_lr"]``; later ones
  reuse it, and ``last_epoch >= 0`` (resuming) requires it.
- ``step()`` advances ``last_epoch`` by one and computes the new lrs with the
  *chainable* :meth:`~LRScheduler.get_lr`, from the groups' current lrs, so that several
  schedulers on one optimizer compose. ``step(epoch)`` (deprecated, with torch's warning)
  jumps to ``epoch`` through the *closed form* ``_get_closed_form_lr`` where a class has one.
- One arithmetic with :mod:`lucid.optim.schedules`: the closed forms of StepLR, MultiStepLR,
  ExponentialLR, LinearLR and CosineAnnealingLR, CosineAnnealingWarmRestarts and OneCycleLR's
  annealing are the schedule values' curves (``exponential.curve``, ``linear.curve``,
  ``cosine.curve``), with torch's bits. Stepping keeps torch's recursive form (the current lr
  times a factor, in one place: ``LRScheduler._chain``), whose products round otherwise.
- A Tensor lr stays the same Tensor, updated in place with ``fill_``.
- ``state_dict()`` is every attribute but the optimizer (functions left out, callable
  objects saved by their ``__dict__``); ``load_state_dict`` does not touch the optimizer,
  whose own state must be loaded as well.

Bad arguments raise at construction, before anything is written into the optimizer's
groups, where torch fails later or never: ``step_size``, ``T_max``, ``total_iters``,
``div_factor``, ``step_size_up`` of 0 (torch: ZeroDivisionError at a step), NaN or
infinite ``gamma``, ``eta_min``, ``max_lr`` and factors, a non-callable ``lr_lambda``, a
child of ``ChainedScheduler`` or ``SequentialLR`` that is not a scheduler, and None or
anything else instead of an optimizer. A ``step()`` that raises (``OneCycleLR`` stepped
past ``total_steps``) leaves the scheduler's counters as they were.

Calling the scheduler's ``step()`` before the optimizer's first ``step()`` warns, as in
torch. lucid does not wrap the optimizer's ``step`` to find out: :meth:`Optimizer.step
<lucid.optim.Optimizer.step>` itself counts ``optimizer.step_count``.

Examples
--------
>>> import lucid
>>> from lucid import nn, optim
>>> from lucid.optim.lr_scheduler import LinearLR
>>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(2))], lr=0.3)
>>> scheduler = LinearLR(optimizer, start_factor=0.5, total_iters=2)
>>> lrs = [scheduler.get_last_lr()[0]]
>>> for _ in range(3):
...     optimizer.step()
...     scheduler.step()
...     lrs.append(scheduler.get_last_lr()[0])
>>> [round(lr, 4) for lr in lrs]
[0.15, 0.225, 0.3, 0.3]
"""

from .base import (  # noqa: F401 - the shared helpers stay importable from here (swa_utils)
    EPOCH_DEPRECATION_WARNING,
    LRScheduler,
    _format_param,
    _LRScheduler,
)
from .composite import ChainedScheduler, SequentialLR
from .cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts
from .cyclic import CyclicLR, OneCycleLR
from .decay import ExponentialLR, MultiStepLR, PolynomialLR, StepLR
from .lambda_lr import LambdaLR, MultiplicativeLR
from .plateau import ReduceLROnPlateau
from .warmup import ConstantLR, LinearLR

__all__ = [
    "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau",
    "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR",
]
