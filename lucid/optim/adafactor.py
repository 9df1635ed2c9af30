"""Adafactor: Adam's second moment in factored form, with relative step sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _factory
from .._dtype import finfo
from .._tensor import Tensor
from ._shared import norm, scalar
from .optimizer import Optimizer

if TYPE_CHECKING:
    from .optimizer import ParamsT
    from .schedules import Schedule


class Adafactor(Optimizer):
    r"""Adafactor (Shazeer & Stern, 2018), as torch.optim.Adafactor.

    The second moment of a matrix (or of each matrix in the last two dimensions of a
    tensor) is kept as a row factor :math:`R` and a column factor :math:`C` only, and the
    step is relative to the size of the parameter.

    .. math::

        \begin{aligned}
        G_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) &&\text{(negated if maximize)} \\
        \hat\beta_{2,t} &\leftarrow 1 - t^{\tau}, \qquad
            \rho_t \leftarrow \min(\gamma, 1/\sqrt{t}), \qquad
            \alpha_t \leftarrow \max(\epsilon_2, \mathrm{RMS}(\theta_{t-1}))\,\rho_t \\
        \theta_{t-1} &\leftarrow \theta_{t-1}(1 - \gamma\lambda) \\
        R_t &\leftarrow \hat\beta_{2,t} R_{t-1} + (1 - \hat\beta_{2,t})\,\mathrm{mean}_{\text{cols}}(G_t^2),
            \quad C_t \leftarrow \hat\beta_{2,t} C_{t-1} + (1 - \hat\beta_{2,t})\,\mathrm{mean}_{\text{rows}}(G_t^2) \\
        \hat V_t &\leftarrow \frac{R_t C_t}{\max(\mathrm{mean}(R_t), \epsilon_1)}
            \quad\text{(for a vector: } \hat V_t \leftarrow \hat\beta_{2,t}\hat V_{t-1}
            + (1 - \hat\beta_{2,t}) G_t^2 \text{)} \\
        U_t &\leftarrow \frac{G_t}{\sqrt{\max(\hat V_t, \epsilon_1^2)}}, \qquad
            \theta_t \leftarrow \theta_{t-1} - \frac{\alpha_t}{\max(1, \mathrm{RMS}(U_t)/d)}\,U_t
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 1e-2
        :math:`\gamma`: the largest relative step size :math:`\rho_t`, and the scale of the
        weight decay. (The paper uses no lr; its :math:`\rho_t` is capped at 0.01.)
    beta2_decay : float, default -0.8
        :math:`\tau \le 0`: the second moment averages with weight :math:`t^\tau`.
    eps : tuple (float or None, float), default (None, 1e-3)
        :math:`\epsilon_1`, the floor of the variance estimate (None: the machine epsilon
        of the parameter's dtype), and :math:`\epsilon_2`, the floor of the parameter's RMS.
    d : float, default 1.0
        Clipping threshold :math:`d \ge 1` of the update's RMS.
    weight_decay : float, default 0.0
        Decoupled weight decay :math:`\lambda`.
    foreach : optional
        Accepted for torch compatibility and stored in the groups; lucid runs one
        implementation.
    maximize : bool, default False
        Maximise the objective instead of minimising it.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "beta2_decay", "eps", "d", "weight_decay",
        "foreach" and "maximize".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "step" (int); for a parameter of two or more dimensions,
        "row_var" (its shape with the last dimension 1) and "col_var" (its shape with the
        second-to-last dimension 1); for a vector or a scalar, "variance" (its shape).

    Notes
    -----
    The arithmetic is torch's, in torch's order: the row and column means are squared
    norms divided by the count, the variance estimate is floored at :math:`\epsilon_1^2`
    before its reciprocal square root is taken, and the parameter's RMS is read before the
    weight decay. ``eps=(None, ...)`` takes the machine epsilon of each parameter's dtype
    (torch takes that of the first parameter of a group with a gradient, for the whole
    group; the two agree unless a group mixes dtypes). ``step`` is a Python int where torch
    keeps a float32 tensor; the numbers are the same. The state follows its parameter
    through ``module.to()``, ``.double()`` and ``.half()`` between steps.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([[1.0, -1.0], [1.0, -1.0]]))
    >>> optimizer = optim.Adafactor([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> optimizer.step()
    >>> w
    Parameter containing:
    tensor([[ 0.9000, -0.9000],
            [ 0.9000, -0.9000]], requires_grad=True)
    >>> sorted(optimizer.state[0]), optimizer.state[0]["row_var"].shape
    (['col_var', 'row_var', 'step'], (2, 1))
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        lr, (eps1, eps2) = group["lr"], group["eps"]
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= group["beta2_decay"]:
            raise ValueError(f"beta2_decay should be <= 0 but is: {group['beta2_decay']}")
        if eps1 is not None and not 0.0 <= eps1:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps1}")
        if not 0.0 <= eps2:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps2}")
        if not 1.0 <= group["d"]:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {group['d']}")
        if not 0.0 <= group["weight_decay"]:
            raise ValueError(f"weight_decay should be >= 0 but is: {group['weight_decay']}")

    def init_state(self, param: Tensor, group: dict) -> dict:
        if param.ndim > 1:
            rows, cols = list(param.shape), list(param.shape)
            rows[-1], cols[-2] = 1, 1
            return {"step": 0, "row_var": _factory.zeros(*rows, dtype=param.dtype, device=param.device),
                    "col_var": _factory.zeros(*cols, dtype=param.dtype, device=param.device)}
        return {"step": 0, "variance": _factory.zeros_like(param)}

    def update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        lr, (eps1, eps2), d = scalar(group["lr"]), group["eps"], group["d"]
        if eps1 is None:
            eps1 = finfo(param.dtype).eps
        state["step"] += 1
        step = float(state["step"])
        one_minus_beta2_t = step ** group["beta2_decay"]
        rho = min(lr, 1 / (step**0.5))
        alpha = max(eps2, norm(param).item() / (param.numel() ** 0.5)) * rho
        if group["weight_decay"] != 0:
            param.mul_(float(1 - lr * group["weight_decay"]))
        if grad.ndim > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_norm, col_norm = norm(grad, dim=-1, keepdim=True), norm(grad, dim=-2, keepdim=True)
            row_var.lerp_((row_norm * row_norm).div_(grad.shape[-1]), one_minus_beta2_t)
            col_var.lerp_((col_norm * col_norm).div_(grad.shape[-2]), one_minus_beta2_t)
            var_estimate = (row_var @ col_var).div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            var_estimate = state["variance"].lerp_(grad * grad, one_minus_beta2_t).detach().clone()
        update = (1 / var_estimate.clamp_(min=eps1 * eps1).sqrt_()).mul_(grad)  # torch's rsqrt_ is 1 / sqrt
        denom = max(1.0, norm(update).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=float(-alpha / denom))
