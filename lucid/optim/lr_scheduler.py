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
- A Tensor lr stays the same Tensor, updated in place with ``fill_``.
- ``state_dict()`` is every attribute but the optimizer (functions left out, callable
  objects saved by their ``__dict__``); ``load_state_dict`` does not touch the optimizer,
  whose own state must be loaded as well.

Calling the scheduler's ``step()`` before the optimizer's first ``step()`` warns, as in
torch. lucid does not wrap the optimizer's ``step`` to find out: :meth:`Optimizer.step
<lucid.optim.Optimizer.step>` itself sets ``optimizer._opt_called``.

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

from __future__ import annotations

import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter

from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = [
    "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau",
    "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)

_OVERRIDDEN_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    "`lr_scheduler.step()`. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)

_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
    "will result in PyTorch skipping the first value of the learning rate schedule. "
    "See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)


# Each scheduler's view of its optimizer's instance-level ``step`` (None: the class's own),
# kept outside the scheduler so that it stays out of ``state_dict``.
_WATCHED_STEP: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# --- values in param groups, never aliased ---------------------------------------------------
def _copy(value):
    return value.clone() if isinstance(value, Tensor) else value


def _format_param(name: str, optimizer, param) -> list:
    """``param`` for each group: a list of one value per group, or one value for all."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(p) for p in param]


def _param_groups_val_list(optimizer, key: str) -> list:
    """``group[key]`` of every group, Tensors cloned (KeyError if a group lacks it)."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _update_param_group_val(group: dict, key: str, value) -> None:
    """Set ``group[key]``; a Tensor there keeps its identity and is filled in place."""
    if isinstance(group[key], Tensor):
        group[key].fill_(value.item() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
    for i, group in enumerate(optimizer.param_groups):
        if "lr_schedule" in group:
            raise ValueError(
                f"param_groups[{i}] takes its lr from the schedule {group['lr_schedule']!r}; a scheduler "
                "object would be overridden by it at every step: use one or the other"
            )


def _lambdas_state(lr_lambdas) -> list:
    """Functions are not saved; a callable object is saved by a copy of its ``__dict__``."""
    return [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in lr_lambdas]


def _set_momentum(group: dict, momentum, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _init_momentum_cycle(scheduler, optimizer, base_momentum, max_momentum, last_epoch, keep: bool):
    """Shared by CyclicLR and OneCycleLR: momentum (or beta1) starts at ``max_momentum``."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    base_momentums = _format_param("base_momentum", optimizer, base_momentum)
    max_momentums = _format_param("max_momentum", optimizer, max_momentum)
    if keep:  # CyclicLR keeps them as attributes, OneCycleLR only in the groups
        scheduler.base_momentums, scheduler.max_momentums = base_momentums, max_momentums
    if last_epoch == -1:
        for high, low, group in zip(max_momentums, base_momentums, optimizer.param_groups):
            _set_momentum(group, high, scheduler.use_beta1)
            group["max_momentum"] = high
            group["base_momentum"] = low


class LRScheduler:
    """Base class of the learning-rate schedulers, as torch.optim.lr_scheduler.LRScheduler.

    A subclass implements :meth:`get_lr` (chainable: from the groups' current lrs) and,
    optionally, ``_get_closed_form_lr`` (from ``base_lrs``, used by ``step(epoch)``).

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose ``param_groups[i]["lr"]`` this scheduler sets.
    last_epoch : int, default -1
        The index of the last epoch seen. ``-1`` starts afresh; a value ``>= 0`` resumes and
        needs ``"initial_lr"`` in every group.

    Attributes
    ----------
    optimizer : Optimizer
    base_lrs : list
        Each group's ``initial_lr``.
    last_epoch : int
        0 right after construction (the initial step), then one more per ``step()``.

    Raises
    ------
    TypeError
        If ``optimizer`` is not a lucid Optimizer.
    KeyError
        If resuming (``last_epoch >= 0``) and a group has no ``"initial_lr"``.

    Notes
    -----
    Build the scheduler *before* ``optimizer.load_state_dict`` when restoring a checkpoint:
    construction writes the lrs, and loading then restores the saved ones.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import LRScheduler
    >>> class Halving(LRScheduler):
    ...     def get_lr(self):
    ...         return [base * 0.5 ** self.last_epoch for base in self.base_lrs]
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = Halving(optimizer)
    >>> optimizer.step(); scheduler.step()
    >>> scheduler.get_last_lr(), scheduler.last_epoch
    ([0.5], 1)
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler "
                        "with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't properly loaded "
                        "the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not recommended)"
                    )
        self.base_lrs = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """Reset the step count and apply the current epoch (``last_epoch + 1``)."""
        self._step_count = 0
        # How `optimizer.step` looks now: replacing it afterwards is worth a warning.
        _WATCHED_STEP[self] = self.optimizer.__dict__.get("step")
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def _warn_on_step_order(self) -> None:
        if self.optimizer.__dict__.get("step") is not _WATCHED_STEP.get(self):
            warnings.warn(_OVERRIDDEN_WARNING, UserWarning, stacklevel=3)
        elif not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=3)

    # --- state -----------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The scheduler's state: every attribute but the optimizer.

        Returns
        -------
        dict

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import StepLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> sorted(StepLR(optimizer, step_size=2).state_dict())  # doctest: +NORMALIZE_WHITESPACE
        ['_get_lr_called_within_step', '_is_initial', '_last_lr', '_step_count', 'base_lrs',
         'gamma', 'last_epoch', 'step_size']
        """
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict`. The optimizer's lrs are not changed: load its state too.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import StepLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = StepLR(optimizer, step_size=2)
        >>> scheduler.load_state_dict({**scheduler.state_dict(), "last_epoch": 7})
        >>> scheduler.last_epoch
        7
        """
        self.__dict__.update(state_dict)

    # --- learning rates ---------------------------------------------------------------------
    def get_last_lr(self) -> list:
        """The lrs the last step computed, one per group (Tensors as copies).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import ConstantLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.9)
        >>> ConstantLR(optimizer, factor=0.5).get_last_lr()
        [0.45]
        """
        return self._last_lr

    def get_lr(self) -> list:
        """The next lr of every group, chainable (computed from the groups' current lrs).

        Called by :meth:`step`; outside it, it warns and :meth:`get_last_lr` is what is wanted.
        """
        raise NotImplementedError

    def _warn_get_lr_called_within_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def _group_lrs(self) -> list:
        """The groups' current lrs (copies): what a chainable ``get_lr`` returns to hold still."""
        return _param_groups_val_list(self.optimizer, "lr")

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and write the new lrs into the optimizer's groups.

        Parameters
        ----------
        epoch : int, optional
            Deprecated (warns, as torch): jump to ``epoch``, through ``_get_closed_form_lr``
            where the class has one.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import ExponentialLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = ExponentialLR(optimizer, gamma=0.5)
        >>> for _ in range(2):
        ...     optimizer.step()
        ...     scheduler.step()
        >>> optimizer.param_groups[0]["lr"]
        0.25
        """
        if self._step_count == 1:
            self._warn_on_step_order()
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        groups = self.optimizer.param_groups
        if len(values) != len(groups):
            raise ValueError(f"{type(self).__name__} computed {len(values)} lrs for {len(groups)} param groups")
        for group, lr in zip(groups, values):
            _update_param_group_val(group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The former name of :class:`LRScheduler`, kept as torch keeps it.

    Examples
    --------
    >>> from lucid.optim.lr_scheduler import LRScheduler, _LRScheduler
    >>> issubclass(_LRScheduler, LRScheduler)
    True
    """


class _LambdaScheduler(LRScheduler):
    """LambdaLR and MultiplicativeLR: one function of the epoch per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        """The state, with ``lr_lambdas`` as None for functions and ``__dict__`` for callable objects.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import LambdaLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> LambdaLR(optimizer, lambda epoch: 0.9**epoch).state_dict()["lr_lambdas"]
        [None]
        """
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = _lambdas_state(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict` (callable objects get their saved ``__dict__`` back).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import LambdaLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = LambdaLR(optimizer, lambda epoch: 0.9**epoch)
        >>> scheduler.load_state_dict(scheduler.state_dict())
        """
        state = {k: v for k, v in state_dict.items() if k != "lr_lambdas"}
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, state_dict["lr_lambdas"]):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaScheduler):
    r"""Set each group's lr to its initial lr times a function of the epoch.

    .. math:: \eta_t = \eta_0 \cdot \lambda(t)

    Parameters
    ----------
    optimizer : Optimizer
    lr_lambda : callable or list of callable
        ``lr_lambda(epoch)`` gives the factor; a list gives one function per group.
    last_epoch : int, default -1

    Raises
    ------
    ValueError
        If a list of functions does not have one per group.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import LambdaLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = LambdaLR(optimizer, lr_lambda=lambda epoch: 0.5**epoch)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5, 0.25, 0.125]
    """

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    r"""Multiply each group's lr by a function of the epoch, every epoch after the first.

    .. math:: \eta_t = \eta_{t-1} \cdot \lambda(t)

    Parameters
    ----------
    optimizer : Optimizer
    lr_lambda : callable or list of callable
        ``lr_lambda(epoch)`` gives the factor; a list gives one function per group.
    last_epoch : int, default -1

    Raises
    ------
    TypeError
        If a ``lr_lambda`` is not callable.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import MultiplicativeLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = MultiplicativeLR(optimizer, lr_lambda=lambda epoch: 0.5)
    >>> for _ in range(2):
    ...     optimizer.step(); scheduler.step()
    >>> scheduler.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        lambdas = lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]
        for fn in lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self._is_initial:
            return self._group_lrs()
        return [g["lr"] * fn(self.last_epoch) for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    r"""Multiply each group's lr by ``gamma`` every ``step_size`` epochs.

    .. math:: \eta_t = \eta_0 \cdot \gamma^{\lfloor t / \text{step\_size} \rfloor}

    Parameters
    ----------
    optimizer : Optimizer
    step_size : int
        Period of the decay, in epochs.
    gamma : float, default 0.1
        Factor of the decay.
    last_epoch : int, default -1

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import StepLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = StepLR(optimizer, step_size=2, gamma=0.5)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    r"""Multiply each group's lr by ``gamma`` at each milestone epoch.

    .. math:: \eta_t = \eta_0 \cdot \gamma^{\#\{m \in \text{milestones} : m \le t\}}

    Parameters
    ----------
    optimizer : Optimizer
    milestones : iterable of int
        Epochs at which to decay; a milestone given twice decays by ``gamma**2``.
    gamma : float, default 0.1
    last_epoch : int, default -1

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import MultiStepLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = MultiStepLR(optimizer, milestones=[1, 3], gamma=0.5)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    r"""Multiply each group's lr by ``factor`` until epoch ``total_iters``.

    .. math:: \eta_t = \eta_0 \cdot (\text{factor} \text{ if } t < \text{total\_iters} \text{ else } 1)

    Parameters
    ----------
    optimizer : Optimizer
    factor : float, default 1/3
        In [0, 1] (0 is accepted, as torch 2.13 accepts it).
    total_iters : int, default 5
    last_epoch : int, default -1

    Raises
    ------
    ValueError
        If ``factor`` is outside [0, 1].

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import ConstantLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = ConstantLR(optimizer, factor=0.5, total_iters=2)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        factor = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base_lr * factor for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    r"""Scale each group's lr by a factor going linearly from ``start_factor`` to ``end_factor``.

    .. math:: \eta_t = \eta_0 \left(s + (e - s) \frac{\min(t, T)}{T}\right)

    Parameters
    ----------
    optimizer : Optimizer
    start_factor : float, default 1/3
        In (0, 1].
    end_factor : float, default 1.0
        In [0, 1].
    total_iters : int, default 5
        Epochs to go from one factor to the other (0 is accepted, as torch 2.13 accepts it).
    last_epoch : int, default -1

    Raises
    ------
    ValueError
        If a factor is out of range.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import LinearLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = LinearLR(optimizer, start_factor=0.25, total_iters=3)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        rise = self.end_factor - self.start_factor
        factor = 1.0 + rise / (self.total_iters * self.start_factor + (self.last_epoch - 1) * rise)
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        rise = self.end_factor - self.start_factor
        return [
            base_lr * (self.start_factor + rise * min(self.total_iters, self.last_epoch) / self.total_iters)
            for base_lr in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    r"""Multiply each group's lr by ``gamma`` every epoch.

    .. math:: \eta_t = \eta_0 \cdot \gamma^t

    Parameters
    ----------
    optimizer : Optimizer
    gamma : float
    last_epoch : int, default -1

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import ExponentialLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = ExponentialLR(optimizer, gamma=0.5)
    >>> optimizer.step(); scheduler.step()
    >>> scheduler.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self._is_initial:  # resuming must not decay once more
            return self._group_lrs()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    r"""Decay each group's lr polynomially to 0 over ``total_iters`` epochs.

    .. math:: \eta_t = \eta_0 \left(1 - \frac{\min(t, T)}{T}\right)^{\text{power}}

    Parameters
    ----------
    optimizer : Optimizer
    total_iters : int, default 5
    power : float, default 1.0
    last_epoch : int, default -1

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import PolynomialLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = PolynomialLR(optimizer, total_iters=4, power=2.0)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(5):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0]
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        t, total = self.last_epoch, self.total_iters
        factor = ((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * left**self.power for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Anneal each group's lr along a cosine from its initial lr to ``eta_min`` in ``T_max`` epochs.

    .. math::

        \eta_t = \eta_{\min} + \tfrac12 (\eta_0 - \eta_{\min})
            \left(1 + \cos\frac{\pi t}{T_{\max}}\right)

    computed, as torch does, recursively from the current lr (so changes made to the lr from
    outside persist). It is not clamped: after ``T_max`` the lr rises again, with period
    ``2 * T_max``.

    Parameters
    ----------
    optimizer : Optimizer
    T_max : int
        Epochs from the initial lr down to ``eta_min``.
    eta_min : float, default 0.0
    last_epoch : int, default -1

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import CosineAnnealingLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = CosineAnnealingLR(optimizer, T_max=4)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(6):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> [round(lr, 4) for lr in lrs]
    [1.0, 0.8536, 0.5, 0.1464, 0.0, 0.1464, 0.5]
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        t, period, low = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._group_lrs()
        if self._step_count == 1 and t > 0:  # resumed: restart from the closed form
            return [low + (base - low) * (1 + math.cos(t * math.pi / period)) / 2 for base in self.base_lrs]
        if (t - 1 - period) % (2 * period) == 0:  # leaving the bottom: the ratio would be 0/0
            return [
                group["lr"] + (base - low) * (1 - math.cos(math.pi / period)) / 2
                for base, group in zip(self.base_lrs, groups)
            ]
        ratio = (1 + math.cos(math.pi * t / period)) / (1 + math.cos(math.pi * (t - 1) / period))
        return [ratio * (group["lr"] - low) + low for group in groups]

    def _get_closed_form_lr(self) -> list:
        low, cos = self.eta_min, math.cos(math.pi * self.last_epoch / self.T_max)
        return [low + (base_lr - low) * (1 + cos) / 2 for base_lr in self.base_lrs]


class _Composite(LRScheduler):
    """SequentialLR and ChainedScheduler: checks of the children, and their saved states."""

    def _check_children(self, optimizer, schedulers) -> None:
        name = type(self).__name__
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs "
                    f"to be specified when calling `step`, but got one at index {i} in the given schedulers "
                    "sequence."
                )
            if scheduler.optimizer is not optimizer:
                raise ValueError(
                    f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                    f"{type(scheduler).__name__} at index {i} has {scheduler.optimizer}, which is different "
                    f"from {type(optimizer).__name__}."
                )

    def state_dict(self) -> dict:
        """The state, with each child scheduler's own state dict under ``_schedulers``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import ChainedScheduler, ExponentialLR, StepLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> chained = ChainedScheduler([StepLR(optimizer, 2), ExponentialLR(optimizer, 0.5)])
        >>> [sd["last_epoch"] for sd in chained.state_dict()["_schedulers"]]
        [0, 0]
        """
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict`, each child from its own saved state.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import ChainedScheduler, StepLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> chained = ChainedScheduler([StepLR(optimizer, 2)])
        >>> chained.load_state_dict(chained.state_dict())
        """
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "_schedulers"})
        for scheduler, saved in zip(self._schedulers, state_dict["_schedulers"]):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite):
    r"""Run one scheduler after another, switching at the milestone epochs.

    With children :math:`S_0, \dots, S_{k}` and milestones :math:`m_1 < \dots < m_k`
    (:math:`m_0 = 0`), the lr at epoch :math:`t` is the active child's at its own epoch:

    .. math::

        \eta_t = \eta^{(S_i)}_{t - m_i} \quad \text{for } m_i \le t < m_{i+1}
        \quad (m_{k+1} = \infty)

    where each child starts from the groups' ``initial_lr`` :math:`\eta_0`.

    At construction the groups' lrs go back to ``initial_lr``, the children's own initial
    steps are undone, and only the first child steps. At a milestone the next child
    restarts at its epoch 0 (through its closed form, where it has one); otherwise the
    active child steps.

    Parameters
    ----------
    optimizer : Optimizer
    schedulers : list of LRScheduler
        The children, built on ``optimizer``; not ReduceLROnPlateau.
    milestones : list of int
        One fewer than ``schedulers``: the epochs at which the next child takes over.
    last_epoch : int, default -1

    Raises
    ------
    ValueError
        For no schedulers, a ReduceLROnPlateau, a child of another optimizer, or a wrong
        number of milestones.
    TypeError
        For a child without an ``optimizer``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import ExponentialLR, LinearLR, SequentialLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> warm = LinearLR(optimizer, start_factor=0.1, total_iters=3)
    >>> decay = ExponentialLR(optimizer, gamma=0.5)
    >>> scheduler = SequentialLR(optimizer, [warm, decay], milestones=[3])
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(6):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> [round(lr, 4) for lr in lrs]
    [0.1, 0.4, 0.7, 1.0, 0.5, 0.25, 0.125]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got no scheduler.")
        self._check_children(optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number "
                f"of milestone points, but got number of schedulers {len(schedulers)} and the number of "
                f"milestones to be equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            _update_param_group_val(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Undo, recursively, the initial step every child took when it was built.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import SequentialLR, StepLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> child = StepLR(optimizer, 2)
        >>> scheduler = SequentialLR(optimizer, [child], milestones=[])
        >>> scheduler.recursive_undo()
        >>> child.last_epoch
        -1
        """
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for child in scheds._schedulers:
                self.recursive_undo(child)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        """Step the active child, or restart the next one at its milestone.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import ConstantLR, SequentialLR, StepLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> first, then = ConstantLR(optimizer, 0.5, 10), StepLR(optimizer, 1, 0.5)
        >>> scheduler = SequentialLR(optimizer, [first, then], milestones=[1])
        >>> optimizer.step(); scheduler.step()
        >>> scheduler.get_last_lr()
        [1.0]
        """
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    r"""Step several schedulers of one optimizer together; their effects multiply.

    Each step applies every child's recursive update, in order, to the lr the previous
    child left: for chainable children whose step multiplies the lr by :math:`r^{(i)}_t`,

    .. math::

        \eta_t = \eta_{t-1} \prod_i r^{(i)}_t

    e.g. ExponentialLR(:math:`\gamma`) chained with StepLR(:math:`s`, :math:`\gamma'`) gives
    :math:`\eta_t = \eta_0\, \gamma^{t} \gamma'^{\lfloor t / s \rfloor}`.

    There is no initial step of its own: the children already took theirs.

    Parameters
    ----------
    schedulers : sequence of LRScheduler
        Chainable schedulers, all of one optimizer; not ReduceLROnPlateau.
    optimizer : Optimizer, optional
        Defaults to the first scheduler's.

    Raises
    ------
    ValueError
        For no schedulers, a ReduceLROnPlateau, or schedulers of different optimizers.
    TypeError
        For a child without an ``optimizer``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import ChainedScheduler, ExponentialLR, StepLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = ChainedScheduler([StepLR(optimizer, 2, gamma=0.1), ExponentialLR(optimizer, 0.5)])
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(2):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> [round(lr, 6) for lr in lrs]
    [1.0, 0.5, 0.025]
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be chained, "
                             "but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        self._check_children(optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        """Step every child, in order.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import ChainedScheduler, ExponentialLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = ChainedScheduler([ExponentialLR(optimizer, 0.5), ExponentialLR(optimizer, 0.5)])
        >>> optimizer.step(); scheduler.step()
        >>> scheduler.get_last_lr()
        [0.25]
        """
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")


class ReduceLROnPlateau(LRScheduler):
    r"""Reduce each group's lr by ``factor`` once a metric has stopped improving.

    With metric :math:`x_t`, best value :math:`x^*` and threshold :math:`\tau`, in mode
    "min" an epoch is good if :math:`x_t < x^*(1 - \tau)` ("rel") or
    :math:`x_t < x^* - \tau` ("abs") ("max": :math:`x_t > x^*(1 + \tau)` or
    :math:`x_t > x^* + \tau`). Counting bad epochs :math:`b` outside cooldowns, with
    :math:`f` = ``factor`` and :math:`\eta_{\min}` = ``min_lr``,

    .. math::

        \eta_t = \begin{cases}
            \max(f\,\eta_{t-1}, \eta_{\min}) & \text{if } b > \text{patience and }
                \eta_{t-1} - \max(f\,\eta_{t-1}, \eta_{\min}) > \epsilon \\
            \eta_{t-1} & \text{otherwise}
        \end{cases}

    (a reduction resets :math:`b` and starts a cooldown).

    Each ``step(metric)``: a metric better than the best so far (beyond ``threshold``)
    resets the count of bad epochs, another adds one; during a cooldown bad epochs are not
    counted; more than ``patience`` bad epochs reduce every lr to
    ``max(lr * factor, min_lr)`` (unless that changes it by ``eps`` or less) and start a
    cooldown. As torch, it has no initial step and needs no ``initial_lr``.

    Parameters
    ----------
    optimizer : Optimizer
    mode : {"min", "max"}, default "min"
        Whether the metric should decrease or increase.
    factor : float, default 0.1
        Below 1.
    patience : int, default 10
        Bad epochs allowed before a reduction.
    threshold : float, default 1e-4
    threshold_mode : {"rel", "abs"}, default "rel"
        ``rel``: better means beyond ``best * (1 -/+ threshold)``; ``abs``: beyond
        ``best -/+ threshold``.
    cooldown : int, default 0
        Epochs to wait after a reduction before counting bad epochs again.
    min_lr : float or list of float, default 0
        A lower bound for every group, or one per group.
    eps : float, default 1e-8
        Reductions of ``eps`` or less are skipped.

    Raises
    ------
    ValueError
        For ``factor >= 1``, an unknown mode or threshold mode, or a ``min_lr`` list of the
        wrong length.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import ReduceLROnPlateau
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = ReduceLROnPlateau(optimizer, factor=0.5, patience=1, cooldown=1)
    >>> lrs = []
    >>> for loss in [1, 1, 1, 1, 1, 0.5, 0.5, 0.5]:
    ...     optimizer.step()
    ...     scheduler.step(loss)
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> lrs
    [1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _param_groups_val_list(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None) -> None:
        """Record one epoch's metric (a number or a one-element Tensor) and maybe reduce the lrs.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import ReduceLROnPlateau
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = ReduceLROnPlateau(optimizer, patience=0)
        >>> scheduler.step(lucid.tensor(2.0)); scheduler.step(3.0)
        >>> scheduler.get_last_lr(), scheduler.best
        ([0.1], 2.0)
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in a cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")

    def _reduce_lr(self, epoch) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new param "
                    "group being added to the optimizer. Please modify the `min_lrs` field to match the "
                    "length of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                _update_param_group_val(group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        """Whether a cooldown is running (bad epochs are then not counted)."""
        return self.cooldown_counter > 0

    def _is_better(self, a, best) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict` (and re-check its mode and threshold mode).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import ReduceLROnPlateau
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = ReduceLROnPlateau(optimizer)
        >>> scheduler.load_state_dict({**scheduler.state_dict(), "num_bad_epochs": 3})
        >>> scheduler.num_bad_epochs
        3
        """
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)


