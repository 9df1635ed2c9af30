"""Prodigy: Adam with a step size D it learns from the distance travelled (Mishchenko & Defazio, 2024)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import _factory
from .._autograd import enable_grad, no_grad
from .._tensor import Tensor, eval as lucid_eval, lazy_only
from . import _checks
from ._shared import scalar
from .elementwise import elementwise, run_rule, sqrt
from .optimizer import Optimizer

if TYPE_CHECKING:
    from .optimizer import ParamsT
    from .schedules import Schedule

#: Hyperparameters that are one value for the whole optimizer, as prodigyopt reads them from
#: its first group only: a group that sets another value is refused (ValueError) at its step.
SHARED = ("betas", "beta3", "d0", "d_coef", "growth_rate", "use_bias_correction", "decoupled_weight_decay",
          "fsdp_in_use")


# the first pass, fused (betas[0] > 0, slice_p 1: the defaults): the moments weighted by D,
# s, and the terms of the estimate's two sums, <g, x0 - x> and |s|_1, in prodigyopt's
# arithmetic (exp_avg.mul_(beta1).add_(grad, alpha=d(1-beta1)), exp_avg_sq.mul_(beta2)
# .addcmul_(grad, grad, value=d^2(1-beta2)), s.mul_(beta3).add_(grad, alpha=s_weight))
@elementwise(state=("exp_avg", "exp_avg_sq", "s", "p0"), sums=("numerator", "denominator"))
def prodigy_estimate(param, grad, exp_avg, exp_avg_sq, s, p0, beta1, grad_weight, beta2, square_weight, beta3,
                     s_weight):
    numerator = grad * (p0 - param)
    exp_avg = exp_avg * beta1 + grad * grad_weight
    exp_avg_sq = exp_avg_sq * beta2 + square_weight * grad * grad
    s = s * beta3 + grad * s_weight
    return param, exp_avg, exp_avg_sq, s, p0, numerator, abs(s)


# the first pass otherwise (slice_p above 1, or no first moment): the moments here, s and the
# sums over the sliced elements apart
@elementwise(state=("exp_avg", "exp_avg_sq"))
def prodigy_moments(param, grad, exp_avg, exp_avg_sq, beta1, grad_weight, beta2, square_weight):
    exp_avg = exp_avg * beta1 + grad * grad_weight
    exp_avg_sq = exp_avg_sq * beta2 + square_weight * grad * grad
    return param, exp_avg, exp_avg_sq


@elementwise(state=("exp_avg_sq",))
def prodigy_second_moment(param, grad, exp_avg_sq, beta2, square_weight):
    return param, exp_avg_sq * beta2 + square_weight * grad * grad


# "param" is s, which with slice_p above 1 holds every slice_p-th element only
@elementwise(sums=("denominator",))
def prodigy_s(param, grad, beta3, weight):
    param = param * beta3 + grad * weight
    return param, abs(param)


# the step, once D is known: "grad" is the direction, the first moment (the gradient itself
# where beta1 = 0); decay_step is -weight_decay * dlr with decoupled decay, else 0
@elementwise(state=("exp_avg_sq",))
def prodigy_update(param, grad, exp_avg_sq, d_eps, decay_step, neg_step):
    denom = sqrt(exp_avg_sq) + d_eps
    param = param + param * decay_step
    return param + grad * neg_step / denom, exp_avg_sq


class Prodigy(Optimizer):
    r"""Prodigy (Mishchenko & Defazio, 2024), computed as ``prodigyopt.Prodigy`` 1.1.2.

    Adam whose learning rate needs no tuning: the step size :math:`D` is an estimate of the
    distance from the starting point to a solution, learnt from how far the parameters have
    moved against the gradients. Leave ``lr`` at 1 (it multiplies :math:`D`); ``d_coef``
    scales the estimate, ``growth_rate`` bounds its growth per step (a warm-up).

    With :math:`k` the step (from 0), :math:`\gamma` the learning rate and sums over every
    parameter of every group with a gradient:

    .. math::
        \begin{aligned}
        g_k &\leftarrow \nabla f_k(x_k) \;(+\, \lambda x_k \text{ for L2 weight decay}),
            \qquad \delta_k = \gamma D_k \textstyle\frac{\sqrt{1 - \beta_2^{k+1}}}{1 - \beta_1^{k+1}}
            \text{ (bias correction) or } \gamma D_k \\
        r_{k+1} &\leftarrow \beta_3 r_k + \tfrac{D_k}{D_0}\,\delta_k\,\langle g_k, x_0 - x_k\rangle \\
        m_{k+1} &\leftarrow \beta_1 m_k + (1 - \beta_1) D_k g_k, \qquad
        v_{k+1} \leftarrow \beta_2 v_k + (1 - \beta_2) D_k^2 g_k^2 \\
        s_{k+1} &\leftarrow \beta_3 s_k + \tfrac{D_k}{D_0}\,\delta_k\, g_k
            \quad (\tfrac{D_k}{D_0} D_k g_k \text{ with safeguard warm-up}) \\
        \hat D_{k+1} &\leftarrow c\, \frac{r_{k+1}}{\lVert s_{k+1} \rVert_1}, \qquad
        D_{k+1} \leftarrow \min\bigl(\max(D_k^{\max}, \hat D_{k+1}),\; \rho\, D_k\bigr)
            \quad (D_k^{\max} \text{ the largest estimate so far}) \\
        x_{k+1} &\leftarrow x_k - \delta_k \lambda x_k \text{ (decoupled decay)}
            \;-\; \delta_k \frac{m_{k+1}}{\sqrt{v_{k+1}} + D_{k+1}\epsilon}
        \end{aligned}

    where :math:`c` is ``d_coef``, :math:`\rho` ``growth_rate`` and :math:`\beta_3` defaults to
    :math:`\sqrt{\beta_2}`; the first estimate above :math:`D_0` replaces it at once.

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1.0
        Learning rate :math:`\gamma`, a multiplier of :math:`D`. All groups share one value,
        except groups at 0 (whose moments and estimate contributions pause).
    betas : tuple of float, default (0.9, 0.999)
        :math:`\beta_1` of the first moment (0 keeps none), :math:`\beta_2` of the second.
    beta3 : float or None, default None
        Decay :math:`\beta_3` of the estimate's sums; None uses :math:`\sqrt{\beta_2}`.
    eps : float, default 1e-8
        :math:`\epsilon`, added to the denominator as :math:`D\epsilon`.
    weight_decay : float, default 0
        Weight decay :math:`\lambda`: decoupled (scaled by :math:`\delta_k`), or an L2 penalty
        if not ``decoupled_weight_decay``.
    decoupled_weight_decay : bool, default True
        Decay the weights directly, as AdamW does (prodigyopt's ``decouple``).
    use_bias_correction : bool, default False
        Include Adam's bias correction in :math:`\delta_k`.
    safeguard_warmup : bool, default False
        Leave :math:`\gamma` and the bias correction out of :math:`s` (for warm-up schedules).
    d0 : float, default 1e-6
        The first estimate :math:`D_0`.
    d_coef : float, default 1.0
        Multiplier :math:`c` of the estimate, the preferred way to tune Prodigy.
    growth_rate : float, default inf
        Largest factor :math:`\rho` by which :math:`D` may grow in one step.
    fsdp_in_use : bool, default False
        True raises ValueError: lucid shards no parameters (see Notes).
    slice_p : int, default 1
        Estimate :math:`D` from every ``slice_p``-th element of each parameter only (an
        approximation, for memory; :math:`s` and :math:`x_0` keep those elements).

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "beta3", "eps", "weight_decay",
        "decoupled_weight_decay", "use_bias_correction", "safeguard_warmup", "d0", "d_coef",
        "growth_rate", "fsdp_in_use", "slice_p", and the estimate, the same in every group:
        "d" (:math:`D`), "d_max", "d_numerator" (:math:`r`), "k" (steps taken), and once a
        step has run, "d_denom" (:math:`\lVert s\rVert_1`) and "d_hat" (:math:`\hat D`).
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int), "s" and "p0" (:math:`s` and :math:`x_0`: shaped
        like the parameter, or with ``slice_p`` above 1 the flattened parameter's every
        ``slice_p``-th element; "p0" is a 0-d zero for a parameter that starts at zero),
        "exp_avg" (not with :math:`\beta_1 = 0`) and "exp_avg_sq" (shaped like the parameter).

    Notes
    -----
    The arithmetic is prodigyopt 1.1.2's, in its order, so trajectories agree with it to
    float64 rounding. The update of the moments and the step are elementwise rules (one fused
    pass each); the two sums the estimate needs, :math:`\langle g, x_0 - x\rangle` and
    :math:`\lVert s\rVert_1`, are reductions between them, so a step is two passes over the
    parameters with the scalar :math:`D` computed in between, as in the reference.

    Where lucid differs from prodigyopt: torch's name ``decoupled_weight_decay`` for
    ``decouple``; torch.optim's validation messages, and checks the reference lacks
    (``weight_decay``, ``d_coef``, ``growth_rate``, ``slice_p``, ``beta3``); ``lr=0`` is
    accepted for the optimizer as for a group (the reference refuses it for the first). The
    hyperparameters of the estimate (``betas``, ``beta3``, ``d0``, ``d_coef``,
    ``growth_rate``, ``use_bias_correction``, ``decoupled_weight_decay``) are the
    optimizer's, which the reference reads from the first group only: a group that sets
    another value raises ValueError at the step instead of being ignored. The gradient is
    not changed (the reference adds the L2 term to ``p.grad`` in place). With ``slice_p`` 1,
    ``s`` and ``p0`` keep the parameter's shape (the reference flattens them), so that the
    estimate's sums need no reshaping. ``fsdp_in_use=True``
    is refused, as lucid has no sharded parameters to sum the estimate over (the reference
    all-reduces it on CUDA). A step in which every gradient is zero updates the moments and
    nothing else, as the reference's. Sparse gradients are refused. The state follows its
    parameter through ``module.to()``, ``.double()`` and ``.half()`` between steps.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> _ = lucid.manual_seed(0)
    >>> model = nn.Linear(4, 1)
    >>> x = lucid.randn(64, 4)
    >>> y = x @ lucid.tensor([[1.0], [-2.0], [0.5], [3.0]])
    >>> optimizer = optim.Prodigy(model.parameters())   # no learning rate to tune
    >>> for _ in range(200):
    ...     optimizer.zero_grad()
    ...     loss = nn.functional.mse_loss(model(x), y)
    ...     loss.backward()
    ...     optimizer.step()
    >>> loss.item() < 1e-3, optimizer.param_groups[0]["d"] > 0.1   # D grew from 1e-6
    (True, True)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1.0,
                 betas: tuple[float, float] = (0.9, 0.999), beta3: float | None = None, eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = True, use_bias_correction: bool = False,
                 safeguard_warmup: bool = False, d0: float = 1e-6, d_coef: float = 1.0,
                 growth_rate: float = float("inf"), fsdp_in_use: bool = False, slice_p: int = 1) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), beta3=beta3, eps=eps, weight_decay=weight_decay,
                        d0=d0, d=d0, d_max=d0, d_numerator=0.0, d_coef=d_coef, k=0, growth_rate=growth_rate,
                        use_bias_correction=use_bias_correction, decoupled_weight_decay=decoupled_weight_decay,
                        safeguard_warmup=safeguard_warmup, fsdp_in_use=fsdp_in_use, slice_p=slice_p)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        _checks.non_negative("d0", group["d0"], strict=True)
        _checks.learning_rate(group["lr"])
        _checks.epsilon(group["eps"], strict=True)
        _checks.betas(group["betas"])
        if group["beta3"] is not None and not 0.0 <= group["beta3"] <= 1.0:
            raise ValueError(f"Invalid beta3 value: {group['beta3']}")
        _checks.non_negative("weight_decay", group["weight_decay"])
        _checks.non_negative("d_coef", group["d_coef"], strict=True)
        if not group["growth_rate"] >= 1.0:
            raise ValueError(f"Invalid growth_rate value: {group['growth_rate']} (expected at least 1)")
        _checks.count("slice_p", group["slice_p"], 1)
        if group["fsdp_in_use"]:
            raise ValueError("fsdp_in_use=True is not supported: lucid has no sharded (FSDP) parameters, "
                             "so Prodigy's estimate is summed over the parameters it is given")

    def check_sparse(self, group: dict) -> None:
        raise RuntimeError("Prodigy does not support sparse gradients")

    def init_state(self, param: Tensor, group: dict) -> dict:
        start = _sliced(param.detach(), group["slice_p"])
        if group["slice_p"] == 1 or param.any():
            p0 = start.clone()
        else:  # prodigyopt's 0-d zero for a parameter that starts at zero, where slice_p is above 1
            p0 = _factory.zeros((), dtype=param.dtype, device=param.device)
        state = {"step": 0, "s": _factory.zeros_like(start), "p0": p0}
        if group["betas"][0] > 0:
            state["exp_avg"] = _factory.zeros_like(param)
        state["exp_avg_sq"] = _factory.zeros_like(param)
        return state

    def state_shapes(self, param: Tensor, group: dict) -> dict:
        # "p0" is either s's shape or a 0-d zero: not checked by shape
        slice_p = group["slice_p"]
        shapes = {"s": param.shape if slice_p == 1 else (math.ceil(param.numel() / slice_p),),
                  "exp_avg_sq": param.shape}
        if group["betas"][0] > 0:
            shapes["exp_avg"] = param.shape
        return shapes

    def run_step(self, closure: Callable[[], Tensor] | None) -> Tensor | None:
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        lr = _shared_lr(self.param_groups)
        self._engine.work()  # every gradient and every state checked, before anything changes
        stepping = [(group, [(p, p.grad, self.state.of(p, group, self.init_state))
                             for p in group["params"] if p.grad is not None]) for group in self.param_groups]
        with no_grad():
            _step(self.param_groups[0], lr, stepping)
        params = lazy_only(p for _, triples in stepping for p, _, _ in triples)
        lucid_eval([params, [self.state.for_param(p) for p in params]])
        return loss


