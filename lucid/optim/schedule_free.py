"""Schedule-Free SGD, AdamW and RAdam (Defazio et al., 2024), as ``schedulefree`` 1.4.1 computes them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import _factory
from . import _checks
from ._schedule_free import ScheduleFreeModes, advance_average, averaging_weight, places_of, split_weights
from .elementwise import elementwise, lerp, sqrt
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def _per_group(state: dict) -> None:
    """The scalars depend on the group alone (its counters), not on a parameter's state."""
    return None


def averaging_scalars(group: dict, beta1: float) -> dict:
    """The step's scalars of the interpolation and the averaging, from the group's counters
    (already counted): :math:`c_{k+1}`, the step of ``y`` and the step of ``z``."""
    lr, step = group["scheduled_lr"], group["k"]
    ckp1 = averaging_weight((step ** group["r"]) * (group["lr_max"] ** group["weight_lr_power"]), group["weight_sum"])
    return {"ckp1": ckp1, "y_step": lr * (beta1 * (1 - ckp1) - 1), "neg_lr": -lr}


def sgd_scalars(group: dict, param: Tensor, state: dict) -> dict:
    return averaging_scalars(group, group["momentum"])


def adam_scalars(group: dict, param: Tensor, state: dict) -> dict:
    beta1, beta2 = group["betas"]
    return {"beta2": beta2, "one_minus_beta2": 1 - beta2, "bias_correction2": 1 - beta2 ** group["k"],
            "eps": group["eps"], "weight_decay": group["weight_decay"], **averaging_scalars(group, beta1)}


# weight decay is L2, added to the gradient at y
@elementwise(state=("z",), decay="l2", scalars=sgd_scalars, depends_on=_per_group)
def sgd_schedule_free(param, grad, z, ckp1, y_step, neg_lr):
    y = lerp(param, z, ckp1)            # y <- x: the average takes in z with weight c
    return y + grad * y_step, z + grad * neg_lr


@elementwise(state=("z", "exp_avg_sq"), scalars=adam_scalars, depends_on=_per_group)
def adamw_schedule_free(param, grad, z, exp_avg_sq, beta2, one_minus_beta2, bias_correction2, eps, weight_decay,
                        ckp1, y_step, neg_lr):
    exp_avg_sq = exp_avg_sq * beta2 + one_minus_beta2 * grad * grad
    grad = grad / (sqrt(exp_avg_sq / bias_correction2) + eps) + param * weight_decay  # decay at y
    y = lerp(param, z, ckp1)
    return y + grad * y_step, z + grad * neg_lr, exp_avg_sq


# RAdam's first steps, while the variance is not tractable (rho_t <= 4): the gradient unscaled
@elementwise(state=("z", "exp_avg_sq"), scalars=adam_scalars, depends_on=_per_group)
def radam_schedule_free_sgd(param, grad, z, exp_avg_sq, beta2, one_minus_beta2, bias_correction2, eps,
                            weight_decay, ckp1, y_step, neg_lr):
    exp_avg_sq = exp_avg_sq * beta2 + one_minus_beta2 * grad * grad
    grad = grad + param * weight_decay
    y = lerp(param, z, ckp1)
    return y + grad * y_step, z + grad * neg_lr, exp_avg_sq


def _warmed_up(group: dict, step: int) -> float:
    """The linear warmup's factor of step ``step`` (1-based): ``step / warmup_steps``, then 1."""
    warmup_steps = group["warmup_steps"]
    return step / warmup_steps if step - 1 < warmup_steps else 1.0


def radam_rho(beta2: float, step: int) -> tuple[float, float]:
    """``(rho_t, rho_inf)``: the length of RAdam's approximated moving average at ``step``, and its limit."""
    beta2_t = beta2 ** step
    rho_inf = 2 / (1 - beta2) - 1
    return rho_inf - 2 * step * beta2_t / (1 - beta2_t), rho_inf


