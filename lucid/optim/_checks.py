"""Argument checks shared by the optimizers, the schedulers and the schedule values.

Where torch raises, the message is torch's. Where torch accepts a value and then fails on it
(``StepLR(step_size=0)``, a NaN factor, ``lr=inf``), lucid refuses it here, with a TypeError for
a value of the wrong type and a ValueError for one out of range, naming the argument.
"""

from __future__ import annotations

import numbers

# the small checks (a number, a finite one, one in range, an int count), shared with lucid.nn
from .._arguments import at_least, count, describe, finite, number, numbers_in, real  # noqa: F401
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


def flags_with_torch_numbers(group: dict, unmatched: dict) -> None:
    """Refuse an implementation flag whose torch path computes other numbers than lucid's one
    implementation (torch's single-tensor path): ``unmatched`` maps a flag to the
    hyperparameters that, as Tensors, make the difference (none: it always does).

    ``capturable=True`` is refused for every optimizer: it is torch's CUDA-graph mode, which
    torch refuses for tensors on the CPU, and its numbers are not the single-tensor path's.
    """
    if group.get("capturable"):
        raise NotImplementedError("capturable=True is not supported: it is torch's mode for CUDA graphs (torch "
                                  "refuses it for CPU tensors) and lucid runs one implementation; use capturable=False")
    for flag, keys in unmatched.items():
        tensors = [key for key in keys if any(isinstance(v, Tensor) for v in numbers_or_tensors(group.get(key)))]
        if group.get(flag) and (tensors or not keys):
            with_what = f" with a Tensor {tensors[0]}" if tensors else ""
            raise NotImplementedError(
                f"{flag}=True{with_what} is not supported: torch's {flag} implementation computes other numbers "
                f"than its single-tensor one, which lucid follows; use {flag}=False"
                + (f" or a float {tensors[0]}" if tensors else ""))


def numbers_or_tensors(value) -> list:
    """A hyperparameter's items: a tuple's, or the value itself."""
    return list(value) if isinstance(value, (tuple, list)) else [value]


# Hyperparameters that are finite numbers (or tuples of them) in every optimizer that has
# them: an infinity there is a bug (torch accepts ``lr=inf`` and ``weight_decay=inf``, and
# the first step fills the parameters with NaN); a NaN is refused in any hyperparameter.
FINITE = frozenset({
    "lr", "weight_decay", "momentum", "dampening", "eps", "betas", "rho", "alpha", "lambd", "lr_decay",
    "initial_accumulator_value", "momentum_decay", "beta2_decay", "d", "etas", "ns_coefficients",
    "tolerance_grad", "tolerance_change", "initial_lr", "max_lr", "min_lr", "base_momentum", "max_momentum",
})


# Hyperparameters that are numbers, infinities allowed (ASGD's ``t0=inf``: never average;
# Rprop's largest step size): torch takes None or a string and fails at the first step, after
# it made the parameters' state.
NUMBERS = frozenset({"t0", "step_sizes"})


def _hyperparameter_numbers(group: dict) -> list:
    """``(key, number)`` for every number in ``group``'s hyperparameters (flags and Nones left out)."""
    return [(key, item) for key, value in group.items() if key not in ("params", "param_names")
            for item in numbers_in(value) if not isinstance(item, bool) and item is not None]


def number_types(group: dict, placeholder=None) -> None:
    """TypeError for a non-number in a hyperparameter that must be a number (``lr="0.1"``).

    Runs before an optimizer's own range checks, which would otherwise fail comparing.
    ``placeholder`` (the ``required`` sentinel) is let through for the base to report, and a
    Tensor of several elements for the optimizer's own check (torch's "Tensor lr must be 1-element").
    """
    for key, item in _hyperparameter_numbers(group):
        if key in FINITE and not isinstance(item, (numbers.Real, Tensor)) and item is not placeholder:
            raise TypeError(f"{key} must be a number, got {describe(item)}")
    for key in NUMBERS.intersection(group):  # None too: torch fails on it at the first step
        for item in numbers_in(group[key]):
            if isinstance(item, bool) or not isinstance(item, numbers.Real):
                raise TypeError(f"{key} must be a number, got {describe(item)}")


def finite_hyperparameters(group: dict) -> None:
    """Refuse NaN and ints beyond a float's range in any hyperparameter of ``group``, and
    infinities in ``FINITE`` ones.

    Runs after an optimizer's own checks (which raise torch's message where torch raises),
    so it only catches what torch lets through: ``lr=inf``, ``weight_decay=inf``, SGD's
    ``dampening=nan``, Muon's ``eps=nan``.
    """
    for key, item in _hyperparameter_numbers(group):
        if isinstance(item, numbers.Real):
            (number if key in FINITE else real)(key, item)  # real: no NaN, and a float holds it


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
