"""SparseAdam: lazy Adam that touches only the rows a gradient touches."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import _factory
from .._sparse import SparseTensor
from . import _checks
from .elementwise import elementwise, run_rule, sqrt
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._tensor import Tensor
    from .optimizer import ParamsT
    from .schedules import Schedule


def sparse_adam_scalars(group: dict, param: Tensor, state: dict) -> dict:
    lr, (beta1, beta2), eps, step = group["lr"], group["betas"], group["eps"], state["step"]
    # torch keeps lr's type here: a Tensor lr computes the step size in its dtype
    step_size = scalar(lr) * math.sqrt(1 - beta2**step) / (1 - beta1**step)
    return {"one_minus_beta1": float(1 - beta1), "one_minus_beta2": float(1 - beta2), "eps": float(eps),
            "neg_step_size": -float(step_size)}


@elementwise(state=("exp_avg", "exp_avg_sq"), scalars=sparse_adam_scalars)
def sparse_adam(param, grad, exp_avg, exp_avg_sq, one_minus_beta1, one_minus_beta2, eps, neg_step_size):
    """One touched row's element: Adam's moments and step, with torch's order of operations."""
    exp_avg = exp_avg + (grad - exp_avg) * one_minus_beta1
    exp_avg_sq = exp_avg_sq + (grad * grad - exp_avg_sq) * one_minus_beta2
    return param + (exp_avg / (sqrt(exp_avg_sq) + eps)) * neg_step_size, exp_avg, exp_avg_sq


