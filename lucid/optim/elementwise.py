"""Elementwise update rules, each declared in one place: its math, its state, its scalars by
name, and its kind of weight decay (see :func:`elementwise`).

A rule is a pure function of one parameter's elements, its gradient's, its state's and a
few scalars, in the shape of its paper's algorithm box, written in a small vocabulary
(``sqrt``, ``lerp``, ...); the backend compiles and runs it over arrays (numba loops on
"cpu", MLX arrays on "gpu", NumPy array expressions without numba). What torch.optim wraps
around every rule the same way, ``maximize`` and L2 or decoupled weight decay, is the
optimizer's business: it is written here into a rule of its own (:meth:`Rule.for_group`),
so that the backend only ever sees a rule and numbers.

Examples
--------
>>> from lucid.optim.elementwise import elementwise, sqrt
>>> def adagrad_like_scalars(group, param, state):
...     return {"eps": group["eps"], "neg_lr": -group["lr"]}
>>> @elementwise(state=("square_sum",), decay="l2", scalars=adagrad_like_scalars)
... def adagrad_like(param, grad, square_sum, eps, neg_lr):
...     square_sum = square_sum + grad * grad
...     return param + grad * neg_lr / (sqrt(square_sum) + eps), square_sum
>>> [float(v) for v in adagrad_like(1.0, 2.0, 0.0, 0.0, -0.5)]
[0.5, 4.0]
>>> adagrad_like.scalar_values({"eps": 1e-10, "lr": 0.5}, None, {})
(1e-10, -0.5)
"""

from __future__ import annotations

import functools
import linecache
from operator import methodcaller
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._backend import rules as _rules
from .._backend.rules import abs, helper, lerp, maximum, minimum, sign, sqrt, where
from .._tensor import Tensor, arrays_of, backend_of, rebind_
from ._shared import scalar

__all__ = ["Rule", "elementwise", "run_rule", "helper", "sqrt", "abs", "sign", "maximum", "minimum", "where", "lerp"]

#: The lines a variant of a rule runs first, as torch.optim does for each optimizer, and
#: the scalar each decay adds (named so as not to clash with a rule's own).
_PROLOGUE = {"maximize": "    grad = -grad\n", "l2": "    grad = grad + weight_decay * param\n",
             "decoupled": "    param = param * shrink\n"}
_DECAY_SCALAR = {"l2": "weight_decay", "decoupled": "shrink"}


#: What most rules' scalars depend on besides the group: a parameter's step count,
#: ``state.get("step")`` (a C callable: the step's plan calls it once per parameter).
step_count = methodcaller("get", "step")


class Rule(_rules.Rule):
    """An elementwise update rule as an optimizer declares it (made by :func:`elementwise`).

    Beside the pure function and its state (what the backend compiles), it holds how its
    scalars are computed (:meth:`scalar_values`, by name), what in a parameter's state they
    depend on (``depends_on``: computed once per group and value of it, or per parameter
    where it is None) and how ``weight_decay`` enters it (``decay``).

    Examples
    --------
    >>> from lucid.optim.adam import adam
    >>> adam.state, adam.decay
    (('exp_avg', 'exp_avg_sq'), 'l2')
    """

    def __init__(self, fn: Callable[..., Any], state: Sequence[str], decay: str | None,
                 scalars: Callable[[dict, Tensor, dict], dict] | None, depends_on: Callable[[dict], Any] | None,
                 sums: Sequence[str] = ()) -> None:
        super().__init__(fn, state, sums)
        if decay not in (None, "l2", "decoupled"):
            raise ValueError(f"decay must be None, 'l2' or 'decoupled', got {decay!r}")
        self.decay, self.depends_on, self._scalars = decay, depends_on, scalars
        self._names = frozenset(self.scalars)

    def scalar_values(self, group: dict, param: Tensor, state: dict, decay: float | None = None) -> tuple:
        """The rule's scalars for ``param`` (its step already counted), in the rule's order,
        from the dict its scalars function returns; its names must be the rule's. With
        ``decay`` (the number :meth:`for_group` gave), the scalars of :meth:`for_group`'s
        rule: that number first.

        Examples
        --------
        >>> from lucid.optim.sgd import sgd
        >>> group = {"lr": 0.5, "momentum": 0}
        >>> sgd.scalars, sgd.scalar_values(group, None, {}), sgd.scalar_values(group, None, {}, decay=0.1)
        (('neg_lr',), (-0.5,), (0.1, -0.5))
        """
        values = self._scalars(group, param, state)  # type: ignore[misc]  # a rule an optimizer runs has one
        if values.keys() != self._names:
            raise TypeError(f"the scalars of rule {self.name} must be {sorted(self._names)}, got {sorted(values)}")
        ordered = map(values.__getitem__, self.scalars)
        return tuple(ordered) if decay is None else (decay, *ordered)

    def for_group(self, group: dict) -> tuple[_rules.Rule, float | None]:
        """The rule the backend runs for ``group`` and the number its weight decay adds
        (None without): this rule, or one that negates the gradient under ``maximize`` and
        applies L2 (``grad + weight_decay * param``) or decoupled weight decay (the
        parameter shrunk by ``1 - lr * weight_decay``, also where the group sets
        ``decoupled_weight_decay``) first, then calls this one.

        Examples
        --------
        >>> from lucid.optim.adam import adam
        >>> adam.for_group({"weight_decay": 0})[0] is adam
        True
        >>> kernel, decay = adam.for_group({"weight_decay": 0.01, "lr": 0.1, "maximize": True,
        ...                                 "decoupled_weight_decay": True})
        >>> kernel.name, decay
        ('adam__maximize__decoupled', 0.999)
        """
        decay, weight_decay, value = None, group.get("weight_decay", 0), None
        if self.decay and weight_decay != 0:
            decay = "decoupled" if self.decay == "decoupled" or group.get("decoupled_weight_decay", False) else "l2"
            value = float(scalar(weight_decay if decay == "l2" else 1 - group["lr"] * weight_decay))
        maximize = bool(group.get("maximize", False))
        return (self._variant(maximize, decay), value) if maximize or decay else (self, None)

    @functools.cache  # noqa: B019 - rules live as long as their modules
    def _variant(self, maximize: bool, decay: str | None) -> _rules.Rule:
        """A rule, from generated source, that runs the prologue, then this rule (a helper
        of it: numba compiles both, the array backends call one from the other)."""
        name = "__".join((self.name, *(["maximize"] if maximize else []), *([decay] if decay else [])))
        inputs = ", ".join(("param", "grad", *self.state))
        scalars = ", ".join(self.scalars)
        head = ", ".join(filter(None, (inputs, _DECAY_SCALAR.get(decay or ""), scalars)))
        source = (f"def {name}({head}):\n" + (_PROLOGUE["maximize"] if maximize else "")
                  + _PROLOGUE.get(decay or "", "") + f"    return {self.name}({', '.join(filter(None, (inputs, scalars)))})\n")
        filename = f"<lucid rule {name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # for inspect.getsource
        namespace = {self.name: helper(self.fn)}
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own template
        return _rules.Rule(namespace[name], self.state, self.sums)