class _ScheduleFree(ScheduleFreeModes, Optimizer):
    """A Schedule-Free optimizer: the modes (``_schedule_free.py``), the group counters of the
    running average, and an elementwise rule per group."""

    def __init__(self, params: ParamsT, defaults: dict) -> None:
        defaults = {**defaults, "k": 0, "train_mode": True, "weight_sum": 0.0, "lr_max": -1.0, "scheduled_lr": 0.0}
        super().__init__(params, defaults)

    def _compose(self) -> None:
        super()._compose()
        self._following = None

    def scheduled_lr(self, group: dict, step: int) -> float:
        """The learning rate of ``step`` (1-based): the group's, warmed up (the reference's
        ``warmup_steps``: ``lr * step / warmup_steps`` up to ``warmup_steps``).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.AdamWScheduleFree([nn.Parameter(lucid.zeros(1))], lr=0.1, warmup_steps=4)
        >>> [optimizer.scheduled_lr(optimizer.param_groups[0], step) for step in (1, 2, 4, 5)]
        [0.025, 0.05, 0.1, 0.1]
        """
        return float(scalar(group["lr"])) * _warmed_up(group, step)

    def base_sequence(self, param: Tensor) -> Tensor | None:
        state = self.state.for_param(param)
        return state.get("z") if state else None

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        _checks.non_negative("weight_decay", group["weight_decay"])
        _checks.finite("r", group["r"])
        _checks.finite("weight_lr_power", group["weight_lr_power"])
        if "warmup_steps" in group:
            _checks.count("warmup_steps", group["warmup_steps"])
        _checks.count("k", group["k"])

    # --- the step ------------------------------------------------------------------------------
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """One step, in training mode only (see :meth:`train`); as :meth:`Optimizer.step`.

        Raises
        ------
        RuntimeError
            In evaluation mode, before anything runs (hooks, closure, schedules).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.SGDScheduleFree([w], lr=0.5)
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> w.detach(), optimizer.state[0]["z"], optimizer.param_groups[0]["k"]
        (tensor([0.5000]), tensor([0.5000]), 1)
        """
        self.check_training()
        return super().step(closure)

    def run_step(self, closure: Callable[[], Tensor] | None) -> Tensor | None:
        # every group counts the step into its average, as the reference's; a step that raises takes it back
        kept = [{key: group[key] for key in ("k", "lr_max", "weight_sum", "scheduled_lr")} for group in self.param_groups]
        for group in self.param_groups:
            lr = group["scheduled_lr"] = self.scheduled_lr(group, group["k"] + 1)
            advance_average(group, lr, group["r"], group["weight_lr_power"])
        try:
            return super().run_step(closure)
        except BaseException:
            for group, counters in zip(self.param_groups, kept):
                group.update(counters)
            raise

    def add_param_group(self, param_group: dict) -> None:
        """Add a group (as :meth:`Optimizer.add_param_group`), in the optimizer's current mode.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.SGDScheduleFree([nn.Parameter(lucid.zeros(1))])
        >>> optimizer.eval()
        >>> optimizer.add_param_group({"params": [nn.Parameter(lucid.zeros(2))]})
        >>> [group["train_mode"] for group in optimizer.param_groups]
        [False, False]
        """
        if self.param_groups and isinstance(param_group, dict) and "train_mode" not in param_group:
            param_group = {**param_group, "train_mode": self.training}
        super().add_param_group(param_group)

    # --- checkpoints ------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """As :meth:`Optimizer.state_dict`, with the mode in each group's ``"train_mode"`` and,
        for each parameter that has stepped, its evaluation weights ``"x"`` (and, in training
        mode, the training weights ``"y"`` it holds), so that a checkpoint of either mode loads
        back to the same weights and evaluates at the same ``x``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.SGDScheduleFree([w], lr=0.5)
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> optimizer.state_dict()["state"]
        {0: {'z': tensor([0.5000]), 'x': tensor([0.5000]), 'y': tensor([0.5000])}}
        """
        saved = super().state_dict()
        index = {id(p): i for i, p in enumerate(self.param_groups.flat())}
        self._record_weights(saved, lambda param: saved["state"][index[id(param)]])
        return saved

    def load_state_dict(self, state_dict: dict) -> None:
        """As :meth:`Optimizer.load_state_dict`, then the saved weights written back into the
        parameters for the loaded mode (``y`` in training mode, ``x`` in evaluation mode), and
        the mode of the module the optimizer follows taken (see :meth:`follow`). Everything is
        checked before anything changes.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.SGDScheduleFree([w], lr=0.5)
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> optimizer.eval()
        >>> saved = optimizer.state_dict()
        >>> other = nn.Parameter(lucid.tensor([7.0]))
        >>> restored = optim.SGDScheduleFree([other], lr=0.5)
        >>> restored.load_state_dict(saved)      # the mode and the weights x come back
        >>> other.detach(), restored.training
        (tensor([0.5000]), False)
        """
        stripped, entries = split_weights(state_dict)
        weights = self._saved_weights(entries, places_of(list(self.param_groups), state_dict)) if entries else []
        super().load_state_dict(stripped)
        self._write_weights(weights)


_COMMON_NOTES = r"""    The parameters hold :math:`y` in training mode and :math:`x` in evaluation mode. Unlike the
    reference (which starts in evaluation mode and raises a bare ``Exception``), the optimizer
    starts in training mode, and ``step()`` in evaluation mode raises a RuntimeError that says to
    call :meth:`train`, before anything changes. :meth:`follow` ties the mode to a module's
    ``train()``/``eval()``. ``state_dict()`` records the mode (each group's ``"train_mode"``) and
    each parameter's evaluation weights ``"x"`` (and in training mode its training weights
    ``"y"``); ``load_state_dict`` writes them back, so a checkpoint of either mode resumes and
    evaluates to the same bits. A group added with ``add_param_group`` takes the current mode
    (the reference's starts in evaluation mode). The reference overwrites ``p.grad`` with the
    normalised gradient; lucid leaves gradients alone. The learning rate is read as a number (a
    Tensor lr as its value). The counters ``k``, ``lr_max``, ``weight_sum`` and ``scheduled_lr``
    live in the groups, as in the reference, and count every step of every group. See
    :doc:`/guide/schedule_free` for the mode rules and BatchNorm's recalibration."""


def _with_common_notes(cls: type) -> type:
    """``cls`` with the Notes every Schedule-Free optimizer shares in its docstring."""
    cls.__doc__ = (cls.__doc__ or "").replace("    __COMMON_NOTES__\n", _COMMON_NOTES.lstrip("\n") + "\n")
    return cls


@_with_common_notes
class SGDScheduleFree(_ScheduleFree):
    r"""Schedule-Free SGD (Defazio et al., 2024), computed as ``schedulefree.SGDScheduleFree`` 1.4.1.

    Momentum is replaced by an interpolation and an average: gradients are taken at
    :math:`y`, a point between the SGD sequence :math:`z` and its running average :math:`x`,
    which is what to evaluate. No schedule is needed; ``warmup_steps`` warms up linearly.

    .. math::
        \begin{aligned}
        \gamma_t &\leftarrow \gamma \min(1, t / T_{\text{warmup}}), \quad
            w_t \leftarrow t^r \bigl(\max_{s \le t} \gamma_s\bigr)^{p}, \quad
            c_t \leftarrow w_t / \textstyle\sum_{s \le t} w_s \\
        g_t &\leftarrow \nabla f(y_{t-1}) + \lambda y_{t-1} \\
        y_t &\leftarrow (1 - c_t) y_{t-1} + c_t z_{t-1}
            + \gamma_t \bigl(\beta (1 - c_t) - 1\bigr) g_t \\
        z_t &\leftarrow z_{t-1} - \gamma_t g_t \\
        x_t &= \bigl(y_t - (1 - \beta) z_t\bigr) / \beta
            \quad\text{(the parameters after eval())}
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Schedule, default 1.0
        Learning rate :math:`\gamma` (10x-50x a usual SGD rate, says the reference).
    momentum : float, default 0.9
        Interpolation :math:`\beta`, between 0 and 1 exclusive.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`, taken at :math:`y`.
    warmup_steps : int, default 0
        Steps of linear warmup of the learning rate.
    r : float, default 0.0
        Power of the polynomial weighting :math:`t^r` in the average.
    weight_lr_power : float, default 2.0
        Power :math:`p` of the largest learning rate so far in the average's weights.
    foreach : bool, optional
        Accepted for the reference's signature; lucid runs one implementation.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "momentum", "weight_decay", "warmup_steps", "r",
        "weight_lr_power", "foreach", and the reference's counters "k", "train_mode",
        "weight_sum", "lr_max" and "scheduled_lr".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "z", the SGD sequence (a tensor shaped like the parameter).

    Notes
    -----
    The arithmetic is the reference's, in its order, so float64 trajectories agree with it to
    float64 rounding over thousands of steps (1e-12 relative, tested over 1,000).
    __COMMON_NOTES__

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> model = nn.Linear(2, 1)
    >>> optimizer = optim.SGDScheduleFree(model.parameters(), lr=0.1)
    >>> optimizer.follow(model)        # model.train() / model.eval() switch the optimizer too
    >>> x, target = lucid.randn(8, 2), lucid.randn(8, 1)
    >>> for _ in range(3):
    ...     optimizer.zero_grad()
    ...     nn.functional.mse_loss(model(x), target).backward()
    ...     optimizer.step()
    >>> _ = model.eval()               # the parameters are the average x now
    >>> optimizer.training
    False
    >>> optimizer.step()
    Traceback (most recent call last):
        ...
    RuntimeError: SGDScheduleFree.step() was called in evaluation mode, where the parameters hold the evaluation weights x: call optimizer.train() before training (and optimizer.eval() before evaluating or saving), or let the optimizer follow the model's mode with optimizer.follow(model)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1.0, momentum: float = 0.9,
                 weight_decay: float = 0, warmup_steps: int = 0, r: float = 0.0, weight_lr_power: float = 2,
                 foreach: bool | None = None) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay, warmup_steps=warmup_steps,
                                      r=r, weight_lr_power=weight_lr_power, foreach=foreach))

    def check(self, group: dict) -> None:
        super().check(group)
        _checks.finite("momentum", group["momentum"])
        if group["momentum"] <= 0 or group["momentum"] >= 1:
            raise ValueError(f"Momentum must be between 0 and 1 exclusive: {group['momentum']}")

    def beta(self, group: dict) -> float:
        return group["momentum"]

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"z": param.detach().clone()}

    def elementwise_rule(self, group: dict) -> Rule | None:
        return sgd_schedule_free


class _AdamScheduleFree(_ScheduleFree):
    """What AdamW's and RAdam's Schedule-Free forms share: betas, eps and the second moment."""

    def check(self, group: dict) -> None:
        super().check(group)
        _checks.epsilon(group["eps"])
        _checks.betas(group["betas"])
        if group["betas"][0] == 0:  # eval() divides by it
            raise ValueError(f"Invalid beta parameter at index 0: {group['betas'][0]} (must be greater than 0)")

    def beta(self, group: dict) -> float:
        return group["betas"][0]

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"z": param.detach().clone(), "exp_avg_sq": _factory.zeros_like(param)}


@_with_common_notes
class AdamWScheduleFree(_AdamScheduleFree):
    r"""Schedule-Free AdamW (Defazio et al., 2024), computed as ``schedulefree.AdamWScheduleFree`` 1.4.1.

    Schedule-Free's interpolation and average (see :class:`SGDScheduleFree`) around Adam's
    normalised gradient, with decoupled weight decay taken at :math:`y`. It won the
    self-tuning track of the AlgoPerf benchmark.

    .. math::
        \begin{aligned}
        \gamma_t &\leftarrow \gamma \min(1, t / T_{\text{warmup}}), \quad
            w_t \leftarrow t^r \bigl(\max_{s \le t} \gamma_s\bigr)^{p}, \quad
            c_t \leftarrow w_t / \textstyle\sum_{s \le t} w_s \\
        g_t &\leftarrow \nabla f(y_{t-1}) \\
        v_t &\leftarrow \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        u_t &\leftarrow g_t \big/ \bigl(\sqrt{v_t / (1 - \beta_2^t)} + \epsilon\bigr) + \lambda y_{t-1} \\
        y_t &\leftarrow (1 - c_t) y_{t-1} + c_t z_{t-1}
            + \gamma_t \bigl(\beta_1 (1 - c_t) - 1\bigr) u_t \\
        z_t &\leftarrow z_{t-1} - \gamma_t u_t \\
        x_t &= \bigl(y_t - (1 - \beta_1) z_t\bigr) / \beta_1
            \quad\text{(the parameters after eval())}
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Schedule, default 0.0025
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        :math:`\beta_1`, the interpolation (in (0, 1)), and :math:`\beta_2`, the second moment's decay.
    eps : float, default 1e-8
        Term :math:`\epsilon` added to the denominator.
    weight_decay : float, default 0
        Weight decay :math:`\lambda`, taken at :math:`y`.
    warmup_steps : int, default 0
        Steps of linear warmup of the learning rate.
    r : float, default 0.0
        Power of the polynomial weighting :math:`t^r` in the average.
    weight_lr_power : float, default 2.0
        Power :math:`p` of the largest learning rate so far in the average's weights.
    foreach : bool, optional
        Accepted for the reference's signature; lucid runs one implementation.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "eps", "weight_decay", "warmup_steps", "r",
        "weight_lr_power", "foreach", and the reference's counters "k", "train_mode",
        "weight_sum", "lr_max" and "scheduled_lr".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "z" (the base sequence) and "exp_avg_sq" (:math:`v`),
        tensors shaped like the parameter.

    Notes
    -----
    The arithmetic is the reference's, in its order, so float64 trajectories agree with it to
    float64 rounding over thousands of steps (1e-12 relative, tested over 1,000). The update
    is one elementwise rule, fused (numba on "cpu", ``mx.compile`` on "gpu"); the step's
    scalars (the warmup, :math:`c_t`, the bias correction) are computed once per group.
    __COMMON_NOTES__

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.AdamWScheduleFree([w], lr=0.1)
    >>> for _ in range(2):
    ...     optimizer.zero_grad()
    ...     (w * w).sum().backward()
    ...     optimizer.step()
    >>> optimizer.eval()        # evaluate (and save) at x
    >>> w
    Parameter containing:
    tensor([ 0.8527, -1.8513], requires_grad=True)
    >>> optimizer.train()       # back to y to go on training
    >>> sorted(optimizer.state[0]), optimizer.param_groups[0]["k"]
    (['exp_avg_sq', 'z'], 2)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 0.0025,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 warmup_steps: int = 0, r: float = 0.0, weight_lr_power: float = 2.0,
                 foreach: bool | None = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      warmup_steps=warmup_steps, r=r, weight_lr_power=weight_lr_power,
                                      foreach=foreach))

    def elementwise_rule(self, group: dict) -> Rule | None:
        return adamw_schedule_free


