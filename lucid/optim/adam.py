"""Adam and AdamW."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from .._tensor import Tensor
from . import _checks
from ._shared import bias_corrections
from .elementwise import elementwise, lerp, maximum, sqrt
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def adam_scalars(group: dict, param: Tensor, state: dict) -> dict:
    # Tensor hyperparameters stay Tensors, as in torch: the step size and the bias
    # corrections are computed in their dtype (float32), the moment weights in the
    # parameter's dtype
    lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
    bias_correction1, bias_correction2 = bias_corrections((beta1, beta2), state["step"])
    return {"weight1": float(1 - scalar(beta1, param.dtype)), "beta2": float(scalar(beta2)),
            "one_minus_beta2": float(scalar(1 - beta2)), "bias_correction2_sqrt": float(scalar(bias_correction2**0.5)),
            "eps": float(eps), "neg_step_size": -float(scalar(lr / bias_correction1))}


# weight decay is L2, or decoupled where the group sets decoupled_weight_decay (AdamW)
@elementwise(state=("exp_avg", "exp_avg_sq"), decay="l2", scalars=adam_scalars)
def adam(param, grad, exp_avg, exp_avg_sq, weight1, beta2, one_minus_beta2, bias_correction2_sqrt, eps,
         neg_step_size):
    exp_avg = lerp(exp_avg, grad, weight1)
    exp_avg_sq = exp_avg_sq * beta2 + grad * grad * one_minus_beta2
    denom = sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
    return param + exp_avg * neg_step_size / denom, exp_avg, exp_avg_sq


@elementwise(state=("exp_avg", "exp_avg_sq", "max_exp_avg_sq"), decay="l2", scalars=adam_scalars)
def adam_amsgrad(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, weight1, beta2, one_minus_beta2,
                 bias_correction2_sqrt, eps, neg_step_size):
    exp_avg = lerp(exp_avg, grad, weight1)
    exp_avg_sq = exp_avg_sq * beta2 + grad * grad * one_minus_beta2
    max_exp_avg_sq = maximum(max_exp_avg_sq, exp_avg_sq)
    denom = sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps
    return param + exp_avg * neg_step_size / denom, exp_avg, exp_avg_sq, max_exp_avg_sq


def check_adam_group(group: dict) -> None:
    """torch.optim.Adam's checks of a group's hyperparameters (its messages)."""
    if isinstance(group["lr"], Tensor) and group["foreach"] and not group["capturable"]:
        raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
    _checks.learning_rate(group["lr"])
    _checks.epsilon(group["eps"])
    _checks.betas(group["betas"])
    _checks.non_negative("weight_decay", group["weight_decay"])
    if not (all(isinstance(b, float) for b in group["betas"])
            or all(isinstance(b, Tensor) for b in group["betas"])):
        raise ValueError("betas must be either both floats or both Tensors")
    for index, beta in enumerate(group["betas"]):
        if isinstance(beta, Tensor):
            if group["foreach"] and not group["capturable"]:
                raise ValueError(f"betas[{index}] as a Tensor is not supported for capturable=False and foreach=True")
            if beta.numel() != 1:
                raise ValueError(f"Tensor betas[{index}] must be 1-element")


def adam_state(param: Tensor, group: dict) -> dict:
    """A parameter's Adam state before its first step."""
    state = {"step": 0, "exp_avg": _factory.zeros_like(param), "exp_avg_sq": _factory.zeros_like(param)}
    if group["amsgrad"]:
        state["max_exp_avg_sq"] = _factory.zeros_like(param)
    return state


def adam_rule(group: dict) -> Rule:
    """The elementwise rule of an Adam group: with or without AMSGrad."""
    return adam_amsgrad if group["amsgrad"] else adam


