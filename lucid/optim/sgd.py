"""Stochastic gradient descent, with momentum, dampening and Nesterov momentum."""

from __future__ import annotations

from operator import methodcaller
from typing import TYPE_CHECKING

from .._sparse import SparseTensor
from . import _checks
from .elementwise import elementwise
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def sgd_scalars(group: dict, param: Tensor, state: dict) -> dict:
    neg_lr = -float(scalar(group["lr"]))
    momentum = group["momentum"]
    if momentum == 0:
        return {"neg_lr": neg_lr}
    decay, one_minus_dampening = momentum, 1 - group["dampening"]
    if "momentum_buffer" not in state:  # torch's first step: the buffer (zeros) becomes the gradient
        decay, one_minus_dampening = 0.0, 1.0
    scalars = {"decay": decay, "one_minus_dampening": one_minus_dampening, "neg_lr": neg_lr}
    if group["nesterov"]:
        scalars["momentum"] = momentum
    return scalars


#: What SGD's scalars depend on: a parameter's first momentum step has its own
#: (``"momentum_buffer" in state``, a C callable: the step's plan calls it per parameter).
has_momentum_buffer = methodcaller("__contains__", "momentum_buffer")


@elementwise(decay="l2", scalars=sgd_scalars)
def sgd(param, grad, neg_lr):
    return (param + grad * neg_lr,)


@elementwise(state=("momentum_buffer",), decay="l2", scalars=sgd_scalars, depends_on=has_momentum_buffer)
def sgd_momentum(param, grad, momentum_buffer, decay, one_minus_dampening, neg_lr):
    # on the first step decay is 0 and one_minus_dampening 1: the buffer becomes the gradient
    momentum_buffer = momentum_buffer * decay + grad * one_minus_dampening
    return param + momentum_buffer * neg_lr, momentum_buffer


@elementwise(state=("momentum_buffer",), decay="l2", scalars=sgd_scalars, depends_on=has_momentum_buffer)
def sgd_nesterov(param, grad, momentum_buffer, decay, one_minus_dampening, momentum, neg_lr):
    momentum_buffer = momentum_buffer * decay + grad * one_minus_dampening
    return param + (grad + momentum_buffer * momentum) * neg_lr, momentum_buffer


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum), as torch.optim.SGD.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) + \lambda \theta_{t-1}
            &&\text{(negated first if maximize)} \\
        b_t &\leftarrow \begin{cases} g_t & t = 1 \\ \mu b_{t-1} + (1 - \tau) g_t & t > 1 \end{cases} \\
        g_t &\leftarrow g_t + \mu b_t \text{ if nesterov, else } b_t
            &&\text{(when } \mu \neq 0\text{)} \\
        \theta_t &\leftarrow \theta_{t-1} - \gamma g_t
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    momentum : float, default 0
        Momentum factor :math:`\mu`.
    dampening : float, default 0
        Dampening :math:`\tau` for momentum (not applied on the first step, as in torch).
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    nesterov : bool, default False
        Use Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
    maximize : bool, default False
        Maximise the objective instead of minimising it.
    foreach, fused : bool, optional
        Accepted and stored in the groups: lucid runs one implementation, torch's
        single-tensor one, whose numbers torch's foreach and fused paths give too (fused to
        float64 rounding).
    differentiable : bool, default False
        ``True`` raises NotImplementedError: steps are not recorded by autograd.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "momentum", "dampening", "weight_decay", "nesterov",
        "maximize", "foreach", "differentiable" and "fused".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "momentum_buffer" (a tensor shaped like the parameter) when
        momentum is nonzero; nothing otherwise, as in torch.

    Notes
    -----
    The first momentum step sets the buffer to the gradient itself, without dampening,
    exactly as torch does. The state follows its parameter through ``module.to()``,
    ``.double()`` and ``.half()`` between steps.

    Row-sparse gradients (``Embedding(sparse=True)``) are accepted, as in torch. Without
    momentum the step adds ``-lr`` times each listed row to the parameter, one entry after
    the other as torch does, in O(touched rows). With momentum torch makes the buffer a
    sparse tensor whose rows are every row seen so far; lucid keeps it **dense** (the rows
    never seen hold zeros, which move nothing), so ``state_dict``, loading and conversions
    stay those of every other buffer. The values are torch's (the first step bit for bit;
    later ones up to the rounding of rows listed twice), but a momentum step costs
    O(table), as torch's does once the buffer has met most rows. ``weight_decay`` with a
    sparse gradient raises torch's error.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -1.0]))
    >>> optimizer = optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     optimizer.zero_grad()
    ...     loss = (w * w).sum()
    ...     loss.backward()
    ...     optimizer.step()
    >>> w
    Parameter containing:
    tensor([ 0.4600, -0.4600], requires_grad=True)
    """

    older_group_defaults = {**Optimizer.older_group_defaults, "nesterov": False, "fused": False}

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        _checks.implementation_flags(foreach, fused, differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        _checks.non_negative("momentum", group["momentum"])
        _checks.non_negative("weight_decay", group["weight_decay"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def check_sparse(self, group: dict) -> None:
        if group["weight_decay"] != 0:  # grad.add(param) fails in torch, before any change here
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

    def state_shapes(self, param: Tensor, group: dict) -> dict:
        return {"momentum_buffer": param.shape}

    def elementwise_rule(self, group: dict) -> Rule | None:
        if group["momentum"] == 0:
            return sgd
        return sgd_nesterov if group["nesterov"] else sgd_momentum

    def update(self, param: Tensor, grad: Tensor | SparseTensor, state: dict, group: dict) -> None:
        if isinstance(grad, SparseTensor):
            return self._update_sparse(param, grad, state, group)
        return super().update(param, grad, state, group)

    def _update_sparse(self, param, grad, state, group):
        lr, momentum = float(scalar(group["lr"])), group["momentum"]
        if momentum == 0:
            param.add_(grad, alpha=-lr)  # a sparse add: only the gradient's rows change
            return
        buf = state.get("momentum_buffer")
        if buf is None:
            state["momentum_buffer"] = buf = grad.to_dense()
            if not group["nesterov"]:
                param.add_(grad, alpha=-lr)  # torch adds the (sparse) buffer entry by entry
                return
        else:
            buf.mul_(momentum)
            buf.add_(grad, alpha=1 - group["dampening"])
        if group["nesterov"]:
            step = buf.mul(momentum)
            step.add_(grad)
            param.add_(step, alpha=-lr)
        else:
            param.add_(buf, alpha=-lr)
