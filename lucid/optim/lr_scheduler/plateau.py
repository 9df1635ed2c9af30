"""ReduceLROnPlateau: reduce the lr when a metric stops improving."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

from .. import _checks
from .base import (
    EPOCH_DEPRECATION_WARNING,
    LRScheduler,
    _check_optimizer,
    _param_groups_val_list,
    _update_param_group_val,
)

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ..optimizer import Optimizer


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

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: float | list[float] = 0, eps: float = 1e-8) -> None:
        self._check_hyperparameters(dict(factor=factor, patience=patience, cooldown=cooldown, threshold=threshold,
                                         min_lrs=min_lr, eps=eps))
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

    def _check_hyperparameters(self, values: dict) -> None:
        _checks.finite("factor", values["factor"])
        if values["factor"] >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        for key in ("patience", "cooldown", "num_bad_epochs", "cooldown_counter"):
            _checks.count(key, values.get(key, 0))
        _checks.finite("threshold", values["threshold"])
        _checks.at_least("min_lr", values["min_lrs"])
        _checks.at_least("eps", values["eps"])
        if not isinstance(values.get("best", 0.0), (int, float)) or values.get("best", 0.0) != values.get("best", 0.0):
            raise ValueError(f"best must be a number (not NaN), got {values['best']!r}")

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: float | Tensor, epoch: int | None = None) -> None:  # type: ignore[override]  # as torch's
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
        try:
            current = float(metrics)
        except OverflowError:
            raise ValueError(f"metrics must be within the range of a float, got {_checks.describe(metrics)}") from None
        except (TypeError, ValueError):
            raise TypeError(f"metrics must be a number or a one-element Tensor, got {metrics!r}") from None
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
        """Whether a cooldown is running (bad epochs are then not counted).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import ReduceLROnPlateau
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = ReduceLROnPlateau(optimizer, patience=0, cooldown=2)
        >>> scheduler.step(1.0); scheduler.step(2.0)
        >>> scheduler.get_last_lr(), scheduler.in_cooldown
        ([0.1], True)
        """
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
        self._check_state_dict(state_dict)
        mode = state_dict.get("mode", self.mode)
        threshold_mode = state_dict.get("threshold_mode", self.threshold_mode)
        if mode not in ("min", "max"):  # torch's messages, raised before anything is loaded
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)
