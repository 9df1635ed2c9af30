"""Decays by a fixed factor: StepLR, MultiStepLR, ExponentialLR and PolynomialLR."""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from typing import TYPE_CHECKING

from .. import _checks
from ..schedules import exponential
from .base import LRScheduler

if TYPE_CHECKING:
    from ..optimizer import Optimizer


class StepLR(LRScheduler):
    r"""Multiply each group's lr by ``gamma`` every ``step_size`` epochs.

    .. math:: \eta_t = \eta_0 \cdot \gamma^{\lfloor t / \mathrm{step\_size} \rfloor}

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

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self._check_hyperparameters(dict(step_size=step_size, gamma=gamma))
        self.step_size, self.gamma = int(step_size), gamma
        super().__init__(optimizer, last_epoch)

    def _check_hyperparameters(self, values: dict) -> None:
        _checks.count("step_size", values["step_size"], 1)
        _checks.finite("gamma", values["gamma"])

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        at_a_step = self.last_epoch != 0 and self.last_epoch % self.step_size == 0
        return self._chain(self.gamma if at_a_step else None)

    def _get_closed_form_lr(self) -> list:
        return [exponential.curve(base_lr, self.gamma, self.last_epoch // self.step_size) for base_lr in self.base_lrs]


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

    def __init__(self, optimizer: Optimizer, milestones: list[int], gamma: float = 0.1, last_epoch: int = -1) -> None:
        milestones = list(milestones)
        self._check_hyperparameters(dict(milestones=milestones, gamma=gamma))
        self.milestones = Counter(int(m) for m in milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _check_hyperparameters(self, values: dict) -> None:
        if not isinstance(values["milestones"], (list, tuple, Counter)):
            raise TypeError(f"milestones must be a list of ints, got {values['milestones']!r}")
        for i, milestone in enumerate(values["milestones"]):
            _checks.count(f"milestones[{i}]", milestone)
        _checks.finite("gamma", values["gamma"])

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self.last_epoch not in self.milestones:
            return self._chain(None)
        return self._chain(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self) -> list:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [exponential.curve(base_lr, self.gamma, passed) for base_lr in self.base_lrs]


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

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self._check_hyperparameters(dict(gamma=gamma))
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _check_hyperparameters(self, values: dict) -> None:
        _checks.finite("gamma", values["gamma"])

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        return self._chain(None if self._is_initial else self.gamma)  # resuming must not decay once more

    def _get_closed_form_lr(self) -> list:
        return [exponential.curve(base_lr, self.gamma, self.last_epoch) for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    r"""Decay each group's lr polynomially to 0 over ``total_iters`` epochs.

    .. math:: \eta_t = \eta_0 \left(1 - \frac{\min(t, T)}{T}\right)^{\text{power}}

    Parameters
    ----------
    optimizer : Optimizer
    total_iters : int, default 5
    power : float, default 1.0
        At least 0 (torch takes a negative power, then divides by zero at ``total_iters``).
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

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self._check_hyperparameters(dict(total_iters=total_iters, power=power))
        self.total_iters, self.power = int(total_iters), power
        super().__init__(optimizer, last_epoch)

    def _check_hyperparameters(self, values: dict) -> None:
        _checks.count("total_iters", values["total_iters"], 1)
        _checks.at_least("power", values["power"])  # torch takes a negative one, then divides by zero at total_iters

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._chain(None)
        t, total = self.last_epoch, self.total_iters
        return self._chain(((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power)

    def _get_closed_form_lr(self) -> list:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * left**self.power for base_lr in self.base_lrs]
