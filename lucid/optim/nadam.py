"""NAdam and RAdam: Adam with Nesterov momentum, and rectified Adam."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from . import _checks
from ._shared import bias_corrections, float32_state
from .elementwise import elementwise, helper, lerp, sqrt
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


@helper
def moments(grad, exp_avg, exp_avg_sq, weight1, beta2, one_minus_beta2):
    """Adam's two moments, in torch's order (``lerp_``; ``mul_(beta2).addcmul_``)."""
    return lerp(exp_avg, grad, weight1), exp_avg_sq * beta2 + grad * grad * one_minus_beta2


def moment_scalars(group: dict) -> dict:
    """The scalars of :func:`moments`."""
    beta1, beta2 = group["betas"]
    return {"weight1": float(1 - beta1), "beta2": float(beta2), "one_minus_beta2": float(1 - beta2)}


def nadam_scalars(group: dict, param: Tensor, state: dict) -> dict:
    lr, (beta1, beta2), psi = group["lr"], group["betas"], group["momentum_decay"]
    step = state["step"]
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
    mu_product = state["mu_product"].mul_(mu).item()  # float32 arithmetic, as torch's
    return {**moment_scalars(group), "bias_correction2": float(1 - beta2**step), "eps": float(group["eps"]),
            "grad_step": float(scalar(-lr * (1.0 - mu) / (1.0 - mu_product))),
            "momentum_step": float(scalar((-lr * mu_next) / (1.0 - mu_product * mu_next)))}


def radam_scalars(group: dict, param: Tensor, state: dict) -> dict:
    lr, (beta1, beta2), step = group["lr"], group["betas"], state["step"]
    bias_correction1, bias_correction2 = bias_corrections((beta1, beta2), step)
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5 if rho_t > 5.0 else 1.0
    return {**moment_scalars(group), "bias_correction1": float(bias_correction1), "lr": float(scalar(lr)),
            "rectified": bool(rho_t > 5.0), "one": 1.0, "eps": float(group["eps"]),
            "bias_correction2_sqrt": float(bias_correction2**0.5), "rect": float(rect)}


def check_adam_like(group: dict) -> None:
    """What NAdam and RAdam check as Adam does."""
    _checks.learning_rate(group["lr"])
    _checks.epsilon(group["eps"])
    _checks.betas(group["betas"])
    _checks.non_negative("weight_decay", group["weight_decay"])


def moments_state(param: Tensor) -> dict:
    """The state NAdam and RAdam start from, as Adam's."""
    return {"step": 0, "exp_avg": _factory.zeros_like(param), "exp_avg_sq": _factory.zeros_like(param)}


# weight decay is L2, or decoupled where the group sets decoupled_weight_decay; mu_product is
# each parameter's own (float32) state: NAdam's scalars are computed per parameter
@elementwise(state=("exp_avg", "exp_avg_sq"), decay="l2", scalars=nadam_scalars, depends_on=None)
def nadam(param, grad, exp_avg, exp_avg_sq, weight1, beta2, one_minus_beta2, bias_correction2, eps, grad_step,
          momentum_step):
    exp_avg, exp_avg_sq = moments(grad, exp_avg, exp_avg_sq, weight1, beta2, one_minus_beta2)
    denom = sqrt(exp_avg_sq / bias_correction2) + eps
    param = param + grad * grad_step / denom
    return param + exp_avg * momentum_step / denom, exp_avg, exp_avg_sq


@elementwise(state=("exp_avg", "exp_avg_sq"), decay="l2", scalars=radam_scalars)
def radam(param, grad, exp_avg, exp_avg_sq, weight1, beta2, one_minus_beta2, bias_correction1, lr, rectified,
          one, eps, bias_correction2_sqrt, rect):
    exp_avg, exp_avg_sq = moments(grad, exp_avg, exp_avg_sq, weight1, beta2, one_minus_beta2)
    update = exp_avg / bias_correction1 * lr
    if rectified:  # torch's scalar / tensor: a reciprocal, then a product
        update = update * (one / (sqrt(exp_avg_sq) + eps) * bias_correction2_sqrt) * rect
    return param - update, exp_avg, exp_avg_sq


