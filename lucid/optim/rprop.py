"""Rprop, resilient backpropagation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from . import _checks
from .elementwise import elementwise, maximum, minimum, sign, where
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def rprop_scalars(group: dict, param: Tensor, state: dict) -> dict:
    (etaminus, etaplus), (step_size_min, step_size_max) = group["etas"], group["step_sizes"]
    return {"etaminus": float(etaminus), "etaplus": float(etaplus), "step_size_min": float(step_size_min),
            "step_size_max": float(step_size_max), "zero": 0.0, "one": 1.0}


@elementwise(state=("prev", "step_size"), scalars=rprop_scalars)
def rprop(param, grad, prev, step_size, etaminus, etaplus, step_size_min, step_size_max, zero, one):
    same_sign = sign(grad * prev)
    factor = where(same_sign > zero, etaplus, where(same_sign < zero, etaminus, where(same_sign == zero, one, same_sign)))
    step_size = minimum(maximum(step_size * factor, step_size_min), step_size_max)
    grad = where(factor == etaminus, zero, grad)  # after a sign change: no step, and no sign remembered
    return param - sign(grad) * step_size, grad, step_size


class Rprop(Optimizer):
    r"""Rprop (Riedmiller & Braun, 1993), as torch.optim.Rprop.

    Each element moves by its own step size, in the direction opposite to its gradient's
    sign; the step grows while the sign holds and shrinks when it flips.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) &&\text{(negated if maximize)} \\
        \Delta_t &\leftarrow \begin{cases}
            \min(\eta_+ \Delta_{t-1}, \Delta_{\max}) & g_t g_{t-1} > 0 \\
            \max(\eta_- \Delta_{t-1}, \Delta_{\min}) & g_t g_{t-1} < 0,
                \text{ and then } g_t \leftarrow 0 \\
            \Delta_{t-1} & \text{otherwise}
            \end{cases} \\
        \theta_t &\leftarrow \theta_{t-1} - \Delta_t \operatorname{sign}(g_t)
        \end{aligned}

    with :math:`\Delta_0 = \gamma` and :math:`g_0 = 0`; the (possibly zeroed) :math:`g_t`
    is what the next step compares against.

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1e-2
        Initial step size :math:`\Delta_0` (used only when a parameter's state is created).
    etas : tuple of float, default (0.5, 1.2)
        Factors :math:`(\eta_-, \eta_+)`, with :math:`0 < \eta_- < 1 < \eta_+`.
    step_sizes : tuple of float, default (1e-6, 50)
        Bounds :math:`(\Delta_{\min}, \Delta_{\max})` of the step sizes.
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
        Groups with keys "params", "lr", "etas", "step_sizes", "foreach", "maximize",
        "differentiable" and "capturable".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int), "prev" (:math:`g_{t-1}`) and "step_size"
        (:math:`\Delta`), tensors shaped like the parameter.

    Notes
    -----
    The arithmetic is torch's ``_single_tensor_rprop``, in its order (including a NaN
    product of gradients, which leaves a NaN factor as in torch). Rprop has no weight
    decay, as in torch. ``step`` is a Python int where torch keeps a float32 tensor.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.Rprop([w], lr=0.25, etas=(0.5, 2.0))
    >>> for _ in range(2):
    ...     optimizer.zero_grad()
    ...     (w * w).sum().backward()
    ...     optimizer.step()
    >>> w   # steps of 0.25, then (same signs) 0.5
    Parameter containing:
    tensor([ 0.2500, -1.2500], requires_grad=True)
    >>> optimizer.state[0]["step_size"]
    tensor([0.5000, 0.5000])
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _checks.implementation_flags(foreach, None, differentiable)
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        etaminus, etaplus = group["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise ValueError(f"Invalid eta values: {etaminus}, {etaplus}")

    def init_state(self, param: Tensor, group: dict) -> dict:
        step_size = _factory.full(param.shape, float(scalar(group["lr"])), dtype=param.dtype, device=param.device)
        return {"step": 0, "prev": _factory.zeros_like(param), "step_size": step_size}

    def elementwise_rule(self, group: dict) -> Rule | None:
        return rprop
