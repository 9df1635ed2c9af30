"""Elementwise update rules: each written once, as a pure function, and run by each backend its own way.

An optimizer's rule is a plain Python function of the elements it reads,

    def adam(param, grad, exp_avg, exp_avg_sq, weight1, beta2, ...):
        ...
        return param, exp_avg, exp_avg_sq

its arguments the parameter, the gradient, the state arrays it updates (named in
``@elementwise(state=...)``) and then scalars (numbers, already computed as torch computes
them, and bools); it returns the new parameter and the new state values, in that order.
It uses arithmetic, comparisons and the vocabulary below (``sqrt``, ``abs``, ``sign``,
``maximum``, ``minimum``, ``where``, ``lerp``), and no number literals: a literal would
make numba compute a float32 rule in float64. Each backend runs it:

- NumPy with numba: compiled into one loop over the elements, in place (one read and one
  write per array), cached on disk (:mod:`~lucid._backend.numba_rules`);
- NumPy without numba, or with ``LUCID_JIT=0``: the same function on whole arrays;
- MLX: the same function on MLX arrays, eagerly or under ``mx.compile``.

The backend knows nothing of what an optimizer wraps around a rule (``maximize``, weight
decay): :mod:`lucid.optim.elementwise` writes that into a rule of its own.
"""

from __future__ import annotations

import inspect
import textwrap
import types
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

F = TypeVar("F", bound=Callable[..., Any])


class Rule:
    """An elementwise update rule as a backend compiles it: the pure function, and which of
    its arguments are state (the rest are scalars); :mod:`lucid.optim.elementwise` declares them.

    A rule with ``sums`` also returns, after its new state, one term per name whose sum over
    each tensor's elements the backend returns (Prodigy's estimate): accumulated in float64,
    in the numba loop as it goes, by whole-array sums elsewhere."""

    def __init__(self, fn: Callable[..., Any], state: Sequence[str], sums: Sequence[str] = ()) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.state = tuple(state)
        self.sums = tuple(sums)
        names = list(inspect.signature(fn).parameters)
        if names[:2] != ["param", "grad"] or tuple(names[2:2 + len(self.state)]) != self.state:
            raise TypeError(f"rule {self.name} must take (param, grad, {', '.join(self.state)}, scalars...)")
        self.scalars = tuple(names[2 + len(self.state):])
        self._rebound: dict = {}
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return f"<elementwise rule {self.name}{inspect.signature(self.fn)}>"

    def __call__(self, *args: Any) -> Any:
        """Evaluate the rule on NumPy arrays or numbers (the reference semantics)."""
        return self.fn(*args)

    def with_vocabulary(self, vocabulary: dict) -> Callable[..., Any]:
        """The rule's function with the vocabulary names bound to a backend's functions."""
        fn = self._rebound.get(id(vocabulary))
        if fn is None:
            fn = self._rebound[id(vocabulary)] = _rebind(self.fn, vocabulary)
        return fn

    def sources(self) -> list:
        """The source of the helper functions the rule calls, then its own, without decorators."""
        parts: list[str] = []
        seen: set[int] = set()
        _collect_source(self.fn, parts, seen)
        return parts


def helper(fn: F) -> F:
    """Mark ``fn`` as a pure elementwise helper that rules may call (its source is compiled with them).

    Examples
    --------
    >>> from lucid.optim.elementwise import elementwise, helper
    >>> @helper
    ... def halve(x):
    ...     return x * 0.5
    >>> @elementwise()
    ... def half_step(param, grad, neg_lr):
    ...     return (param + halve(grad) * neg_lr,)
    >>> half_step(1.0, 2.0, -0.5)
    (0.5,)
    """
    setattr(fn, "_lucid_elementwise_helper", True)  # (an attribute a type checker does not know functions have)
    return fn