class NAdam(Optimizer):
    r"""NAdam, Adam with Nesterov momentum (Dozat, 2016), as torch.optim.NAdam.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) + \lambda\theta_{t-1}
            \quad\text{or, decoupled,}\quad \theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda)
            &&\text{(g negated first if maximize)} \\
        \mu_t &\leftarrow \beta_1 \bigl(1 - \tfrac12\, 0.96^{t\psi}\bigr), \qquad
        \Pi_t \leftarrow \Pi_{t-1}\mu_t, \quad \Pi_0 = 1 \\
        m_t &\leftarrow \beta_1 m_{t-1} + (1 - \beta_1) g_t \\
        v_t &\leftarrow \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        \theta_t &\leftarrow \theta_{t-1}
            - \frac{\gamma(1 - \mu_t)}{1 - \Pi_t} \frac{g_t}{\sqrt{v_t / (1 - \beta_2^t)} + \epsilon}
            - \frac{\gamma\mu_{t+1}}{1 - \Pi_t\mu_{t+1}} \frac{m_t}{\sqrt{v_t / (1 - \beta_2^t)} + \epsilon}
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 2e-3
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        Coefficients :math:`(\beta_1, \beta_2)` of the moment estimates.
    eps : float, default 1e-8
        Term :math:`\epsilon` added to the denominator.
    weight_decay : float, default 0
        Weight decay :math:`\lambda`: an L2 penalty, or decoupled if
        ``decoupled_weight_decay``.
    momentum_decay : float, default 4e-3
        Momentum decay :math:`\psi` of the schedule :math:`\mu_t`.
    decoupled_weight_decay : bool, default False
        Decay the weights directly, as AdamW does (NAdamW), instead of adding to the gradient.
    foreach : bool, optional
        Accepted and stored in the groups: lucid runs one implementation, torch's
        single-tensor one, whose numbers torch's foreach path gives too; ``True`` with a
        Tensor ``lr`` raises NotImplementedError, as torch's foreach path computes other
        numbers with one.
    capturable : bool, default False
        ``True`` raises NotImplementedError: torch's CUDA-graph mode, which torch refuses for
        CPU tensors.
    maximize : bool, default False
        Maximise the objective instead of minimising it.
    differentiable : bool, default False
        ``True`` raises NotImplementedError: steps are not recorded by autograd.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "eps", "weight_decay", "momentum_decay",
        "decoupled_weight_decay", "maximize", "foreach", "capturable" and "differentiable".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int), "mu_product" (:math:`\Pi_t`, a 0-d float32
        tensor), "exp_avg" and "exp_avg_sq" (tensors shaped like the parameter).

    Notes
    -----
    The arithmetic is torch's ``_single_tensor_nadam``, in its order. Like torch, lucid
    keeps ``mu_product`` as a 0-d **float32** tensor (on the parameter's device) whatever
    the parameter's dtype, multiplied by :math:`\mu_t` in float32 each step, so float64
    trajectories equal torch's rather than an all-float64 computation (they differ by
    about 1e-7 relative). It stays float32 through ``.double()`` and ``load_state_dict``
    (where torch would cast it to the parameter's dtype). ``step`` is a Python int where
    torch keeps a float32 tensor.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> optimizer.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.8944, -1.8944]
    >>> sorted(optimizer.state[0])
    ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
    >>> optimizer.state[0]["mu_product"].dtype
    lucid.float32
    """

    float32_keys = frozenset({"mu_product"})
    older_group_defaults = {**Optimizer.older_group_defaults, "decoupled_weight_decay": False}

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False) -> None:
        _checks.implementation_flags(foreach, None, differentiable)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    unmatched_flags = {"foreach": ("lr",)}  # 3e-9 relative with a Tensor lr

    def check(self, group: dict) -> None:
        check_adam_like(group)
        _checks.non_negative("momentum_decay", group["momentum_decay"])

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {**moments_state(param), "mu_product": float32_state(1.0, param)}

    def elementwise_rule(self, group: dict) -> Rule | None:
        return nadam


