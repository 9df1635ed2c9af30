"""Schedulers made of schedulers: SequentialLR (one after another) and ChainedScheduler (together)."""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from .. import _checks
from .base import LRScheduler, _check_optimizer, _param_groups_val_list, _update_param_group_val
from .plateau import ReduceLROnPlateau

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..optimizer import Optimizer


class _Composite(LRScheduler):
    """SequentialLR and ChainedScheduler: checks of the children, and their saved states."""

    _schedulers: Sequence[LRScheduler]  # the children, as given

    def _check_list(self, schedulers) -> None:
        """``schedulers`` is a list or tuple of schedulers (before anything reads them)."""
        name = type(self).__name__
        if not isinstance(schedulers, (list, tuple)):
            raise TypeError(f"{name} expects a list of schedulers, got {type(schedulers).__name__}")
        for i, child in enumerate(schedulers):
            if not isinstance(child, LRScheduler):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute. (It must be a "
                                f"scheduler, an LRScheduler; got {type(child).__name__})")

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
        self._check_state_dict(state_dict)
        children = state_dict.get("_schedulers")
        if not isinstance(children, list) or len(children) != len(self._schedulers):
            raise ValueError(f"{type(self).__name__}.load_state_dict: _schedulers must be a list of "
                             f"{len(self._schedulers)} state dicts, got {children!r}")
        for scheduler, saved in zip(self._schedulers, children):  # every child checked before any loads
            scheduler._check_state_dict(saved)
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "_schedulers"})
        for scheduler, saved in zip(self._schedulers, children):
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

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: list[int],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self._check_list(schedulers)
        milestones = [_checks.count(f"milestones[{i}]", m) for i, m in enumerate(milestones)]
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

    def recursive_undo(self, sched: LRScheduler | None = None) -> None:
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

    def step(self) -> None:  # type: ignore[override]  # no epoch argument, as torch's
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

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        self._check_list(schedulers)
        if optimizer is not None:
            _check_optimizer(optimizer)
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be chained, "
                             "but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        self._check_children(optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]  # no epoch argument, as torch's
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
