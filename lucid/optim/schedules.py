r"""Schedules as values: a learning rate for each update count, passed as ``lr=``.

A schedule is a small immutable value whose :meth:`~Schedule.value` gives the learning
rate at step ``t`` (the number of updates made before). Any optimizer takes one as ``lr``,
for all groups or for one group::

    optimizer = optim.AdamW(model.parameters(), lr=warmup(100, cosine(3e-4, 10_000)))

The optimizer then counts its updates per group (``group["lr_schedule_step"]``: every
``optimizer.step()`` counts, whether or not the group's parameters had gradients; a group
added later starts from 0), reads the schedule before each update (the first update uses
step 0) and keeps ``group["lr"]`` at the value the next update will use. Writing to
``group["lr"]`` by hand has no lasting effect on a scheduled group. ``state_dict()`` saves the schedule as plain data, such as
``{"schedule": "cosine", "peak": 3e-4, "steps": 1000, "end": 0.0}``, together with the
count, so a run resumed with ``load_state_dict`` continues exactly where it stopped.

Schedules compose: :func:`warmup` and :func:`join` take schedules (or numbers, as constant
schedules). Any object with a ``value(step) -> float`` method works as well; it is saved in
``state_dict`` as the object itself. Anything else given as ``lr`` (a string, a list)
raises TypeError; a Tensor of more than one element raises torch's ValueError
("Tensor lr must be 1-element"), and a Tensor where a schedule takes a number
(``warmup(10, then=tensor)``) raises TypeError.

Schedules as values and scheduler objects (:mod:`lucid.optim.lr_scheduler`) are two ways to
the same end; a group driven by a schedule cannot also be driven by a scheduler object.

Examples
--------
>>> import lucid
>>> from lucid import nn, optim
>>> from lucid.optim.schedules import cosine, warmup
>>> w = nn.Parameter(lucid.zeros(2))
>>> optimizer = optim.SGD([w], lr=warmup(2, cosine(1.0, 4)))
>>> lrs = []
>>> for _ in range(7):
...     lrs.append(optimizer.param_groups[0]["lr"])
...     w.grad = lucid.ones(2)
...     optimizer.step()
>>> [round(lr, 4) for lr in lrs]
[0.0, 0.5, 1.0, 0.8536, 0.5, 0.1464, 0.0]
"""

from __future__ import annotations

import math
import numbers
from bisect import bisect_right
from collections.abc import Sequence
from typing import TypeGuard, TypeVar

from .._tensor import Tensor
from ._checks import count, describe, number, required  # required: a default every group must give

__all__ = [
    "Schedule", "constant", "linear", "cosine", "exponential", "step", "warmup", "join", "piecewise",
    "from_dict", "is_schedule", "as_schedule",
]

LR = TypeVar("LR", float, Tensor)  # what a curve computes with: a Python number, or a scheduler's Tensor lr


def is_schedule(value: object) -> TypeGuard[Schedule]:
    """Whether ``value`` can be used as a schedule: it has a callable ``value(step)``.

    Examples
    --------
    >>> from lucid.optim.schedules import cosine, is_schedule
    >>> is_schedule(cosine(0.1, 10)), is_schedule(0.1), is_schedule("cosine")
    (True, False, False)
    """
    return callable(getattr(value, "value", None)) and not isinstance(value, (Tensor, numbers.Number))


def as_schedule(value: float | Schedule, name: str = "schedule") -> Schedule:
    """``value`` as a schedule: a schedule is kept, a number becomes :func:`constant`.

    Raises
    ------
    TypeError
        For anything else (a string, a Tensor, ...).

    Examples
    --------
    >>> from lucid.optim.schedules import as_schedule
    >>> as_schedule(0.1)
    constant(value=0.1)
    """
    if is_schedule(value):
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return constant(value)
    raise TypeError(f"{name} must be a number or a schedule, got {describe(value)}")


