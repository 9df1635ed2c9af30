"""Wrappers that change *when* and *whether* an optimizer steps, not how it updates.

- :class:`GradientAccumulation` sums the gradients of several microbatches and steps once
  with their average (optax's ``MultiSteps``);
- :class:`SkipNonFinite` skips a step whose gradients hold NaN or inf (optax's
  ``apply_if_finite``; torch has this only inside ``GradScaler``).

Both are wrappers rather than options of :class:`~lucid.optim.Optimizer`: they work with
every optimizer (and with each other) unchanged, keep the optimizers' own behaviour exactly
torch's when they are not used (a NaN gradient propagates), and own their state next to the
wrapped optimizer's in ``state_dict``. Each exposes the wrapped optimizer as ``.optimizer``
and delegates ``param_groups``, ``state``, ``defaults``, ``zero_grad`` and
``add_param_group`` to it. An lr scheduler is built on the wrapped optimizer
(``StepLR(wrapper.optimizer, ...)``), which is what steps.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._autograd import enable_grad, no_grad
from .._tensor import Tensor, eval as lucid_eval
from .._ops.reduction import all as _all
from .._ops.shape import stack as _stack
from ._state_dict import deep_copy

if TYPE_CHECKING:
    from ._state import OptimizerState
    from .optimizer import Optimizer

__all__ = ["GradientAccumulation", "SkipNonFinite"]


def _run_closure(closure):
    if closure is None:
        return None
    with enable_grad():
        return closure()


class _OptimizerWrapper:
    """What the wrappers share: the wrapped optimizer and the attributes delegated to it."""

    _state_key: str = ""

    if TYPE_CHECKING:  # each wrapper's own
        def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None: ...
        def state_dict(self) -> dict: ...
        def load_state_dict(self, state_dict: dict) -> None: ...

    def __init__(self, optimizer: Optimizer | _OptimizerWrapper) -> None:
        for name in ("step", "zero_grad", "state_dict", "load_state_dict"):
            if not callable(getattr(optimizer, name, None)):
                raise TypeError(
                    f"{type(self).__name__} wraps an optimizer (or another wrapper), got {type(optimizer).__name__}"
                )
        if not isinstance(getattr(optimizer, "param_groups", None), list):
            raise TypeError(f"{type(self).__name__} wraps an optimizer with param_groups, got {type(optimizer).__name__}")
        self.optimizer = optimizer

    @property
    def param_groups(self) -> list:
        """The wrapped optimizer's ``param_groups`` (the same list).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.1)
        >>> optim.SkipNonFinite(opt).param_groups is opt.param_groups
        True
        """
        return self.optimizer.param_groups

    @property
    def state(self) -> OptimizerState:
        """The wrapped optimizer's per-parameter ``state``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.Adam([nn.Parameter(lucid.zeros(1))])
        >>> optim.GradientAccumulation(opt, steps=2).state is opt.state
        True
        """
        return self.optimizer.state

    @property
    def defaults(self) -> dict:
        """The wrapped optimizer's ``defaults``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optim.SkipNonFinite(optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.1)).defaults["lr"]
        0.1
        """
        return self.optimizer.defaults

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients (the wrapped optimizer's ``zero_grad``).

        Partial sums of a :class:`GradientAccumulation` are not touched (see its ``reset``).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.zeros(1))
        >>> guard = optim.SkipNonFinite(optim.SGD([w]))
        >>> w.grad = lucid.ones(1)
        >>> guard.zero_grad()
        >>> w.grad is None
        True
        """
        self.optimizer.zero_grad(set_to_none)

    def add_param_group(self, param_group: dict) -> None:
        """Add a parameter group to the wrapped optimizer.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> guard = optim.SkipNonFinite(optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.1))
        >>> guard.add_param_group({"params": [nn.Parameter(lucid.zeros(2))], "lr": 0.01})
        >>> len(guard.param_groups)
        2
        """
        self.optimizer.add_param_group(param_group)

    def _params(self) -> list:
        """Every parameter over all groups, in order: the numbering of ``state_dict``."""
        return [p for group in self.param_groups for p in group["params"]]

    def _split(self, state_dict) -> dict:
        """This wrapper's own part of ``state_dict``, after checking the layout."""
        if not isinstance(state_dict, dict) or set(state_dict) != {"optimizer", self._state_key}:
            raise ValueError(
                f"a {type(self).__name__} state dict must be a dict with exactly the keys "
                f"'optimizer' and {self._state_key!r}"
            )
        own = state_dict[self._state_key]
        if not isinstance(own, dict):
            raise ValueError(f"a state dict's {self._state_key!r} must be a dict, got {type(own).__name__}")
        return own

    def __repr__(self) -> str:
        inner = "\n".join("    " + line for line in repr(self.optimizer).splitlines())
        return f"{type(self).__name__}({self.extra_repr()},\n{inner}\n)"

    def extra_repr(self) -> str:
        """The wrapper's settings, for :func:`repr`.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> accumulate = optim.GradientAccumulation(optim.SGD([nn.Parameter(lucid.zeros(1))]), steps=4)
        >>> accumulate.extra_repr()
        'steps=4, average=True'
        """
        return ""