@_with_common_notes
class RAdamScheduleFree(_AdamScheduleFree):
    r"""Schedule-Free RAdam, computed as ``schedulefree.RAdamScheduleFree`` 1.4.1.

    :class:`AdamWScheduleFree` with RAdam's rectification in place of a warmup: the
    learning rate is scaled by RAdam's :math:`r_t`, and while the variance estimate is not
    tractable (:math:`\rho_t \le 4`, the first 4 steps at :math:`\beta_2 = 0.999`) the
    gradient is used unnormalised, with the learning rate 0 (``silent_sgd_phase``, the
    default: only :math:`v` moves) or unscaled.

    .. math::
        \begin{aligned}
        \rho_\infty &= \frac{2}{1 - \beta_2} - 1, \quad
            \rho_t \leftarrow \rho_\infty - \frac{2 t \beta_2^t}{1 - \beta_2^t} \\
        \gamma_t &\leftarrow \gamma \sqrt{\frac{(\rho_t - 4)(\rho_t - 2)\rho_\infty}
            {(\rho_\infty - 4)(\rho_\infty - 2)\rho_t}} \text{ if } \rho_t > 4,
            \text{ else } 0 \text{ (silent) or } \gamma \\
        w_t &\leftarrow t^r \bigl(\max_{s \le t} \gamma_s\bigr)^{p}, \quad
            c_t \leftarrow w_t / \textstyle\sum_{s \le t} w_s \quad (0 \text{ while the sum is } 0) \\
        v_t &\leftarrow \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        u_t &\leftarrow g_t \big/ \bigl(\sqrt{v_t / (1 - \beta_2^t)} + \epsilon\bigr)
            \text{ if } \rho_t > 4 \text{, else } g_t; \quad u_t \leftarrow u_t + \lambda y_{t-1} \\
        y_t &\leftarrow (1 - c_t) y_{t-1} + c_t z_{t-1}
            + \gamma_t \bigl(\beta_1 (1 - c_t) - 1\bigr) u_t, \quad
        z_t \leftarrow z_{t-1} - \gamma_t u_t
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Schedule, default 0.0025
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        :math:`\beta_1`, the interpolation (in (0, 1)), and :math:`\beta_2`.
    eps : float, default 1e-8
        Term :math:`\epsilon` added to the denominator.
    weight_decay : float, default 0
        Weight decay :math:`\lambda`, taken at :math:`y`.
    r : float, default 0.0
        Power of the polynomial weighting :math:`t^r` in the average.
    weight_lr_power : float, default 2.0
        Power :math:`p` of the largest learning rate so far in the average's weights.
    foreach : bool, optional
        Accepted for the reference's signature; lucid runs one implementation.
    silent_sgd_phase : bool, default True
        Learning rate 0 while :math:`\rho_t \le 4` (True), or :math:`\gamma` (False).

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "eps", "weight_decay", "r",
        "weight_lr_power", "foreach", "silent_sgd_phase", and the reference's counters "k",
        "train_mode", "weight_sum", "lr_max" and "scheduled_lr".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "z" and "exp_avg_sq", tensors shaped like the parameter.

    Notes
    -----
    The arithmetic is the reference's, in its order (float64 agreement to 1e-12 relative over
    1,000 steps); both phases are elementwise rules, fused.
    __COMMON_NOTES__

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.RAdamScheduleFree([w], lr=0.1)
    >>> for _ in range(4):      # rho_t <= 4: the silent phase moves only the second moment
    ...     optimizer.zero_grad()
    ...     (w * w).sum().backward()
    ...     optimizer.step()
    >>> w.detach(), optimizer.param_groups[0]["scheduled_lr"]
    (tensor([ 1., -2.]), 0.0)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 0.0025,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 r: float = 0.0, weight_lr_power: float = 2.0, foreach: bool | None = None,
                 silent_sgd_phase: bool = True) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, r=r,
                                      weight_lr_power=weight_lr_power, foreach=foreach,
                                      silent_sgd_phase=silent_sgd_phase))

    def scheduled_lr(self, group: dict, step: int) -> float:
        rho_t, rho_inf = radam_rho(group["betas"][1], step)
        rect = (((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                if rho_t > 4.0 else float(not group["silent_sgd_phase"]))
        return float(scalar(group["lr"])) * rect

    def elementwise_rule(self, group: dict) -> Rule | None:
        # the group's step is counted already when the step asks (run_step)
        return adamw_schedule_free if radam_rho(group["betas"][1], max(group["k"], 1))[0] > 4.0 else radam_schedule_free_sgd
