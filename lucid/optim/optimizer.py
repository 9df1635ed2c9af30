"""The ``Optimizer`` base class: a subclass's contract, and the parts it is composed of, each
with one job: ``_groups`` (the parameter groups), ``_state`` (state and its conversions),
``_hooks``, ``_state_dict`` (checkpoint I/O) and ``_step`` (a step's checks, updates and plans)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

from .._autograd import enable_grad, no_grad
from .._tensor import Tensor
from . import _checks, _state_dict
from . import schedules as _schedules
from ._checks import required
from ._groups import ParamGroups
from ._hooks import Hooks, register_optimizer_step_post_hook, register_optimizer_step_pre_hook, with_step_hooks
from ._shared import scalar
from ._state import OptimizerState
from ._step import StepEngine, run_dense
from ..utils.hooks import RemovableHandle, add_hook

if TYPE_CHECKING:
    from .elementwise import Rule

__all__ = ["Optimizer", "required", "scalar", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook", "with_step_hooks"]

#: What an optimizer takes as ``params``, as torch.optim.optimizer.ParamsT: tensors (its
#: Parameters), ``(name, tensor)`` pairs, or parameter-group dicts.
ParamsT: TypeAlias = Iterable[Tensor] | Iterable[tuple[str, Tensor]] | Iterable[dict[str, Any]]


class Optimizer:
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

    A subclass supplies its ``defaults``, :meth:`check` (torch's ValueError for a group),
    :meth:`init_state`, and either an elementwise rule (:meth:`elementwise_rule`, declared
    with its state, its scalars and its weight decay; the base applies ``maximize``, the
    decay and the step count) or :meth:`update`, Tensor code for one parameter (L-BFGS,
    Muon, Adafactor, sparse gradients). Where it needs to, it also gives :meth:`state_shapes`
    (state made during ``update``), :meth:`check_sparse` (sparse gradients accepted),
    :attr:`float32_keys`, :attr:`unmatched_flags`, :meth:`loaded_state` and, for a whole-step algorithm (L-BFGS),
    :meth:`run_step`.

    The base is composed of parts, each with one job, which it holds rather than inherits:
    :attr:`param_groups` (a ``ParamGroups``, the list with its checked ``add``), :attr:`state`
    (an ``OptimizerState``, with its conversions), its hooks (``Hooks``), its step engine (a
    ``StepEngine``: the checks, updates and plans of a step) and the checkpoint functions of
    ``lucid/optim/_state_dict.py``.

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
    (tensor([ 0.5000, -1.5000]), {'step': 1})
    """

    #: State entries kept in float32 whatever the parameter's dtype, as torch keeps them in
    #: its default dtype (ASGD's "eta" and "mu", NAdam's "mu_product").
    float32_keys: frozenset = frozenset()
    #: torch's implementation flags (``foreach``, ``fused``) whose path computes other numbers
    #: than its single-tensor one, which lucid follows, beyond float64 rounding (measured on
    #: every case of tests/optim_registry.py): each to the hyperparameters that, as Tensors,
    #: make the difference (none: it always does). Such a flag is refused.
    unmatched_flags: dict[str, tuple[str, ...]] = {}

    #: The hyperparameters a group of an older torch's state dict may lack (flags torch added
    #: later), with the values torch's ``__setstate__`` gives them; a loaded group lacking any
    #: other of ``defaults`` is refused (torch loads it and fails at ``step``).
    older_group_defaults: dict = dict(foreach=None, maximize=False, differentiable=False, capturable=False, fused=None)

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._validate(_schedules.attach(dict(defaults)))  # first, as torch does
        self._compose()
        for group in self.param_groups.initial(params):
            self.add_param_group(group)

    def _compose(self) -> None:
        """The parts, fresh (a new optimizer's, or an unpickled one's before its groups return).

        The parts reach the optimizer through a weak proxy: the optimizer holds them, and a
        reference cycle would leave a dropped optimizer, and its state, to the cyclic collector.
        """
        me = weakref.proxy(self)
        self._hooks = Hooks()
        self.param_groups = ParamGroups(lambda group: me.group_defaults(group), lambda group: me._validate(group))
        self.state = OptimizerState(self.param_groups, self.float32_keys)
        self._engine = StepEngine(me)
        self._steps_taken = 0

    @property
    def step_count(self) -> int:
        """How many times :meth:`step` ran (the lr schedulers read it, as torch's ``_opt_called``).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> opt.step()
        >>> opt.step_count
        1
        """
        return self._steps_taken

    def _validate(self, group: dict) -> None:
        """The number types and structure, the optimizer's own :meth:`check` (torch's
        messages), then NaN and infinities torch lets through."""
        _checks.number_types(group, placeholder=required)
        _checks.structure(group)
        self.check(group)
        _checks.flags_with_torch_numbers(group, self.unmatched_flags)
        _checks.finite_hyperparameters(group)

    # --- what each optimizer supplies ----------------------------------------------------
    def check(self, group: dict) -> None:
        """Raise ValueError for a hyperparameter of ``group`` out of range (torch's messages),
        or for parameters the optimizer cannot take; ``group`` may lack ``"params"`` (the defaults).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> sgd = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> sgd.check({**sgd.defaults, "lr": -1.0})
        Traceback (most recent call last):
            ...
        ValueError: Invalid learning rate: -1.0
        """

    def group_defaults(self, group: dict) -> dict:
        """The hyperparameters ``group`` takes where it sets none (when it is added, or loaded):
        :attr:`defaults`, or one rule's for an optimizer of several (:class:`MuonWithAdamW`).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> sgd = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.1)
        >>> sgd.group_defaults(sgd.param_groups[0]) is sgd.defaults
        True
        """
        return self.defaults

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

    def state_shapes(self, param: Tensor, group: dict) -> dict:
        """The shape of each tensor ``param``'s state holds: by default, a fresh state's.

        An optimizer that creates state entries during ``update`` (SGD's momentum buffer)
        lists them too, so that loading and stepping can check them.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.zeros(2, 3))
        >>> adam = optim.Adam([p])
        >>> adam.state_shapes(p, adam.param_groups[0])
        {'exp_avg': (2, 3), 'exp_avg_sq': (2, 3)}
        """
        return {k: v.shape for k, v in self.init_state(param, group).items() if isinstance(v, Tensor)}

    def check_sparse(self, group: dict) -> None:
        """Raise torch's error where ``group`` refuses a row-sparse gradient, before any
        parameter changes: by default every group does (SGD, Adagrad and SparseAdam take them).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> adam = optim.Adam([nn.Parameter(lucid.zeros(1))])
        >>> adam.check_sparse(adam.param_groups[0])
        Traceback (most recent call last):
            ...
        RuntimeError: Adam does not support sparse gradients, please consider SparseAdam instead
        """
        raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")

    def loaded_state(self, index: int, param: Tensor, group: dict, state: dict) -> dict:
        """Parameter ``index``'s state from a loaded ``state_dict``, checked and converted
        already: an optimizer with state of its own form (L-BFGS) checks and converts it further.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.zeros(1))
        >>> sgd = optim.SGD([p])
        >>> sgd.loaded_state(0, p, sgd.param_groups[0], {"momentum_buffer": lucid.ones(1)})
        {'momentum_buffer': tensor([1.])}
        """
        return state

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
        tensor([0.5000, 2.5000])
        """
        rule = self.elementwise_rule(group)
        if rule is None:
            raise NotImplementedError(f"{type(self).__name__} defines neither update nor elementwise_rule")
        if not state:
            state.update(self.init_state(param, group))
        run_dense({**group, "maximize": False}, rule, [(param, grad, state)])  # grad is negated already

    # --- the step ------------------------------------------------------------------------
    @with_step_hooks
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
        self._steps_taken += 1
        _schedules.before_update(self.param_groups)
        loss = self.run_step(closure)
        _schedules.after_update(self.param_groups)
        return loss

    def run_step(self, closure: Callable[[], Tensor] | None) -> Tensor | None:
        """The work of :meth:`step` between its hooks and the schedules: the closure, then
        every check before anything changes, then each group's update (L-BFGS replaces it).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> sgd = optim.SGD([w], lr=0.5)
        >>> w.grad = lucid.tensor([1.0])
        >>> sgd.run_step(None), w.detach(), sgd.step_count  # no hooks, no schedules, not counted
        (None, tensor([0.5000]), 0)
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        work = self._engine.work()
        with no_grad():
            self._engine.run(work)
        return loss

    # --- groups, checkpoints, hooks -------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters, with its own hyperparameters, to optimise from now on.

        Parameters
        ----------
        param_group : dict
            ``"params"`` (a Parameter or an ordered iterable of them, or of (name, Parameter)
            pairs) and any hyperparameters to set for this group; the rest come from
            ``defaults``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> a, b = nn.Parameter(lucid.zeros(2)), nn.Parameter(lucid.zeros(3))
        >>> opt = optim.SGD([a], lr=0.1)
        >>> opt.add_param_group({"params": [b], "lr": 0.01})
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.01]
        """
        self.param_groups.add(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter.

        Parameters
        ----------
        set_to_none : bool, default True
            Set ``.grad`` to None (the parameter is then skipped by ``step``), or, if False,
            write zeros into the existing gradient in place (the parameter still steps). A
            row-sparse gradient is emptied instead (no rows left, in O(1)), as in torch.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.ones(2))
        >>> opt = optim.SGD([p], lr=0.1)
        >>> (p * 3).sum().backward()
        >>> opt.zero_grad(set_to_none=False)
        >>> p.grad
        tensor([0., 0.])
        >>> opt.zero_grad()
        >>> p.grad is None
        True
        """
        with no_grad():
            for param in self.param_groups.flat():
                if set_to_none:
                    param.grad = None
                elif param.grad is not None:
                    param.grad.detach_().zero_()

    def state_dict(self) -> dict:
        """The optimizer's state and hyperparameters, in torch's layout, as copies.

        Returns
        -------
        dict
            ``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``,
            parameters numbered in group order from 0. Tensors are copies: the dict does not
            change when training goes on, and loading it elsewhere shares nothing.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.ones(2))
        >>> opt = optim.SGD([p], lr=0.1, momentum=0.9)
        >>> (p * p).sum().backward()
        >>> opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"]
        {0: {'momentum_buffer': tensor([2., 2.])}}
        >>> sd["param_groups"][0]["params"], sd["param_groups"][0]["lr"]
        ([0], 0.1)
        """
        return _state_dict.state_dict(self, self._hooks)

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore state and hyperparameters saved by :meth:`state_dict`.

        Everything is checked before anything changes: the number and sizes of the groups,
        each state entry against its parameter's shape, the hyperparameters (as the
        constructor checks them). Loaded tensors are copied and converted to their
        parameter's device and, for a floating parameter, its dtype, as torch casts them (an
        int or bool ``exp_avg`` too); ``step`` stays an int.

        Raises
        ------
        ValueError
            When the dict does not fit this optimizer, or a group lacks a hyperparameter this
            optimizer needs (naming the group and the key, and, for another optimizer's state
            dict, the state it holds and the state this one keeps); the optimizer is then
            unchanged.
        TypeError
            For a hyperparameter of the wrong type, as the constructor raises it.

        Notes
        -----
        Where lucid differs from torch on purpose: torch loads a group lacking a
        hyperparameter (``lr``, ``betas``, or an Adam state dict in an ``SGD(momentum=0.9)``)
        and raises KeyError at the next ``step``, and takes hyperparameters out of range;
        lucid refuses both at load. A group may lack only the flags an older torch did not
        save (:attr:`older_group_defaults`), which get the values torch's ``__setstate__``
        gives them; an older torch's Python-number ``eta``, ``mu`` or ``mu_product`` become
        float32 tensors, as there. State torch keeps in float32 (:attr:`float32_keys`) stays
        float32 on loading where torch casts it to the parameter's dtype, so that a resumed
        run steps as the uninterrupted one.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.ones(2))
        >>> opt = optim.Adam([p], lr=0.1)
        >>> p.sum().backward()
        >>> opt.step()
        >>> fresh = optim.Adam([p], lr=0.5)
        >>> fresh.load_state_dict(opt.state_dict())
        >>> fresh.state[0]["step"], fresh.param_groups[0]["lr"]
        (1, 0.1)
        """
        _state_dict.load_state_dict(self, self._hooks, state_dict)

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register ``hook(optimizer, args, kwargs)``, run before ``step``; it may return
        ``(new_args, new_kwargs)``. Returns a handle with ``remove()``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> calls = []
        >>> handle = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
        >>> opt.step()
        >>> handle.remove()
        >>> opt.step()
        >>> calls
        ['pre']
        """
        return add_hook(self._hooks.by_name["step_pre"], hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register ``hook(optimizer, args, kwargs)``, run after ``step``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> handle = opt.register_step_post_hook(lambda o, args, kwargs: print("stepped"))
        >>> opt.step()
        stepped
        """
        return add_hook(self._hooks.by_name["step_post"], hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer)``, run before ``state_dict`` builds its result.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> handle = opt.register_state_dict_pre_hook(lambda o: print("saving"))
        >>> _ = opt.state_dict()
        saving
        """
        return add_hook(self._hooks.by_name["state_dict_pre"], hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict)``, which may return a replacement dict.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> def tag(o, sd):
        ...     sd["tag"] = "v1"
        >>> handle = opt.register_state_dict_post_hook(tag)
        >>> opt.state_dict()["tag"]
        'v1'
        """
        return add_hook(self._hooks.by_name["state_dict_post"], hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict)``, run before loading; it may return a
        replacement dict.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.1)
        >>> def halve_lr(o, sd):
        ...     sd["param_groups"][0]["lr"] /= 2
        >>> handle = opt.register_load_state_dict_pre_hook(halve_lr)
        >>> opt.load_state_dict(opt.state_dict())
        >>> opt.param_groups[0]["lr"]
        0.05
        """
        return add_hook(self._hooks.by_name["load_state_dict_pre"], hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer)``, run after loading.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> handle = opt.register_load_state_dict_post_hook(lambda o: print("loaded"))
        >>> opt.load_state_dict(opt.state_dict())
        loaded
        """
        return add_hook(self._hooks.by_name["load_state_dict_post"], hook, prepend)

    # --- pickling, repr ---------------------------------------------------------------------
    def __getstate__(self) -> dict:
        # hooks are dropped (as torch drops them); state is keyed by position, as ids change
        return {"defaults": self.defaults, "param_groups": list(self.param_groups),
                "state": [self.state.for_param(p) for p in self.param_groups.flat()]}

    def __setstate__(self, saved: dict) -> None:
        self.defaults = saved["defaults"]
        self._compose()
        self.param_groups.extend(saved["param_groups"])
        self.state.replace({id(p): s for p, s in zip(self.param_groups.flat(), saved["state"]) if s is not None})

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n" + "".join(f"    {k}: {group[k]}\n" for k in sorted(group) if k != "params")
        return text + ")"
