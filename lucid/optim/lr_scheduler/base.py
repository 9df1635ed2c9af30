"""The base class of every scheduler, and the machinery they share.

:class:`LRScheduler` holds the step protocol (initial step, ``step()`` / ``step(epoch)``,
the order warnings, ``state_dict``); the helpers below read and write the optimizer's
param groups without aliasing their values.
"""

from __future__ import annotations

import numbers
import types
import warnings
import weakref

from ..._tensor import Tensor
from .. import _checks
from ..optimizer import Optimizer

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
        elif not getattr(self.optimizer, "step_count", 0):
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

        Raises
        ------
        TypeError, ValueError
            For a dict that is not this scheduler's state, or a hyperparameter the
            constructor would refuse (``step_size=0``, ``gamma=nan``, a NaN ``base_lrs``);
            the scheduler is then unchanged.

        Notes
        -----
        torch's ``load_state_dict`` updates the attributes unchecked: ``StepLR`` with
        ``step_size=0`` or ``CosineAnnealingLR`` with ``T_max=0`` loads, then divides by
        zero at the next ``step``; a NaN ``gamma`` makes the lr NaN. lucid checks the loaded
        values as the constructor checks its arguments, before anything changes.

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
        self._check_state_dict(state_dict)
        self.__dict__.update(state_dict)

    def _check_state_dict(self, state_dict) -> None:
        """Raise before loading a dict that is not this scheduler's state (nothing changes then).

        Entries a saved state may lack (from an older torch) are allowed; entries this
        scheduler does not have, counters that are not numbers and per-group lists of the
        wrong length are not.
        """
        name = type(self).__name__
        if not isinstance(state_dict, dict):
            raise TypeError(f"{name}.load_state_dict expects a dict, got {type(state_dict).__name__}")
        known = set(self.__dict__) | set(self.state_dict())
        unknown = sorted(str(k) for k in state_dict if k not in known or k == "optimizer")
        if unknown:
            raise ValueError(f"{name}.load_state_dict: the state dict has entries this scheduler does not: {unknown}")
        for key in ("last_epoch", "_step_count"):
            try:
                _checks.number(key, state_dict.get(key, 0))
            except (TypeError, ValueError):  # a malformed state dict: ValueError, as for the other entries
                raise ValueError(f"{name}.load_state_dict: {key} must be a number, got {state_dict[key]!r}") from None
        groups = len(self.optimizer.param_groups)
        for key in ("base_lrs", "_last_lr"):
            value = state_dict.get(key)
            if value is not None and (not isinstance(value, list) or len(value) != groups):
                raise ValueError(f"{name}.load_state_dict: {key} must be a list of {groups} lrs (one per param "
                                 f"group), got {value!r}")
            if value is not None:
                _checks.at_least(key, value)
        self._check_hyperparameters({**self.__dict__, **state_dict})

    def _check_hyperparameters(self, values: dict) -> None:
        """Raise for a hyperparameter of ``values`` (attributes by name) that the constructor refuses.

        The constructor runs it on its arguments and :meth:`load_state_dict` on the loaded
        values, before anything changes: loaded state is checked as built state (torch loads
        ``step_size=0`` and fails at the next ``step``).
        """

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

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import StepLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
        >>> optimizer.step(); scheduler.step()
        >>> scheduler.get_last_lr()
        [0.5]
        """
        raise NotImplementedError

    def _warn_get_lr_called_within_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def _chain(self, factor) -> list:
        """torch's recursive (chainable) form: each group's current lr times ``factor``.

        ``factor`` is one number, or a list of one per group; None holds the lrs (copies of the
        groups' current ones). Stepping multiplies the lr the optimizer holds, so that schedulers
        on one optimizer compose and changes made from outside persist; its products round
        differently from the closed form's (``base_lr * gamma**t`` is not ``lr * gamma`` t
        times), so this is kept, as torch.
        """
        if factor is None:
            return _param_groups_val_list(self.optimizer, "lr")
        groups = self.optimizer.param_groups
        factors = factor if isinstance(factor, list) else [factor] * len(groups)
        return [group["lr"] * f for group, f in zip(groups, factors)]

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
        if epoch is not None and (isinstance(epoch, bool) or not isinstance(epoch, numbers.Real)):
            raise TypeError(f"epoch must be None or a number, got {type(epoch).__name__}")
        if self._step_count == 1:
            self._warn_on_step_order()
        counters = self._step_count, self.last_epoch
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        try:
            self._update_lr(epoch)
        except Exception:
            # a step that raises (OneCycleLR past total_steps) leaves the counters as they were
            self._step_count, self.last_epoch = counters
            raise

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
