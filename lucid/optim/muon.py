"""Muon: momentum orthogonalised by a Newton-Schulz iteration, for 2-D parameters."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import _factory
from .._tensor import Tensor
from ._shared import norm, scalar
from .optimizer import Optimizer

if TYPE_CHECKING:
    from .optimizer import ParamsT
    from .schedules import Schedule

_ADJUST_LR_FNS = (None, "original", "match_rms_adamw")


def zeropower_via_newtonschulz(grad: Tensor, ns_coefficients, ns_steps: int, eps: float) -> Tensor:
    r"""An approximate orthogonalisation :math:`\approx UV^\top` of the matrix ``grad = USV^\top``.

    ``ns_steps`` quintic Newton-Schulz steps :math:`X \leftarrow aX + (bA + cA^2)X` with
    :math:`A = XX^\top`, from :math:`X_0 = G / \max(\|G\|_F, \epsilon)`, on the wide
    orientation of the matrix (transposed when it has more rows than columns), as torch's
    ``_zeropower_via_newtonschulz`` computes it, in ``grad``'s dtype.
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.shape[0] > grad.shape[1]
    ortho = grad.T if tall else grad
    ortho = ortho / norm(ortho).clamp(min=eps)
    for _ in range(ns_steps):
        gram = ortho @ ortho.T
        gram_update = gram * b + (gram @ gram) * c  # torch.addmm(gram, gram, gram, beta=b, alpha=c)
        ortho = ortho * a + gram_update @ ortho  # torch.addmm(ortho, gram_update, ortho, beta=a)
    return ortho.T if tall else ortho


def adjust_lr(lr: float, adjust_lr_fn, shape) -> float:
    """The lr of an ``A x B`` matrix: ``lr * sqrt(max(1, A/B))`` ("original", the default) or
    ``lr * 0.2 * sqrt(max(A, B))`` ("match_rms_adamw")."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


def check_muon_group(group: dict) -> None:
    """torch.optim.Muon's checks of a group's hyperparameters (its messages), and its 2-D parameters."""
    if isinstance(group["lr"], Tensor) and group["lr"].numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= group["lr"]:
        raise ValueError(f"Learning rate should be >= 0 but is: {group['lr']}")
    if not 0.0 <= group["momentum"]:
        raise ValueError(f"momentum should be >= 0 but is: {group['momentum']}")
    if not 0.0 <= group["weight_decay"]:
        raise ValueError(f"weight decay should be >= 0 but is: {group['weight_decay']}")
    if group["adjust_lr_fn"] not in _ADJUST_LR_FNS:
        raise ValueError(f"Adjust learning rate function {group['adjust_lr_fn']} is not supported")
    for param in group.get("params", ()):
        if param.ndim != 2:
            raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: {param.shape}")


def muon_state(param: Tensor) -> dict:
    """A parameter's Muon state before its first step: a zero momentum buffer (no step count, as torch)."""
    return {"momentum_buffer": _factory.zeros_like(param)}


def muon_update(param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
    """One Muon step of the 2-D ``param`` (its ``state["momentum_buffer"]``), as torch's."""
    lr, momentum = scalar(group["lr"]), group["momentum"]
    buf = state["momentum_buffer"].lerp_(grad, 1 - momentum)
    direction = grad.detach().clone().lerp_(buf, momentum) if group["nesterov"] else buf
    ortho = zeropower_via_newtonschulz(direction, group["ns_coefficients"], group["ns_steps"], group["eps"])
    param.mul_(float(1 - lr * group["weight_decay"]))
    param.add_(ortho, alpha=float(-adjust_lr(lr, group["adjust_lr_fn"], param.shape)))


class Muon(Optimizer):
    r"""Muon (Jordan et al., 2024): SGD-momentum whose update is orthogonalised, as torch.optim.Muon.

    For 2-D parameters (the weight matrices of hidden layers); optimise biases, embeddings
    and other parameters with an optimizer such as :class:`AdamW`.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) \\
        B_t &\leftarrow \mu B_{t-1} + (1 - \mu) g_t \\
        \tilde B_t &\leftarrow (1 - \mu) g_t + \mu B_t \text{ if nesterov, else } B_t \\
        O_t &\leftarrow \mathrm{NS}^{(a,b,c)}_k(\tilde B_t; \epsilon) \\
        \theta_t &\leftarrow \theta_{t-1}(1 - \gamma\lambda) - \mathrm{AdjustLR}(\gamma, A, B)\, O_t
        \end{aligned}

    with :math:`\mathrm{NS}_k` the :func:`zeropower_via_newtonschulz` iteration and, for an
    :math:`A \times B` parameter, :math:`\mathrm{AdjustLR}` either
    :math:`\gamma\sqrt{\max(1, A/B)}` ("original") or :math:`0.2\gamma\sqrt{\max(A, B)}`
    ("match_rms_adamw", which lets Muon reuse AdamW's lr and weight decay).

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        2-D parameters to optimise, or a list of parameter-group dicts of them.
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    weight_decay : float, default 0.1
        Decoupled weight decay :math:`\lambda` (applied with the unadjusted lr).
    momentum : float, default 0.95
        Momentum :math:`\mu`.
    nesterov : bool, default True
        Orthogonalise the Nesterov look-ahead instead of the buffer.
    ns_coefficients : tuple of 3 floats, default (3.4445, -4.775, 2.0315)
        Coefficients :math:`(a, b, c)` of the quintic iteration.
    eps : float, default 1e-7
        Floor of the Frobenius norm the iteration's input is divided by.
    ns_steps : int, default 5
        Number of Newton-Schulz steps (fewer than 100).
    adjust_lr_fn : {None, "original", "match_rms_adamw"}, default None
        How the lr scales with the matrix's shape; None means "original".

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "weight_decay", "momentum", "nesterov",
        "ns_coefficients", "eps", "ns_steps" and "adjust_lr_fn".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "momentum_buffer" (a tensor shaped like the parameter). There
        is no step count, as in torch.

    Raises
    ------
    ValueError
        At construction, or when a group is added, if a parameter is not 2-D.

    Notes
    -----
    torch runs the Newton-Schulz iteration in bfloat16 whatever the parameter's dtype;
    lucid has no bfloat16 and **iterates in the parameter's dtype**. lucid therefore
    matches torch exactly where torch's iteration is made to run in the parameter's dtype
    (which is how the parity tests compare them); against stock torch, updates differ by
    bfloat16's rounding (about 1e-2 relative). The momentum buffer is an exponential moving
    average (``lerp``), as in torch's code, although torch's docstring writes
    :math:`B_t = \mu B_{t-1} + g_t`. Like torch, Muon has no ``maximize``. A parameter that
    is not 2-D raises when it is added with :meth:`add_param_group` too (torch checks only
    the constructor's parameters). The state follows its parameter through ``module.to()``,
    ``.double()`` and ``.half()`` between steps.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([[2.0, 0.0], [0.0, 1.0]]))
    >>> optimizer = optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w * w).sum().backward()  # gradient diag(4, 2)
    >>> optimizer.step()
    >>> print(w.detach().numpy().round(2))  # both directions move by about lr, not 2:1
    [[1.93 0.  ]
     [0.   0.89]]
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315), eps: float = 1e-7,
                 ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        check_muon_group(group)

    def init_state(self, param: Tensor, group: dict) -> dict:
        return muon_state(param)

    def update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        muon_update(param, grad, state, group)
