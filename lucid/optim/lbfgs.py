"""L-BFGS, with an optional strong-Wolfe line search, as torch.optim.LBFGS."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

from .. import _factory
from .._arguments import describe
from .._autograd import enable_grad, no_grad
from .._backend import host
from .._ops.shape import cat
from .._tensor import Tensor, eval as lucid_eval
from ._shared import scalar
from .optimizer import Optimizer

if TYPE_CHECKING:
    from collections.abc import Callable

    from .optimizer import ParamsT
    from .schedules import Schedule

_ONE_GROUP = "LBFGS doesn't support per-parameter options (parameter groups)"
_CLOSURE_RETURNS = "LBFGS: the closure must return the loss, a number or a one-element Tensor, got "


def _loss(value) -> float:
    """The closure's value as a float: a number or a one-element Tensor (torch takes a string
    such as "1.5", and fails on None or a Tensor of several elements naming no closure)."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(_CLOSURE_RETURNS + describe(value))
        return float(value.item())
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(_CLOSURE_RETURNS + describe(value))
    return float(value)


def _dot(a: Tensor, b: Tensor):
    """``a . b`` of two flat tensors, as a number of their dtype (see ``scalar``)."""
    return scalar((a * b).sum())


def _max_abs(a: Tensor):
    return scalar(a.abs().max())


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to ``bounds``.

    torch's ``_cubic_interpolate`` (from minFunc's polyinterp), line for line.
    """
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = host.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step ``t`` along ``d`` that satisfies the strong Wolfe conditions.

    torch's ``_strong_wolfe`` (from minFunc's lswolfe), line for line: bracket a step
    that satisfies them, then zoom in by cubic interpolation. Returns the loss, the flat
    gradient and the step found, and the number of function evaluations.
    """
    d_norm = _max_abs(d)
    g = g.detach().clone()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = _dot(g_new, d)

    # bracket an interval containing a point satisfying the Wolfe criteria
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.detach().clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.detach().clone()], [gtd_prev, gtd_new]
            break
        # interpolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        # next step
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.detach().clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1

    # reached max number of iterations?
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom phase: refine the bracket until a point satisfies the criteria
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # too close to a boundary, twice or at it: move 0.1 * len(bracket) away from it
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Armijo condition not satisfied or not lower than lowest point
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.detach().clone(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # Wolfe conditions satisfied
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # old high becomes new low
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            # new point becomes new low
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.detach().clone(), gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    r"""L-BFGS (Nocedal, 1980; Liu & Nocedal, 1989), as torch.optim.LBFGS.

    Each ``step(closure)`` runs up to ``max_iter`` iterations of limited-memory BFGS on
    all parameters as one flat vector :math:`x`, re-evaluating the loss and its gradient
    :math:`g` through ``closure``:

    .. math::

        \begin{aligned}
        d_k &\leftarrow -H_k g_k
            &&\text{(two-loop recursion over the last } \mathtt{history\_size} \text{ pairs)} \\
        s_{k-1} &= t_{k-1} d_{k-1}, \quad y_{k-1} = g_k - g_{k-1},
            \quad \rho_{k-1} = 1 / y_{k-1}^\top s_{k-1}
            &&\text{(kept if } y^\top s > 10^{-10}\text{)} \\
        H_k^0 &= \frac{y_{k-1}^\top s_{k-1}}{y_{k-1}^\top y_{k-1}} I \\
        x_{k+1} &\leftarrow x_k + t_k d_k
        \end{aligned}

    with :math:`t_k` the lr (on the very first iteration, :math:`\min(1, 1/\|g\|_1)` times
    the lr), or, with ``line_search_fn="strong_wolfe"``, a step from that guess that
    satisfies the strong Wolfe conditions (:math:`c_1 = 10^{-4}`, :math:`c_2 = 0.9`).
    A step ends early when :math:`\max|g| \le` ``tolerance_grad``, when the directional
    derivative, the step or the change of loss falls below ``tolerance_change``, or after
    ``max_eval`` evaluations.

    Parameters
    ----------
    params : iterable of Parameter
        Parameters to optimise: one group only, all on one device.
    lr : float or Tensor, default 1
        Learning rate: the step length, or the line search's first guess.
    max_iter : int, default 20
        Iterations per ``step``.
    max_eval : int, optional
        Closure evaluations per ``step``; default ``max_iter * 5 // 4``.
    tolerance_grad : float, default 1e-7
        Stop when the largest gradient entry is at most this.
    tolerance_change : float, default 1e-9
        Stop when the directional derivative, the largest step entry, or the change of loss
        is below this.
    history_size : int, default 100
        Number of :math:`(s, y)` pairs kept.
    line_search_fn : {None, "strong_wolfe"}, default None
        Anything else raises ValueError at construction (torch accepts it and raises
        RuntimeError at the first ``step``).

    Attributes
    ----------
    param_groups : list of dict
        One group, with keys "params", "lr", "max_iter", "max_eval", "tolerance_grad",
        "tolerance_change", "history_size" and "line_search_fn".
    defaults : dict
        Default hyperparameter values.
    state : dict
        Everything sits on the first parameter (``state[0]``), as in torch: "func_evals" and
        "n_iter" (ints, accumulated over all ``step`` calls), and after an iteration "d"
        (the last direction), "t" (its step length), "old_dirs" and "old_stps" (lists of
        :math:`y` and :math:`s`), "ro" (list of :math:`\rho`), "H_diag", "prev_flat_grad",
        "prev_loss" and "al" (the two-loop coefficients). Vectors are flat Tensors of all
        parameters' total size.

    Raises
    ------
    ValueError
        For a second parameter group, at construction or from :meth:`add_param_group`,
        for parameters on more than one device, and for an unknown ``line_search_fn``.
    TypeError
        From ``step()`` without a closure.

    Notes
    -----
    ``step`` returns the closure's first value of the step, as the closure returned it.
    Parameters without a gradient count as zero gradient. The arithmetic is torch's, in
    torch's order; the scalars torch keeps as 0-d tensors ("t", "H_diag", the entries of
    "ro" and "al") are kept as NumPy scalars of the parameters' dtype, which round as
    torch's do (so a float32 model runs its bookkeeping in float32, as in torch). The
    state follows the first parameter through ``module.to()``, ``.double()`` and
    ``.half()`` between steps; ``load_state_dict`` checks that its vectors have the
    parameters' total size.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> x = nn.Parameter(lucid.tensor([-1.5, 2.0], dtype=lucid.float64))
    >>> optimizer = optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     optimizer.zero_grad()
    ...     loss = ((x - lucid.tensor([1.0, -1.0], dtype=lucid.float64)) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> loss = optimizer.step(closure)   # the loss before the step
    >>> loss.item(), x.detach().numpy().round(6)
    (15.25, array([ 1., -1.]))
    >>> optimizer.state[0]["func_evals"], optimizer.state[0]["n_iter"]
    (3, 2)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size,
                        line_search_fn=line_search_fn)
        super().__init__(params, defaults)

    def check(self, group: dict) -> None:
        lr = group["lr"]
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            # torch raises RuntimeError("only 'strong_wolfe' is supported") at the first step
            raise ValueError(f"line_search_fn must be None or 'strong_wolfe', got {group['line_search_fn']!r}: "
                             "only 'strong_wolfe' is supported")
        # one flat vector of every parameter: torch has no multi-device LBFGS either, and fails late
        devices = sorted({p.device for p in group.get("params", ())})
        if len(devices) > 1:
            raise ValueError(f"LBFGS needs every parameter on one device, got parameters on {devices}")

    def add_param_group(self, param_group: dict) -> None:
        # torch accepts a second group here and fails at the next step; lucid refuses it now
        if self.param_groups:
            raise ValueError(_ONE_GROUP)
        super().add_param_group(param_group)

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"func_evals": 0, "n_iter": 0}

    def step(self, closure: Callable[[], Tensor]) -> Tensor | None:  # needs the closure, as torch's
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` is required.

        Parameters
        ----------
        closure : callable
            Clears the gradients, re-evaluates the model, calls ``backward`` and returns the
            loss. It is called with gradients enabled, several times per step.

        Returns
        -------
        The closure's value at the start of the step.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([3.0, -1.0], dtype=lucid.float64))
        >>> optimizer = optim.LBFGS([w])
        >>> def closure():
        ...     optimizer.zero_grad()
        ...     loss = ((w - 1.0) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> first = optimizer.step(closure)
        >>> first.item(), [round(v, 6) for v in w.tolist()]
        (8.0, [1.0, 1.0])
        """
        return super().step(closure)

    # --- flat views of all parameters ----------------------------------------------------
    def _params(self) -> list:
        return self.param_groups[0]["params"]

    def _gather_flat_grad(self) -> Tensor:
        views = []
        for p in self._params():
            if p.grad is None:
                views.append(_factory.zeros(p.numel(), dtype=p.dtype, device=p.device))
            else:
                grad = p.grad.to_dense() if p.grad.is_sparse else p.grad  # as torch does
                views.append(grad.detach().reshape(-1))
        return cat(views)

    def _add_grad(self, step_size, update: Tensor) -> None:
        offset = 0
        for p in self._params():
            numel = p.numel()
            p.add_(update[offset:offset + numel].reshape(p.shape), alpha=float(step_size))
            offset += numel

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        with enable_grad():
            loss = _loss(closure())
        flat_grad = self._gather_flat_grad()
        for p, saved in zip(self._params(), x):
            p.copy_(saved)
        return loss, flat_grad

    # --- the step ------------------------------------------------------------------------
    def run_step(self, closure: Callable[[], Tensor] | None) -> Tensor | None:
        if closure is None:
            raise TypeError("LBFGS.step() missing 1 required positional argument: 'closure'")
        group, params = self.param_groups[0], self._params()
        # a step that raises (a closure that returns None at its third call) leaves the
        # parameters and the state as they were: L-BFGS moves the parameters between calls
        saved_params = [p.detach().clone() for p in params]
        saved_state = _copied(self.state.for_param(params[0]))
        try:
            with no_grad():
                loss = self._iterate(closure, group, self._lbfgs_state(group))
        except BaseException:
            with no_grad():
                for p, saved in zip(params, saved_params):
                    p.copy_(saved)
            if saved_state is None:
                self.state.discard(params[0])
            else:
                self.state[params[0]] = saved_state
            raise
        self._materialize(params)
        return loss

    def _iterate(self, closure, group, state):
        lr = scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # evaluate initial f(x) and df/dx
        with enable_grad():
            orig_loss = closure()
        loss = _loss(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        if _max_abs(flat_grad) <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the descent direction
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(float(t))
                ys = _dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:  # shift the history by one
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / _dot(y, y)  # the scale of the initial inverse Hessian
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                # the two-loop recursion, in one buffer
                q = flat_grad.neg()
                for i in range(num_old - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q.add_(old_dirs[i], alpha=float(-al[i]))
                d = r = q.mul(float(H_diag))
                for i in range(num_old):
                    be_i = _dot(old_dirs[i], r) * ro[i]
                    r.add_(old_stps[i], alpha=float(al[i] - be_i))

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.detach().clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / scalar(flat_grad.abs().sum())) * lr
            else:
                t = lr
            gtd = _dot(flat_grad, d)  # the directional derivative
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.detach().clone() for p in self._params()]

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = _max_abs(flat_grad) <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:  # re-evaluate, except after the last iteration
                    with enable_grad():
                        loss = _loss(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = _max_abs(flat_grad) <= tolerance_grad
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # the stopping conditions
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if _max_abs(d.mul(float(t))) <= tolerance_change:  # no progress in x
                break
            if abs(loss - prev_loss) < tolerance_change:  # no progress in the loss
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    # --- state: on the first parameter, with lists of flat tensors ------------------------
    def _lbfgs_state(self, group) -> dict:
        """The state on the first parameter, created, or converted to its device and dtype."""
        first = self._params()[0]
        state = self.state.for_param(first)
        if state is None:
            state = self.state[first] = self.init_state(first, group)
        for key, value in state.items():
            state[key] = _follow(value, first)
        return state

    def loaded_state(self, index: int, param: Tensor, group: dict, state: dict) -> dict:
        size = sum(p.numel() for p in group["params"])
        for key, value in state.items():
            state[key] = value = _follow(value, param)
            for vector in value if isinstance(value, list) else [value]:
                if isinstance(vector, Tensor) and vector.ndim and vector.shape != (size,):
                    raise ValueError(
                        f"loaded state of parameter {index} has {key!r} of shape {vector.shape}, expected ({size},)"
                    )
        return state

    def _materialize(self, params) -> None:
        """Evaluate (on MLX) every parameter and every state tensor, in lists too."""
        lucid_eval(self._params(), self.state.for_param(self._params()[0]) or {})


def _copied(state: dict | None) -> dict | None:
    """``state`` as it is now: its lists copied, and ``prev_flat_grad``, which a step updates in
    place, cloned (the other tensors a step replaces)."""
    if state is None:
        return None
    return {key: list(value) if isinstance(value, list) else
            value.clone() if key == "prev_flat_grad" and isinstance(value, Tensor) else value
            for key, value in state.items()}


def _follow(value, param: Tensor):
    """``value`` (a Tensor, a host array or number, or a list of them) on ``param``'s device
    and, if ``param`` is floating, in its dtype."""
    if isinstance(value, list):
        return [_follow(v, param) for v in value]
    if host.is_array(value) and value.ndim:
        value = Tensor(value)
    if isinstance(value, Tensor):
        dtype = param.dtype if param.dtype.is_floating_point else value.dtype  # torch casts ints and bools too
        if value.device != param.device or value.dtype is not dtype:
            value = value.detach().to(param.device, dtype)
        return value
    if host.is_scalar(value):  # a NumPy number from a checkpoint
        return scalar(value, param.dtype)
    return value
