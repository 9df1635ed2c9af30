"""Adadelta."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from . import _checks
from .elementwise import elementwise, sqrt
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def adadelta_scalars(group: dict, param: Tensor, state: dict) -> dict:
    rho = group["rho"]
    return {"rho": float(rho), "one_minus_rho": float(1 - rho), "eps": float(group["eps"]),
            "neg_lr": -float(scalar(group["lr"]))}


@elementwise(state=("square_avg", "acc_delta"), decay="l2", scalars=adadelta_scalars)
def adadelta(param, grad, square_avg, acc_delta, rho, one_minus_rho, eps, neg_lr):
    square_avg = square_avg * rho + grad * grad * one_minus_rho
    std = sqrt(square_avg + eps)
    delta = sqrt(acc_delta + eps) / std * grad
    acc_delta = acc_delta * rho + delta * delta * one_minus_rho
    return param + delta * neg_lr, square_avg, acc_delta


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler, 2012), as torch.optim.Adadelta.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) + \lambda\theta_{t-1}
            &&\text{(negated first if maximize)} \\
        v_t &\leftarrow \rho v_{t-1} + (1 - \rho) g_t^2 \\
        \Delta x_t &\leftarrow \frac{\sqrt{u_{t-1} + \epsilon}}{\sqrt{v_t + \epsilon}}\, g_t \\
        u_t &\leftarrow \rho u_{t-1} + (1 - \rho) \Delta x_t^2 \\
        \theta_t &\leftarrow \theta_{t-1} - \gamma \Delta x_t
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1.0
        Learning rate :math:`\gamma`, a factor on the delta.
    rho : float, default 0.9
        Decay :math:`\rho` of both running averages, in [0, 1].
    eps : float, default 1e-6
        Term :math:`\epsilon` added inside both square roots.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    foreach : bool, optional
        Accepted and stored in the groups: lucid runs one implementation, torch's
        single-tensor one, whose numbers torch's foreach path gives too.
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
        Groups with keys "params", "lr", "rho", "eps", "weight_decay", "maximize",
        "capturable", "foreach" and "differentiable".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int), "square_avg" (:math:`v`) and "acc_delta"
        (:math:`u`), tensors shaped like the parameter.

    Notes
    -----
    The arithmetic is torch's ``_single_tensor_adadelta``, in its order. ``step`` is a
    Python int where torch keeps a float32 tensor; the numbers are the same.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -1.0]))
    >>> optimizer = optim.Adadelta([w], lr=0.5, rho=0.25, eps=1.0)
    >>> (w * w).sum().backward()
    >>> optimizer.step()   # delta = sqrt(0 + 1) / sqrt(0.75 * 2**2 + 1) * 2 = 1
    >>> w
    Parameter containing:
    tensor([ 0.5000, -0.5000], requires_grad=True)
    >>> sorted(optimizer.state[0])
    ['acc_delta', 'square_avg', 'step']
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _checks.implementation_flags(foreach, None, differentiable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        if not 0.0 <= group["rho"] <= 1.0:
            raise ValueError(f"Invalid rho value: {group['rho']}")
        _checks.epsilon(group["eps"])
        _checks.non_negative("weight_decay", group["weight_decay"])

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"step": 0, "square_avg": _factory.zeros_like(param), "acc_delta": _factory.zeros_like(param)}

    def elementwise_rule(self, group: dict) -> Rule | None:
        return adadelta
