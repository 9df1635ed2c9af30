"""SOAP: Adam in the eigenbasis of Shampoo's preconditioner (Vyas et al., 2024)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import _dtype, _factory
from .._ops.linalg import eigh, qr
from . import _checks
from .group_steps import GroupStepOptimizer
from ._shared import scalar

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT
    from .schedules import Schedule

_DATA_FORMATS = ("channels_first", "channels_last")


def merge_small_dims(shape, max_dim: int) -> tuple[int, ...]:
    """``shape`` with runs of neighbouring dimensions merged while their product stays at most
    ``max_dim``, as pytorch-optimizer's ``merge_small_dims`` (which returns ``[1]`` where all
    merge into one; here that one dimension is kept)."""
    merged, product = [], 1
    for size in shape:
        product *= size
        if product > max_dim:
            merged.append(product // size)
            product = size
    return (*merged, product)


def _channels_last(param: Tensor, group: dict) -> bool:
    return group["merge_dims"] and group["data_format"] == "channels_last" and param.ndim == 4


def preconditioned_shape(param: Tensor, group: dict) -> tuple[int, ...]:
    """The shape SOAP preconditions ``param`` as: its own, or with ``merge_dims`` its small
    dimensions merged (channels first: an NHWC tensor as NCHW); a vector is never merged."""
    if param.ndim < 2 or not group["merge_dims"]:
        return tuple(param.shape)
    n, h, w, c = param.shape if _channels_last(param, group) else (None, None, None, None)
    shape = (n, c, h, w) if n is not None else param.shape
    return merge_small_dims(shape, group["max_precondition_dim"])


def preconditioned_dims(param: Tensor, group: dict) -> list[tuple[int, int]]:
    """``(dim, size)`` of each dimension of the preconditioned shape that has a Shampoo factor:
    those of at most ``max_precondition_dim``, and a vector's only under ``precondition_1d``."""
    shape = preconditioned_shape(param, group)
    if param.ndim == 0 or (param.ndim == 1 and not group["precondition_1d"]):
        return []
    return [(dim, size) for dim, size in enumerate(shape) if size <= group["max_precondition_dim"]]


def _merged(x: Tensor, group: dict) -> Tensor:
    """``x`` in the preconditioned shape."""
    if not group["merge_dims"]:
        return x
    if _channels_last(x, group):
        x = x.permute(0, 3, 1, 2)
    return x.reshape(preconditioned_shape(x, {**group, "data_format": "channels_first"}))


def _unmerged(x: Tensor, like: Tensor, group: dict) -> Tensor:
    """``x`` (in the preconditioned shape of ``like``) back in ``like``'s shape."""
    if not group["merge_dims"]:
        return x
    if _channels_last(like, group):
        n, h, w, c = like.shape
        return x.reshape(n, c, h, w).permute(0, 2, 3, 1)
    return x.reshape(like.shape)


def project(x: Tensor, state: dict, group: dict, back: bool = False) -> Tensor:
    """``x`` in the eigenbasis (``Q_k^T`` along each dimension ``k`` with a factor), or back
    from it (``Q_k``), as pytorch-optimizer's ``project``: each dimension in turn is
    contracted (or moved) to the end, a matrix product over the others flattened (as
    ``tensordot``: one BLAS call, where a stack of products would loop)."""
    y = _merged(x, group)
    bases = [state.get(f"Q{dim}") for dim in range(y.ndim)]
    if all(basis is None for basis in bases):  # no factor: the identity (plain Adam)
        return x
    for basis in bases:
        y = y.movedim(0, -1)
        if basis is not None:
            basis = basis.T if back else basis
            y = y @ basis if y.ndim <= 2 else (y.reshape(-1, y.shape[-1]) @ basis).reshape(y.shape)
    return _unmerged(y, x, group)


def _working_dtype(dtype):
    """The dtype a decomposition runs in: float64's own, else float32 (LAPACK has no float16)."""
    return dtype if dtype is _dtype.float64 else _dtype.float32


def signed(basis: Tensor) -> Tensor:
    """``basis`` with each column's sign chosen so that its largest entry in magnitude is
    positive: the same basis whichever signs LAPACK returned (the update does not depend on
    them; the state then does not either)."""
    largest = basis.gather(0, basis.abs().argmax(dim=0, keepdim=True))
    return basis * largest.sign()