class SparseAdam(Optimizer):
    r"""Lazy Adam for gradients that touch a few rows of a parameter.

    The variant of Adam meant for embedding tables: each step updates the moments and the
    values of only the rows the gradient touches — a row being a slice along the first
    dimension. A row absent from a batch keeps its moments and its value; it does not keep
    moving on its old momentum the way it would under :class:`lucid.optim.Adam`.

    For each touched row, with the parameter's step count :math:`t` (one count per
    parameter, advanced by every step in which it has a gradient):

    .. math::

        \begin{aligned}
        m &\leftarrow m + (1 - \beta_1)(g - m) \\
        v &\leftarrow v + (1 - \beta_2)(g^2 - v) \\
        \theta &\leftarrow \theta - \frac{\alpha \sqrt{1 - \beta_2^t}}{1 - \beta_1^t}
            \cdot \frac{m}{\sqrt{v} + \epsilon}
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float, default 0.001
        Learning rate :math:`\alpha` (default: 1e-3).
    betas : tuple of float, default (0.9, 0.999)
        Coefficients :math:`(\beta_1, \beta_2)` for the first- and second-moment estimates
        (default: (0.9, 0.999)).
    eps : float, default 1e-08
        Term :math:`\epsilon` for numerical stability (default: 1e-8).
    maximize : bool, default False
        If True, maximise the objective with respect to params by negating the gradient on
        the touched rows before updating the moments and parameter values (default: False).

    Attributes
    ----------
    param_groups : list of dict
        Parameter groups with keys "params", "lr", "betas", "eps", and "maximize".
    defaults : dict
        Default hyperparameter values.
    state : dict
        The live state of each parameter that has stepped, by flat parameter index: "step"
        (int), "exp_avg" and "exp_avg_sq" (tensors shaped like the parameter). It is what
        state_dict saves and load_state_dict restores.

    Notes
    -----
    Lucid's gradients come in two kinds, and SparseAdam takes both. ``nn.Embedding(...,
    sparse=True)`` gives the weight a row-sparse gradient (a :class:`lucid.SparseTensor`):
    its rows are coalesced (duplicates summed) and every row it lists is updated, as in the
    reference, in O(touched rows) — no array of the table's size is built, so the cost does
    not grow with the table. A dense gradient keeps the rule that a row counts as touched
    when its gradient holds a nonzero value (a scan of the whole gradient). The two agree
    except for a row that was looked up but whose gradient is exactly zero: the sparse
    gradient lists it and its moments decay, as in the reference; the dense rule leaves it
    alone. Within a touched row every element is updated, zero or not, as the reference's
    embedding gradient lists whole rows.

    A parameter whose gradient is None is skipped and its step count does not advance; one
    whose gradient is all zero advances its count and changes nothing else, as in the
    reference.

    The moments follow their parameter through a conversion (``module.to()``,
    ``.double()``, ``.half()``) between steps.

    With a Tensor ``lr``, the step size is computed in the tensor's dtype, as torch does
    (so a float32 ``lr`` rounds the step size to float32 even for float64 parameters).

    A number ``lr`` must be positive, as torch requires; a schedule's first value may be 0
    (``lr=warmup(100, cosine(1e-2, 10_000))`` starts its warm-up there, and an update at
    lr 0 changes no parameter), so a scheduled group is only refused a negative value.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn as nn
    >>> import lucid.optim as optim
    >>> embedding = nn.Embedding(4, 2)
    >>> optimizer = optim.SparseAdam(embedding.parameters(), lr=0.1)
    >>> before = embedding.weight.detach().clone()
    >>> embedding(lucid.tensor([0, 2])).sum().backward()
    >>> optimizer.step()
    >>> (embedding.weight != before).any(dim=1).tolist()
    [True, False, True, False]
    >>> optimizer.state[0]["step"]
    1
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, maximize: bool = False) -> None:
        """Initialise the SparseAdam. See the class docstring for parameter semantics."""
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def check(self, group: dict) -> None:
        # a schedule may start at 0 (a warm-up); torch's strict check is for a number lr
        _checks.learning_rate(group["lr"], strict="lr_schedule" not in group)
        _checks.epsilon(group["eps"], strict=True)
        _checks.betas(group["betas"])

    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """Perform a single SparseAdam optimisation step.

        Each parameter with a gradient advances its step count and updates the rows its
        gradient touches (see the class notes); parameters whose gradient is None are skipped.

        Parameters
        ----------
        closure : callable, default None
            A closure that re-evaluates the model and returns the loss. If provided, it is
            called before the parameter updates.

        Returns
        -------
        Tensor or None
            The loss returned by closure, or None if no closure was provided.

        Examples
        --------
        >>> import lucid
        >>> import lucid.nn as nn
        >>> import lucid.optim as optim
        >>> embedding = nn.Embedding(100, 8)
        >>> optimizer = optim.SparseAdam(embedding.parameters(), lr=1e-3)
        >>> optimizer.zero_grad()
        >>> loss = embedding(lucid.tensor([[3, 17, 3]])).sum()
        >>> loss.backward()
        >>> optimizer.step()
        """
        return super().step(closure)

    def check_sparse(self, group: dict) -> None:
        pass  # row-sparse gradients are what SparseAdam is for

    def state_shapes(self, param: Tensor, group: dict) -> dict:
        # without building a fresh state: two table-sized arrays just to read their shape
        return {"exp_avg": param.shape, "exp_avg_sq": param.shape}

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"step": 0, "exp_avg": _factory.zeros_like(param), "exp_avg_sq": _factory.zeros_like(param)}

    def update(self, param: Tensor, grad: Tensor | SparseTensor, state: dict, group: dict) -> None:
        state["step"] += 1
        if isinstance(grad, SparseTensor):  # the rows it lists, summed: O(touched rows), nothing table-sized
            grad = grad.coalesce()
            if grad._nnz() == 0:
                return
            self.update_rows(param, grad.indices()[0], grad.values(), state, group)
            return
        rows = grad.nonzero_rows()
        if rows.numel() == 0:
            return
        self.update_rows(param, rows, grad.index_select(0, rows), state, group)

    def update_rows(self, param: Tensor, rows: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        """The rule on the rows ``rows`` of ``param``, whose gradient rows are ``grad`` (unique rows).

        ``update`` calls it with the rows a dense gradient touches, or with the coalesced
        rows of a sparse one; the other rows, and their moments, are not read or written:
        one gather and one write per array, of ``len(rows)`` rows.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> table = nn.Parameter(lucid.zeros(3, 2))
        >>> opt = optim.SparseAdam([table], lr=0.1)
        >>> state = opt.init_state(table, opt.param_groups[0])
        >>> state["step"] = 1
        >>> with lucid.no_grad():
        ...     opt.update_rows(table, lucid.tensor([1]), lucid.ones(1, 2), state, opt.param_groups[0])
        >>> (table != 0).any(dim=1).tolist()
        [False, True, False]
        """
        scalars = sparse_adam.scalar_values(group, param, state)
        tensors = (param, state["exp_avg"], state["exp_avg_sq"])
        gathered = tuple(tensor.index_select(0, rows) for tensor in tensors)
        run_rule(sparse_adam, [(gathered, grad, scalars)])  # in place, on the rows
        for tensor, rows_of_tensor in zip(tensors, gathered):
            tensor.index_copy_(0, rows, rows_of_tensor)
