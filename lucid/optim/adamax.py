"""Adamax."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from . import _checks
from .elementwise import abs, elementwise, lerp, maximum
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def adamax_scalars(group: dict, param: Tensor, state: dict) -> dict:
    lr, (beta1, beta2) = group["lr"], group["betas"]
    clr = lr / (1 - beta1 ** state["step"])
    return {"weight1": float(1 - beta1), "beta2": float(beta2), "eps": float(group["eps"]), "neg_clr": -float(scalar(clr))}


@elementwise(state=("exp_avg", "exp_inf"), decay="l2", scalars=adamax_scalars)
def adamax(param, grad, exp_avg, exp_inf, weight1, beta2, eps, neg_clr):
    exp_avg = lerp(exp_avg, grad, weight1)
    exp_inf = maximum(exp_inf * beta2, abs(grad) + eps)
    return param + exp_avg * neg_clr / exp_inf, exp_avg, exp_inf


class Adamax(Optimizer):
    r"""Adamax, Adam with the infinity norm (Kingma & Ba, 2015), as torch.optim.Adamax.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) + \lambda\theta_{t-1}
            &&\text{(negated first if maximize)} \\
        m_t &\leftarrow \beta_1 m_{t-1} + (1 - \beta_1) g_t \\
        u_t &\leftarrow \max(\beta_2 u_{t-1},\ |g_t| + \epsilon) \\
        \theta_t &\leftarrow \theta_{t-1} - \frac{\gamma}{1 - \beta_1^t} \frac{m_t}{u_t}
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 2e-3
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        Coefficients :math:`(\beta_1, \beta_2)` of the first moment and of the norm.
    eps : float, default 1e-8
        Term :math:`\epsilon` added to :math:`|g_t|` inside the maximum.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
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
        Groups with keys "params", "lr", "betas", "eps", "weight_decay", "foreach",
        "maximize", "differentiable" and "capturable".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int), "exp_avg" (:math:`m`) and "exp_inf"
        (:math:`u`), tensors shaped like the parameter.

    Notes
    -----
    The arithmetic is torch's ``_single_tensor_adamax``, in its order. ``eps`` is added to
    :math:`|g_t|` inside the maximum, not to the denominator (an earlier Lucid added it to
    the denominator). ``step`` is a Python int where torch keeps a float32 tensor.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> optimizer.step()
    >>> w
    Parameter containing:
    tensor([ 0.9000, -1.9000], requires_grad=True)
    >>> sorted(optimizer.state[0])
    ['exp_avg', 'exp_inf', 'step']
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 foreach: bool | None = None, *, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _checks.implementation_flags(foreach, None, differentiable)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    unmatched_flags = {"foreach": ("lr",)}  # 7e-10 relative with a Tensor lr

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        _checks.epsilon(group["eps"])
        _checks.betas(group["betas"])
        _checks.non_negative("weight_decay", group["weight_decay"])

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"step": 0, "exp_avg": _factory.zeros_like(param), "exp_inf": _factory.zeros_like(param)}

    def elementwise_rule(self, group: dict) -> Rule | None:
        return adamax
