"""Schedulers driven by a function of the epoch: LambdaLR and MultiplicativeLR."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _checks
from .base import LRScheduler, _check_optimizer, _lambdas_state

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..optimizer import Optimizer


class _LambdaScheduler(LRScheduler):
    """LambdaLR and MultiplicativeLR: one function of the epoch per group."""

    def _factor(self, fn):
        """``fn``'s factor for this epoch, a finite number (torch takes NaN, and the lr becomes
        NaN; a factor of 10**400 is an OverflowError naming nothing); the step that raises
        leaves the counters as they were."""
        factor = fn(self.last_epoch)
        _checks.finite(f"the factor lr_lambda({self.last_epoch})", factor)
        return factor

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)  # before anything reads its groups
        for fn in lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]:
            if not callable(fn):  # torch's MultiplicativeLR message
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def _factors(self) -> list:
        """Each group's ``lr_lambda(last_epoch)``, all checked before any lr changes: a factor
        that is not a finite number raises, naming the group (torch sets the lr to NaN)."""
        factors = [fn(self.last_epoch) for fn in self.lr_lambdas]
        for i, factor in enumerate(factors):
            _checks.finite(f"the factor lr_lambda({self.last_epoch}) of param_groups[{i}]", factor)
        return factors

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
        self._check_state_dict(state_dict)
        saved = state_dict.get("lr_lambdas")
        if not isinstance(saved, list) or len(saved) != len(self.lr_lambdas) or not all(
            s is None or isinstance(s, dict) for s in saved
        ):
            raise ValueError(f"{type(self).__name__}.load_state_dict: lr_lambdas must be a list of "
                             f"{len(self.lr_lambdas)} entries, each None or a dict, got {saved!r}")
        state = {k: v for k, v in state_dict.items() if k != "lr_lambdas"}
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, state_dict["lr_lambdas"]):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaScheduler):
    r"""Set each group's lr to its initial lr times a function of the epoch.

    .. math:: \eta_t = \eta_0 \cdot \lambda(t)

    A factor that is not a finite number raises ValueError (TypeError: not a number) at the
    step that computes it, naming the group, before any lr changes (torch sets the lr to NaN).

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
        return [base_lr * factor for factor, base_lr in zip(self._factors(), self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    r"""Multiply each group's lr by a function of the epoch, every epoch after the first.

    .. math:: \eta_t = \eta_{t-1} \cdot \lambda(t)

    A factor that is not a finite number raises as in :class:`LambdaLR`.

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

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        return self._chain(None if self._is_initial else self._factors())
