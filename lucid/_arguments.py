"""The small checks of a public function's number arguments, shared by lucid.optim and lucid.nn.

Each raises a TypeError for a value of the wrong type and a ValueError for one out of range,
naming the argument and showing the value (an int too long to print by its length), so that
``lr=10**400`` or ``eps=float("nan")`` is refused where it is given rather than failing later
with an error that names nothing (``OverflowError: int too large to convert to float``).
``lucid.optim._checks`` builds torch.optim's checks on these.
"""

from __future__ import annotations

import math
import numbers

from ._tensor import Tensor

LOG10_2 = math.log10(2)
# an int count beyond int64 (a C long to torch): ``10**400`` steps is a mistake, not a schedule
LARGEST_COUNT = 2**63 - 1


def describe(value) -> str:
    """``value`` for a message: a Tensor by its shape, an int too long to print by its length,
    anything else by its type and repr.

    Examples
    --------
    >>> from lucid._arguments import describe
    >>> describe("0.1"), describe(10**400)
    ("str '0.1'", 'int of about 401 digits')
    """
    if isinstance(value, Tensor):
        return f"a Tensor of shape {value.shape}"
    if isinstance(value, numbers.Integral) and abs(int(value)).bit_length() > 64:
        return f"{type(value).__name__} of about {int(abs(int(value)).bit_length() * LOG10_2) + 1} digits"
    return f"{type(value).__name__} {value!r}"


def fits_float(value) -> bool:
    """Whether ``float(value)`` is a float rather than an OverflowError (an int beyond 1.8e308)."""
    try:
        float(value)
    except OverflowError:
        return False
    return True


def is_nan(value) -> bool:
    """``value`` is a NaN (never an int, however large)."""
    return not isinstance(value, numbers.Integral) and math.isnan(value)


def numbers_in(value) -> list:
    """The numbers in ``value``: itself, a one-element Tensor's value, or a tuple's or list's items."""
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in numbers_in(item)]
    return [value.item()] if isinstance(value, Tensor) and value.numel() == 1 else [value]


def real(name: str, value) -> float:
    """``value`` as a float: a Python number (not a bool, not a Tensor) that a float holds
    (infinities allowed, NaN not)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {describe(value)}")
    if not fits_float(value):
        raise ValueError(f"{name} must be within the range of a float, got {describe(value)}")
    if is_nan(value):
        raise ValueError(f"{name} must not be NaN, got nan")
    return float(value)


def number(name: str, value) -> float:
    """``value`` as a float: a finite Python number (not a bool, not a Tensor).

    Examples
    --------
    >>> from lucid._arguments import number
    >>> number("lr", 10**400)
    Traceback (most recent call last):
        ...
    ValueError: lr must be within the range of a float, got int of about 401 digits
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {describe(value)}")
    if not fits_float(value):
        raise ValueError(f"{name} must be within the range of a float, got {describe(value)}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


def finite(name: str, value) -> None:
    """Each number in ``value`` (a number, a one-element Tensor, or one per param group) is finite."""
    for item in numbers_in(value):
        number(name, item)


def at_least(name: str, value, least: float = 0, strict: bool = False) -> None:
    """:func:`finite`, and each number at least ``least`` (above it where ``strict``)."""
    finite(name, value)
    if not all(item > least if strict else item >= least for item in numbers_in(value)):
        raise ValueError(f"{name} must be {'greater than' if strict else 'at least'} {least}, got {value!r}")


def count(name: str, value, least: int = 0) -> int:
    """``value`` as an int: an integer (not a bool) of at least ``least`` and at most 2**63 - 1.

    Examples
    --------
    >>> from lucid._arguments import count
    >>> count("num_layers", 2.0)
    Traceback (most recent call last):
        ...
    TypeError: num_layers must be an int, got float 2.0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {describe(value)}")
    if int(value) > LARGEST_COUNT:
        raise ValueError(f"{name} must be at most 2**63 - 1, got {describe(value)}")
    at_least(name, value, least)
    return int(value)