def elementwise(state: Sequence[str] = (), decay: str | None = None,
                scalars: Callable[[dict, Tensor, dict], dict] | None = None,
                depends_on: Callable[[dict], Any] | None = step_count,
                sums: Sequence[str] = ()) -> Callable[[Callable[..., Any]], Rule]:
    """Declare an elementwise update rule.

    Parameters
    ----------
    state : sequence of str
        The names of the state arrays the rule updates: its arguments after ``param`` and
        ``grad``; the rest are its scalars.
    decay : {None, "l2", "decoupled"}
        How the group's ``weight_decay`` enters the rule, applied before it.
    scalars : callable
        ``scalars(group, param, state) -> dict``: the rule's scalars by name, as torch
        computes them (Python numbers and bools; the backend casts numbers to the
        parameter's dtype), for a parameter whose step is already counted.
    depends_on : callable or None, default ``state.get("step")``
        What the scalars read from a parameter's state: they are computed once per group,
        dtype and value of ``depends_on(state)``; None computes them for each parameter
        (state of its own, such as NAdam's ``mu_product``).
    sums : sequence of str, default ()
        Names of terms the rule returns after its state, whose sums over each tensor's
        elements :func:`run_rule` returns (accumulated in float64): reductions that need no
        pass of their own (Prodigy's estimate). Such a rule runs through :func:`run_rule`.

    Examples
    --------
    >>> @elementwise(state=("velocity",), scalars=lambda group, param, state: {
    ...     "neg_lr": -group["lr"], "momentum": group["momentum"]})
    ... def heavy_ball(param, grad, velocity, momentum, neg_lr):
    ...     velocity = velocity * momentum + grad
    ...     return param + velocity * neg_lr, velocity
    >>> heavy_ball.state, heavy_ball.scalars
    (('velocity',), ('momentum', 'neg_lr'))
    >>> heavy_ball(1.0, 0.5, 0.0, 0.9, -0.1)
    (0.95, 0.5)
    >>> heavy_ball.scalar_values({"lr": 0.1, "momentum": 0.9}, None, {})  # in the rule's order
    (0.9, -0.1)
    """
    return lambda fn: Rule(fn, state, decay, scalars, depends_on, sums)


def run_rule(rule: _rules.Rule, items: Iterable[tuple[Sequence[Tensor], Tensor, tuple]]) -> list[tuple[float, ...]]:
    """Run ``rule`` (as the backend sees it: :meth:`Rule.for_group`'s) over tensors, in place.

    ``items`` holds, per parameter, ``(tensors, grad, scalars)``: the parameter and its state
    tensors in the rule's order, its dense gradient, and the rule's scalars in order. Each
    tensor written counts an in-place write. Callers check shapes, dtypes and devices first.
    Returns, per item in order, the rule's sums as floats (empty tuples for a rule without).

    Examples
    --------
    >>> import lucid
    >>> from lucid.optim.sgd import sgd
    >>> w = lucid.tensor([1.0, 2.0])
    >>> run_rule(sgd, [((w,), lucid.tensor([1.0, 1.0]), (-0.5,))])   # SGD's rule has no sums
    [()]
    >>> w
    tensor([0.5000, 1.5000])
    """
    sums: dict[int, tuple] = {}
    by_backend: dict = {}
    for index, (tensors, grad, numbers) in enumerate(items):
        by_backend.setdefault(backend_of(tensors[0]), []).append((index, tensors, (arrays_of(tensors), *arrays_of((grad,)), numbers)))
    for backend, group in by_backend.items():
        for (index, tensors, _), arrays in zip(group, backend.run_rule(rule, [item for *_, item in group])):
            rebind_(tensors, arrays[:len(tensors)])  # the tensors' new arrays, then the rule's sums
            sums[index] = tuple(arrays[len(tensors):])
    return [sums[index] for index in sorted(sums)]