class RAdam(Optimizer):
    r"""RAdam, Adam with a rectified adaptive rate (Liu et al., 2020), as torch.optim.RAdam.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) + \lambda\theta_{t-1}
            \quad\text{or, decoupled,}\quad \theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda)
            &&\text{(g negated first if maximize)} \\
        m_t &\leftarrow \beta_1 m_{t-1} + (1 - \beta_1) g_t, \qquad
        v_t \leftarrow \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        \rho_\infty &= \frac{2}{1 - \beta_2} - 1, \qquad
        \rho_t = \rho_\infty - \frac{2t\beta_2^t}{1 - \beta_2^t} \\
        \theta_t &\leftarrow \theta_{t-1} - \gamma \frac{m_t}{1 - \beta_1^t} \cdot
            \begin{cases}
            \dfrac{\sqrt{1 - \beta_2^t}}{\sqrt{v_t} + \epsilon}\, r_t & \rho_t > 5 \\
            1 & \text{otherwise}
            \end{cases}, \qquad
        r_t = \sqrt{\frac{(\rho_t - 4)(\rho_t - 2)\rho_\infty}{(\rho_\infty - 4)(\rho_\infty - 2)\rho_t}}
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        Coefficients :math:`(\beta_1, \beta_2)` of the moment estimates.
    eps : float, default 1e-8
        Term :math:`\epsilon` added to the denominator.
    weight_decay : float, default 0
        Weight decay :math:`\lambda`: an L2 penalty, or decoupled if
        ``decoupled_weight_decay``.
    decoupled_weight_decay : bool, default False
        Decay the weights directly, as AdamW does, instead of adding to the gradient.
    foreach : bool, optional
        Accepted and stored in the groups: lucid runs one implementation, torch's
        single-tensor one, whose numbers torch's foreach path gives too; ``True`` with a
        Tensor ``lr`` raises NotImplementedError, as torch's foreach path computes other
        numbers with one.
    capturable : bool, default False
        ``True`` raises NotImplementedError: torch's CUDA-graph mode, which torch refuses for
        CPU tensors.
    maximize : bool, default False
        Maximise the objective instead of minimising it.
    differentiable : bool, default False
        ``True`` raises NotImplementedError: steps are not recorded by autograd.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "eps", "weight_decay", "maximize",
        "foreach", "capturable", "decoupled_weight_decay" and "differentiable".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int), "exp_avg" and "exp_avg_sq" (tensors shaped
        like the parameter).

    Notes
    -----
    The arithmetic is torch's ``_single_tensor_radam``, in its order, including its
    ``scalar / tensor`` (a reciprocal, then a product) for the adaptive rate. While
    :math:`\rho_t \le 5` (the first steps: 5 with the default betas) the update is SGD with
    momentum, bias corrected. ``step`` is a Python int where torch keeps a float32 tensor.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> optimizer.step()   # the first steps are bias-corrected momentum: w - lr * grad
    >>> w
    Parameter containing:
    tensor([ 0.8000, -1.6000], requires_grad=True)
    >>> sorted(optimizer.state[0])
    ['exp_avg', 'exp_avg_sq', 'step']
    """

    older_group_defaults = {**Optimizer.older_group_defaults, "decoupled_weight_decay": False}

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _checks.implementation_flags(foreach, None, differentiable)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    unmatched_flags = {"foreach": ("lr",)}  # 5e-10 relative with a Tensor lr

    def check(self, group: dict) -> None:
        check_adam_like(group)

    def init_state(self, param: Tensor, group: dict) -> dict:
        return moments_state(param)

    def elementwise_rule(self, group: dict) -> Rule | None:
        return radam
