"""The step: every gradient and state checked before anything changes, then each group's update,
and the plans that let later steps of a training loop skip what they would find unchanged.

A group's work in a step is one of two kinds. The general step
(:meth:`StepEngine.general`): its ``(param, grad)`` pairs, checked, each parameter's state
found or created and converted, then its rule run over every dense gradient in one backend
call (``update`` for the rest). After a general step, a group whose parameters all run its
rule gets a :class:`GroupPlan`: the parameters that step, their state dicts and tensors, in
batches (one per device and dtype) holding the backend's arrays and its runner of the rule
over them (with numba, one compiled call over a table of their addresses). The planned
step (:meth:`GroupPlan.run`): a later step whose plan still holds, which costs a few
identity tests per parameter. Anything a plan does not expect sends the group
through the general step again (which raises what it raises, before anything changes) and
the plan is made afresh after it:

- the group's parameter list, or its rule (``amsgrad``, ``momentum``, ``maximize``, weight
  decay turned on or off), changed;
- a parameter gained or lost its gradient, or its gradient is sparse or of another layout;
- a parameter's or a state tensor's storage was replaced (``.data = ...``, ``module.to()``);
- a state dict or one of its rule's tensors was replaced (``load_state_dict``, a hand-made
  ``optimizer.state[p] = ...``), or an entry the rule reads is missing.
"""

from __future__ import annotations

from functools import partial
from operator import is_not, itemgetter, methodcaller
from typing import TYPE_CHECKING

from .. import _factory
from .._sparse import SparseTensor
from .._tensor import (Tensor, arrays_of, backend_of, eval as lucid_eval, grad_arrays, lazy_only, rebind_,
                       same_kind, same_layout)
from .elementwise import run_rule

if TYPE_CHECKING:
    from .optimizer import Optimizer


def scalars_of(group: dict, rule, params, states, decay) -> list[tuple]:
    """The scalars of :meth:`~lucid.optim.elementwise.Rule.for_group`'s rule for each
    parameter, computed once where the rule's ``depends_on`` and the dtype agree."""
    depends_on = rule.depends_on or id  # None: each parameter's own
    computed: dict = {}
    out = []
    for param, state in zip(params, states):
        key = (depends_on(state), param.dtype)
        if key not in computed:
            computed[key] = rule.scalar_values(group, param, state, decay)
        out.append(computed[key])
    return out


def run_dense(group: dict, rule, triples: list) -> None:
    """``rule`` over ``(param, grad, state)`` triples of ``group`` in one backend call: the
    step counted, the scalars, state the rule keeps but a parameter lacks made zeros."""
    kernel, decay = rule.for_group(group)
    for _, _, state in triples:
        if "step" in state:
            state["step"] += 1
    # the scalars before the zeros: SGD's first momentum step is told by its buffer's absence
    scalars = scalars_of(group, rule, [p for p, _, _ in triples], [s for _, _, s in triples], decay)
    for param, _, state in triples:
        state.update({name: _factory.zeros_like(param) for name in rule.state if name not in state})
    run_rule(kernel, [((p, *map(s.__getitem__, rule.state)), g, numbers)
                      for (p, g, s), numbers in zip(triples, scalars)])


class StepEngine:
    """The checks and the updates of an optimizer's steps, with a plan per group."""

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = optimizer
        self.planned = True  # False: every step is general (tests compare the two)
        self.plans: dict[int, GroupPlan | None] = {}  # by id(group)

    def work(self) -> list:
        """Each group's work, every gradient and state checked first: a call that runs its
        update (its plan's where that holds, else :meth:`general`) and returns what the
        update changed on a lazy device (MLX), to evaluate."""
        opt = self.optimizer
        work = []
        index = 0  # the flat index of a group's first parameter, for the messages
        for group in opt.param_groups:
            first, index = index, index + len(group["params"])
            plan = self.plans.get(id(group))
            if plan is not None and plan.group is group:
                ready = plan.ready(opt.state, opt.elementwise_rule(group))
                if ready is not None:
                    work.append(partial(plan.run, *ready))
                    continue
            pairs = []
            for at, param in enumerate(group["params"], first):
                grad = param.grad
                if grad is not None:
                    if not same_layout(param, grad):  # the full checks, with their messages
                        _check_grad(at, param, grad)
                        if grad.is_sparse:
                            opt.check_sparse(group)
                    if opt.state.for_param(param) and not opt.state.fits(param):
                        opt.state.check_fits(at, param, opt.state_shapes(param, group))
                    pairs.append((param, grad))
            work.append(partial(self.general, group, pairs))
        return work

    def run(self, work: list) -> None:
        """Each group's update, then one evaluation of every array they changed (MLX is lazy)."""
        lazy = [value for item in work for value in item()]
        if any(lazy):
            lucid_eval(lazy)

    def general(self, group: dict, pairs: list) -> list:
        """A group's update through every check, from its checked ``(param, grad)`` pairs:
        each parameter's state found or created and converted, the rule run over every dense
        gradient in one backend call (``update`` for the rest), then the group's plan made.
        Returns what it changed on a lazy device (MLX)."""
        opt = self.optimizer
        rule, negate = opt.elementwise_rule(group), group.get("maximize", False)
        dense = []
        for param, grad in pairs:
            state = opt.state.of(param, group, opt.init_state)
            if rule is None or grad.is_sparse:
                opt.update(param, -grad if negate else grad, state, group)
            else:
                dense.append((param, grad, state))
        if dense:
            run_dense(group, rule, dense)
        for param, _ in pairs:
            if not opt.state.for_param(param):  # a stateless rule (SGD without momentum) keeps none, as torch
                opt.state.discard(param)
        if self.planned and rule is not None:
            self.plans[id(group)] = GroupPlan.of(opt.state, group, rule)
        params = lazy_only(param for param, _ in pairs)
        return [params, [opt.state.for_param(param) or {} for param in params]]


