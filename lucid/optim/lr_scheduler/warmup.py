"""Warm-up factors: ConstantLR and LinearLR scale the lr for the first ``total_iters`` epochs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _checks
from ..schedules import linear
from .base import LRScheduler

if TYPE_CHECKING:
    from ..optimizer import Optimizer


class ConstantLR(LRScheduler):
    r"""Multiply each group's lr by ``factor`` until epoch ``total_iters``.

    .. math:: \eta_t = \eta_0 \cdot (\text{factor} \text{ if } t < \mathrm{total\_iters} \text{ else } 1)

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

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        self._check_hyperparameters(dict(factor=factor, total_iters=total_iters))
        self.factor = factor
        self.total_iters = int(total_iters)
        super().__init__(optimizer, last_epoch)

    def _check_hyperparameters(self, values: dict) -> None:
        _checks.finite("factor", values["factor"])
        _checks.count("total_iters", values["total_iters"])
        if values["factor"] > 1.0 or values["factor"] < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self.last_epoch == 0:
            return self._chain(self.factor)
        return self._chain(1.0 / self.factor if self.last_epoch == self.total_iters else None)

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

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        self._check_hyperparameters(dict(start_factor=start_factor, end_factor=end_factor, total_iters=total_iters))
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = int(total_iters)
        super().__init__(optimizer, last_epoch)

    def _check_hyperparameters(self, values: dict) -> None:
        _checks.finite("start_factor", values["start_factor"])
        _checks.finite("end_factor", values["end_factor"])
        _checks.count("total_iters", values["total_iters"])
        if values["start_factor"] > 1.0 or values["start_factor"] <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."
            )
        if values["end_factor"] > 1.0 or values["end_factor"] < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        if self.last_epoch == 0:
            return self._chain(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._chain(None)
        rise = self.end_factor - self.start_factor
        return self._chain(1.0 + rise / (self.total_iters * self.start_factor + (self.last_epoch - 1) * rise))

    def _get_closed_form_lr(self) -> list:
        t, total = min(self.total_iters, self.last_epoch), self.total_iters
        return [base_lr * linear.curve(self.start_factor, self.end_factor, t, total) for base_lr in self.base_lrs]
