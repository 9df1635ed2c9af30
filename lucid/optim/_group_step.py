"""A group's update: the checks of every gradient and state before anything changes, the
general path (state created and converted, the rule or ``update`` run) and the plans that
let later steps skip it (:mod:`~lucid.optim._plan`)."""

from __future__ import annotations

from typing import Any

from .. import _factory
from .._sparse import SparseTensor
from .._tensor import Tensor, eval as lucid_eval, lazy_only, same_layout
from ._parts import OptimizerParts
from ._plan import GroupPlan
from .elementwise import run_rule


class GroupSteps(OptimizerParts):
    """Checking and updating the groups of a step (a part of :class:`~lucid.optim.Optimizer`)."""

    #: Whether ``update`` takes row-sparse gradients (SGD, Adagrad and SparseAdam, as in
    #: torch); the others refuse them with ``_sparse_refusal``, or "<class> does not support
    #: sparse gradients" when that is empty, before anything changes.
    _sparse_grads: bool = False
    _sparse_refusal: str = ""

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

    def _drop_plans(self) -> None:
        """Forget every group's plan (groups added, state loaded): the next step makes them anew."""
        self._plans = {}

    def _work(self) -> list:
        """Per group, ``(group, pairs)``: the ``(param, grad)`` pairs that step, every
        gradient and state checked first, or, where the group's plan holds, the plan and its
        gradients."""
        work: list[tuple[dict, Any]] = []  # per group: its pairs, or its plan and gradients
        index = 0
        plans, by_param = self._plans, self.state._by_param
        for group in self.param_groups:
            plan = plans.get(id(group))
            if plan is not None and plan.group is group:
                grads = plan.ready(by_param, self.elementwise_rule(group))
                if grads is not None:
                    work.append((group, (plan, grads)))
                    index += len(group["params"])
                    continue
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

    def _update_group(self, group: dict, pairs) -> None:
        """Update one group's parameters from their (checked) gradients: ``pairs`` from
        :meth:`_work`.

        This is the per-group seam: a subclass or a wrapper that shards the work (ZeRO) or
        fuses it differently replaces this method (and gets the ``(param, grad)`` pairs: its
        groups are not planned). An optimizer with an elementwise rule runs it over every
        dense gradient of the group in one call to the backend; the others (and sparse
        gradients) go through ``update`` one parameter at a time.
        """
        if isinstance(pairs, tuple):  # the group's plan holds: run it
            plan, grads = pairs
            plan.run(grads)
            return
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
            self._run_rule(group, rule, dense)
        for param, _ in pairs:
            if not self.state.for_param(param):  # a stateless rule (SGD without momentum) keeps none, as torch
                self.state._by_param.pop(id(param), None)
        if type(self)._update_group is GroupSteps._update_group:
            self._plans[id(group)] = GroupPlan.of(self, group, rule)

    def _run_rule(self, group: dict, rule, triples: list) -> None:
        """``rule`` over ``(param, grad, state)`` triples: step counts and scalars, then one backend call."""
        kernel, decay = rule.for_group(group)
        scalars_at: dict = {}
        items = []
        for param, grad, state in triples:
            if "step" in state:
                state["step"] += 1
            if rule.depends_on is None:
                scalars = rule.arguments(group, param, state, decay)
            else:  # the same for every parameter of a dtype where depends_on agrees: computed once
                key = (rule.depends_on(state), param.dtype)
                if key not in scalars_at:
                    scalars_at[key] = rule.arguments(group, param, state, decay)
                scalars = scalars_at[key]
            for key in rule.state:
                if key not in state:  # state the rule keeps but the parameter lacks starts at zero
                    state[key] = _factory.zeros_like(param)
            items.append(((param, *(state[key] for key in rule.state)), grad, scalars))
        run_rule(kernel, items)

    def _evaluate_step(self, work) -> None:
        """Evaluate, once, every parameter and state array a step changed (MLX is lazy)."""
        lazy = []
        for _, pairs in work:
            if isinstance(pairs, tuple):
                lazy.extend(pairs[0].lazy_values())
            else:
                params = lazy_only(param for param, _ in pairs)
                lazy.extend((params, [self.state.for_param(param) or {} for param in params]))
        if any(lazy):
            lucid_eval(lazy)