class Adam(Optimizer):
    r"""Adam (Kingma & Ba, 2015), with AMSGrad and decoupled weight decay, as torch.optim.Adam.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1})
            &&\text{(negated if maximize)} \\
        g_t &\leftarrow g_t + \lambda\theta_{t-1}
            \quad\text{or, decoupled,}\quad \theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda) \\
        m_t &\leftarrow \beta_1 m_{t-1} + (1 - \beta_1) g_t \\
        v_t &\leftarrow \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        \hat v_t &\leftarrow \max(\hat v_{t-1}, v_t) \text{ if amsgrad, else } v_t \\
        \theta_t &\leftarrow \theta_{t-1} - \frac{\gamma}{1 - \beta_1^t}
            \cdot \frac{m_t}{\sqrt{\hat v_t} / \sqrt{1 - \beta_2^t} + \epsilon}
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
        Weight decay :math:`\lambda`: an L2 penalty, or decoupled (AdamW) if
        ``decoupled_weight_decay``.
    amsgrad : bool, default False
        Divide by the running maximum of :math:`v_t` (Reddi et al., 2018).
    maximize : bool, default False
        Maximise the objective instead of minimising it.
    decoupled_weight_decay : bool, default False
        Decay the weights directly, as AdamW does, instead of adding to the gradient.
    foreach, fused : bool, optional
        Accepted and stored in the groups: lucid runs one implementation, torch's
        single-tensor one, whose numbers torch's foreach and fused paths give too (fused to
        float64 rounding); ``fused=True`` with a Tensor ``lr`` or ``betas`` raises NotImplementedError,
        as torch's fused kernel computes other numbers with them, and ``foreach=True`` with
        them raises torch's ValueError.
    capturable : bool, default False
        ``True`` raises NotImplementedError: torch's CUDA-graph mode, which torch refuses for
        CPU tensors.
    differentiable : bool, default False
        ``True`` raises NotImplementedError: steps are not recorded by autograd.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "eps", "weight_decay", "amsgrad",
        "maximize", "foreach", "capturable", "differentiable", "fused" and
        "decoupled_weight_decay".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int), "exp_avg" and "exp_avg_sq" (tensors shaped
        like the parameter), and "max_exp_avg_sq" with amsgrad.

    Notes
    -----
    The arithmetic is torch's, in torch's order (``lerp_`` for the first moment, the bias
    correction of the second moment inside the denominator), so trajectories agree with
    torch to float64 rounding. ``step`` is a Python int where torch keeps a float32
    tensor; the numbers are the same. A Tensor ``lr`` or Tensor ``betas`` are used as torch
    uses them: the step size, the decay factor and the bias corrections are computed in
    their dtype (float32). With Tensor betas the agreement is to about 1e-8 rather than
    float64 rounding, because torch's float32 square root of the bias correction is not
    IEEE-rounded and lucid's is. The state follows its parameter through
    ``module.to()``, ``.double()`` and ``.half()`` between steps.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> optimizer.step()
    >>> [round(v, 6) for v in w.tolist()]   # the first step moves each weight by about lr
    [0.9, -1.9]
    >>> sorted(optimizer.state[0])
    ['exp_avg', 'exp_avg_sq', 'step']
    """

    older_group_defaults = {**Optimizer.older_group_defaults, "amsgrad": False, "decoupled_weight_decay": False}

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        _checks.implementation_flags(foreach, fused, differentiable)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    # torch's fused CPU kernel: 2e-9 relative with a Tensor lr, 2e-6 with Tensor betas
    unmatched_flags = {"fused": ("lr", "betas")}

    def check(self, group: dict) -> None:
        check_adam_group(group)

    def check_sparse(self, group: dict) -> None:
        raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam instead")

    def init_state(self, param: Tensor, group: dict) -> dict:
        return adam_state(param, group)

    def elementwise_rule(self, group: dict) -> Rule | None:
        return adam_rule(group)


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter, 2019), as torch.optim.AdamW.

    The update is :class:`Adam`'s with ``decoupled_weight_decay=True``: before the moments
    are updated, the parameters shrink by :math:`1 - \gamma\lambda`, and the gradient is
    left alone.

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        Coefficients of the moment estimates.
    eps : float, default 1e-8
        Term added to the denominator.
    weight_decay : float, default 1e-2
        Decoupled weight decay :math:`\lambda`.
    amsgrad : bool, default False
        Use the running maximum of the second moment.
    maximize : bool, default False
        Maximise the objective instead of minimising it.
    foreach, fused, capturable : optional
        As :class:`Adam`'s.
    differentiable : bool, default False
        ``True`` raises NotImplementedError.

    Attributes
    ----------
    param_groups : list of dict
        As :class:`Adam`'s, with "decoupled_weight_decay" always True.
    defaults : dict
        Default hyperparameter values.
    state : dict
        As :class:`Adam`'s: "step", "exp_avg", "exp_avg_sq" (and "max_exp_avg_sq").

    Notes
    -----
    As in torch 2.13, AdamW is Adam with the flag set; a loaded state dict cannot turn it
    off. The state follows its parameter through ``module.to()``, ``.double()`` and
    ``.half()`` between steps.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> (w * 0).sum().backward()   # a zero gradient: only the decay moves w
    >>> optimizer.step()
    >>> w
    Parameter containing:
    tensor([ 0.9500, -1.9000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused, decoupled_weight_decay=True)

    def check(self, group: dict) -> None:
        super().check(group)
        group["decoupled_weight_decay"] = True
