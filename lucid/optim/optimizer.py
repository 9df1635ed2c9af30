"""The ``Optimizer`` base class: the step loop and the contract of a subclass.

An optimizer supplies its defaults, ``_check_hyperparameters(group)`` (torch's ValueError
for a bad value), ``init_state(param, group)`` (a parameter's fresh state), and its update:

- an elementwise rule (most optimizers): ``elementwise_rule(group)`` names a pure function
  of the elements (see :mod:`lucid.optim.elementwise`) and ``rule_scalars(group, param,
  state)`` its per-step numbers; the base applies ``maximize``, weight decay and the step
  count, and each backend runs the rule fused, one call per group;
- or ``update(param, grad, state, group)``, Tensor code for one parameter (L-BFGS, Muon,
  Adafactor, SparseAdam, sparse gradients).

The rest of the bookkeeping lives beside it, one concern per file: parameter groups
(``_groups``), hooks (``_hooks``), state and its conversions (``_state``), ``state_dict``
and loading (``_state_dict``).
"""

from __future__ import annotations

from .. import _factory
from .._autograd import enable_grad, no_grad
from .._sparse import SparseTensor
from .._tensor import Tensor, eval as lucid_eval, lazy_only, run_rule_, same_layout
from . import _checks
from . import schedules as _schedules
from ._groups import ParamGroups, required
from ._hooks import (OptimizerHooks, _with_step_hooks, register_optimizer_step_post_hook,
                     register_optimizer_step_pre_hook)
from ._shared import scalar
from ._state import OptimizerState, StateConversions
from ._state_dict import StateDictIO

__all__ = ["Optimizer", "required", "scalar", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class Optimizer(OptimizerHooks, ParamGroups, StateConversions, StateDictIO):
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
        self._init_hooks()
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
                key = (self._scalars_key(state), param.dtype)
                scalars = scalars_at.get(key)
                if scalars is None:
                    scalars = scalars_at[key] = self.rule_scalars(group, param, state)
            for key in rule.state:
                if key not in state:  # state the rule keeps but the parameter lacks starts at zero
                    state[key] = _factory.zeros_like(param)
            items.append(((param, *(state[key] for key in rule.state)), grad, decay, scalars))
        run_rule_(rule, items)

    def _scalars_key(self, state: dict):
        """What a parameter's rule scalars depend on besides the group and dtype: the step count."""
        return state.get("step")

    def _decay(self, group: dict) -> tuple:
        """``(l2, shrink)`` for the prologue: L2 weight decay's factor, or decoupled decay's
        ``1 - lr * weight_decay`` (in a Tensor lr's dtype, as torch), None where absent."""
        decay = group.get("weight_decay", 0) if self._weight_decay else 0
        if decay == 0:
            return None, None
        if self._weight_decay == "decoupled" or group.get("decoupled_weight_decay", False):
            return None, float(scalar(1 - group["lr"] * decay))
        return float(scalar(decay)), None

    def _materialize(self, params) -> None:
        """Evaluate, once, every parameter and state array a step changed (MLX is lazy)."""
        params = lazy_only(params)
        if params:
            lucid_eval(params, [self.state.for_param(param) or {} for param in params])

    # --- the rest ------------------------------------------------------------------------
    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"
