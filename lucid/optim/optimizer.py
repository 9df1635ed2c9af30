"""The ``Optimizer`` base class: the step loop and a subclass's contract. The rest of the
bookkeeping has a file per concern: ``_groups``, ``_hooks``, ``_state`` (state and its
conversions), ``_state_dict``, ``_group_step`` (a group's checks and update), ``_plan``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

from .._autograd import enable_grad, no_grad
from .._tensor import Tensor
from . import schedules as _schedules
from ._group_step import GroupSteps
from ._groups import ParamGroups, required
from ._hooks import (OptimizerHooks, _with_step_hooks, register_optimizer_step_post_hook,
                     register_optimizer_step_pre_hook)
from ._shared import scalar
from ._state import OptimizerState, StateConversions
from ._state_dict import StateDictIO

if TYPE_CHECKING:
    from .elementwise import Rule

__all__ = ["Optimizer", "required", "scalar", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]

#: What an optimizer takes as ``params``, as torch.optim.optimizer.ParamsT: tensors (its
#: Parameters), ``(name, tensor)`` pairs, or parameter-group dicts.
ParamsT: TypeAlias = Iterable[Tensor] | Iterable[tuple[str, Tensor]] | Iterable[dict[str, Any]]


class Optimizer(OptimizerHooks, ParamGroups, StateConversions, StateDictIO, GroupSteps):
    """Base class of all lucid optimizers, with torch.optim's interface.

    Parameters
    ----------
    params : iterable of Parameter, of (name, Parameter), or of dict
        The parameters to optimise, or parameter groups: dicts with a ``"params"`` entry and
        per-group hyperparameters that override ``defaults``.
    defaults : dict
        The hyperparameters of groups that do not set their own.

    Attributes
    ----------
    param_groups : list of dict
        The groups, each with ``"params"`` and every hyperparameter.
    defaults : dict
    state : OptimizerState
        The state of every parameter that has stepped, by flat parameter index (``state[0]``)
        and by the Parameter (``state[p]``), both naming one dict.

    Notes
    -----
    Where lucid differs from torch.optim on purpose is listed in :doc:`/guide/differences`:
    state follows ``.to()`` and ``.half()``, a load checks everything before it changes
    anything, ``step`` counts are ints; bad hyperparameters and a parameter listed twice raise
    ValueError or TypeError before anything changes.

    A subclass supplies its defaults, ``_check_hyperparameters(group)`` (torch's ValueError),
    :meth:`init_state`, and either an elementwise rule (:meth:`elementwise_rule`, declared with
    its scalars and weight decay; the base applies ``maximize``, the decay and the step count) or
    :meth:`update`, Tensor code for one parameter (L-BFGS, Muon, Adafactor, sparse gradients).

    Examples
    --------
    The base does the bookkeeping (groups, hooks, ``state_dict``, devices):

    >>> import lucid
    >>> from lucid import nn, optim
    >>> class SignSGD(optim.Optimizer):
    ...     def __init__(self, params, lr=0.01):
    ...         super().__init__(params, dict(lr=lr))
    ...     def init_state(self, param, group):
    ...         return {"step": 0}
    ...     def update(self, param, grad, state, group):
    ...         state["step"] += 1
    ...         param.sub_(grad.sign(), alpha=group["lr"])
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = SignSGD([w], lr=0.5)
    >>> (w * w).sum().backward()
    >>> optimizer.step()
    >>> w.detach(), optimizer.state[0]
    (tensor([ 0.5, -1.5]), {'step': 1})
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_with_step_hooks", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._validate_hyperparameters(_schedules.attach(dict(defaults)))  # first, as torch does
        self._init_hooks()
        self.state = OptimizerState(self)
        self.param_groups: list[dict] = []
        self._flat, self._state_shapes, self._plans = None, {}, {}
        self._add_initial_groups(params)

    # --- what each optimizer supplies ----------------------------------------------------
    def _check_hyperparameters(self, group: dict) -> None:
        """Raise ValueError for a hyperparameter out of range (torch's messages)."""

    def init_state(self, param: Tensor, group: dict) -> dict:
        """The state of ``param`` before its first update, made the first time it steps.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.zeros(3))
        >>> adam = optim.Adam([p], amsgrad=True)
        >>> sorted(adam.init_state(p, adam.param_groups[0]))
        ['exp_avg', 'exp_avg_sq', 'max_exp_avg_sq', 'step']
        """
        return {}

    def elementwise_rule(self, group: dict) -> Rule | None:
        """The elementwise rule (:func:`lucid.optim.elementwise`) for ``group``, or None to use
        :meth:`update`; the rule declares its state, its scalars and its weight decay.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> adam = optim.Adam([nn.Parameter(lucid.zeros(2))])
        >>> adam.elementwise_rule(adam.param_groups[0])
        <elementwise rule adam(param, grad, exp_avg, exp_avg_sq, weight1, beta2, one_minus_beta2, bias_correction2_sqrt, eps, neg_step_size)>
        """
        return None

    def update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        """Update ``param`` and ``state`` in place from ``grad`` (negated under ``maximize``),
        under ``no_grad``, once every gradient was checked; by default, the rule on one parameter.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.tensor([1.0, 2.0]))
        >>> sgd = optim.SGD([p], lr=0.5)
        >>> with lucid.no_grad():
        ...     sgd.update(p, lucid.tensor([1.0, -1.0]), {}, sgd.param_groups[0])
        >>> p.detach()
        tensor([0.5, 2.5])
        """
        rule = self.elementwise_rule(group)
        if rule is None:
            raise NotImplementedError(f"{type(self).__name__} defines neither update nor elementwise_rule")
        if not state:
            state.update(self.init_state(param, group))
        self._run_rule({**group, "maximize": False}, rule, [(param, grad, state)])  # grad is negated already

    # --- the step ------------------------------------------------------------------------
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """Perform one optimisation step over every parameter that has a gradient.

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss; run with gradients enabled first.

        Returns
        -------
        The closure's loss, or None without a closure.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([3.0]))
        >>> optimizer = optim.SGD([w], lr=0.25)
        >>> def closure():
        ...     optimizer.zero_grad()
        ...     loss = (w * w).sum()
        ...     loss.backward()
        ...     return loss
        >>> optimizer.step(closure).item(), w.item()
        (9.0, 1.5)
        """
        if closure is not None and not callable(closure):
            raise TypeError(f"closure must be callable or None, got {type(closure).__name__}")
        self._opt_called = True  # lr schedulers read it: the optimizer has stepped
        _schedules.before_update(self.param_groups)
        loss = self._step(closure)
        _schedules.after_update(self.param_groups)
        return loss

    step = _with_step_hooks(step)

    def _step(self, closure):
        """The closure, then every check before anything changes, then each group's update."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        work = self._work()
        with no_grad():
            for group, pairs in work:
                self._update_group(group, pairs)
        self._evaluate_step(work)
        return loss
