"""Argument checks shared by the optimizers, the schedulers and the schedule values.

Where torch raises, the message is torch's. Where torch accepts a value and then fails on it
(``StepLR(step_size=0)``, a NaN factor, ``lr=inf``), lucid refuses it here, with a TypeError for
a value of the wrong type and a ValueError for one out of range, naming the argument.
"""

from __future__ import annotations

import math
import numbers

from .._tensor import Tensor


class RequiredParameter:
    """The default of a hyperparameter every group must give (``lucid.optim.required``, as torch's).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> class Plain(optim.Optimizer):
    ...     def __init__(self, params, lr=optim.required):
    ...         super().__init__(params, dict(lr=lr))
    >>> Plain([nn.Parameter(lucid.zeros(1))])
    Traceback (most recent call last):
        ...
    ValueError: parameter group didn't specify a value of required optimization parameter lr
    """

    def __repr__(self) -> str:
        return "<required parameter>"


required = RequiredParameter()


# --- the small checks: a number, a finite one, one in range, an int count --------------------
def describe(value) -> str:
    """``value`` for a message: a Tensor by its shape, anything else by its type and repr."""
    return f"a Tensor of shape {value.shape}" if isinstance(value, Tensor) else f"{type(value).__name__} {value!r}"


def _numbers(value) -> list:
    """The numbers in ``value``: itself, a one-element Tensor's value, or a tuple's or list's items."""
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in _numbers(item)]
    return [value.item()] if isinstance(value, Tensor) and value.numel() == 1 else [value]


def number(name: str, value) -> float:
    """``value`` as a float: a finite Python number (not a bool, not a Tensor)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {describe(value)}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


def finite(name: str, value) -> None:
    """Each number in ``value`` (a number, a one-element Tensor, or one per param group) is finite."""
    for item in _numbers(value):
        number(name, item)


def at_least(name: str, value, least: float = 0, strict: bool = False) -> None:
    """:func:`finite`, and each number at least ``least`` (above it where ``strict``)."""
    finite(name, value)
    if not all(item > least if strict else item >= least for item in _numbers(value)):
        raise ValueError(f"{name} must be {'greater than' if strict else 'at least'} {least}, got {value!r}")


def count(name: str, value, least: int = 0) -> int:
    """``value`` as an int: an integer (not a bool) of at least ``least``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {describe(value)}")
    at_least(name, value, least)
    return int(value)


# --- torch.optim's checks of a param group's hyperparameters ----------------------------------
def learning_rate(lr, strict=False) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not (0.0 < lr if strict else 0.0 <= lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def epsilon(eps, strict=False) -> None:
    non_negative("epsilon", eps, strict)


def betas(values) -> None:
    if not isinstance(values, (tuple, list)) or len(values) != 2:
        raise ValueError(f"betas must be a pair of floats, got {values!r}")
    for index, beta in enumerate(values):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {beta}")


def non_negative(label: str, value, strict: bool = False) -> None:
    """``Invalid {label} value: {value}`` unless value >= 0 (> 0 where ``strict``; torch's wording
    for most options)."""
    if not (0.0 < value if strict else 0.0 <= value):
        raise ValueError(f"Invalid {label} value: {value}")


def implementation_flags(foreach, fused, differentiable) -> None:
    """torch's ``foreach``/``fused``/``differentiable`` flags: accepted, checked, and documented."""
    if differentiable:
        raise NotImplementedError("differentiable=True is not supported: lucid's optimizer steps run without "
                                  "recording a graph, so gradients cannot flow through an update")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


# Hyperparameters that are finite numbers (or tuples of them) in every optimizer that has
# them: an infinity there is a bug (torch accepts ``lr=inf`` and ``weight_decay=inf``, and
# the first step fills the parameters with NaN); a NaN is refused in any hyperparameter.
FINITE = frozenset({
    "lr", "weight_decay", "momentum", "dampening", "eps", "betas", "rho", "alpha", "lambd", "lr_decay",
    "initial_accumulator_value", "momentum_decay", "beta2_decay", "d", "etas", "ns_coefficients",
    "tolerance_grad", "tolerance_change", "initial_lr", "max_lr", "min_lr", "base_momentum", "max_momentum",
})


def _hyperparameter_numbers(group: dict) -> list:
    """``(key, number)`` for every number in ``group``'s hyperparameters (flags and Nones left out)."""
    return [(key, item) for key, value in group.items() if key not in ("params", "param_names")
            for item in _numbers(value) if not isinstance(item, bool) and item is not None]


def number_types(group: dict, placeholder=None) -> None:
    """TypeError for a non-number in a hyperparameter that must be a number (``lr="0.1"``).

    Runs before an optimizer's own range checks, which would otherwise fail comparing.
    ``placeholder`` (the ``required`` sentinel) is let through for the base to report, and a
    Tensor of several elements for the optimizer's own check (torch's "Tensor lr must be 1-element").
    """
    for key, item in _hyperparameter_numbers(group):
        if key in FINITE and not isinstance(item, (numbers.Real, Tensor)) and item is not placeholder:
            raise TypeError(f"{key} must be a number, got {describe(item)}")


def finite_hyperparameters(group: dict) -> None:
    """Refuse NaN in any hyperparameter of ``group``, and infinities in ``FINITE`` ones.

    Runs after an optimizer's own checks (which raise torch's message where torch raises),
    so it only catches what torch lets through: ``lr=inf``, ``weight_decay=inf``, SGD's
    ``dampening=nan``, Muon's ``eps=nan``.
    """
    for key, item in _hyperparameter_numbers(group):
        if isinstance(item, numbers.Real) and (math.isnan(item) or key in FINITE):
            number(key, item)


# Integer hyperparameters and their least values (torch accepts 0 or -1 for these and then
# loops forever, keeps an unbounded history, or silently runs no iteration).
COUNTS = {"max_iter": 1, "max_eval": 1, "history_size": 1, "ns_steps": 0}
# Tuple hyperparameters and their lengths (torch fails with an IndexError deep inside, if at all).
LENGTHS = {"etas": 2, "step_sizes": 2, "ns_coefficients": 3}  # betas: _checks.betas, torch's words


def structure(group: dict) -> None:
    """Counts that are ints of their least value, and tuples of the right length.

    Runs before an optimizer's own checks, which unpack the tuples. ``eps`` is a pair only
    where it is a tuple (Adafactor's ``(eps1, eps2)``); ``max_eval`` may be None (the default).
    """
    for key, least in COUNTS.items():
        if group.get(key) is not None:
            count(key, group[key], least)
    lengths = dict(LENGTHS, eps=2) if isinstance(group.get("eps"), (tuple, list)) else LENGTHS
    for key, length in lengths.items():
        value = group.get(key)
        if not (value is None or isinstance(value, Tensor) or isinstance(value, (tuple, list)) and len(value) == length):
            raise ValueError(f"{key} must be a tuple of {length} values, got {value!r}")
    sizes = group.get("step_sizes")
    if sizes is not None and all(isinstance(s, numbers.Real) for s in sizes) and not 0 <= sizes[0] <= sizes[1]:
        raise ValueError(f"Invalid step_sizes {sizes!r}: expected 0 <= minimal step size <= maximal step size")