class CyclicLR(LRScheduler):
    r"""Cycle each group's lr between ``base_lr`` and ``max_lr`` (and momentum the other way).

    A cycle rises for ``step_size_up`` steps and falls for ``step_size_down``; the amplitude
    ``max_lr - base_lr`` is scaled by ``scale_fn`` of the cycle number (``"triangular"``: 1,
    ``"triangular2"``: halved each cycle) or of the step (``"exp_range"``: ``gamma**step``).
    With ``cycle_momentum``, ``momentum`` (or ``betas[0]``, for optimizers with ``betas``)
    cycles between ``max_momentum`` and ``base_momentum``. Step it after every batch.

    With :math:`T = T_{\text{up}} + T_{\text{down}}`, :math:`r = T_{\text{up}} / T` and
    batch index :math:`t`:

    .. math::

        \begin{aligned}
        c &= \lfloor 1 + t / T \rfloor, \qquad x = 1 + t / T - c \\
        h &= \begin{cases} x / r & x \le r \\ (x - 1) / (r - 1) & x > r \end{cases} \\
        \eta_t &= \eta_{\text{base}} + (\eta_{\max} - \eta_{\text{base}})\, h\, s, \qquad
        \mu_t = \mu_{\max} - (\mu_{\max} - \mu_{\text{base}})\, h\, s
        \end{aligned}

    with :math:`s = 1` ("triangular"), :math:`s = 2^{1 - c}` ("triangular2"),
    :math:`s = \gamma^{t}` ("exp_range"), or ``scale_fn`` of :math:`c` or :math:`t`.

    Parameters
    ----------
    optimizer : Optimizer
    base_lr, max_lr : float or list of float
        The lower and upper lr of the cycle, for every group or one per group. At
        construction (``last_epoch=-1``) each group's lr is set to ``base_lr``.
    step_size_up : int, default 2000
    step_size_down : int, optional
        Defaults to ``step_size_up``.
    mode : {"triangular", "triangular2", "exp_range"}, default "triangular"
        Ignored when ``scale_fn`` is given.
    gamma : float, default 1.0
        For ``"exp_range"``.
    scale_fn : callable, optional
        A custom ``scale_fn(x)`` in [0, 1].
    scale_mode : {"cycle", "iterations"}, default "cycle"
        What ``scale_fn`` takes (only used with a custom ``scale_fn``).
    cycle_momentum : bool, default True
    base_momentum, max_momentum : float or list of float, default 0.8 and 0.9
    last_epoch : int, default -1
        The index of the last *batch*.

    Raises
    ------
    ValueError
        For an unknown mode without ``scale_fn``, lists of the wrong length, or
        ``cycle_momentum`` on an optimizer with neither ``momentum`` nor ``betas``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import CyclicLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
    >>> scheduler = CyclicLR(optimizer, base_lr=0.1, max_lr=1.0, step_size_up=2)
    >>> lrs, momenta = [], []
    >>> for _ in range(5):
    ...     lrs.append(round(scheduler.get_last_lr()[0], 4))
    ...     momenta.append(round(optimizer.param_groups[0]["momentum"], 4))
    ...     optimizer.step(); scheduler.step()
    >>> lrs, momenta
    ([0.1, 0.55, 1.0, 0.55, 0.1], [0.9, 0.85, 0.8, 0.85, 0.9])
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _update_param_group_val(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _init_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch, keep=True)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        """The built-in modes fix what ``scale_fn`` takes: the cycle, or the step for exp_range."""
        if self._scale_fn_custom is None:
            self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x) -> float:
        """The amplitude's scale at ``x`` (a cycle number or a step, see ``scale_mode``).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import CyclicLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
        >>> CyclicLR(optimizer, 0.1, 1.0, mode="triangular2").scale_fn(3)
        0.25
        """
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [low + (high - low) * scale_factor * scale for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, high - (high - low) * scale_factor * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict:
        """The state; a custom ``scale_fn`` is saved by its ``__dict__`` if it is a callable object.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import CyclicLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
        >>> CyclicLR(optimizer, 0.1, 1.0, scale_fn=lambda x: 1.0).state_dict()["_scale_fn_custom"] is None
        True
        """
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = _lambdas_state([fn])[0] if fn is not None else None
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict`.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import CyclicLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
        >>> scheduler = CyclicLR(optimizer, 0.1, 1.0)
        >>> scheduler.load_state_dict(scheduler.state_dict())
        """
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom")
        super().load_state_dict(state)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing from the initial lr to ``eta_min``, restarted every ``T_i`` epochs.

    .. math::

        \eta_t = \eta_{\min} + \tfrac12 (\eta_0 - \eta_{\min})
            \left(1 + \cos\frac{\pi T_{cur}}{T_i}\right)

    with :math:`T_{cur}` the epochs since the last restart and :math:`T_i` starting at
    ``T_0`` and multiplied by ``T_mult`` at each restart. ``step(epoch)`` takes fractional
    epochs (e.g. ``epoch + i / iters`` per batch) without a deprecation warning.

    Parameters
    ----------
    optimizer : Optimizer
    T_0 : int
        Epochs until the first restart (a positive int).
    T_mult : int, default 1
        An int >= 1.
    eta_min : float, default 0.0
    last_epoch : int, default -1

    Raises
    ------
    ValueError
        For a bad ``T_0``, ``T_mult`` or ``eta_min``, or a negative epoch.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import CosineAnnealingWarmRestarts
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = CosineAnnealingWarmRestarts(optimizer, T_0=2)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(round(scheduler.get_last_lr()[0], 4))
    >>> lrs
    [1.0, 0.5, 1.0, 0.5, 1.0]
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        cos = math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base_lr - self.eta_min) * (1 + cos) / 2 for base_lr in self.base_lrs]

    def step(self, epoch=None) -> None:
        """Advance one epoch, or go to ``epoch`` (which may be fractional).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import CosineAnnealingWarmRestarts
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = CosineAnnealingWarmRestarts(optimizer, T_0=4)
        >>> scheduler.step(2.0)
        >>> scheduler.get_last_lr(), scheduler.last_epoch
        ([0.5], 2)
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** (n)
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _update_param_group_val(group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    r"""The 1cycle policy: warm the lr up to ``max_lr``, then anneal it far below the start.

    Phases (two by default, three with ``three_phase``) go from ``initial_lr =
    max_lr / div_factor`` up to ``max_lr`` over ``pct_start`` of ``total_steps``, then down
    to ``min_lr = initial_lr / final_div_factor`` (through ``initial_lr`` first with three
    phases), by cosine or linear annealing; momentum (or ``betas[0]``) moves the other way
    between ``max_momentum`` and ``base_momentum``. Not chainable; step it after every
    batch, ``total_steps`` times at most.

    With :math:`N` = ``total_steps``, :math:`p` = ``pct_start``,
    :math:`\eta_{\text{init}} = \eta_{\max} / \text{div\_factor}` and
    :math:`\eta_{\min} = \eta_{\text{init}} / \text{final\_div\_factor}`, the phases end at
    :math:`e_1 = pN - 1` and :math:`e_2 = N - 1` (three phases: :math:`e_1 = pN - 1`,
    :math:`e_2 = 2pN - 2`, :math:`e_3 = N - 1`); at batch :math:`t` in phase :math:`i`
    (from :math:`e_{i-1}`, :math:`e_0 = 0`, and lr :math:`a_i` to :math:`b_i`),

    .. math::

        \begin{aligned}
        q &= \frac{t - e_{i-1}}{e_i - e_{i-1}} \\
        \eta_t &= b_i + \tfrac12 (a_i - b_i)\,(1 + \cos \pi q)
            \quad\text{("cos")}, \qquad
            \eta_t = a_i + (b_i - a_i)\, q \quad\text{("linear")}
        \end{aligned}

    with :math:`(a_i, b_i)` = :math:`(\eta_{\text{init}}, \eta_{\max})`,
    :math:`(\eta_{\max}, \eta_{\min})`; with three phases
    :math:`(\eta_{\text{init}}, \eta_{\max})`, :math:`(\eta_{\max}, \eta_{\text{init}})`,
    :math:`(\eta_{\text{init}}, \eta_{\min})`. The momentum anneals the same way between
    ``max_momentum`` and ``base_momentum``, opposite to the lr (constant in a third phase).

    Parameters
    ----------
    optimizer : Optimizer
    max_lr : float or list of float
    total_steps : int, optional
        Or give both ``epochs`` and ``steps_per_epoch``.
    epochs, steps_per_epoch : int, optional
    pct_start : float, default 0.3
        A float in [0, 1].
    anneal_strategy : {"cos", "linear"}, default "cos"
    cycle_momentum : bool, default True
    base_momentum, max_momentum : float or list of float, default 0.85 and 0.95
    div_factor : float, default 25.0
    final_div_factor : float, default 1e4
    three_phase : bool, default False
    last_epoch : int, default -1
        The index of the last *batch*.

    Raises
    ------
    ValueError
        For bad step counts, ``pct_start`` or ``anneal_strategy``, ``cycle_momentum`` on an
        optimizer with neither ``momentum`` nor ``betas``, and when stepped more than
        ``total_steps`` times.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import OneCycleLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
    >>> scheduler = OneCycleLR(optimizer, max_lr=1.0, total_steps=8)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(7):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> [round(lr, 4) for lr in lrs]
    [0.04, 0.8193, 0.9719, 0.8117, 0.556, 0.2831, 0.0766, 0.0]
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        self._schedule_phases = self._phases(pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for high, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = high / div_factor
                group["max_lr"] = high
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _init_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch, keep=False)
        super().__init__(optimizer, last_epoch)

    def _phases(self, pct_start: float, three_phase: bool) -> list:
        """Each phase: its last step and the group keys it goes from and to."""
        def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
            return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
                    "start_momentum": start_momentum, "end_momentum": end_momentum}

        rise = phase(float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr", "max_momentum",
                     "base_momentum")
        if three_phase:
            return [
                rise,
                phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                      "max_momentum"),
                phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        return [rise, phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    @staticmethod
    def _annealing_cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]], group[phase["end_momentum"]],
                                                     pct)
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = phase["end_step"]
        return lrs