def _sliced(tensor: Tensor, slice_p: int) -> Tensor:
    """The elements the estimate reads: all of them (in the tensor's shape), or every
    ``slice_p``-th of the flattened tensor."""
    return tensor if slice_p == 1 else tensor.flatten()[::slice_p]


def _shared_lr(groups) -> float:
    """The learning rate of the step (the largest group's), after checking that every group
    has it or 0, and that the optimizer-wide hyperparameters agree across groups."""
    lrs = [float(scalar(group["lr"])) for group in groups]
    lr = max(lrs)
    for index, (group, group_lr) in enumerate(zip(groups, lrs)):
        if group_lr not in (lr, 0.0):
            raise RuntimeError(f"Prodigy's groups share one lr (or 0, to pause a group): group {index} has "
                               f"{group_lr}, another {lr}")
        for key in SHARED:
            if group[key] != groups[0][key]:
                raise ValueError(f"Prodigy's {key} is one value for all groups: group {index} has "
                                 f"{group[key]!r}, group 0 {groups[0][key]!r}")
    return lr


def _step(first: dict, lr: float, stepping: list) -> None:
    """One step over ``stepping`` (each group with its ``(param, grad, state)`` triples), in
    prodigyopt's order: moments, ``s`` and the estimate's sums; then D; then the parameters."""
    beta1, beta2 = first["betas"]
    beta3 = math.sqrt(beta2) if first["beta3"] is None else first["beta3"]
    d, d_max, d0, k = first["d"], first["d_max"], first["d0"], first["k"]
    bias_correction = ((1 - beta2 ** (k + 1)) ** 0.5) / (1 - beta1 ** (k + 1)) if first["use_bias_correction"] else 1
    dlr = d * lr * bias_correction
    decoupled = first["decoupled_weight_decay"]

    # the gradients, with the L2 term where the decay is not decoupled
    grads = [[grad.add(param, alpha=group["weight_decay"]) if group["weight_decay"] != 0 and not decoupled else grad
              for param, grad, _ in triples] for group, triples in stepping]

    fused: list = []  # the items of prodigy_estimate; the others' rules and sums:
    moments: list = []
    averages: list = []
    numerators: list = []
    order: list = []  # per parameter, where its sums are: (its fused, its index)
    for (group, triples), group_grads in zip(stepping, grads):
        if float(scalar(group["lr"])) == 0.0:
            continue
        slice_p = group["slice_p"]
        s_weight = (d / d0) * d if group["safeguard_warmup"] else (d / d0) * dlr
        numbers = (beta1, d * (1 - beta1), beta2, d * d * (1 - beta2), beta3, s_weight)
        moment_numbers, average_numbers = numbers[:4] if beta1 > 0 else numbers[2:4], numbers[4:]
        for (param, _, state), grad in zip(triples, group_grads):
            if slice_p == 1 and beta1 > 0:
                order.append((True, len(fused)))
                fused.append(((param, state["exp_avg"], state["exp_avg_sq"], state["s"], state["p0"]), grad, numbers))
                continue
            sliced_grad = _sliced(grad, slice_p)
            order.append((False, len(averages)))
            numerators.append((sliced_grad * (state["p0"] - _sliced(param, slice_p))).sum())
            moments.append(((param, state["exp_avg"], state["exp_avg_sq"]) if beta1 > 0 else (param, state["exp_avg_sq"]),
                            grad, moment_numbers))
            averages.append(((state["s"],), sliced_grad, average_numbers))
    fused_sums = run_rule(prodigy_estimate, fused)
    run_rule(prodigy_moments if beta1 > 0 else prodigy_second_moment, moments)
    lucid_eval(numerators)
    sliced_sums = [(numerator.item(), *denominator) for numerator, denominator
                   in zip(numerators, run_rule(prodigy_s, averages))]

    delta_numerator, d_denom = 0.0, 0.0
    for is_fused, index in order:
        numerator, denominator = (fused_sums if is_fused else sliced_sums)[index]
        delta_numerator += (d / d0) * dlr * numerator
        d_denom += denominator
    if d_denom == 0:  # no gradient, or only zeros: no progress to measure, as the reference
        return

    d_numerator = first["d_numerator"] * beta3 + delta_numerator
    d_hat = first["d_coef"] * d_numerator / d_denom
    if d == d0:
        d = max(d, d_hat)
    d_max = max(d_max, d_hat)
    d = min(d_max, d * first["growth_rate"])

    updates = []
    for (group, triples), group_grads in zip(stepping, grads):
        group.update(d_numerator=d_numerator, d_denom=d_denom, d=d, d_max=d_max, d_hat=d_hat)
        decay = group["weight_decay"]
        step_numbers = (d * group["eps"], -decay * dlr if decay != 0 and decoupled else 0.0,
                        -dlr if beta1 > 0 else -dlr * d)
        for (param, _, state), grad in zip(triples, group_grads):
            state["step"] += 1
            updates.append(((param, state["exp_avg_sq"]), state["exp_avg"] if beta1 > 0 else grad, step_numbers))
        group["k"] += 1
    run_rule(prodigy_update, updates)
