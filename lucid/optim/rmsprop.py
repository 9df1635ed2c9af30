"""RMSprop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from . import _checks
from .elementwise import elementwise, lerp, sqrt
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def rmsprop_scalars(group: dict, param: Tensor, state: dict) -> dict:
    alpha = group["alpha"]
    scalars = {"alpha": float(alpha), "one_minus_alpha": float(1 - alpha), "eps": float(group["eps"]),
               "neg_lr": -float(scalar(group["lr"]))}
    if group["momentum"] > 0:
        scalars["momentum"] = float(group["momentum"])
    return scalars


# square_avg - grad_avg**2 is torch's addcmul_(grad_avg, grad_avg, value=-1): the same rounding


@elementwise(state=("square_avg",), decay="l2", scalars=rmsprop_scalars)
def rmsprop(param, grad, square_avg, alpha, one_minus_alpha, eps, neg_lr):
    square_avg = square_avg * alpha + grad * grad * one_minus_alpha
    return param + grad * neg_lr / (sqrt(square_avg) + eps), square_avg


@elementwise(state=("square_avg", "grad_avg"), decay="l2", scalars=rmsprop_scalars)
def rmsprop_centered(param, grad, square_avg, grad_avg, alpha, one_minus_alpha, eps, neg_lr):
    square_avg = square_avg * alpha + grad * grad * one_minus_alpha
    grad_avg = lerp(grad_avg, grad, one_minus_alpha)
    avg = sqrt(square_avg - grad_avg * grad_avg) + eps
    return param + grad * neg_lr / avg, square_avg, grad_avg


@elementwise(state=("square_avg", "momentum_buffer"), decay="l2", scalars=rmsprop_scalars)
def rmsprop_momentum(param, grad, square_avg, momentum_buffer, alpha, one_minus_alpha, eps, momentum, neg_lr):
    square_avg = square_avg * alpha + grad * grad * one_minus_alpha
    momentum_buffer = momentum_buffer * momentum + grad / (sqrt(square_avg) + eps)
    return param + momentum_buffer * neg_lr, square_avg, momentum_buffer


@elementwise(state=("square_avg", "grad_avg", "momentum_buffer"), decay="l2", scalars=rmsprop_scalars)
def rmsprop_centered_momentum(param, grad, square_avg, grad_avg, momentum_buffer, alpha, one_minus_alpha, eps,
                              momentum, neg_lr):
    square_avg = square_avg * alpha + grad * grad * one_minus_alpha
    grad_avg = lerp(grad_avg, grad, one_minus_alpha)
    momentum_buffer = momentum_buffer * momentum + grad / (sqrt(square_avg - grad_avg * grad_avg) + eps)
    return param + momentum_buffer * neg_lr, square_avg, grad_avg, momentum_buffer


class RMSprop(Optimizer):
    r"""RMSprop (Hinton, 2012), with momentum and centering, as torch.optim.RMSprop.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) + \lambda\theta_{t-1}
            &&\text{(negated first if maximize)} \\
        v_t &\leftarrow \alpha v_{t-1} + (1 - \alpha) g_t^2 \\
        \bar g_t &\leftarrow \alpha \bar g_{t-1} + (1 - \alpha) g_t,
            \qquad \tilde v_t \leftarrow v_t - \bar g_t^2 &&\text{if centered, else } \tilde v_t = v_t \\
        b_t &\leftarrow \mu b_{t-1} + \frac{g_t}{\sqrt{\tilde v_t} + \epsilon},
            \qquad \theta_t \leftarrow \theta_{t-1} - \gamma b_t &&\text{if } \mu > 0 \\
        \theta_t &\leftarrow \theta_{t-1} - \gamma \frac{g_t}{\sqrt{\tilde v_t} + \epsilon}
            &&\text{otherwise}
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1e-2
        Learning rate :math:`\gamma`.
    alpha : float, default 0.99
        Smoothing constant :math:`\alpha` of the running averages.
    eps : float, default 1e-8
        Term :math:`\epsilon` added to the denominator, outside the square root.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    momentum : float, default 0
        Momentum factor :math:`\mu`.
    centered : bool, default False
        Normalise by an estimate of the gradient's variance instead of its second moment.
    capturable : bool, default False
        ``True`` raises NotImplementedError: torch's CUDA-graph mode, which torch refuses for
        CPU tensors.
    foreach : bool, optional
        Accepted and stored in the groups: lucid runs one implementation, torch's
        single-tensor one, whose numbers torch's foreach path gives too.
    maximize : bool, default False
        Maximise the objective instead of minimising it.
    differentiable : bool, default False
        ``True`` raises NotImplementedError: steps are not recorded by autograd.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "momentum", "alpha", "eps", "centered",
        "weight_decay", "capturable", "foreach", "maximize" and "differentiable".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int) and "square_avg" (:math:`v`), plus
        "momentum_buffer" (:math:`b`) if momentum > 0 and "grad_avg" (:math:`\bar g`) if
        centered, tensors shaped like the parameter. Which of these exist is decided when
        the state is created, as in torch.

    Notes
    -----
    The arithmetic is torch's ``_single_tensor_rmsprop``, in its order: :math:`\epsilon`
    is added after the square root (an earlier Lucid took ``sqrt(v + eps)``), and the
    running mean of the gradient uses ``lerp_``. ``step`` is a Python int where torch
    keeps a float32 tensor.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.RMSprop([w], lr=0.01, alpha=0.75)
    >>> (w * w).sum().backward()
    >>> optimizer.step()   # g / sqrt(0.25 g^2) = 2 sign(g)
    >>> w
    Parameter containing:
    tensor([ 0.9800, -1.9800], requires_grad=True)
    >>> sorted(optimizer.state[0])
    ['square_avg', 'step']
    """

    older_group_defaults = {**Optimizer.older_group_defaults, "momentum": 0, "centered": False}

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _checks.implementation_flags(foreach, None, differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        _checks.epsilon(group["eps"])
        _checks.non_negative("momentum", group["momentum"])
        _checks.non_negative("weight_decay", group["weight_decay"])
        _checks.non_negative("alpha", group["alpha"])

    def init_state(self, param: Tensor, group: dict) -> dict:
        state = {"step": 0, "square_avg": _factory.zeros_like(param)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = _factory.zeros_like(param)
        if group["centered"]:
            state["grad_avg"] = _factory.zeros_like(param)
        return state

    def elementwise_rule(self, group: dict) -> Rule | None:
        if group["momentum"] > 0:
            return rmsprop_centered_momentum if group["centered"] else rmsprop_momentum
        return rmsprop_centered if group["centered"] else rmsprop