def _rebind(fn, vocabulary: dict):
    """``fn`` with its globals (and the helpers it calls) looking up names in ``vocabulary`` first."""
    namespace = dict(fn.__globals__)
    namespace.update(vocabulary)
    for name in fn.__code__.co_names:
        value = fn.__globals__.get(name)
        if getattr(value, "_lucid_elementwise_helper", False) and name not in vocabulary:
            namespace[name] = _rebind(value, vocabulary)
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def _collect_source(fn, parts: list, seen: set) -> None:
    for name in fn.__code__.co_names:
        value = fn.__globals__.get(name)
        if getattr(value, "_lucid_elementwise_helper", False) and name not in seen and name not in VOCABULARY:
            seen.add(name)
            _collect_source(value, parts, seen)
    lines = textwrap.dedent(inspect.getsource(fn)).splitlines()
    while lines and lines[0].startswith("@"):
        lines.pop(0)
    parts.append("\n".join(lines))


# --- the vocabulary, with NumPy's semantics (a backend binds its own) ------------------------

def sqrt(x):
    """The square root, IEEE-rounded in ``x``'s dtype.

    Examples
    --------
    >>> from lucid.optim.elementwise import sqrt
    >>> float(sqrt(2.25))
    1.5
    """
    return np.sqrt(x)


def abs(x):  # noqa: A001 - the rules' vocabulary names it as NumPy and torch do
    """``|x|``.

    Examples
    --------
    >>> from lucid.optim.elementwise import abs
    >>> float(abs(-2.0))
    2.0
    """
    return np.abs(x)


def sign(x):
    """-1, 0 or 1 by the sign of ``x`` (NaN stays NaN), as torch's ``sign``.

    Examples
    --------
    >>> from lucid.optim.elementwise import sign
    >>> [float(sign(v)) for v in (-3.0, 0.0, 2.0)]
    [-1.0, 0.0, 1.0]
    """
    return np.sign(x)


def maximum(a, b):
    """The larger of ``a`` and ``b``, NaN if either is (torch's ``maximum``).

    Examples
    --------
    >>> from lucid.optim.elementwise import maximum
    >>> float(maximum(1.0, 2.0)), float(maximum(1.0, float("nan")))
    (2.0, nan)
    """
    return np.maximum(a, b)


def minimum(a, b):
    """The smaller of ``a`` and ``b``, NaN if either is (torch's ``minimum``).

    Examples
    --------
    >>> from lucid.optim.elementwise import minimum
    >>> float(minimum(1.0, 2.0))
    1.0
    """
    return np.minimum(a, b)


def where(condition, a, b):
    """``a`` where ``condition`` holds, else ``b``.

    Examples
    --------
    >>> from lucid.optim.elementwise import where
    >>> float(where(3.0 > 2.0, 1.0, -1.0))
    1.0
    """
    return np.where(condition, a, b)


@helper
def lerp(start, end, weight):
    """torch's ``lerp``: ``start + weight * (end - start)`` where ``|weight| < 0.5``, else
    ``end - (end - start) * (1 - weight)`` (exact at ``weight == 1``; torch's choice for a
    negative weight too, as Schedule-Free's ``1 - 1/beta`` is).

    ``weight / weight`` is 1 in the weight's own dtype (the branch has ``weight >= 0.5``):
    a literal 1 would make numba compute a float32 rule in float64.

    Examples
    --------
    >>> from lucid.optim.elementwise import lerp
    >>> lerp(0.0, 10.0, 0.25), lerp(0.0, 10.0, 1.0), lerp(0.0, 10.0, -1.0)
    (2.5, 10.0, -10.0)
    """
    diff = end - start
    if -0.5 < weight < 0.5:
        return start + diff * weight
    return end - diff * (weight / weight - weight)


VOCABULARY = ("sqrt", "abs", "sign", "maximum", "minimum", "where", "lerp")
NUMPY_VOCABULARY = {"sqrt": sqrt, "abs": abs, "sign": sign, "maximum": maximum, "minimum": minimum,
                    "where": where, "lerp": lerp}