def eigenbasis(statistic: Tensor) -> Tensor:
    """The eigenvectors of ``statistic``, by eigenvalue descending (``eigh`` of
    ``statistic + 1e-30 I``, columns flipped), as pytorch-optimizer's ``get_orthogonal_matrix``."""
    work = _working_dtype(statistic.dtype)
    shifted = statistic.to(work) + 1e-30 * _factory.eye(statistic.shape[0], dtype=work, device=statistic.device)
    return signed(eigh(shifted).eigenvectors.flip(1).to(statistic.dtype))


def refreshed_eigenbases(param: Tensor, state: dict, group: dict) -> None:
    """One power-iteration step and a QR decomposition per factor, the new basis ordered by the
    eigenvalues the old one estimates (and the second moment reordered with it), as
    pytorch-optimizer's ``get_orthogonal_matrix_qr``; the QR runs in the working precision."""
    exp_avg_sq = _merged(state["exp_avg_sq"], group)
    for dim, _ in preconditioned_dims(param, group):
        statistic, basis = state[f"GG{dim}"], state[f"Q{dim}"]
        product = statistic @ basis
        order = (basis * product).sum(dim=0).argsort(descending=True)
        exp_avg_sq = exp_avg_sq.index_select(dim, order)
        power_iteration = product.index_select(1, order)
        state[f"Q{dim}"] = signed(qr(power_iteration.to(_working_dtype(param.dtype))).Q.to(param.dtype))
    state["exp_avg_sq"] = _unmerged(exp_avg_sq, state["exp_avg_sq"], group)


def observe(param: Tensor, grad: Tensor, state: dict, group: dict, step: int) -> None:
    """Shampoo's statistics ``GG_k`` updated with ``grad`` (an EMA of ``G_(k) G_(k)^T``, the
    unfolding of ``grad`` along ``k``), the eigenbases found on first sight and refreshed
    every ``precondition_frequency`` steps (pytorch-optimizer's ``update_pre_conditioner``)."""
    shampoo_beta = group["shampoo_beta"] if group["shampoo_beta"] is not None else group["betas"][1]
    merged = _merged(grad, group)
    for dim, size in preconditioned_dims(param, group):
        unfolded = merged.movedim(dim, 0).reshape(size, -1)
        state[f"GG{dim}"].lerp_(unfolded @ unfolded.T, float(1 - shampoo_beta))
        if f"Q{dim}" not in state:
            state[f"Q{dim}"] = eigenbasis(state[f"GG{dim}"])
    if step > 0 and step % group["precondition_frequency"] == 0:
        refreshed_eigenbases(param, state, group)


