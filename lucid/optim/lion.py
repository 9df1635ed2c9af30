"""Lion: the sign of an interpolated momentum (Chen et al., 2023)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from . import _checks
from .elementwise import elementwise, sign
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def lion_scalars(group: dict, param: Tensor, state: dict) -> dict:
    beta1, beta2 = group["betas"]
    return {"beta1": float(beta1), "one_minus_beta1": float(1 - beta1), "beta2": float(beta2),
            "one_minus_beta2": float(1 - beta2), "neg_lr": -float(scalar(group["lr"]))}


@elementwise(state=("exp_avg",), decay="decoupled", scalars=lion_scalars)
def lion(param, grad, exp_avg, beta1, one_minus_beta1, beta2, one_minus_beta2, neg_lr):
    direction = exp_avg * beta1 + grad * one_minus_beta1
    return param + sign(direction) * neg_lr, exp_avg * beta2 + grad * one_minus_beta2


class Lion(Optimizer):
    r"""Lion (EvoLved Sign Momentum; Chen et al., 2023), computed as ``mlx.optimizers.Lion``.

    torch.optim has no Lion; this one follows the paper's algorithm box with MLX's
    arithmetic, and torch.optim's interface (groups, ``maximize``, ``state_dict``).

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) &&\text{(negated if maximize)} \\
        c_t &\leftarrow \beta_1 m_{t-1} + (1 - \beta_1) g_t \\
        \theta_t &\leftarrow \theta_{t-1}(1 - \gamma\lambda) - \gamma\,\mathrm{sign}(c_t) \\
        m_t &\leftarrow \beta_2 m_{t-1} + (1 - \beta_2) g_t
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1e-4
        Learning rate :math:`\gamma`: every coordinate moves by exactly :math:`\gamma`
        (plus the decay).
    betas : tuple of float, default (0.9, 0.99)
        :math:`\beta_1` interpolates the update direction, :math:`\beta_2` the momentum.
    weight_decay : float, default 0.0
        Decoupled weight decay :math:`\lambda`.
    maximize : bool, default False
        Maximise the objective instead of minimising it.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "weight_decay" and "maximize".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "exp_avg", the momentum :math:`m` (a tensor shaped like the
        parameter). There is no step count.

    Notes
    -----
    The arithmetic is MLX's, in MLX's order: ``c`` is ``beta1 * m + (1 - beta1) * g`` (two
    products and a sum, not a ``lerp``), and the momentum is updated after the parameter.
    A coordinate whose ``c`` is exactly zero does not move (``sign(0) == 0``). As the
    update has the same size in every coordinate, the paper suggests an lr 3-10x smaller
    than AdamW's and a weight decay 3-10x larger. Validation messages are those of
    torch.optim's Adam family. The state follows its parameter through ``module.to()``,
    ``.double()`` and ``.half()`` between steps.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0, 0.5]))
    >>> optimizer = optim.Lion([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> optimizer.step()
    >>> w
    Parameter containing:
    tensor([ 0.9000, -1.9000,  0.4000], requires_grad=True)
    >>> optimizer.state[0]["exp_avg"]
    tensor([ 0.0200, -0.0400,  0.0100])
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-4, betas: tuple[float, float] = (0.9, 0.99),
                 weight_decay: float = 0.0, *, maximize: bool = False) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        _checks.betas(group["betas"])
        _checks.non_negative("weight_decay", group["weight_decay"])

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"exp_avg": _factory.zeros_like(param)}

    def elementwise_rule(self, group: dict) -> Rule | None:
        return lion
