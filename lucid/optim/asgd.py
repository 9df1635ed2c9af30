"""Averaged stochastic gradient descent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from . import _checks
from ._shared import float32_state
from .elementwise import elementwise
from .optimizer import Optimizer

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def asgd_scalars(group: dict, param: Tensor, state: dict) -> dict:
    lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
    eta, mu, step = state["eta"], state["mu"], state["step"]
    eta_value, mu_value = eta.item(), mu.item()
    # the values for the next step, as torch updates them after this one
    eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
    mu.fill_(1 / max(1, step - t0))
    return {"decay": float(1 - lambd * eta_value), "neg_eta": -eta_value, "mu": mu_value, "averaging": mu_value != 1}


# eta and mu are each parameter's own (float32) state: the scalars are computed per parameter
@elementwise(state=("ax",), decay="l2", scalars=asgd_scalars, depends_on=None)
def asgd(param, grad, ax, decay, neg_eta, mu, averaging):
    param = param * decay + grad * neg_eta
    if averaging:
        return param, ax + (param - ax) * mu
    return param, param


class ASGD(Optimizer):
    r"""Averaged SGD (Polyak & Juditsky, 1992), with torch's step-size schedule, as torch.optim.ASGD.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) + \lambda_w\theta_{t-1}
            &&\text{(negated first if maximize)} \\
        \theta_t &\leftarrow (1 - \lambda\eta_{t-1})\,\theta_{t-1} - \eta_{t-1} g_t \\
        a_t &\leftarrow \begin{cases} \theta_t & \mu_{t-1} = 1 \\
            a_{t-1} + \mu_{t-1}(\theta_t - a_{t-1}) & \text{otherwise} \end{cases} \\
        \eta_t &\leftarrow \frac{\gamma}{(1 + \lambda\gamma t)^\alpha}, \qquad
        \mu_t \leftarrow \frac{1}{\max(1, t - t_0)}
        \end{aligned}

    with :math:`\eta_0 = \gamma` and :math:`\mu_0 = 1`. The average :math:`a_t` is kept in
    the state (``"ax"``); the parameters themselves follow the SGD iterates.

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1e-2
        Learning rate :math:`\gamma`.
    lambd : float, default 1e-4
        Decay term :math:`\lambda`.
    alpha : float, default 0.75
        Power :math:`\alpha` of the step-size schedule.
    t0 : float, default 1e6
        Step :math:`t_0` after which averaging starts.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda_w`.
    foreach : bool, optional
        ``True`` raises NotImplementedError: torch's foreach ASGD computes other numbers than
        its single-tensor one, which lucid follows (3e-9 to 3e-7 relative in float64).
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
        Groups with keys "params", "lr", "lambd", "alpha", "t0", "weight_decay", "foreach",
        "maximize", "differentiable" and "capturable".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int), "eta" and "mu" (0-d float32 tensors) and
        "ax" (the average, shaped like the parameter).

    Notes
    -----
    This is torch's algorithm, arithmetic and order (``_single_tensor_asgd``); an earlier
    Lucid's ASGD was a different rule. Like torch, lucid keeps ``eta`` and ``mu`` as 0-d
    **float32** tensors (on the parameter's device) whatever the parameter's dtype: each
    step computes them in Python floats, rounds them to float32, and uses the rounded
    values, so float64 trajectories equal torch's rather than an all-float64 computation
    (the two differ by about 1e-7 relative). They stay float32 through ``.double()`` and
    ``load_state_dict`` (where torch would cast them to the parameter's dtype).
    ``step`` is a Python int where torch keeps a float32 tensor.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.ASGD([w], lr=0.1, lambd=0.0)
    >>> (w * w).sum().backward()
    >>> optimizer.step()
    >>> w
    Parameter containing:
    tensor([ 0.8000, -1.6000], requires_grad=True)
    >>> sorted(optimizer.state[0]), optimizer.state[0]["eta"].dtype
    (['ax', 'eta', 'mu', 'step'], lucid.float32)
    """

    float32_keys = frozenset({"eta", "mu"})
    unmatched_flags = {"foreach": ()}  # torch's foreach ASGD: 3e-9 to 3e-7 relative from its single-tensor path

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _checks.implementation_flags(foreach, None, differentiable)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        _checks.non_negative("weight_decay", group["weight_decay"])

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"step": 0, "eta": float32_state(group["lr"], param), "mu": float32_state(1.0, param),
                "ax": _factory.zeros_like(param)}

    def elementwise_rule(self, group: dict) -> Rule | None:
        return asgd