def _check_grad(index: int, param: Tensor, grad) -> None:
    if not isinstance(grad, (Tensor, SparseTensor)):
        raise TypeError(f"the gradient of parameter {index} must be a Tensor, got {type(grad).__name__}")
    for what, verb, mine, its in (("is on", "is on", grad.device, param.device),
                                  ("has dtype", "has", grad.dtype, param.dtype),
                                  ("has shape", "has", grad.shape, param.shape)):
        if mine != its:
            raise RuntimeError(f"the gradient of parameter {index} {what} {mine}, but the parameter {verb} {its}")


class _Batch:
    """The parameters of a plan that share a device and dtype, with their state dicts, their
    tensors (each parameter's, then its state's in the rule's order) and the backend's
    runner of the rule over the tensors' arrays."""

    __slots__ = ("params", "states", "tensors", "lazy", "runner", "_arrays", "_seen")

    def __init__(self, rule, kernel, pairs):
        self.params = [param for param, _ in pairs]
        self.states = [state if state is not None else {} for _, state in pairs]
        self.tensors = [t for param, state in zip(self.params, self.states)
                        for t in (param, *map(state.__getitem__, rule.state))]
        self._arrays = arrays_of(self.tensors)
        self._seen: list = [None] * len(self.params)  # the gradient arrays checked last (see grad_arrays)
        backend = backend_of(self.params[0])
        self.lazy = backend.lazy
        self.runner = backend.rule_batch(kernel, self._arrays)

    def grads(self):
        """The gradients' arrays, or None where the step cannot run as planned: a tensor's
        storage was replaced, or a gradient is missing, sparse, a view or of another layout."""
        replaced = any(map(is_not, arrays_of(self.tensors), self._arrays))
        return None if replaced else grad_arrays(self.params, self._seen)

    def run(self, grads: list, scalars) -> None:
        arrays = self.runner.run(self._arrays, grads, scalars)
        rebind_(self.tensors, None if arrays is self._arrays else arrays)  # None: written in place (NumPy)
        self._arrays = arrays


class GroupPlan:
    """The parameters of ``group`` that step, with their state, in batches of one rule run each.

    It holds the objects a step relies on (the group's parameters, the state dicts, the
    rule's tensors in them), so that :meth:`ready` compares identities only.
    """

    def __init__(self, group: dict, rule, params: list, idle: list, states: list) -> None:
        self.group, self.rule, self.kernel = group, rule, rule.for_group(group)[0]
        self._params, self._idle = list(group["params"]), idle  # idle: no gradient, and must still have none
        self._stepping, self._states = params, states
        self._entries = [list(map(itemgetter(key), states)) for key in rule.state]
        self._stepped = [state for state in states if state is not None and "step" in state]
        buckets: dict = {}
        for param, state in zip(params, states):
            buckets.setdefault((param.device, param.dtype), []).append((param, state))
        self.batches = [_Batch(rule, self.kernel, pairs) for pairs in buckets.values()]

    @classmethod
    def of(cls, state, group: dict, rule) -> GroupPlan | None:
        """The plan of ``group`` after a general step, or None where one cannot serve it (a
        sparse gradient, state the rule reads missing or of another kind, state whose fit to
        its parameter's shape was not checked yet)."""
        params, idle, states = [], [], []
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                idle.append(param)
                continue
            found = state.for_param(param)
            if not same_layout(param, grad) or (rule.state and found is None) or (found and not state.fits(param)):
                return None
            if any(found.get(key) is None or not same_kind(found[key], param) for key in rule.state):
                return None
            params.append(param)
            states.append(found)
        return cls(group, rule, params, idle, states) if params else None

    def ready(self, state, rule):
        """``(decay, grads)`` (the rule's decay number, each batch's gradients) if the plan still
        holds for this step, else None; ``rule`` is the group's now. Nothing changes either way."""
        kernel, decay = rule.for_group(self.group)
        params = self.group["params"]
        if rule is not self.rule or kernel is not self.kernel or len(params) != len(self._params) \
                or any(map(is_not, params, self._params)) or any(p.grad is not None for p in self._idle):
            return None
        # the same state dicts, holding the same tensors under the rule's keys: one pass each, in C
        if any(map(is_not, map(state.by_id.get, map(id, self._stepping)), self._states)):
            return None
        for key, entries in zip(rule.state, self._entries):
            if any(map(is_not, map(methodcaller("get", key), self._states), entries)):
                return None
        grads = [batch.grads() for batch in self.batches]
        return None if None in grads else (decay, grads)

    def run(self, decay, grads: list) -> list:
        """One step of the group from what :meth:`ready` returned: the step counts, the
        scalars (once per batch where they agree), then one rule run per batch. Returns what
        it changed on a lazy device (MLX), to evaluate: each lazy batch's tensors and the
        state entries beyond the rule's (NAdam's ``mu_product``, ASGD's ``eta``)."""
        group, rule = self.group, self.rule
        for state in self._stepped:
            state["step"] += 1
        for batch, batch_grads in zip(self.batches, grads):
            if rule.depends_on is not None and len(set(map(rule.depends_on, batch.states))) == 1:  # one dtype here
                scalars: tuple | list[tuple] = rule.scalar_values(group, batch.params[0], batch.states[0], decay)
            else:
                scalars = scalars_of(group, rule, batch.params, batch.states, decay)
            batch.run(batch_grads, scalars)
        kept = {*rule.state, "step"}
        return [values for batch in self.batches if batch.lazy
                for values in (batch.tensors, [s for s in batch.states if not kept.issuperset(s)])]
