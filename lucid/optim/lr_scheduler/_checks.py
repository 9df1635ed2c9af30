"""Argument checks the schedulers run first, before anything is written into an optimizer.

torch 2.13 accepts ``StepLR(step_size=0)``, ``CosineAnnealingLR(T_max=0)``, NaN and
infinite factors, and fails later with a ZeroDivisionError or NaN lrs; lucid refuses them
at construction with a ValueError (a TypeError for a value of the wrong type) that names
the argument, and leaves the optimizer as it was.
"""

from __future__ import annotations

import math
import numbers

from ..._tensor import Tensor
from .base import LRScheduler


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _numbers(value) -> list:
    items = value if isinstance(value, (list, tuple)) else [value]
    return [item.item() if isinstance(item, Tensor) and item.numel() == 1 else item for item in items]


def finite(name: str, value) -> None:
    """``value`` (a number, a one-element Tensor, or a list or tuple of them) is finite."""
    for number in _numbers(value):
        if not _is_number(number):
            raise TypeError(f"{name} must be a number (or one per param group), got {value!r}")
        if not math.isfinite(number):
            raise ValueError(f"{name} must be finite, got {value!r}")


def positive(name: str, value) -> None:
    """``value`` (or each of a list) is a finite number above 0."""
    finite(name, value)
    if not all(number > 0 for number in _numbers(value)):
        raise ValueError(f"{name} must be greater than 0, got {value!r}")


def non_negative(name: str, value) -> None:
    """``value`` (or each of a list) is a finite number of at least 0."""
    finite(name, value)
    if not all(number >= 0 for number in _numbers(value)):
        raise ValueError(f"{name} must be at least 0, got {value!r}")


def positive_int(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be a positive integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def non_negative_int(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be at least 0, got {value!r}")


def lambdas(lr_lambda) -> None:
    """Each lr_lambda is callable (torch's MultiplicativeLR message)."""
    for fn in lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]:
        if not callable(fn):
            raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")


def schedulers(owner: str, children) -> None:
    """``children`` is a non-empty list or tuple of schedulers."""
    if not isinstance(children, (list, tuple)):
        raise TypeError(f"{owner} expects a list of schedulers, got {type(children).__name__}")
    for i, child in enumerate(children):
        if not isinstance(child, LRScheduler):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute. (It must be a "
                            f"scheduler, an LRScheduler; got {type(child).__name__})")