# --- the values ------------------------------------------------------------------------------
class Schedule:
    """Base class of the built-in schedules: immutable, compared and saved by their fields.

    Subclasses set ``kind`` (the name in saved dicts), list their constructor arguments in
    ``fields`` and implement :meth:`value`.

    Examples
    --------
    >>> from lucid.optim.schedules import cosine
    >>> schedule = cosine(3e-4, 1000)
    >>> schedule.value(0), schedule(1000)
    (0.0003, 0.0)
    >>> schedule.to_dict()
    {'schedule': 'cosine', 'peak': 0.0003, 'steps': 1000, 'end': 0.0}
    """

    kind: str = ""
    fields: tuple = ()

    def value(self, step: int) -> float:
        """The learning rate at ``step``, the number of updates made before (from 0).

        Examples
        --------
        >>> from lucid.optim.schedules import linear
        >>> [linear(0.0, 1.0, 4).value(t) for t in (0, 2, 4, 9)]
        [0.0, 0.5, 1.0, 1.0]
        """
        raise NotImplementedError

    def __call__(self, step: int) -> float:
        return self.value(count("step", step, 0))

    def to_dict(self) -> dict:
        """The schedule as plain data (nested schedules as nested dicts), for ``state_dict``.

        Examples
        --------
        >>> from lucid.optim.schedules import cosine, warmup
        >>> warmup(10, cosine(3e-4, 100)).to_dict()["then"]
        {'schedule': 'cosine', 'peak': 0.0003, 'steps': 100, 'end': 0.0}
        """
        return {"schedule": self.kind, **{name: _plain(getattr(self, name)) for name in self.fields}}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schedule) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.fields)
        return f"{self.kind}({args})"


def _plain(value):
    if isinstance(value, Schedule):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


class constant(Schedule):
    """The same value at every step.

    Parameters
    ----------
    value : float

    Examples
    --------
    >>> from lucid.optim.schedules import constant
    >>> constant(0.1).value(1000)
    0.1
    """

    kind, fields = "constant", ("value",)

    def __init__(self, value: float) -> None:
        self._constant = number("value", value)  # not ``self.value``: that is the method

    def value(self, step: int) -> float:
        return self._constant

    def to_dict(self) -> dict:
        return {"schedule": "constant", "value": self._constant}

    def __repr__(self) -> str:
        return f"constant(value={self._constant!r})"


class linear(Schedule):
    r"""From ``start`` to ``end`` in a straight line over ``steps`` steps, then ``end``.

    .. math:: s + (e - s)\,\frac{\min(t, T)}{T}

    Parameters
    ----------
    start, end : float
    steps : int
        At least 1.

    Examples
    --------
    >>> from lucid.optim.schedules import linear
    >>> [linear(1.0, 0.0, 4).value(t) for t in range(6)]
    [1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    """

    kind, fields = "linear", ("start", "end", "steps")

    def __init__(self, start: float, end: float, steps: int) -> None:
        self.start, self.end = number("start", start), number("end", end)
        self.steps = count("steps", steps, 1)

    def value(self, step: int) -> float:
        return linear.curve(self.start, self.end, min(step, self.steps), self.steps)

    @staticmethod
    def curve(start: LR, end: LR, t: float, steps: float) -> LR:
        """The line's arithmetic, ``start + (end - start) * t / steps``, at any ``t`` (no clamp).

        Shared with the schedulers, to the bit: LinearLR's closed form is ``base_lr`` times
        ``curve(start_factor, end_factor, min(t, total_iters), total_iters)``, and OneCycleLR's
        linear annealing ``curve(start, end, pct, 1)``. Numbers or one-element Tensors.

        Examples
        --------
        >>> from lucid.optim.schedules import linear
        >>> linear.curve(1.0, 0.0, 3, 4), linear.curve(1.0, 0.0, 0.5, 1)
        (0.25, 0.5)
        """
        return start + (end - start) * t / steps


