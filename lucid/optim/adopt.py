"""ADOPT: Adam with the current gradient left out of its own normalisation (Taniguchi et al., 2024)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from . import _checks
from .elementwise import elementwise, lerp, maximum, minimum, sqrt
from .group_steps import GroupStepOptimizer
from .optimizer import scalar

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def adopt_scalars(group: dict, param: Tensor, state: dict) -> dict:
    beta1, beta2 = group["betas"]
    return {"clip": group["step"] ** 0.25, "weight1": float(1 - beta1), "beta2": float(beta2),
            "one_minus_beta2": float(1 - beta2), "eps": float(group["eps"]), "neg_lr": -float(scalar(group["lr"]))}


# the group's first step only measures the gradient: v_0 = g_0^2
@elementwise(state=("exp_avg", "exp_avg_sq"), decay="l2", scalars=lambda group, param, state: {}, depends_on=None)
def adopt_first(param, grad, exp_avg, exp_avg_sq):
    return param, exp_avg, exp_avg_sq + grad * grad


# weight decay is L2, or decoupled where the group sets decoupled_weight_decay
@elementwise(state=("exp_avg", "exp_avg_sq"), decay="l2", scalars=adopt_scalars, depends_on=lambda state: None)
def adopt(param, grad, exp_avg, exp_avg_sq, clip, weight1, beta2, one_minus_beta2, eps, neg_lr):
    normed = minimum(maximum(grad / maximum(sqrt(exp_avg_sq), eps), -clip), clip)
    exp_avg = lerp(exp_avg, normed, weight1)
    return param + exp_avg * neg_lr, exp_avg, exp_avg_sq * beta2 + one_minus_beta2 * grad * grad


class ADOPT(GroupStepOptimizer):
    r"""ADOPT (Taniguchi et al., 2024), computed as ``pytorch_optimizer.ADOPT`` 4.1.0.

    Adam normalises the gradient by a second moment that already contains it; ADOPT divides
    by the previous one and updates the momentum with the normalised gradient, which
    converges for any :math:`\beta_2`. torch.optim has no ADOPT; this one follows the paper's
    algorithm with the clipped variant's :math:`c_t = t^{1/4}`, in the arithmetic of
    pytorch-optimizer, and torch.optim's interface.

    .. math::
        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) &&\text{(negated if maximize)} \\
        g_t &\leftarrow g_t + \lambda\theta_{t-1}
            \quad\text{or, decoupled,}\quad \theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda) \\
        v_1 &\leftarrow g_1^2 \quad\text{(the first step does only this)} \\
        m_t &\leftarrow \beta_1 m_{t-1} + (1 - \beta_1)
            \operatorname{clip}\Bigl(\frac{g_t}{\max(\sqrt{v_{t-1}}, \epsilon)}, t^{1/4}\Bigr) \\
        \theta_t &\leftarrow \theta_{t-1} - \gamma m_t \\
        v_t &\leftarrow \beta_2 v_{t-1} + (1 - \beta_2) g_t^2
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.9999)
        :math:`\beta_1` of the momentum, :math:`\beta_2` of the second moment.
    eps : float, default 1e-6
        Floor :math:`\epsilon` of :math:`\sqrt{v}`.
    weight_decay : float, default 0.0
        Weight decay :math:`\lambda`: an L2 penalty, or decoupled if ``decoupled_weight_decay``.
    decoupled_weight_decay : bool, default False
        Decay the weights directly (pytorch-optimizer's ``weight_decouple``).
    maximize : bool, default False
        Maximise the objective instead of minimising it.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "eps", "weight_decay",
        "decoupled_weight_decay" and "maximize", and "step" (int) once the group has stepped.
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "exp_avg" and "exp_avg_sq", the moments :math:`m` and
        :math:`v` (tensors shaped like the parameter).

    Notes
    -----
    As in pytorch-optimizer, the step count :math:`t` is the group's (``group["step"]``,
    counted at every step), not each parameter's: a parameter whose first gradient comes
    after the group's first step starts from :math:`v = 0`, so its first update is the
    clipped :math:`\pm t^{1/4}` of :math:`g / \epsilon`. The arithmetic is pytorch-optimizer's,
    in its order (``clamp`` of the square root, ``lerp_`` of the momentum, ``mul_(beta2)``
    then ``addcmul_``), so trajectories agree with it to float64 rounding. Where lucid differs:
    torch's names (``decoupled_weight_decay`` for ``weight_decouple``) and torch.optim's
    validation messages; ``maximize`` may differ between groups; the clip is always
    :math:`t^{1/4}` (no ``clip_lambda``), and ``fixed_decay``, ``cautious`` (whose mask is
    rescaled by a sum over the tensor) and ``stable_adamw`` are not offered. Sparse gradients
    are refused. The state follows its parameter through ``module.to()``, ``.double()`` and
    ``.half()`` between steps.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.ADOPT([w], lr=0.1)
    >>> for _ in range(2):
    ...     optimizer.zero_grad()
    ...     (w * w).sum().backward()
    ...     optimizer.step()
    >>> w   # the first step only measured the gradient; the second moved by lr * (1 - beta1)
    Parameter containing:
    tensor([ 0.9900, -1.9900], requires_grad=True)
    >>> sorted(optimizer.state[0]), optimizer.param_groups[0]["step"]
    (['exp_avg', 'exp_avg_sq'], 2)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.9999), eps: float = 1e-6, weight_decay: float = 0.0,
                 decoupled_weight_decay: bool = False, *, maximize: bool = False) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        _checks.epsilon(group["eps"])
        _checks.betas(group["betas"])
        _checks.non_negative("weight_decay", group["weight_decay"])

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"exp_avg": _factory.zeros_like(param), "exp_avg_sq": _factory.zeros_like(param)}

    def elementwise_rule(self, group: dict) -> Rule | None:
        return adopt_first if group.get("step", 1) == 1 else adopt