class SOAP(GroupStepOptimizer):
    r"""SOAP (Vyas et al., 2024): Adam in the eigenbasis of Shampoo's preconditioner, computed as
    ``pytorch_optimizer.SOAP`` 4.1.0.

    Shampoo keeps, for each dimension :math:`k` of a parameter, the statistic
    :math:`L_k = \mathrm{EMA}(G_{(k)} G_{(k)}^\top)` of the gradient's unfolding along it. SOAP
    runs Adam in the basis of their eigenvectors :math:`Q_k`, which it refreshes only every
    :math:`f` steps, by one step of power iteration and a QR decomposition; between
    refreshes its step costs a few matrix products. Dimensions larger than
    ``max_precondition_dim`` (and vectors, unless ``precondition_1d``) keep the identity
    basis: plain Adam along them.

    .. math::

        \begin{aligned}
        g_t &\leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad\text{(negated if maximize)};
            \qquad \text{step 1 only observes: } L_k \leftarrow (1 - \beta_s) G_{(k)}G_{(k)}^\top,\;
            Q_k \leftarrow \mathrm{eigvecs}^{\downarrow}(L_k) \\
        \hat g_t &\leftarrow g_t \times_k Q_k^\top \ \text{(each factored } k\text{)} \\
        m_t &\leftarrow \beta_1 m_{t-1} + (1 - \beta_1) g_t, \qquad
        v_t \leftarrow \beta_2 v_{t-1} + (1 - \beta_2) \hat g_t^2 \\
        u_t &\leftarrow \Bigl(\frac{m_t \times_k Q_k^\top}{\sqrt{v_t} + \epsilon}\Bigr) \times_k Q_k,
            \qquad u_t \leftarrow \frac{u_t}{\sqrt{\mathrm{mean}(u_t^2)} + \epsilon}
            \text{ if normalize_gradient} \\
        \theta_t &\leftarrow \theta_{t-1} - \gamma\,\frac{\sqrt{1 - \beta_2^{\,t-1}}}{1 - \beta_1^{\,t-1}}\,u_t
            \quad\text{(without the fraction unless correct_bias)}, \qquad
            \theta_t \leftarrow \theta_t (1 - \gamma\lambda) \\
        L_k &\leftarrow \beta_s L_k + (1 - \beta_s) G_{(k)} G_{(k)}^\top \\
        &\text{every } f \text{ steps } (t - 1 \equiv 0 \bmod f)\text{:}\quad
            Q_k \leftarrow \mathrm{QR}\bigl(L_k Q_k P_k\bigr)_Q, \quad v_t \leftarrow v_t P_k
        \end{aligned}

    where :math:`\times_k` multiplies along dimension :math:`k`, :math:`G_{(k)}` is the
    gradient unfolded along it, and :math:`P_k` orders the columns by the eigenvalues
    :math:`\mathrm{diag}(Q_k^\top L_k Q_k)` descending.

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Tensor, default 3e-3
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.95, 0.95)
        :math:`\beta_1` of the momentum, :math:`\beta_2` of the second moment.
    shampoo_beta : float or None, default None
        :math:`\beta_s` of Shampoo's statistics; None means :math:`\beta_2`.
    eps : float, default 1e-8
        :math:`\epsilon`, added to :math:`\sqrt{v_t}`.
    weight_decay : float, default 1e-2
        Decoupled weight decay :math:`\lambda`, applied after the update.
    precondition_frequency : int, default 10
        :math:`f`: the steps between refreshes of the eigenbases.
    max_precondition_dim : int, default 10000
        Dimensions larger than this keep the identity basis.
    merge_dims : bool, default False
        Precondition a tensor of 2 or more dimensions as the shape with its small
        neighbouring dimensions merged (their product at most ``max_precondition_dim``).
    precondition_1d : bool, default False
        Precondition vectors too (one :math:`n \times n` factor).
    normalize_gradient : bool, default False
        Divide the update by its RMS.
    correct_bias : bool, default True
        Adam's bias correction of the step size.
    data_format : {"channels_first", "channels_last"}, default "channels_first"
        With ``merge_dims``, a 4-D parameter in NHWC is merged as NCHW.
    maximize : bool, default False
        Maximise the objective instead of minimising it.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "shampoo_beta", "eps", "weight_decay",
        "precondition_frequency", "max_precondition_dim", "merge_dims", "precondition_1d",
        "normalize_gradient", "correct_bias", "data_format" and "maximize", and "step" (int)
        once the group has stepped.
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "exp_avg" (:math:`m`, shaped like the parameter, in its
        basis), "exp_avg_sq" (:math:`v`, in the eigenbasis), and for each factored dimension
        ``k`` of the preconditioned shape "GG{k}" (:math:`L_k`) and "Q{k}" (:math:`Q_k`).

    Notes
    -----
    The arithmetic is pytorch-optimizer's, in its order, and the step count is the group's:
    the first step of a group only observes, and a parameter whose first gradient comes
    later is observed and updated in that step (its statistics taking that gradient twice),
    as there. Where lucid differs: **the QR decomposition of a refresh runs in the working
    precision** (float64 for float64 parameters; pytorch-optimizer rounds its input to
    float32 first, which leaves the basis orthogonal to float32's precision only); the
    decompositions of float16 parameters run in float32; with ``merge_dims``, a tensor whose
    dimensions all merge into one is preconditioned as that one dimension, and a vector is not
    merged (pytorch-optimizer's reshape fails on both); ``data_format`` and ``maximize`` are
    hyperparameters of each group, not of the optimizer; ``shampoo_beta`` and
    ``precondition_frequency`` are read from the group at each step (pytorch-optimizer copies
    them into each parameter's state when it is first seen). Eigenvectors are unique only up
    to sign, and the update does not depend on the signs: :math:`Q_k` is applied once forward
    and once back, around an elementwise division by a sign-free :math:`v`. Sparse gradients
    are refused. The eigendecomposition and the QR decomposition run through the backend (on
    the "gpu" device, on MLX's CPU stream). The state follows its parameter through
    ``module.to()``, ``.double()`` and ``.half()`` between steps.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([[1.0, 0.5], [-0.5, 2.0]], dtype=lucid.float64))
    >>> optimizer = optim.SOAP([w], lr=0.1, weight_decay=0.0)
    >>> for _ in range(3):
    ...     optimizer.zero_grad()
    ...     (w * w).sum().backward()
    ...     optimizer.step()
    >>> w.detach().numpy().round(4)  # the first step observed; two steps of size about lr
    array([[ 0.81  ,  0.4377],
           [-0.438 ,  1.8099]])
    >>> sorted(optimizer.state[0])
    ['GG0', 'GG1', 'Q0', 'Q1', 'exp_avg', 'exp_avg_sq']

    A small regression: the weight matrix gets its two eigenbases; the bias, a vector, plain
    Adam (``precondition_1d=False``); the bases are refreshed every 5 steps.

    >>> _ = lucid.manual_seed(0)
    >>> model = nn.Linear(8, 4)
    >>> x = lucid.randn(64, 8)
    >>> y = x @ lucid.randn(8, 4)
    >>> optimizer = optim.SOAP(model.parameters(), lr=0.05, precondition_frequency=5)
    >>> losses = []
    >>> for _ in range(40):
    ...     optimizer.zero_grad()
    ...     loss = nn.functional.mse_loss(model(x), y)
    ...     loss.backward()
    ...     optimizer.step()
    ...     losses.append(loss.item())
    >>> losses[-1] < 0.1 * losses[0]  # from 5.3 to 0.29
    True
    >>> sorted(optimizer.state[0]), sorted(optimizer.state[1])  # weight, bias
    (['GG0', 'GG1', 'Q0', 'Q1', 'exp_avg', 'exp_avg_sq'], ['exp_avg', 'exp_avg_sq'])
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 3e-3,
                 betas: tuple[float, float] = (0.95, 0.95), shampoo_beta: float | None = None, eps: float = 1e-8,
                 weight_decay: float = 1e-2, precondition_frequency: int = 10, max_precondition_dim: int = 10000,
                 merge_dims: bool = False, precondition_1d: bool = False, normalize_gradient: bool = False,
                 correct_bias: bool = True, data_format: str = "channels_first", *, maximize: bool = False) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), shampoo_beta=shampoo_beta, eps=eps, weight_decay=weight_decay,
                        precondition_frequency=precondition_frequency, max_precondition_dim=max_precondition_dim,
                        merge_dims=merge_dims, precondition_1d=precondition_1d,
                        normalize_gradient=normalize_gradient, correct_bias=correct_bias, data_format=data_format,
                        maximize=maximize)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        _checks.betas(group["betas"])
        if group["shampoo_beta"] is not None and not 0.0 <= group["shampoo_beta"] < 1.0:
            raise ValueError(f"Invalid shampoo_beta value: {group['shampoo_beta']}")
        _checks.epsilon(group["eps"])
        _checks.non_negative("weight_decay", group["weight_decay"])
        _checks.count("precondition_frequency", group["precondition_frequency"], least=1)
        _checks.count("max_precondition_dim", group["max_precondition_dim"], least=1)
        if group["data_format"] not in _DATA_FORMATS:
            raise ValueError(f"data_format must be one of {_DATA_FORMATS}, got {group['data_format']!r}")

    def init_state(self, param: Tensor, group: dict) -> dict:
        state = {"exp_avg": _factory.zeros_like(param), "exp_avg_sq": _factory.zeros_like(param)}
        for dim, size in preconditioned_dims(param, group):
            state[f"GG{dim}"] = _factory.zeros(size, size, dtype=param.dtype, device=param.device)
        return state

    def state_shapes(self, param: Tensor, group: dict) -> dict:
        shapes = {"exp_avg": param.shape, "exp_avg_sq": param.shape}
        for dim, size in preconditioned_dims(param, group):
            shapes[f"GG{dim}"] = shapes[f"Q{dim}"] = (size, size)
        return shapes

    def update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        step = group["step"] - 1  # pytorch-optimizer's: the group's steps before this one
        if any(f"Q{dim}" not in state for dim, _ in preconditioned_dims(param, group)):
            observe(param, grad, state, group, step)  # first sight: the statistics and their bases
        if group["step"] == 1:
            return
        beta1, beta2 = group["betas"]
        lr = float(scalar(group["lr"]))
        step_size = lr
        if group["correct_bias"]:
            step_size *= math.sqrt(1.0 - math.pow(beta2, step)) / (1.0 - math.pow(beta1, step))
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, float(1 - beta1))
        exp_avg_sq.lerp_(project(grad, state, group).square(), float(1 - beta2))
        denominator = exp_avg_sq.sqrt().add_(group["eps"])
        direction = project(project(exp_avg, state, group) / denominator, state, group, back=True)
        if group["normalize_gradient"]:
            direction.div_(direction.square().mean().sqrt_().add_(group["eps"]))
        param.add_(direction, alpha=-step_size)
        if group["weight_decay"] != 0:
            param.mul_(1.0 - group["weight_decay"] * lr)
        observe(param, grad, state, group, step)
