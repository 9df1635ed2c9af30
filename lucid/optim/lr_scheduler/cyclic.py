"""Per-batch cycles of lr and momentum: CyclicLR and OneCycleLR."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import _checks
from ..schedules import cosine, linear
from .base import LRScheduler, _check_optimizer, _format_param, _lambdas_state, _update_param_group_val

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..optimizer import Optimizer


def _set_momentum(group: dict, momentum, use_beta1: bool) -> None:
    # beta1 where the optimizer has betas (torch's test), or where this group has betas and no
    # momentum: MuonWithAdamW's AdamW groups, next to its Muon groups' momentum
    if use_beta1 or ("betas" in group and "momentum" not in group):
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _check_momentum_cycle(optimizer, cycle_momentum, base_momentum, max_momentum) -> None:
    """Shared by CyclicLR and OneCycleLR, before either writes into the groups."""
    if not cycle_momentum:
        return
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    _checks.finite("base_momentum", base_momentum)
    _checks.finite("max_momentum", max_momentum)
    _format_param("base_momentum", optimizer, base_momentum)
    _format_param("max_momentum", optimizer, max_momentum)


def _init_momentum_cycle(scheduler, optimizer, base_momentum, max_momentum, last_epoch, keep: bool):
    """Shared by CyclicLR and OneCycleLR: momentum (or beta1) starts at ``max_momentum``."""
    scheduler.use_beta1 = "betas" in optimizer.defaults
    base_momentums = _format_param("base_momentum", optimizer, base_momentum)
    max_momentums = _format_param("max_momentum", optimizer, max_momentum)
    if keep:  # CyclicLR keeps them as attributes, OneCycleLR only in the groups
        scheduler.base_momentums, scheduler.max_momentums = base_momentums, max_momentums
    if last_epoch == -1:
        for high, low, group in zip(max_momentums, base_momentums, optimizer.param_groups):
            _set_momentum(group, high, scheduler.use_beta1)
            group["max_momentum"] = high
            group["base_momentum"] = low


class CyclicLR(LRScheduler):
    r"""Cycle each group's lr between ``base_lr`` and ``max_lr`` (and momentum the other way).

    A cycle rises for ``step_size_up`` steps and falls for ``step_size_down``; the amplitude
    ``max_lr - base_lr`` is scaled by ``scale_fn`` of the cycle number (``"triangular"``: 1,
    ``"triangular2"``: halved each cycle) or of the step (``"exp_range"``: ``gamma**step``).
    With ``cycle_momentum``, ``momentum`` (or ``betas[0]``, for optimizers with ``betas`` and
    the AdamW groups of a :class:`~lucid.optim.MuonWithAdamW`) cycles between ``max_momentum`` and ``base_momentum``. Step it after every batch.

    With :math:`T = T_{\text{up}} + T_{\text{down}}`, :math:`r = T_{\text{up}} / T` and
    batch index :math:`t`:

    .. math::

        \begin{aligned}
        c &= \lfloor 1 + t / T \rfloor, \qquad x = 1 + t / T - c \\
        h &= \begin{cases} x / r & x \le r \\ (x - 1) / (r - 1) & x > r \end{cases} \\
        \eta_t &= \eta_{\text{base}} + (\eta_{\max} - \eta_{\text{base}})\, h\, s, \qquad
        \mu_t = \mu_{\max} - (\mu_{\max} - \mu_{\text{base}})\, h\, s
        \end{aligned}

    with :math:`s = 1` ("triangular"), :math:`s = 2^{1 - c}` ("triangular2"),
    :math:`s = \gamma^{t}` ("exp_range"), or ``scale_fn`` of :math:`c` or :math:`t`.

    Parameters
    ----------
    optimizer : Optimizer
    base_lr, max_lr : float or list of float
        The lower and upper lr of the cycle, for every group or one per group. At
        construction (``last_epoch=-1``) each group's lr is set to ``base_lr``.
    step_size_up : int, default 2000
    step_size_down : int, optional
        Defaults to ``step_size_up``.
    mode : {"triangular", "triangular2", "exp_range"}, default "triangular"
        Ignored when ``scale_fn`` is given.
    gamma : float, default 1.0
        For ``"exp_range"``.
    scale_fn : callable, optional
        A custom ``scale_fn(x)`` in [0, 1].
    scale_mode : {"cycle", "iterations"}, default "cycle"
        What ``scale_fn`` takes (only used with a custom ``scale_fn``).
    cycle_momentum : bool, default True
    base_momentum, max_momentum : float or list of float, default 0.8 and 0.9
    last_epoch : int, default -1
        The index of the last *batch*.

    Raises
    ------
    ValueError
        For an unknown mode without ``scale_fn``, lists of the wrong length, or
        ``cycle_momentum`` on an optimizer with neither ``momentum`` nor ``betas``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import CyclicLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
    >>> scheduler = CyclicLR(optimizer, base_lr=0.1, max_lr=1.0, step_size_up=2)
    >>> lrs, momenta = [], []
    >>> for _ in range(5):
    ...     lrs.append(round(scheduler.get_last_lr()[0], 4))
    ...     momenta.append(round(optimizer.param_groups[0]["momentum"], 4))
    ...     optimizer.step(); scheduler.step()
    >>> lrs, momenta
    ([0.1, 0.55, 1.0, 0.55, 0.1], [0.9, 0.85, 0.8, 0.85, 0.9])
    """

    # set by _check_momentum_cycle
    use_beta1: bool
    base_momentums: list[float]
    max_momentums: list[float]

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float], max_lr: float | list[float],
                 step_size_up: float = 2000, step_size_down: float | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: float | list[float] = 0.8,
                 max_momentum: float | list[float] = 0.9, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        # every check first: nothing is written into the groups before all have passed
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"scale_fn must be callable or None, got {type(scale_fn).__name__}")
        self._check_modes(mode, scale_fn, scale_mode)
        _checks.at_least("base_lr", base_lr)
        _checks.at_least("max_lr", max_lr)
        _checks.at_least("step_size_up", step_size_up, 0, strict=True)
        if step_size_down is not None:
            _checks.at_least("step_size_down", step_size_down)
        _checks.finite("gamma", gamma)
        _check_momentum_cycle(optimizer, cycle_momentum, base_momentum, max_momentum)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        self.optimizer = optimizer
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _update_param_group_val(group, "lr", lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _init_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch, keep=True)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    @staticmethod
    def _check_modes(mode, scale_fn, scale_mode) -> None:
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}")

    def _check_hyperparameters(self, values: dict) -> None:
        # the constructor checks its arguments; a loaded state, what they became
        self._check_modes(values["mode"], self._scale_fn_custom, values["scale_mode"])
        _checks.at_least("total_size", values["total_size"], 0, strict=True)
        _checks.at_least("step_ratio", values["step_ratio"], 0, strict=True)
        if values["step_ratio"] > 1:
            raise ValueError(f"step_ratio must be at most 1, got {values['step_ratio']!r}")
        _checks.at_least("max_lrs", values["max_lrs"])
        _checks.finite("gamma", values["gamma"])

    def _init_scale_fn(self) -> None:
        """The built-in modes fix what ``scale_fn`` takes: the cycle, or the step for exp_range."""
        if self._scale_fn_custom is None:
            self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at ``x`` (a cycle number or a step, see ``scale_mode``).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import CyclicLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
        >>> CyclicLR(optimizer, 0.1, 1.0, mode="triangular2").scale_fn(3)
        0.25
        """
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [low + (high - low) * scale_factor * scale for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, high - (high - low) * scale_factor * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict:
        """The state; a custom ``scale_fn`` is saved by its ``__dict__`` if it is a callable object.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import CyclicLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
        >>> CyclicLR(optimizer, 0.1, 1.0, scale_fn=lambda x: 1.0).state_dict()["_scale_fn_custom"] is None
        True
        """
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = _lambdas_state([fn])[0] if fn is not None else None
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict`.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import CyclicLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
        >>> scheduler = CyclicLR(optimizer, 0.1, 1.0)
        >>> scheduler.load_state_dict(scheduler.state_dict())
        """
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom")
        super().load_state_dict(state)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class OneCycleLR(LRScheduler):
    r"""The 1cycle policy: warm the lr up to ``max_lr``, then anneal it far below the start.

    Phases (two by default, three with ``three_phase``) go from ``initial_lr =
    max_lr / div_factor`` up to ``max_lr`` over ``pct_start`` of ``total_steps``, then down
    to ``min_lr = initial_lr / final_div_factor`` (through ``initial_lr`` first with three
    phases), by cosine or linear annealing; momentum (or ``betas[0]``) moves the other way
    between ``max_momentum`` and ``base_momentum``. Not chainable; step it after every
    batch, ``total_steps`` times at most.

    With :math:`N` = ``total_steps``, :math:`p` = ``pct_start``,
    :math:`\eta_{\text{init}} = \eta_{\max} / \mathrm{div\_factor}` and
    :math:`\eta_{\min} = \eta_{\text{init}} / \mathrm{final\_div\_factor}`, the phases end at
    :math:`e_1 = pN - 1` and :math:`e_2 = N - 1` (three phases: :math:`e_1 = pN - 1`,
    :math:`e_2 = 2pN - 2`, :math:`e_3 = N - 1`); at batch :math:`t` in phase :math:`i`
    (from :math:`e_{i-1}`, :math:`e_0 = 0`, and lr :math:`a_i` to :math:`b_i`),

    .. math::

        \begin{aligned}
        q &= \frac{t - e_{i-1}}{e_i - e_{i-1}} \\
        \eta_t &= b_i + \tfrac12 (a_i - b_i)\,(1 + \cos \pi q)
            \quad\text{("cos")}, \qquad
            \eta_t = a_i + (b_i - a_i)\, q \quad\text{("linear")}
        \end{aligned}

    with :math:`(a_i, b_i)` = :math:`(\eta_{\text{init}}, \eta_{\max})`,
    :math:`(\eta_{\max}, \eta_{\min})`; with three phases
    :math:`(\eta_{\text{init}}, \eta_{\max})`, :math:`(\eta_{\max}, \eta_{\text{init}})`,
    :math:`(\eta_{\text{init}}, \eta_{\min})`. The momentum anneals the same way between
    ``max_momentum`` and ``base_momentum``, opposite to the lr (constant in a third phase).

    Parameters
    ----------
    optimizer : Optimizer
    max_lr : float or list of float
    total_steps : int, optional
        Or give both ``epochs`` and ``steps_per_epoch``.
    epochs, steps_per_epoch : int, optional
    pct_start : float, default 0.3
        A float in [0, 1].
    anneal_strategy : {"cos", "linear"}, default "cos"
    cycle_momentum : bool, default True
    base_momentum, max_momentum : float or list of float, default 0.85 and 0.95
    div_factor : float, default 25.0
    final_div_factor : float, default 1e4
    three_phase : bool, default False
    last_epoch : int, default -1
        The index of the last *batch*.

    Raises
    ------
    ValueError
        For bad step counts, ``pct_start`` or ``anneal_strategy``, ``cycle_momentum`` on an
        optimizer with neither ``momentum`` nor ``betas``, and when stepped more than
        ``total_steps`` times.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.lr_scheduler import OneCycleLR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
    >>> scheduler = OneCycleLR(optimizer, max_lr=1.0, total_steps=8)
    >>> lrs = [scheduler.get_last_lr()[0]]
    >>> for _ in range(7):
    ...     optimizer.step(); scheduler.step()
    ...     lrs.append(scheduler.get_last_lr()[0])
    >>> [round(lr, 4) for lr in lrs]
    [0.04, 0.8193, 0.9719, 0.8117, 0.556, 0.2831, 0.0766, 0.0]
    """

    # set by _check_momentum_cycle
    use_beta1: bool
    base_momentums: list[float]
    max_momentums: list[float]

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True, base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            self.total_steps = self._checked_total_steps(total_steps)
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = _checks.count("epochs * steps_per_epoch", epochs * steps_per_epoch, 1)
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        self._schedule_phases = self._phases(pct_start, three_phase)
        self._anneal_func_type = self._checked_anneal_strategy(anneal_strategy)
        _checks.at_least("max_lr", max_lr)
        _checks.at_least("div_factor", div_factor, 0, strict=True)
        _checks.at_least("final_div_factor", final_div_factor, 0, strict=True)
        _check_momentum_cycle(optimizer, cycle_momentum, base_momentum, max_momentum)
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for high, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = high / div_factor
                group["max_lr"] = high
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _init_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch, keep=False)
        super().__init__(optimizer, last_epoch)

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict`, also one of an older torch with its ``anneal_func``.

        Notes
        -----
        An older torch saved the annealing function itself (``anneal_func``); torch 2.13 keeps
        it as an attribute and anneals by the strategy it was built with. lucid reads the
        saved strategy from the function's name where the dict has no ``_anneal_func_type``
        (a saved state restores every other setting too), and keeps no function.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.lr_scheduler import OneCycleLR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
        >>> scheduler = OneCycleLR(optimizer, max_lr=1.0, total_steps=8)
        >>> older = {k: v for k, v in scheduler.state_dict().items() if k != "_anneal_func_type"}
        >>> older["anneal_func"] = OneCycleLR._annealing_linear
        >>> scheduler.load_state_dict(older)
        >>> scheduler._anneal_func_type
        'linear'
        """
        super().load_state_dict(self._from_older(state_dict))

    def _check_state_dict(self, state_dict) -> None:
        super()._check_state_dict(self._from_older(state_dict))

    @staticmethod
    def _from_older(state_dict):
        """``state_dict`` without an older torch's ``anneal_func``, its strategy read from it
        where the dict has no ``_anneal_func_type``."""
        if not isinstance(state_dict, dict) or "anneal_func" not in state_dict:
            return state_dict
        state = {k: v for k, v in state_dict.items() if k != "anneal_func"}
        if "_anneal_func_type" not in state:
            func = state_dict["anneal_func"]
            kind = {"_annealing_cos": "cos", "_annealing_linear": "linear"}.get(getattr(func, "__name__", None))
            if kind is None:
                raise ValueError(f"OneCycleLR.load_state_dict: anneal_func must be torch's _annealing_cos or "
                                 f"_annealing_linear, got {func!r}")
            state["_anneal_func_type"] = kind
        return state

    @staticmethod
    def _checked_total_steps(total_steps) -> int:
        if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return _checks.count("total_steps", total_steps, 1)  # beyond int64: refused by name

    @staticmethod
    def _checked_anneal_strategy(strategy) -> str:
        if strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {strategy}")
        return strategy

    def _check_hyperparameters(self, values: dict) -> None:
        # the constructor checks its arguments; a loaded state, what they became
        self._checked_total_steps(values["total_steps"])
        self._checked_anneal_strategy(values["_anneal_func_type"])
        phases = values["_schedule_phases"]
        if not isinstance(phases, list) or not all(isinstance(p, dict) and p.keys() == self._schedule_phases[0].keys()
                                                   for p in phases) or not phases:
            raise ValueError(f"_schedule_phases must be a list of phases as OneCycleLR makes them, got {phases!r}")
        _checks.finite("_schedule_phases' end_step", [p["end_step"] for p in phases])

    def _phases(self, pct_start: float, three_phase: bool) -> list:
        """Each phase: its last step and the group keys it goes from and to."""
        def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
            return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
                    "start_momentum": start_momentum, "end_momentum": end_momentum}

        rise = phase(float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr", "max_momentum",
                     "base_momentum")
        if three_phase:
            return [
                rise,
                phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                      "max_momentum"),
                phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        return [rise, phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    # torch's (start - end) / 2.0 * (cos(pi * pct) + 1) and (end - start) * pct + start: the
    # schedule values' curves over [0, 1], to the bit (see cosine.curve and linear.curve)
    @staticmethod
    def _annealing_cos(start, end, pct):
        return cosine.curve(start, end, pct, 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        return linear.curve(start, end, pct, 1)

    def get_lr(self) -> list:
        self._warn_get_lr_called_within_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]], group[phase["end_momentum"]],
                                                     pct)
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = phase["end_step"]
        return lrs
