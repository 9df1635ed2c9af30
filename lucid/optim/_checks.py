"""Hyperparameter validation with torch.optim's exact messages."""

from __future__ import annotations

import math
import numbers

from .._tensor import Tensor


class RequiredParameter:
    """The default of a hyperparameter every group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = RequiredParameter()



def learning_rate(lr, strict=False) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not (0.0 < lr if strict else 0.0 <= lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def epsilon(eps, strict=False) -> None:
    if not (0.0 < eps if strict else 0.0 <= eps):
        raise ValueError(f"Invalid epsilon value: {eps}")


def betas(values) -> None:
    if not isinstance(values, (tuple, list)) or len(values) != 2:
        raise ValueError(f"betas must be a pair of floats, got {values!r}")
    for index, beta in enumerate(values):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {beta}")


def non_negative(label: str, value) -> None:
    """``Invalid {label} value: {value}`` unless value >= 0 (torch's wording for most options)."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {label} value: {value}")


def implementation_flags(foreach, fused, differentiable) -> None:
    """torch's ``foreach``/``fused``/``differentiable`` flags: accepted, checked, and documented."""
    if differentiable:
        raise NotImplementedError(
            "differentiable=True is not supported: lucid's optimizer steps run without recording "
            "a graph, so gradients cannot flow through an update"
        )
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
_LABELS = {"lr": "learning rate"}


def _numbers(value):
    """The numbers in a hyperparameter: itself, a one-element Tensor's value, or a tuple's items."""
    if isinstance(value, Tensor):
        return [value.item()] if value.numel() == 1 else []
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in _numbers(item)]
    return [value]


def _hyperparameter_numbers(group: dict):
    """``(key, value, number)`` for every number in ``group``'s hyperparameters (flags excluded)."""
    for key, value in group.items():
        if key in ("params", "param_names"):
            continue
        for number in _numbers(value):
            if not isinstance(number, bool) and number is not None:
                yield key, value, number


def number_types(group: dict, placeholder=None) -> None:
    """TypeError for a non-number in a hyperparameter that must be a number (``lr="0.1"``).

    Runs before an optimizer's own range checks, which would otherwise fail comparing.
    ``placeholder`` (the ``required`` sentinel) is let through for the base to report.
    """
    for key, value, number in _hyperparameter_numbers(group):
        if key in FINITE and not isinstance(number, numbers.Real) and number is not placeholder:
            raise TypeError(f"{key} must be a number (or a tuple of numbers), got {value!r}")


def finite_hyperparameters(group: dict) -> None:
    """Refuse NaN in any hyperparameter of ``group``, and infinities in ``FINITE`` ones.

    Runs after an optimizer's own checks (which raise torch's message where torch raises),
    so it only catches what torch lets through: ``lr=inf``, ``weight_decay=inf``, SGD's
    ``dampening=nan``, Muon's ``eps=nan``.
    """
    for key, value, number in _hyperparameter_numbers(group):
        if isinstance(number, numbers.Real) and (math.isnan(number) or (key in FINITE and math.isinf(number))):
            raise ValueError(f"Invalid {_LABELS.get(key, key + ' value')}: {value!r} (it must be finite)")


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
        value = group.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{key} must be an int, got {value!r}")
        if value < least:
            raise ValueError(f"{key} must be at least {least}, got {value}")
    lengths = dict(LENGTHS, eps=2) if isinstance(group.get("eps"), (tuple, list)) else LENGTHS
    for key, length in lengths.items():
        value = group.get(key)
        if value is None or isinstance(value, Tensor):
            continue
        if not isinstance(value, (tuple, list)) or len(value) != length:
            raise ValueError(f"{key} must be a tuple of {length} values, got {value!r}")
    sizes = group.get("step_sizes")
    if sizes is not None and all(isinstance(s, numbers.Real) for s in sizes) and not 0 <= sizes[0] <= sizes[1]:
        raise ValueError(f"Invalid step_sizes {sizes!r}: expected 0 <= minimal step size <= maximal step size")