class cosine(Schedule):
    r"""A half cosine from ``peak`` down to ``end`` over ``steps`` steps, then ``end``.

    .. math:: e + (p - e)\,\frac{1 + \cos(\pi \min(t, T) / T)}{2}

    Up to ``steps`` it is :class:`~lucid.optim.lr_scheduler.CosineAnnealingLR` with
    ``T_max=steps`` and ``eta_min=end``, which rises again after.

    Parameters
    ----------
    peak : float
    steps : int
        At least 1.
    end : float, default 0.0

    Examples
    --------
    >>> from lucid.optim.schedules import cosine
    >>> [round(cosine(1.0, 4).value(t), 4) for t in range(6)]
    [1.0, 0.8536, 0.5, 0.1464, 0.0, 0.0]
    """

    kind, fields = "cosine", ("peak", "steps", "end")

    def __init__(self, peak: float, steps: int, end: float = 0.0) -> None:
        self.peak, self.end = number("peak", peak), number("end", end)
        self.steps = count("steps", steps, 1)

    def value(self, step: int) -> float:
        return cosine.curve(self.peak, self.end, min(step, self.steps), self.steps)

    @staticmethod
    def curve(peak: LR, end: LR, t: float, steps: float) -> LR:
        """The half cosine's arithmetic, ``end + (peak - end) * (1 + cos(pi * t / steps)) / 2``, at any ``t``.

        Unclamped: past ``steps`` it rises again, as CosineAnnealingLR. Shared with the
        schedulers, to the bit: CosineAnnealingLR's closed form (``curve(base_lr, eta_min, t,
        T_max)``), CosineAnnealingWarmRestarts (``curve(base_lr, eta_min, T_cur, T_i)``) and
        OneCycleLR's cosine annealing (``curve(start, end, pct, 1)``; torch's ``(start - end) / 2
        * (cos + 1)`` rounds the same, halving being exact outside the subnormal range).
        Numbers or one-element Tensors.

        Examples
        --------
        >>> from lucid.optim.schedules import cosine
        >>> cosine.curve(1.0, 0.0, 2, 4), cosine.curve(1.0, 0.0, 4, 4), cosine.curve(1.0, 0.0, 8, 4)
        (0.5, 0.0, 1.0)
        """
        return end + (peak - end) * (1 + math.cos(math.pi * t / steps)) / 2


class exponential(Schedule):
    r"""``start`` multiplied by ``gamma`` at every step, as ExponentialLR.

    .. math:: s\,\gamma^t

    Parameters
    ----------
    start, gamma : float

    Examples
    --------
    >>> from lucid.optim.schedules import exponential
    >>> [exponential(1.0, 0.5).value(t) for t in range(4)]
    [1.0, 0.5, 0.25, 0.125]
    """

    kind, fields = "exponential", ("start", "gamma")

    def __init__(self, start: float, gamma: float) -> None:
        self.start, self.gamma = number("start", start), number("gamma", gamma)

    def value(self, step: int) -> float:
        return exponential.curve(self.start, self.gamma, step)

    @staticmethod
    def curve(start: LR, gamma: float, times: float) -> LR:
        """``start * gamma ** times``: ``start`` decayed ``times`` times by ``gamma``.

        Shared with the schedulers, to the bit: the closed forms of ExponentialLR
        (``times = t``), StepLR (``t // step_size``) and MultiStepLR (the milestones passed),
        with ``start = base_lr``. Numbers or one-element Tensors.

        Examples
        --------
        >>> from lucid.optim.schedules import exponential
        >>> exponential.curve(1.0, 0.5, 3)
        0.125
        """
        return start * gamma**times


