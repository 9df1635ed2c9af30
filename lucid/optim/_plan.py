"""A group's step plan: what a step checks per parameter, checked once and kept until it changes.

The general step (:mod:`~lucid.optim._group_step`) checks every parameter's gradient, finds
or creates its state and converts it, then runs the group's rule. Between two steps of a
training loop almost none of that changes, so after a general step a group whose
parameters all run its elementwise rule gets a :class:`GroupPlan`: the parameters that
step, their state dicts and state tensors, in batches (one per device and dtype) that hold
the backend's arrays and its runner of the rule over them (on "cpu" with numba, a table of
their addresses for one compiled call).

Each later step asks the plan whether it still holds, which costs a few identity tests per
parameter, and runs it if so; anything it does not expect sends that group through the
general step again (which raises what it raises, before anything changes) and the plan is
made afresh after it:

- the group's parameter list, or its rule (a changed ``amsgrad``, ``momentum``, ``maximize``,
  weight decay turned on or off), changed;
- a parameter gained or lost its gradient, or its gradient is sparse or of another layout;
- a parameter's or a state tensor's storage was replaced (``.data = ...``, ``module.to()``,
  ``.half()``);
- a state dict or one of its rule's tensors was replaced (``load_state_dict``, a hand-made
  ``optimizer.state[p] = ...``), or an entry the rule reads is missing.

``add_param_group`` and ``load_state_dict`` also drop every plan.
"""

from __future__ import annotations

from operator import is_not, itemgetter, methodcaller

from .._tensor import arrays_of, backend_of, grad_arrays, rebind_, same_kind, same_layout


class _Batch:
    """The parameters of a plan that share a device and dtype, each with its state tensors in
    the rule's order, and the backend's runner of the rule over their arrays."""

    __slots__ = ("params", "tensors", "lazy", "runner", "_arrays")

    def __init__(self, rule, items):
        self.params = [item[0] for item in items]
        self.tensors = [t for item in items for t in item]
        self._arrays = arrays_of(self.tensors)
        backend = backend_of(self.params[0])
        self.lazy = backend.lazy
        width = len(items[0])
        self.runner = backend.rule_batch(rule, [tuple(self._arrays[j:j + width])
                                                for j in range(0, len(self._arrays), width)])

    def grads(self):
        """The gradients' arrays, or None where the step cannot run as planned: a tensor's
        storage was replaced (``.data = ...``), or a gradient is missing, sparse, a view or
        of another layout."""
        if any(map(is_not, arrays_of(self.tensors), self._arrays)):
            return None
        return grad_arrays(self.params)

    def run(self, grads, scalars) -> None:
        self._arrays = self.runner.run(self._arrays, grads, scalars)
        rebind_(self.tensors, self._arrays)


class GroupPlan:
    """The parameters of ``group`` that step, with their state, grouped for one rule run each."""

    __slots__ = ("group", "rule", "kernel", "_param_ids", "_idle", "_stepping_ids", "_states", "_state_ids",
                 "_entry_ids", "_stepped", "batches", "_batch_states", "_state_lengths", "_extras")

    def __init__(self, group: dict, rule, params, idle, states):
        self.group, self.rule, self.kernel = group, rule, rule.for_group(group)[0]
        self._param_ids = list(map(id, group["params"]))
        self._idle = idle  # the parameters without a gradient: they must still have none
        # what ready() compares, as lists of ids (the objects are held here, so an id names one)
        self._stepping_ids = list(map(id, params))
        self._states = states
        self._state_ids = list(map(id, states))
        self._entry_ids = [list(map(id, map(itemgetter(key), states))) for key in rule.state]
        self._stepped = [state for state in states if state is not None and "step" in state]
        buckets: dict = {}
        for param, state in zip(params, states):
            buckets.setdefault((param.device, param.dtype), []).append((param, state))
        self.batches, self._batch_states = [], []
        for pairs in buckets.values():
            self.batches.append(_Batch(self.kernel, [(p, *(s[key] for key in rule.state)) for p, s in pairs]))
            self._batch_states.append([s if s is not None else {} for _, s in pairs])
        kept = {*rule.state, "step"}
        self._state_lengths = [list(map(len, states)) for states in self._batch_states]
        self._extras = [[s for s in states if not kept.issuperset(s)]
                        for states in self._batch_states]

    @classmethod
    def of(cls, optimizer, group: dict, rule):
        """The plan of ``group`` after a general step, or None where one cannot serve it
        (no rule, a sparse gradient, state the rule reads missing or of another kind, state
        whose fit to its parameter's shape was not checked yet)."""
        if rule is None:
            return None
        params, idle, states = [], [], []
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                idle.append(param)
                continue
            if not same_layout(param, grad):
                return None
            state = optimizer.state.for_param(param)
            if rule.state and state is None:
                return None
            for key in rule.state:
                value = state.get(key)
                if value is None or not same_kind(value, param):
                    return None
            if state and optimizer._state_shapes.get(id(param)) != param.shape:
                return None  # its state's fit is not checked yet: the next general step does it
            params.append(param)
            states.append(state)
        if not params:
            return None
        return cls(group, rule, params, idle, states)

    def ready(self, by_param: dict, rule):
        """The gradients of each batch if the plan still holds for this step, else None.

        ``by_param`` is the optimizer's state by parameter id, ``rule`` the group's rule now.
        Nothing is changed either way."""
        if rule is not self.rule or rule.for_group(self.group)[0] is not self.kernel \
                or list(map(id, self.group["params"])) != self._param_ids:
            return None
        for param in self._idle:
            if param.grad is not None:
                return None
        # the same state dicts, holding the same tensors under the rule's keys (a missing key
        # reads as None): one pass per key, in C
        if list(map(id, map(by_param.get, self._stepping_ids))) != self._state_ids:
            return None
        for key, ids in zip(self.rule.state, self._entry_ids):
            if list(map(id, map(methodcaller("get", key), self._states))) != ids:
                return None
        grads = []
        for batch in self.batches:
            found = batch.grads()
            if found is None:
                return None
            grads.append(found)
        return grads

    def run(self, grads: list) -> None:
        """One step of the group from ``grads`` (what :meth:`ready` returned): the step counts,
        the scalars (once per batch where they agree), then one rule run per batch."""
        group, rule = self.group, self.rule
        decay = rule.for_group(group)[1]
        for state in self._stepped:
            state["step"] += 1
        for batch, batch_grads, states in zip(self.batches, grads, self._batch_states):
            params = batch.params
            if rule.depends_on is None:
                scalars: tuple | list[tuple] = [rule.arguments(group, p, s, decay) for p, s in zip(params, states)]
            else:
                keys = list(map(rule.depends_on, states))
                if keys.count(keys[0]) == len(keys):
                    scalars = rule.arguments(group, params[0], states[0], decay)
                else:  # parameters at different steps: each distinct step computed once
                    found: dict = {}
                    scalars = [found[k] if k in found else found.setdefault(k, rule.arguments(group, p, s, decay))
                               for k, p, s in zip(keys, params, states)]
            batch.run(batch_grads, scalars)

    def lazy_values(self) -> list:
        """What a step changed on a lazy device (MLX), to evaluate: each lazy batch's tensors
        and its parameters' whole state (NAdam's ``mu_product``, ASGD's ``eta`` change too)."""
        out: list = []
        for batch, states, lengths, extras in zip(self.batches, self._batch_states, self._state_lengths, self._extras):
            if batch.lazy:
                # the batch's arrays, then the state entries beyond the rule's (all of it when
                # an entry was added since the plan was made)
                out.extend((batch.tensors, extras if list(map(len, states)) == lengths else states))
        return out