def _check_int(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


class GradientAccumulation(_OptimizerWrapper):
    """Step the wrapped optimizer once per ``steps`` microbatches, on their averaged gradient.

    Each call of :meth:`step` adds the parameters' current gradients into a partial sum the
    wrapper owns, one buffer per parameter, and clears ``.grad``. The ``steps``-th call sets
    each gradient to the sum divided by ``steps`` (or to the sum), runs the wrapped
    optimizer's ``step`` once, and clears the gradients again. With microbatches of equal
    size and a mean loss, that is the step on the whole batch.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer to step (or another wrapper, e.g. :class:`SkipNonFinite`).
    steps : int
        The number of microbatches per optimizer step, ``>= 1`` (1 steps every call).
    average : bool, default True
        Step on the mean of the microbatch gradients; False steps on their sum.

    Attributes
    ----------
    optimizer
        The wrapped optimizer.
    micro_step : int
        Microbatches accumulated since the last optimizer step, ``0 <= micro_step < steps``.
    stepped : bool
        Whether the last :meth:`step` call updated the parameters (the wrapped optimizer
        stepped, and, if it is a wrapper, it did not skip): the moment for an lr scheduler's
        ``step`` or an EMA update.

    Raises
    ------
    ValueError
        If ``steps`` is not an int >= 1.
    TypeError
        If ``average`` is not a bool, or ``optimizer`` is not an optimizer.

    Notes
    -----
    - The gradients are consumed by each call, so a loop that also calls ``zero_grad`` every
      microbatch (the usual loop) and one that does not give the same result. A parameter
      gets a gradient if it had one in any of the microbatches, as in the big batch.
    - To clip the accumulated gradient (rather than each microbatch's), clip in a step
      pre-hook of the wrapped optimizer: it runs with the averaged gradient in ``.grad``.
    - With a closure, the closure is evaluated once per call (it computes one microbatch)
      and the wrapped optimizer steps without it; LBFGS, which re-evaluates its closure,
      is not meant to be wrapped.
    - The partial sums have the gradients' dtype, the order of summation is the order of
      the microbatches, and :meth:`state_dict` saves them (and ``micro_step``), so training
      resumed mid-accumulation continues exactly.
    - If the wrapped optimizer raises in the last call of an accumulation, the call changes
      nothing: the partial sums, ``micro_step`` and the parameters' ``.grad`` are as they
      were before it (the averaged gradients are new tensors), so calling :meth:`step`
      again retries it.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> model = nn.Linear(3, 1)
    >>> accumulation = optim.GradientAccumulation(optim.SGD(model.parameters(), lr=0.1), steps=2)
    >>> x, y = lucid.randn(4, 3), lucid.randn(4, 1)
    >>> for xb, yb in [(x[:2], y[:2]), (x[2:], y[2:])]:
    ...     accumulation.zero_grad()
    ...     nn.functional.mse_loss(model(xb), yb).backward()
    ...     accumulation.step()
    ...     print(accumulation.stepped, accumulation.micro_step)
    False 1
    True 0
    """

    _state_key = "accumulation"

    def __init__(self, optimizer: Optimizer | _OptimizerWrapper, steps: int, average: bool = True) -> None:
        super().__init__(optimizer)
        self.steps = _check_int(steps, "steps", 1)
        if not isinstance(average, bool):
            raise TypeError(f"average must be a bool, got {type(average).__name__}")
        self.average = average
        self.micro_step = 0
        self.stepped = False
        self._sums: dict[int, Tensor] = {}  # by id(param)

    def extra_repr(self) -> str:
        return f"steps={self.steps}, average={self.average}"

    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """Accumulate this microbatch's gradients; every ``steps``-th call, step on them.

        Parameters
        ----------
        closure : callable, optional
            Computes this microbatch's loss and gradients; run with gradients enabled.

        Returns
        -------
        The closure's loss, or None without a closure.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.zeros(1))
        >>> accumulation = optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=2)
        >>> for g in (1.0, 3.0):
        ...     w.grad = lucid.tensor([g])
        ...     accumulation.step()
        >>> w, w.grad is None  # one step with the mean gradient, 2
        (Parameter containing:
        tensor([-2.], requires_grad=True), True)
        """
        loss = _run_closure(closure)
        params = self._params()
        if self.micro_step + 1 < self.steps:
            with no_grad():
                for param in params:
                    grad = param.grad
                    if grad is None:
                        continue
                    total = self._sums.get(id(param))
                    if total is None:
                        self._sums[id(param)] = grad.detach().clone()
                    else:
                        if total.device != grad.device or total.dtype is not grad.dtype:
                            total = self._sums[id(param)] = total.to(grad.device, grad.dtype)
                        total.add_(grad)
                    param.grad = None
            self.micro_step += 1
            self.stepped = False
            lucid_eval(list(self._sums.values()))  # keep MLX's lazy graph one microbatch deep
            return loss
        # the last microbatch: the step's gradients are new tensors, so that if the wrapped
        # optimizer raises, the partial sums, micro_step and .grad are as before this call
        grads = [param.grad for param in params]
        with no_grad():
            for param, grad in zip(params, grads):
                total = self._sums.get(id(param))
                if grad is not None:
                    if total is None:
                        total = grad.detach().clone()
                    else:
                        if total.device != grad.device or total.dtype is not grad.dtype:
                            total = total.to(grad.device, grad.dtype)
                        total = total + grad
                if total is not None and self.average and self.steps != 1:
                    total = total / self.steps
                param.grad = total
        try:
            self.optimizer.step()
        except BaseException:
            for param, grad in zip(params, grads):
                param.grad = grad
            self.stepped = False
            raise
        self._sums = {}
        self.micro_step = 0
        self.stepped = getattr(self.optimizer, "stepped", True)  # a wrapped SkipNonFinite may skip
        for param in params:
            param.grad = None
        return loss

    def reset(self) -> None:
        """Drop the partial sums and start the next accumulation afresh.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.zeros(1))
        >>> accumulation = optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=4)
        >>> w.grad = lucid.tensor([1.0])
        >>> accumulation.step()
        >>> accumulation.reset()
        >>> accumulation.micro_step
        0
        """
        self._sums = {}
        self.micro_step = 0

    def state_dict(self) -> dict:
        """The wrapped optimizer's state dict and the accumulation's own state, as copies.

        Returns
        -------
        dict
            ``{"optimizer": ..., "accumulation": {"steps", "average", "micro_step",
            "partial_sums"}}``, the partial sums by flat parameter index (as the optimizer
            numbers its state).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.zeros(2))
        >>> accumulation = optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=3)
        >>> w.grad = lucid.tensor([1.0, 2.0])
        >>> accumulation.step()
        >>> accumulation.state_dict()["accumulation"]
        {'steps': 3, 'average': True, 'micro_step': 1, 'partial_sums': {0: tensor([1., 2.])}}
        """
        sums = {}
        for index, param in enumerate(self._params()):
            total = self._sums.get(id(param))
            if total is not None:
                sums[index] = deep_copy(total)
        own = {"steps": self.steps, "average": self.average, "micro_step": self.micro_step, "partial_sums": sums}
        return {"optimizer": self.optimizer.state_dict(), "accumulation": own}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict`: the wrapped optimizer's state and the partial sums.

        Everything is checked before anything changes (this wrapper's part first, then the
        wrapped optimizer's); a dict that does not fit raises ValueError and changes nothing.
        The partial sums are copied to their parameters' device and dtype.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.zeros(2))
        >>> a = optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=3)
        >>> w.grad = lucid.tensor([1.0, 2.0])
        >>> a.step()
        >>> b = optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=3)
        >>> b.load_state_dict(a.state_dict())
        >>> b.micro_step
        1
        """
        own = self._split(state_dict)
        if set(own) != {"steps", "average", "micro_step", "partial_sums"}:
            raise ValueError(
                "an accumulation state must have the keys 'steps', 'average', 'micro_step' and 'partial_sums'"
            )
        steps = _check_int(own["steps"], "the saved steps", 1)
        if not isinstance(own["average"], bool):
            raise ValueError(f"the saved average must be a bool, got {own['average']!r}")
        micro_step = _check_int(own["micro_step"], "the saved micro_step", 0)
        if micro_step >= steps:
            raise ValueError(f"the saved micro_step ({micro_step}) must be below steps ({steps})")
        saved = own["partial_sums"]
        if not isinstance(saved, dict):
            raise ValueError(f"the saved partial_sums must be a dict, got {type(saved).__name__}")
        if saved and micro_step == 0:
            raise ValueError("the saved partial_sums are not empty, but micro_step is 0")
        params = self._params()
        sums = {}
        for index, value in saved.items():
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(params):
                raise ValueError(f"the saved partial_sums have an entry for parameter {index!r}, which no group lists")
            if not isinstance(value, Tensor) and hasattr(value, "shape") and hasattr(value, "dtype"):
                value = Tensor(value)  # a host array, e.g. from a checkpoint file
            param = params[index]
            if not isinstance(value, Tensor):
                raise ValueError(f"the saved partial sum of parameter {index} must be a Tensor, got {type(value).__name__}")
            if value.shape != param.shape:
                raise ValueError(
                    f"the saved partial sum of parameter {index} has shape {value.shape}, expected {param.shape}"
                )
            sums[id(param)] = deep_copy(value.detach().to(param.device, param.dtype))
        self.optimizer.load_state_dict(state_dict["optimizer"])  # checks before changing anything
        self.steps, self.average, self.micro_step, self._sums = steps, own["average"], micro_step, sums
        self.stepped = False


class SkipNonFinite(_OptimizerWrapper):
    """Skip any step whose gradients hold a NaN or an infinity; step normally otherwise.

    A skipped step does not call the wrapped optimizer at all: parameters, optimizer state,
    step counts and hooks are untouched (bit for bit). The gradients are left as they are,
    for the loop's ``zero_grad``. The check is one ``isfinite().all()`` over all gradients
    combined: one read-back from the device per step (per device), however many parameters.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer to step (or another wrapper, e.g. :class:`GradientAccumulation`).
    warn : bool, default True
        Emit a RuntimeWarning for each skipped step.

    Attributes
    ----------
    optimizer
        The wrapped optimizer.
    skipped_steps : int
        How many steps were skipped so far (saved in :meth:`state_dict`).
    last_step_skipped : bool
        Whether the last :meth:`step` was skipped.
    stepped : bool
        Whether the last :meth:`step` updated the parameters: not skipped, and (if the
        wrapped object is a :class:`GradientAccumulation`) its step was the last microbatch.

    Notes
    -----
    Without this wrapper lucid's optimizers behave as torch's: a NaN gradient makes NaN
    parameters. Wrapping :class:`GradientAccumulation` checks each microbatch's gradients
    (a bad microbatch is dropped, as optax's ``MultiSteps`` with ``skip_not_finite``);
    wrapped by it, the check runs once on the accumulated gradient. With a closure, the
    closure is evaluated once and the wrapped optimizer steps without it.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.ones(2))
    >>> guard = optim.SkipNonFinite(optim.SGD([w], lr=0.1), warn=False)
    >>> w.grad = lucid.tensor([1.0, float("nan")])
    >>> guard.step()
    >>> w.detach(), guard.last_step_skipped, guard.skipped_steps
    (tensor([1., 1.]), True, 1)
    >>> w.grad = lucid.tensor([1.0, 1.0])
    >>> guard.step()
    >>> w.detach(), guard.last_step_skipped
    (tensor([0.9000, 0.9000]), False)
    """

    _state_key = "skip_nonfinite"

    def __init__(self, optimizer: Optimizer | _OptimizerWrapper, warn: bool = True) -> None:
        super().__init__(optimizer)
        if not isinstance(warn, bool):
            raise TypeError(f"warn must be a bool, got {type(warn).__name__}")
        self.warn = warn
        self.skipped_steps = 0
        self.last_step_skipped = False
        self.stepped = False

    def extra_repr(self) -> str:
        return f"skipped_steps={self.skipped_steps}"

    def _all_finite(self) -> bool:
        """Whether every gradient is finite: one combined reduction (and read-back) per device."""
        by_device: dict = {}
        for param in self._params():
            if param.grad is not None:
                by_device.setdefault(param.grad.device, []).append(param.grad)
        with no_grad():
            flags = [_all(_stack([_all(g.detach().isfinite()) for g in grads])) for grads in by_device.values()]
        return all(bool(flag) for flag in flags)

    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """Step the wrapped optimizer, unless a gradient is NaN or infinite.

        Parameters
        ----------
        closure : callable, optional
            Recomputes the loss and gradients; evaluated (once) before the check.

        Returns
        -------
        The closure's loss, or None without a closure.

        Warns
        -----
        RuntimeWarning
            For a skipped step, if ``warn``.

        Examples
        --------
        >>> import warnings
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.ones(1))
        >>> guard = optim.SkipNonFinite(optim.SGD([w], lr=0.1))
        >>> w.grad = lucid.tensor([float("inf")])
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     guard.step()
        >>> print(caught[0].message)
        SkipNonFinite skipped a step: a gradient holds NaN or inf (1 skipped so far)
        """
        loss = _run_closure(closure)
        if not self._all_finite():
            self.skipped_steps += 1
            self.last_step_skipped = True
            self.stepped = False
            if self.warn:
                warnings.warn(
                    f"SkipNonFinite skipped a step: a gradient holds NaN or inf ({self.skipped_steps} skipped so far)",
                    RuntimeWarning,
                    stacklevel=2,
                )
            return loss
        self.last_step_skipped = False
        self.optimizer.step()
        self.stepped = getattr(self.optimizer, "stepped", True)
        return loss

    def state_dict(self) -> dict:
        """The wrapped optimizer's state dict and the count of skipped steps.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> guard = optim.SkipNonFinite(optim.SGD([nn.Parameter(lucid.zeros(1))]))
        >>> guard.state_dict()["skip_nonfinite"]
        {'skipped_steps': 0, 'last_step_skipped': False}
        """
        own = {"skipped_steps": self.skipped_steps, "last_step_skipped": self.last_step_skipped}
        return {"optimizer": self.optimizer.state_dict(), "skip_nonfinite": own}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict`, checking everything before changing anything.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> guard = optim.SkipNonFinite(optim.SGD([nn.Parameter(lucid.zeros(1))]))
        >>> saved = guard.state_dict()
        >>> saved["skip_nonfinite"]["skipped_steps"] = 3
        >>> guard.load_state_dict(saved)
        >>> guard.skipped_steps
        3
        """
        own = self._split(state_dict)
        if set(own) != {"skipped_steps", "last_step_skipped"}:
            raise ValueError("a skip_nonfinite state must have the keys 'skipped_steps' and 'last_step_skipped'")
        skipped = _check_int(own["skipped_steps"], "the saved skipped_steps", 0)
        if not isinstance(own["last_step_skipped"], bool):
            raise ValueError(f"the saved last_step_skipped must be a bool, got {own['last_step_skipped']!r}")
        self.optimizer.load_state_dict(state_dict["optimizer"])
        self.skipped_steps, self.last_step_skipped = skipped, own["last_step_skipped"]