class step(Schedule):
    r"""``start`` multiplied by ``gamma`` every ``step_size`` steps, as StepLR.

    .. math:: s\,\gamma^{\lfloor t / k \rfloor}

    Parameters
    ----------
    start : float
    step_size : int
        At least 1.
    gamma : float, default 0.1

    Examples
    --------
    >>> from lucid.optim.schedules import step
    >>> [step(1.0, 2, 0.5).value(t) for t in range(5)]
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    kind, fields = "step", ("start", "step_size", "gamma")

    def __init__(self, start: float, step_size: int, gamma: float = 0.1) -> None:
        self.start, self.gamma = number("start", start), number("gamma", gamma)
        self.step_size = count("step_size", step_size, 1)

    def value(self, step: int) -> float:
        return exponential.curve(self.start, self.gamma, step // self.step_size)


class warmup(Schedule):
    r"""A straight rise from 0 over ``steps`` steps, then ``then`` started afresh.

    .. math:: \text{then}(0)\,\frac{t}{W} \text{ for } t < W, \qquad \text{then}(t - W) \text{ after}

    Parameters
    ----------
    steps : int
        At least 0 (0: no warmup).
    then : float or schedule
        What follows; a number is a constant schedule.

    Raises
    ------
    TypeError
        If ``then`` is neither a number nor a schedule (a Tensor, a string, ...).

    Examples
    --------
    >>> from lucid.optim.schedules import cosine, warmup
    >>> schedule = warmup(100, cosine(3e-4, 10000))
    >>> schedule.value(0), schedule.value(50), schedule.value(100), schedule.value(10100)
    (0.0, 0.00015, 0.0003, 0.0)
    """

    kind, fields = "warmup", ("steps", "then")

    def __init__(self, steps: int, then: float | Schedule) -> None:
        self.steps = count("steps", steps, 0)
        self.then = as_schedule(then, "then")

    def value(self, step: int) -> float:
        if step < self.steps:
            return self.then.value(0) * step / self.steps
        return self.then.value(step - self.steps)


class join(Schedule):
    """One schedule after another: at each boundary the next one starts afresh at its step 0.

    Parameters
    ----------
    schedules : sequence of float or schedule
    boundaries : sequence of int
        Increasing steps, one fewer than ``schedules``.

    Raises
    ------
    ValueError
        For a wrong number of boundaries, or boundaries that do not increase.

    Examples
    --------
    >>> from lucid.optim.schedules import join, linear
    >>> schedule = join([linear(0.0, 1.0, 2), 1.0, linear(1.0, 0.0, 2)], [2, 4])
    >>> [schedule.value(t) for t in range(7)]
    [0.0, 0.5, 1.0, 1.0, 1.0, 0.5, 0.0]
    """

    kind, fields = "join", ("schedules", "boundaries")

    def __init__(self, schedules: Sequence[float | Schedule], boundaries: Sequence[int]) -> None:
        self.schedules = tuple(as_schedule(s, f"schedules[{i}]") for i, s in enumerate(schedules))
        self.boundaries = tuple(count(f"boundaries[{i}]", b, 0) for i, b in enumerate(boundaries))
        _check_boundaries(len(self.schedules), self.boundaries)

    def value(self, step: int) -> float:
        index = bisect_right(self.boundaries, step)
        start = self.boundaries[index - 1] if index else 0
        return self.schedules[index].value(step - start)


class piecewise(Schedule):
    """Constant pieces: ``values[i]`` from ``boundaries[i - 1]`` up to ``boundaries[i]``.

    Parameters
    ----------
    values : sequence of float
    boundaries : sequence of int
        Increasing steps, one fewer than ``values``.

    Examples
    --------
    >>> from lucid.optim.schedules import piecewise
    >>> [piecewise([0.1, 0.01, 0.001], [2, 3]).value(t) for t in range(5)]
    [0.1, 0.1, 0.01, 0.001, 0.001]
    """

    kind, fields = "piecewise", ("values", "boundaries")

    def __init__(self, values: Sequence[float], boundaries: Sequence[int]) -> None:
        self.values = tuple(number(f"values[{i}]", v) for i, v in enumerate(values))
        self.boundaries = tuple(count(f"boundaries[{i}]", b, 0) for i, b in enumerate(boundaries))
        _check_boundaries(len(self.values), self.boundaries)

    def value(self, step: int) -> float:
        return self.values[bisect_right(self.boundaries, step)]


def _check_boundaries(pieces: int, boundaries: tuple) -> None:
    if pieces < 1:
        raise ValueError("at least one piece is needed")
    if len(boundaries) != pieces - 1:
        raise ValueError(f"{pieces} pieces need {pieces - 1} boundaries, got {len(boundaries)}")
    if any(a >= b for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError(f"boundaries must increase, got {list(boundaries)}")


_KINDS = {cls.kind: cls for cls in (constant, linear, cosine, exponential, step, warmup, join, piecewise)}


def from_dict(data: dict) -> Schedule:
    """The schedule a :meth:`Schedule.to_dict` describes.

    Raises
    ------
    ValueError
        For an unknown ``"schedule"`` name.

    Examples
    --------
    >>> from lucid.optim.schedules import cosine, from_dict, warmup
    >>> schedule = warmup(10, cosine(0.1, 100))
    >>> from_dict(schedule.to_dict()) == schedule
    True
    """
    data = dict(data)
    kind = data.pop("schedule", None)
    if kind not in _KINDS:
        raise ValueError(f"unknown schedule {kind!r}; known: {sorted(_KINDS)}")
    for key in ("then",):
        if isinstance(data.get(key), dict):
            data[key] = from_dict(data[key])
    if kind == "join":
        data["schedules"] = [from_dict(s) if isinstance(s, dict) else s for s in data["schedules"]]
    return _KINDS[kind](**data)


# --- what the optimizer calls ----------------------------------------------------------------
def attach(group: dict) -> dict:
    """Check ``group["lr"]``; a schedule there moves to ``group["lr_schedule"]``.

    The group then counts its updates in ``group["lr_schedule_step"]`` (from 0) and
    ``group["lr"]`` holds the value for the next update. Returns ``group``.

    Raises
    ------
    TypeError
        If ``lr`` is neither a number, a Tensor nor a schedule (a Tensor of several
        elements is then refused by the optimizer, with torch's ValueError).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> optim.SGD([nn.Parameter(lucid.zeros(1))], lr="3e-4")
    Traceback (most recent call last):
    ...
    TypeError: lr must be a number, a one-element Tensor or a schedule, got str '3e-4'
    >>> from lucid.optim.schedules import attach, linear
    >>> attach({"lr": linear(1.0, 0.0, 4)})
    {'lr': 1.0, 'lr_schedule': linear(start=1.0, end=0.0, steps=4), 'lr_schedule_step': 0}
    """
    lr = group.get("lr", required)
    if lr is required:  # not given yet (or an optimizer without an lr)
        return group
    if is_schedule(lr):
        group["lr_schedule"] = lr
        group["lr_schedule_step"] = 0
        group["lr"] = _value(lr, 0)
    elif isinstance(lr, bool) or not isinstance(lr, (numbers.Real, Tensor)):
        # a Tensor is torch's Tensor lr, checked (one element) by the optimizer as torch does
        raise TypeError(f"lr must be a number, a one-element Tensor or a schedule, got {describe(lr)}")
    return group


def _value(schedule, updates: int) -> float:
    lr = schedule.value(updates)
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
        raise TypeError(f"schedule {schedule!r} gave {describe(lr)} at step {updates}, not a number")
    return float(lr)


def before_update(groups) -> None:
    """Set each scheduled group's lr to its schedule's value at the updates made so far.

    Examples
    --------
    >>> from lucid.optim.schedules import attach, before_update, linear
    >>> group = attach({"lr": linear(1.0, 0.0, 4)})
    >>> group["lr"] = 5.0  # a write from outside does not survive the next update
    >>> before_update([group]); group["lr"]
    1.0
    """
    for group in groups:
        if "lr_schedule" in group:
            group["lr"] = _value(group["lr_schedule"], group["lr_schedule_step"])


def after_update(groups) -> None:
    """Count one update in each scheduled group, and show the next update's lr.

    Examples
    --------
    >>> from lucid.optim.schedules import after_update, attach, linear
    >>> group = attach({"lr": linear(1.0, 0.0, 4)})
    >>> after_update([group]); group["lr"], group["lr_schedule_step"]
    (0.75, 1)
    """
    for group in groups:
        if "lr_schedule" in group:
            group["lr_schedule_step"] += 1
            group["lr"] = _value(group["lr_schedule"], group["lr_schedule_step"])


def to_plain(group: dict) -> dict:
    """A saved group's built-in schedule as plain data (other objects are kept).

    Examples
    --------
    >>> from lucid.optim.schedules import cosine, to_plain
    >>> to_plain({"lr": 0.1, "lr_schedule": cosine(0.1, 10)})["lr_schedule"]
    {'schedule': 'cosine', 'peak': 0.1, 'steps': 10, 'end': 0.0}
    """
    if isinstance(group.get("lr_schedule"), Schedule):
        group["lr_schedule"] = group["lr_schedule"].to_dict()
    return group


def from_plain(group: dict, where: str = "a loaded group") -> dict:
    """A loaded group's schedule, rebuilt from plain data, with the count of updates it made.

    Raises
    ------
    ValueError
        Where ``group`` (``where``, for the message) has an ``lr_schedule`` that is no
        schedule, or a count ``lr_schedule_step`` below 0 (TypeError: not an int).

    Examples
    --------
    >>> from lucid.optim.schedules import from_plain
    >>> from_plain({"lr_schedule": {"schedule": "step", "start": 1.0, "step_size": 2, "gamma": 0.5},
    ...             "lr_schedule_step": 3})
    {'lr_schedule': step(start=1.0, step_size=2, gamma=0.5), 'lr_schedule_step': 3}
    """
    if isinstance(group.get("lr_schedule"), dict):
        group["lr_schedule"] = from_dict(group["lr_schedule"])
    if "lr_schedule" in group:
        if not is_schedule(group["lr_schedule"]):
            raise ValueError(f"{where} has an lr_schedule that is no schedule: {group['lr_schedule']!r}")
        count(f"{where}['lr_schedule_step']", group.get("lr_schedule_step"))
    return group
