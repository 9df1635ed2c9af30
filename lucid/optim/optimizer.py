"""The ``Optimizer`` base class: groups, state, conversions, hooks and ``state_dict``.

Each optimizer adds three short methods and nothing else:

- ``_check_hyperparameters(group)`` raises torch's ValueError for a bad value;
- ``init_state(param, group)`` returns the fresh state of one parameter;
- ``update(param, grad, state, group)`` is the update rule for one parameter, written once
  in the in-place Tensor vocabulary (``lerp_``, ``mul_``, ``addcmul_``, ``addcdiv_`` ...)
  that every backend implements.

Everything around the rule lives here: which parameters step (those with a gradient), the
checks that run before anything changes, ``maximize``, state created on first use and
converted to its parameter's device and dtype, one evaluation of everything a step changed
(on MLX), and the torch-format ``state_dict``.
"""

from __future__ import annotations

import copy
import functools
import math
import numbers
from collections import OrderedDict

from .._autograd import enable_grad, no_grad
from .._dtype import float32
from .._sparse import SparseTensor
from .._tensor import Tensor, eval as lucid_eval, lazy_only, run_rule_, same_kind, same_layout
from ..utils.hooks import add_hook
from . import _checks
from . import schedules as _schedules
from ._state import OptimizerState


class _RequiredParameter:
    """The default of a hyperparameter every group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_step_pre_hooks: OrderedDict = OrderedDict()
_global_step_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's ``step``.

    Returns a handle whose ``remove()`` unregisters it.

    Examples
    --------
    >>> import lucid.optim as optim
    >>> handle = optim.register_optimizer_step_pre_hook(lambda opt, args, kwargs: None)
    >>> handle.remove()
    """
    return add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's ``step``.

    Examples
    --------
    >>> import lucid.optim as optim
    >>> handle = optim.register_optimizer_step_post_hook(lambda opt, args, kwargs: None)
    >>> handle.remove()
    """
    return add_hook(_global_step_post_hooks, hook)


def _with_step_hooks(step):
    """``step`` wrapped so the step hooks run around it, seeing its arguments as called.

    Hooks get ``(optimizer, args, kwargs)`` with ``args[0]`` the optimizer, as in torch: a
    closure passed by keyword is in ``kwargs``. A pre-hook may return ``(new_args,
    new_kwargs)`` for the step. A subclass's ``step`` that calls ``super().step()`` runs
    the hooks once, around the outer call.
    """

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        if getattr(self, "_in_step", False):
            return step(*args, **kwargs)
        for hook in (*_global_step_pre_hooks.values(), *self._step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
                args, kwargs = result
        self._in_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._in_step = False
        for hook in (*self._step_post_hooks.values(), *_global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper._with_step_hooks = True
    return wrapper


def scalar(value):
    """A hyperparameter as a Python number (a one-element Tensor gives its value)."""
    return value.item() if isinstance(value, Tensor) else value


def _copy(value):
    """A deep copy in which tensors get their own storage (state_dict never aliases)."""
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v) for v in value)
    return copy.deepcopy(value)


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
        The live state of every parameter that has stepped, by flat parameter index
        (``state[0]``) and by the Parameter itself (``state[p]``), both naming one dict.

    Notes
    -----
    Where lucid differs from torch.optim on purpose:

    - A parameter's state follows it: after ``module.to("gpu")``, ``.half()`` or
      ``.double()``, the next step converts the parameter's state to its device and dtype
      before updating, so training continues as if the state had been created there.
    - ``state_dict()`` and ``load_state_dict()`` copy tensors: two optimizers never share
      state, and a saved dict does not change when training goes on.
    - ``load_state_dict`` checks everything (groups, sizes, state shapes, hyperparameters)
      before changing anything, and raises without a change when the dict does not fit.
    - ``step`` counts are Python ints, on every optimizer; ``load_state_dict`` also takes
      the 0-d tensors torch writes.
    - A NaN in any hyperparameter, an infinite ``lr``, ``weight_decay``, ``momentum``,
      ``eps``, beta (and the like), a non-number where a number belongs, a count below
      its least value (LBFGS's ``max_iter=0``, ``history_size=0``) and a tuple of the
      wrong length raise at construction, in ``add_param_group`` and in
      ``load_state_dict`` (torch accepts ``lr=inf``, ``weight_decay=inf``, SGD's
      ``dampening=nan``, Muon's ``eps=nan``).
    - A parameter listed twice, in one group or in two, raises ValueError (torch warns
      for the first and then updates the parameter twice per step); so does a set.
    - ``foreach``, ``fused`` and ``capturable`` are accepted where torch accepts them and
      stored in the groups; they select nothing different yet. ``differentiable=True``
      raises NotImplementedError.

    Examples
    --------
    Every optimizer in :mod:`lucid.optim` is one. A subclass gives the base its defaults and
    says how to start a parameter's state and how to update one parameter; the base does
    the rest (groups, hooks, ``state_dict``, devices):

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

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self._validate_hyperparameters(_schedules.attach(dict(defaults)))  # first, as torch does
        self._step_pre_hooks: OrderedDict = OrderedDict()
        self._step_post_hooks: OrderedDict = OrderedDict()
        self._state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._state_dict_post_hooks: OrderedDict = OrderedDict()
        self._load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._load_state_dict_post_hooks: OrderedDict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {params._describe()}"
            )
        if isinstance(params, (set, frozenset)):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering "
                "of tensors in sets will change between runs. Please use a list instead."
            )
        self.state = OptimizerState(self)
        self.param_groups: list[dict] = []
        self._flat = None
        self._state_shapes: dict = {}
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # --- what each optimizer supplies ----------------------------------------------------
    def _check_hyperparameters(self, group: dict) -> None:
        """Raise ValueError for a hyperparameter out of range (torch's messages)."""

    def _validate_hyperparameters(self, group: dict) -> None:
        """The optimizer's own checks (torch's messages), then NaN and infinities torch lets through."""
        _checks.number_types(group, placeholder=required)
        _checks.structure(group)
        self._check_hyperparameters(group)
        _checks.finite_hyperparameters(group)

    def init_state(self, param: Tensor, group: dict) -> dict:
        """The state of ``param`` before its first update (a subclass's rule decides it).

        The base class calls it once per parameter, the first time that parameter steps.

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

    #: Whether ``update`` takes row-sparse gradients (:class:`lucid.SparseTensor`, from
    #: ``Embedding(sparse=True)``): SGD, Adagrad and SparseAdam do, as in torch. The others
    #: refuse them before anything changes, with torch's message: ``_sparse_refusal``, or
    #: "<class name> does not support sparse gradients" when that is empty.
    _sparse_grads: bool = False
    _sparse_refusal: str = ""

    #: State entries kept in float32 whatever the parameter's dtype, as torch keeps them in
    #: its default dtype (ASGD's "eta" and "mu", NAdam's "mu_product").
    _float32_state: frozenset = frozenset()

    def _state_dtype(self, key, value: Tensor, param: Tensor):
        """The dtype state entry ``key`` keeps next to ``param``."""
        if not value.dtype.is_floating_point:
            return value.dtype
        return float32 if key in self._float32_state else param.dtype

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

    #: How ``weight_decay`` enters an elementwise rule, applied by the base before the rule:
    #: "l2" (added to the gradient), "decoupled" (the parameter shrinks by ``1 - lr * wd``;
    #: also taken when a group sets ``decoupled_weight_decay``), or "" (no weight decay).
    _weight_decay: str = ""

    #: Whether ``rule_scalars`` reads per-parameter state beyond the step count (NAdam's
    #: ``mu_product``, ASGD's ``eta``): otherwise it is called once per distinct step per group.
    _per_param_scalars: bool = False

    def elementwise_rule(self, group: dict):
        """The elementwise update rule for ``group``'s settings, or None to use ``update``.

        A rule (:func:`lucid.optim.elementwise`) is a pure function of a parameter's elements,
        its gradient's, its state's and some scalars; each backend runs it its own way (one
        compiled loop on NumPy with numba, MLX arrays on "gpu"). The base applies
        ``maximize`` and weight decay first (see ``_weight_decay``), increments
        ``state["step"]`` where the state has one, and asks :meth:`rule_scalars` for the rest.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> adam = optim.Adam([nn.Parameter(lucid.zeros(2))])
        >>> adam.elementwise_rule(adam.param_groups[0])
        <elementwise rule adam(param, grad, exp_avg, exp_avg_sq, weight1, beta2, one_minus_beta2, bias_correction2_sqrt, eps, neg_step_size)>
        """
        return None

    def rule_scalars(self, group: dict, param: Tensor, state: dict) -> tuple:
        """The scalar arguments of the group's rule for ``param``, whose state is ``state``
        (its step count already incremented), computed as torch computes them: Python
        numbers (and bools), which the backend casts to the parameter's dtype.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.zeros(2))
        >>> sgd = optim.SGD([p], lr=0.5)
        >>> sgd.elementwise_rule(sgd.param_groups[0]).scalars, sgd.rule_scalars(sgd.param_groups[0], p, {})
        (('neg_lr',), (-0.5,))
        """
        raise NotImplementedError

    def update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        """Update ``param`` (and ``state``) in place from ``grad``: one optimizer's rule.

        The base class calls it under ``no_grad`` for each parameter with a gradient, after
        every gradient was checked, with ``grad`` already negated under ``maximize``, when the
        optimizer has no :meth:`elementwise_rule` (or the gradient is sparse). For an
        optimizer with a rule it runs that rule on the one parameter.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.tensor([1.0, 2.0]))
        >>> sgd = optim.SGD([p], lr=0.5)
        >>> with lucid.no_grad():
        ...     sgd.update(p, lucid.tensor([1.0, -1.0]), {}, sgd.param_groups[0])
        >>> p
        Parameter containing:
        tensor([0.5, 2.5], requires_grad=True)
        """
        rule = self.elementwise_rule(group)
        if rule is None:
            raise NotImplementedError(f"{type(self).__name__} defines neither update nor elementwise_rule")
        if not state:
            state.update(self.init_state(param, group))
        self._run_rule(group, rule, [(param, grad, state)], False)

    # --- groups --------------------------------------------------------------------------
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
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        group = dict(param_group)
        if "params" not in group:
            raise KeyError("params")
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering "
                "of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            group["param_names"] = names
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is {type(param).__name__}"
                )
            if not (param.is_leaf or param._retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        _schedules.attach(group)
        self._validate_hyperparameters(group)
        if len({id(p) for p in params}) != len(params):
            raise ValueError(
                "optimizer contains a parameter group with duplicate parameters; each parameter may "
                "appear once (torch only warns, then updates it twice per step)"
            )
        seen = set()
        for existing in self.param_groups:
            seen.update(id(p) for p in existing["params"])
            if ("param_names" in group) != ("param_names" in existing):
                kind = "with names" if "param_names" in group else "without names"
                raise ValueError(
                    f"all optimizer param groups should be with/without names. cannot add param group {kind} to the optimizer"
                )
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)
        self._flat = None
        try:
            self._on_new_group(group)
        except Exception:
            # a group the optimizer refuses (Muon's non-2-D params) leaves nothing behind
            self.param_groups.pop()
            self._flat = None
            for param in params:
                self.state._by_param.pop(id(param), None)
            raise

    def _on_new_group(self, group: dict) -> None:
        """Called once a group is added (Adagrad creates its state here, as torch does)."""

    def _flat_params(self) -> list:
        """Every parameter over all groups, in order: the numbering of ``state_dict``."""
        if self._flat is None:
            self._flat = [p for group in self.param_groups for p in group["params"]]
        return self._flat

    # --- gradients -----------------------------------------------------------------------
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
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if set_to_none:
                    param.grad = None
                else:
                    with no_grad():
                        param.grad.detach_().zero_()

    def _check_grad(self, index: int, param: Tensor, grad) -> None:
        if not isinstance(grad, (Tensor, SparseTensor)):
            raise TypeError(f"the gradient of parameter {index} must be a Tensor, got {type(grad).__name__}")
        if grad.device != param.device:
            raise RuntimeError(
                f"the gradient of parameter {index} is on {grad.device}, but the parameter is on {param.device}"
            )
        if grad.dtype is not param.dtype:
            raise RuntimeError(
                f"the gradient of parameter {index} has dtype {grad.dtype}, but the parameter has {param.dtype}"
            )
        if grad.shape != param.shape:
            raise RuntimeError(
                f"the gradient of parameter {index} has shape {grad.shape}, but the parameter has {param.shape}"
            )
        if grad.is_sparse and not self._sparse_grads:
            raise RuntimeError(self._sparse_refusal or f"{type(self).__name__} does not support sparse gradients")

    def _check_sparse_grad(self, group: dict) -> None:
        """Raise torch's error when ``group``'s settings rule out a sparse gradient (checked
        before any parameter changes)."""

    def _check_state_fits(self, index: int, param: Tensor, state: dict, group: dict) -> None:
        """Raise if ``param``'s state no longer fits it (its data was replaced by another shape).

        The step checks it only when the parameter's shape differs from the one last checked,
        so a normal step allocates nothing here.
        """
        shapes = self.state_shapes(param, group)
        for key, value in state.items():
            if isinstance(value, Tensor) and key in shapes and value.shape != shapes[key]:
                raise RuntimeError(
                    f"the state of parameter {index} ({key!r} of shape {value.shape}) does not fit the "
                    f"parameter's shape {param.shape}; was its data replaced? Reset or reload its state"
                )
        self._state_shapes[id(param)] = param.shape

    def _work(self) -> list:
        """(group, [(param, grad)]) for the parameters that step, every gradient and state checked first."""
        work, index = [], 0
        for group in self.param_groups:
            pairs = []
            for param in group["params"]:
                grad = param.grad
                if grad is not None:
                    if not same_layout(param, grad):  # the full checks, with their messages
                        self._check_grad(index, param, grad)
                        if grad.is_sparse:
                            self._check_sparse_grad(group)
                    state = self.state.for_param(param)
                    if state and self._state_shapes.get(id(param)) != param.shape:
                        self._check_state_fits(index, param, state, group)
                    pairs.append((param, grad))
                index += 1
            work.append((group, pairs))
        return work

    # --- the step ------------------------------------------------------------------------
    def step(self, closure=None):
        """Perform one optimisation step over every parameter that has a gradient.

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss; run with gradients enabled before
            the update.

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
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        work = self._work()
        with no_grad():
            for group, pairs in work:
                self._update_group(group, pairs)
        self._materialize(param for _, pairs in work for param, _ in pairs)
        return loss

    def _update_group(self, group: dict, pairs: list) -> None:
        """Update one group's parameters from their (checked) gradients.

        This is the per-group seam: a subclass or a wrapper that shards the work (ZeRO) or
        fuses it differently replaces this method. An optimizer with an elementwise rule runs
        it over every dense gradient of the group in one call to the backend; the others
        (and sparse gradients) go through ``update`` one parameter at a time.
        """
        maximize = group.get("maximize", False)
        rule = self.elementwise_rule(group)
        dense = []
        for param, grad in pairs:
            state = self._state_of(param, group)
            if rule is None or grad.is_sparse:
                self.update(param, -grad if maximize else grad, state, group)
            else:
                dense.append((param, grad, state))
        if dense:
            self._run_rule(group, rule, dense, maximize)
        for param, _ in pairs:
            if not self.state.for_param(param):  # a stateless rule (SGD without momentum) keeps none, as torch
                self.state._by_param.pop(id(param), None)

    def _run_rule(self, group: dict, rule, triples: list, negate: bool) -> None:
        """``rule`` over ``(param, grad, state)`` triples: step counts, decay and scalars, then one backend call."""
        decay = (negate, *self._decay(group))
        scalars_at: dict = {}
        items = []
        for param, grad, state in triples:
            if "step" in state:
                state["step"] += 1
            if self._per_param_scalars:
                scalars = self.rule_scalars(group, param, state)
            else:  # the same for every parameter of a dtype at the same step: computed once
                key = (state.get("step"), param.dtype)
                scalars = scalars_at.get(key)
                if scalars is None:
                    scalars = scalars_at[key] = self.rule_scalars(group, param, state)
            items.append(((param, *(state[key] for key in rule.state)), grad, decay, scalars))
        run_rule_(rule, items)

    def _decay(self, group: dict) -> tuple:
        """``(l2, shrink)`` for the prologue: L2 weight decay's factor, or decoupled decay's
        ``1 - lr * weight_decay`` (in a Tensor lr's dtype, as torch), None where absent."""
        decay = group.get("weight_decay", 0) if self._weight_decay else 0
        if decay == 0:
            return None, None
        if self._weight_decay == "decoupled" or group.get("decoupled_weight_decay", False):
            return None, float(scalar(1 - group["lr"] * decay))
        return float(scalar(decay)), None

    def _state_of(self, param: Tensor, group: dict) -> dict:
        """``param``'s state, created on first use and converted to its device and dtype."""
        state = self.state.for_param(param)
        if state is None:
            state = self.state[param] = self.init_state(param, group)
            return state
        for key, value in state.items():
            if isinstance(value, Tensor) and not same_kind(value, param):  # else it fits: the usual case
                dtype = self._state_dtype(key, value, param)
                if value.device != param.device or value.dtype is not dtype:
                    state[key] = value.detach().to(param.device, dtype)
        return state

    def _materialize(self, params) -> None:
        """Evaluate, once, every parameter and state array a step changed (MLX is lazy)."""
        params = lazy_only(params)
        if params:
            lucid_eval(params, [self.state.for_param(param) or {} for param in params])

    # --- hooks ---------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
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
        return add_hook(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
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
        return add_hook(self._step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend: bool = False):
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
        return add_hook(self._state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False):
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
        return add_hook(self._state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False):
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
        return add_hook(self._load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False):
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
        return add_hook(self._load_state_dict_post_hooks, hook, prepend)

    # --- saving and loading --------------------------------------------------------------
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
        for hook in self._state_dict_pre_hooks.values():
            hook(self)
        index_of, groups, start = {}, [], 0
        for group in self.param_groups:
            packed = _schedules.to_plain({k: _copy(v) for k, v in group.items() if k != "params"})
            packed["params"] = list(range(start, start + len(group["params"])))
            for offset, param in enumerate(group["params"]):
                index_of[id(param)] = start + offset
            start += len(group["params"])
            groups.append(packed)
        state = {index: _copy(self.state[index]) for index in self.state}
        result = {"state": state, "param_groups": groups}
        for hook in self._state_dict_post_hooks.values():
            replaced = hook(self, result)
            if replaced is not None:
                result = replaced
        return result

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore state and hyperparameters saved by :meth:`state_dict`.

        Everything is checked before anything changes: the number and sizes of the groups,
        each state entry against its parameter's shape, the hyperparameters. Loaded tensors
        are copied and converted to their parameter's device and dtype (``step`` stays an int).

        Raises
        ------
        ValueError
            When the dict does not fit this optimizer; the optimizer is then unchanged.

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
        if not isinstance(state_dict, dict):
            raise ValueError(f"a state dict must be a dict, got {type(state_dict).__name__}")
        state_dict = dict(state_dict)
        for hook in self._load_state_dict_pre_hooks.values():
            replaced = hook(self, state_dict)
            if replaced is not None:
                state_dict = replaced
        new_groups, new_state = self._checked_load(state_dict)
        for group, new in zip(self.param_groups, new_groups):
            group.clear()
            group.update(new)
        self.state._by_param = new_state
        self._state_shapes = {}
        for hook in self._load_state_dict_post_hooks.values():
            hook(self)

    def _checked_load(self, state_dict: dict):
        """The groups and state ``state_dict`` describes, built without touching ``self``."""
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("a state dict must be a dict with 'state' and 'param_groups' entries")
        saved_groups = state_dict["param_groups"]
        if not isinstance(saved_groups, (list, tuple)) or not all(
            isinstance(g, dict) and isinstance(g.get("params"), (list, tuple)) for g in saved_groups
        ):
            raise ValueError("a state dict's 'param_groups' must be a list of dicts, each with a 'params' list")
        if not isinstance(state_dict["state"], dict):
            raise ValueError(f"a state dict's 'state' must be a dict, got {type(state_dict['state']).__name__}")
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        new_groups, param_of, group_of = [], {}, {}
        for live, saved in zip(self.param_groups, saved_groups):
            if len(saved["params"]) != len(live["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
                )
            new = _schedules.from_plain({k: _copy(v) for k, v in saved.items() if k != "params"})
            new["params"] = live["params"]
            if "param_names" in live and "param_names" not in saved:
                new["param_names"] = live["param_names"]
            for name, default in self.defaults.items():
                new.setdefault(name, live.get(name, default))
            self._validate_hyperparameters(new)
            for index, param in zip(saved["params"], live["params"]):
                param_of[index], group_of[index] = param, new
            new_groups.append(new)
        new_state = {}
        for index, saved in state_dict["state"].items():
            if index not in param_of:
                raise ValueError(f"loaded state has an entry for parameter {index}, which no group lists")
            param = param_of[index]
            new_state[id(param)] = self._load_param_state(index, param, group_of[index], saved)
        return new_groups, new_state

    def _load_param_state(self, index, param: Tensor, group: dict, saved) -> dict:
        """One parameter's saved state, checked against a fresh one and converted to ``param``."""
        if not isinstance(saved, dict):
            raise ValueError(f"the state of parameter {index} must be a dict, got {type(saved).__name__}")
        template = self.init_state(param, group)
        shapes = self.state_shapes(param, group)
        missing = [k for k in template if k not in saved]
        if missing:
            raise ValueError(f"loaded state of parameter {index} lacks {missing}")
        state = {}
        for key, value in saved.items():
            if key == "step":
                step = scalar(value)
                if (isinstance(step, bool) or not isinstance(step, numbers.Real) or not math.isfinite(step)
                        or step != int(step) or step < 0):
                    raise ValueError(f"loaded state of parameter {index} has a step count of {value!r}")
                state[key] = int(step)
                continue
            if not isinstance(value, Tensor) and hasattr(value, "shape") and hasattr(value, "dtype"):
                value = Tensor(value)  # host arrays, e.g. from a checkpoint file
            expected = shapes.get(key)
            if expected is not None and not isinstance(value, Tensor):
                raise ValueError(
                    f"loaded state of parameter {index} has {key!r} of type {type(value).__name__}, expected a Tensor"
                )
            if isinstance(value, Tensor):
                if expected is not None and value.shape != expected:
                    raise ValueError(
                        f"loaded state of parameter {index} has {key!r} of shape {value.shape}, "
                        f"expected {expected}"
                    )
                value = value.detach().to(param.device, self._state_dtype(key, value, param))
            state[key] = _copy(value)
        return state

    # --- the rest ------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        # hooks are dropped (as torch drops them); state is keyed by position, as ids change
        params = self._flat_params()
        return {
            "defaults": self.defaults,
            "param_groups": self.param_groups,
            "state": [self.state.for_param(p) for p in params],
        }

    def __setstate__(self, saved: dict) -> None:
        self.__init_empty()
        self.defaults = saved["defaults"]
        self.param_groups = saved["param_groups"]
        for param, state in zip(self._flat_params(), saved["state"]):
            if state is not None:
                self.state[param] = state

    def __init_empty(self) -> None:
        for name in ("_step_pre_hooks", "_step_post_hooks", "_state_dict_pre_hooks",
                     "_state_dict_post_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"):
            setattr(self, name, OrderedDict())
        self.state = OptimizerState(self)
        self._flat = None
        self._state_shapes = {}

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"
