"""Cosine annealing: CosineAnnealingLR, and CosineAnnealingWarmRestarts with its restarts."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import _checks
from ..schedules import cosine
from .base import LRScheduler, _param_groups_val_list, _update_param_group_val

if TYPE_CHECKING:
    from ..optimizer import Optimizer


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

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self._check_hyperparameters(dict(T_max=T_max, eta_min=eta_min))
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def _check_hyperparameters(self, values: dict) -> None:
        _checks.at_least("T_max", values["T_max"], 0, strict=True)
        _checks.finite("eta_min", values["eta_min"])

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        t, period, low = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._chain(None)
        if self._step_count == 1 and t > 0:  # resumed: restart from the closed form
            return self._get_closed_form_lr()
        # torch's recursive form, affine rather than a product: it keeps eta_min fixed
        if (t - 1 - period) % (2 * period) == 0:  # leaving the bottom: the ratio would be 0/0
            return [
                group["lr"] + (base - low) * (1 - math.cos(math.pi / period)) / 2
                for base, group in zip(self.base_lrs, groups)
            ]
        ratio = (1 + math.cos(math.pi * t / period)) / (1 + math.cos(math.pi * (t - 1) / period))
        return [ratio * (group["lr"] - low) + low for group in groups]

    def _get_closed_form_lr(self) -> list:
        return [cosine.curve(base_lr, self.eta_min, self.last_epoch, self.T_max) for base_lr in self.base_lrs]


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

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self._check_hyperparameters(dict(T_0=T_0, T_i=T_0, T_mult=T_mult, eta_min=eta_min, T_cur=0))
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch  # an epoch, which step(epoch) may give as a float
        super().__init__(optimizer, last_epoch)

    def _check_hyperparameters(self, values: dict) -> None:
        for key in ("T_0", "T_i"):  # torch's messages, then T_i (saved) as T_0 and T_cur as an epoch
            if not isinstance(values[key], int) or isinstance(values[key], bool) or values[key] <= 0:
                raise ValueError(f"Expected positive integer {key}, but got {values[key]}")
        if not isinstance(values["T_mult"], int) or values["T_mult"] < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {values['T_mult']}")
        for key in ("T_0", "T_i", "T_mult"):  # beyond int64: an OverflowError at the first step
            _checks.count(key, values[key], 1)
        if not isinstance(values["eta_min"], (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {values['eta_min']} of type "
                             f"{type(values['eta_min'])}")
        _checks.finite("eta_min", values["eta_min"])
        _checks.finite("T_cur", values["T_cur"])

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        return [cosine.curve(base_lr, self.eta_min, self.T_cur, self.T_i) for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
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
