"""Adagrad."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from .._sparse import SparseTensor
from .._tensor import Tensor
from . import _checks
from .elementwise import elementwise, sqrt
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def decayed_lr(group: dict, step: int):
    """torch's decayed learning rate (a Tensor lr keeps its dtype)."""
    return group["lr"] / (1 + (step - 1) * group["lr_decay"])


def adagrad_scalars(group: dict, param: Tensor, state: dict) -> dict:
    return {"eps": float(group["eps"]), "neg_clr": -float(scalar(decayed_lr(group, state["step"])))}


@elementwise(state=("sum",), decay="l2", scalars=adagrad_scalars)
def adagrad(param, grad, sum, eps, neg_clr):  # noqa: A002 - torch's name for the state
    sum = sum + grad * grad
    return param + grad * neg_clr / (sqrt(sum) + eps), sum


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al., 2011), with learning-rate decay, as torch.optim.Adagrad.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) + \lambda\theta_{t-1}
            &&\text{(negated first if maximize)} \\
        \tilde\gamma_t &\leftarrow \frac{\gamma}{1 + (t - 1)\eta} \\
        s_t &\leftarrow s_{t-1} + g_t^2, \qquad s_0 = \mathrm{initial\_accumulator\_value} \\
        \theta_t &\leftarrow \theta_{t-1} - \tilde\gamma_t \frac{g_t}{\sqrt{s_t} + \epsilon}
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1e-2
        Learning rate :math:`\gamma`.
    lr_decay : float, default 0
        Learning-rate decay :math:`\eta`.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    initial_accumulator_value : float, default 0
        Starting value :math:`s_0` of every element of the sum of squares.
    eps : float, default 1e-10
        Term :math:`\epsilon` added to the denominator.
    foreach, fused : bool, optional
        Accepted and stored in the groups: lucid runs one implementation, torch's
        single-tensor one, whose numbers torch's foreach and fused paths give too (fused to
        float64 rounding); ``fused=True`` with a Tensor ``lr`` raises NotImplementedError, as torch's
        fused kernel computes other numbers with one.
    maximize : bool, default False
        Maximise the objective instead of minimising it.
    differentiable : bool, default False
        ``True`` raises NotImplementedError: steps are not recorded by autograd.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "lr_decay", "eps", "weight_decay",
        "initial_accumulator_value", "foreach", "maximize", "differentiable" and "fused".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int) and "sum" (a tensor shaped like the
        parameter). Unlike every other optimizer's, this state exists as soon as a group is
        added, before any step, as in torch.

    Notes
    -----
    The arithmetic is torch's ``_single_tensor_adagrad``, in its order; with a Tensor
    ``lr`` the decayed rate :math:`\tilde\gamma_t` is computed in the Tensor's dtype, as
    torch computes it. ``step`` is a Python int where torch keeps a float32 tensor.

    As in torch, the accumulator starts at the *constructor's*
    ``initial_accumulator_value``: a group may carry its own value, but it is not used.
    torch creates the state of the constructor's groups at once and that of a group added
    later with ``add_param_group`` at its first step; lucid creates both at once (the
    numbers are the same).

    Row-sparse gradients (``Embedding(sparse=True)``) are accepted, as in torch: they are
    coalesced and only their rows of the sum and of the parameter change, in O(touched
    rows), with torch's sparse arithmetic (``-clr * (g / std)``). With ``weight_decay``
    they raise torch's error, before anything changes.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.Adagrad([w], lr=0.5, initial_accumulator_value=1.0)
    >>> sorted(optimizer.state[0])   # created at construction
    ['step', 'sum']
    >>> (w * w).sum().backward()
    >>> optimizer.step()
    >>> optimizer.state[0]["sum"]
    tensor([ 5., 17.])
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        _checks.implementation_flags(foreach, fused, differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    unmatched_flags = {"fused": ("lr",)}  # torch's fused CPU kernel: 5e-10 relative with a Tensor lr

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        _checks.non_negative("lr_decay", group["lr_decay"])
        _checks.non_negative("weight_decay", group["weight_decay"])
        _checks.non_negative("initial_accumulator_value", group["initial_accumulator_value"])
        _checks.epsilon(group["eps"])

    def check_sparse(self, group: dict) -> None:
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        for param in group["params"]:  # its state made now, as torch does
            if param not in self.state:
                self.state[param] = self.init_state(param, group)

    def state_shapes(self, param: Tensor, group: dict) -> dict:
        return {"sum": param.shape}  # without building a table-sized fresh state

    def init_state(self, param: Tensor, group: dict) -> dict:
        start = self.defaults["initial_accumulator_value"]
        return {"step": 0, "sum": _factory.full(param.shape, start, dtype=param.dtype, device=param.device)}

    def elementwise_rule(self, group: dict) -> Rule | None:
        return adagrad

    def update(self, param: Tensor, grad: Tensor | SparseTensor, state: dict, group: dict) -> None:
        if not isinstance(grad, SparseTensor):
            return super().update(param, grad, state, group)
        state["step"] += 1
        self._update_sparse(param, grad.coalesce(), state, group, decayed_lr(group, state["step"]))

    def _update_sparse(self, param, grad, state, group, clr):
        """torch's sparse branch: the sum and the parameter change on the gradient's rows only."""
        if grad._nnz() == 0:
            return
        rows, values = grad.indices()[0], grad.values()
        state_sum = state["sum"]
        total = state_sum[rows] + values * values
        state_sum[rows] = total
        std = total.sqrt().add_(group["eps"])
        param[rows] = param[rows] + (values / std) * -float(scalar(clr))
