"""Replay an :class:`optim_cases.OptimCase` through ``torch.optim``.

torch is imported lazily, inside the functions, so this module can be
imported (and doctest-collected) where torch is not installed.
"""

from __future__ import annotations

import contextlib

import numpy as np

from optim_cases import DTYPES, OptimCase, gradient, initial_params, recorded_steps, touched_rows
from optim_registry import BY_NAME
from trajectories import with_truth


def torch_version() -> str:
    """Return ``torch.__version__`` as a plain string."""
    import torch

    return str(torch.__version__)


def _to_torch(value):
    """Map a case hyperparameter to what torch gets: 0-d arrays become Tensors."""
    import torch

    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy())
    if isinstance(value, tuple):
        return tuple(_to_torch(v) for v in value)
    return value


def lion_class():
    """A torch reference implementation of Lion, which torch.optim does not have.

    Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms", Algorithm 2),
    with the arithmetic of ``mlx.optimizers.Lion``: per parameter, with gradient ``g``
    (negated if ``maximize``) and state ``exp_avg`` (``m``, zeros at first)::

        c     = beta1 * m + (1 - beta1) * g        # two products and a sum, no lerp
        theta = theta * (1 - lr * weight_decay)     # decoupled decay, before the update
        theta = theta - lr * sign(c)
        m     = beta2 * m + (1 - beta2) * g

    Signature: ``Lion(params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, *,
    maximize=False)``, lucid.optim.Lion's. It is checked against ``mlx.optimizers.Lion``
    in tests/test_lion_reference.py. The class is built on first use, as torch is imported
    lazily.
    """
    import torch

    class Lion(torch.optim.Optimizer):
        def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, *, maximize=False):
            defaults = {"lr": lr, "betas": betas, "weight_decay": weight_decay, "maximize": maximize}
            super().__init__(params, defaults)

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                lr = float(group["lr"])
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = -p.grad if group["maximize"] else p.grad
                    state = self.state[p]
                    if not state:
                        state["exp_avg"] = torch.zeros_like(p)
                    exp_avg = state["exp_avg"]
                    c = exp_avg * beta1 + grad * (1 - beta1)
                    if group["weight_decay"] != 0:
                        p.mul_(1 - lr * group["weight_decay"])
                    p.sub_(torch.sign(c) * lr)
                    exp_avg.mul_(beta2).add_(grad * (1 - beta2))
            return None

    return Lion


def muon_with_adamw_class():
    """The reference of lucid.optim.MuonWithAdamW: torch.optim.Muon over the groups with
    ``use_muon=True`` and torch.optim.AdamW over the others, stepped together.

    Signature: lucid's (torch.optim.Muon's arguments, then ``adamw_lr``, ``adamw_betas``,
    ``adamw_eps``, ``adamw_weight_decay``: torch.optim.AdamW's ``lr``, ``betas``, ``eps``,
    ``weight_decay``). ``state`` is the two optimizers' state, by parameter. Stepped in
    :func:`muon_in_param_dtype`, as Muon's reference. Built on first use (torch is imported lazily).
    """
    import torch

    class MuonWithAdamW:
        def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                     ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5, adjust_lr_fn=None, *,
                     adamw_lr=1e-3, adamw_betas=(0.9, 0.999), adamw_eps=1e-8, adamw_weight_decay=1e-2):
            groups = list(params)
            muon = [{k: v for k, v in g.items() if k != "use_muon"} for g in groups if g["use_muon"]]
            adamw = [{k: v for k, v in g.items() if k != "use_muon"} for g in groups if not g["use_muon"]]
            self.optimizers = []
            if muon:
                self.optimizers.append(torch.optim.Muon(
                    muon, lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                    ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
            if adamw:
                self.optimizers.append(torch.optim.AdamW(adamw, lr=adamw_lr, betas=adamw_betas, eps=adamw_eps,
                                                         weight_decay=adamw_weight_decay))

        @property
        def state(self):
            return {p: s for optimizer in self.optimizers for p, s in optimizer.state.items()}

        def step(self):
            for optimizer in self.optimizers:
                optimizer.step()

    return MuonWithAdamW


@contextlib.contextmanager
def muon_in_param_dtype():
    """Run torch.optim.Muon's Newton-Schulz iteration in the parameter's dtype, not bfloat16.

    torch casts the iteration's input to bfloat16; lucid has no bfloat16 and iterates in
    the parameter's dtype. This swaps in torch's own function with that one cast removed
    (``grad.clone()`` for ``grad.bfloat16()``), so the golden values are exact.
    """
    import torch
    from torch.optim import _muon

    original = _muon._zeropower_via_newtonschulz

    def in_param_dtype(grad, ns_coefficients, ns_steps, eps):
        if ns_steps >= 100:
            raise ValueError("Number of steps must be less than 100 for computational efficiency")
        if len(grad.shape) != 2:
            raise ValueError("Input tensor gradient must be a 2D matrix")
        a, b, c = ns_coefficients
        ortho_grad = grad.clone()  # torch: grad.bfloat16()
        if grad.size(0) > grad.size(1):
            ortho_grad = ortho_grad.T
        ortho_grad.div_(ortho_grad.norm().clamp(min=eps))
        for _ in range(ns_steps):
            gram_matrix = ortho_grad @ ortho_grad.T
            gram_update = torch.addmm(gram_matrix, gram_matrix, gram_matrix, beta=b, alpha=c)
            ortho_grad = torch.addmm(ortho_grad, gram_update, ortho_grad, beta=a)
        if grad.size(0) > grad.size(1):
            ortho_grad = ortho_grad.T
        return ortho_grad

    _muon._zeropower_via_newtonschulz = in_param_dtype
    try:
        yield
    finally:
        _muon._zeropower_via_newtonschulz = original


def schedule_free_class(name: str):
    """``schedulefree.<name>`` put in training mode once made, as its README asks before
    training (lucid's Schedule-Free optimizers start in training mode)."""
    import schedulefree

    base = getattr(schedulefree, name)

    class InTrainingMode(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.train()

    InTrainingMode.__name__ = name
    return InTrainingMode


@contextlib.contextmanager
def soap_qr_in_param_dtype():
    """Run pytorch_optimizer.SOAP's QR refresh in the parameter's dtype, not float32.

    pytorch-optimizer rounds the power iteration to float32 before its QR decomposition
    (for bfloat16, which torch's QR lacks), so a float64 run's eigenbasis is orthogonal to
    float32's precision only, and its digits beyond that are the float32 QR's of that CPU's
    LAPACK; lucid decomposes in the working precision. This swaps in pytorch-optimizer's own
    ``get_orthogonal_matrix_qr`` with that one cast removed (``power_iter`` for
    ``power_iter.to(torch.float32)``), so that the golden values are float64's. A float32
    run is unchanged by it.
    """
    import torch
    from pytorch_optimizer.optimizer.soap import SOAP

    original = SOAP.get_orthogonal_matrix_qr

    def in_param_dtype(self, state, max_precondition_dim=10000, merge_dims=False):
        original_shape = state["exp_avg_sq"].shape
        permuted_shape = original_shape
        if self.data_format == "channels_last" and len(original_shape) == 4:
            permuted_shape = state["exp_avg_sq"].permute(0, 3, 1, 2).shape
        exp_avg_sq = state["exp_avg_sq"]
        if merge_dims:
            exp_avg_sq = self.merge_dims(exp_avg_sq, max_precondition_dim)
        matrices = []
        for ind, (m, o) in enumerate(zip(state["GG"], state["Q"])):
            if len(m) == 0:
                matrices.append([])
                continue
            matrix_product = m @ o
            est_eig = (o * matrix_product).sum(dim=0)
            sort_idx = torch.argsort(est_eig, descending=True)
            exp_avg_sq = exp_avg_sq.index_select(ind, sort_idx)
            power_iter = matrix_product.index_select(1, sort_idx)
            q, _ = torch.linalg.qr(power_iter)  # pytorch-optimizer: power_iter.to(torch.float32)
            matrices.append(q)
        if merge_dims:
            if self.data_format == "channels_last" and len(original_shape) == 4:
                exp_avg_sq = exp_avg_sq.reshape(permuted_shape).permute(0, 2, 3, 1)
            else:
                exp_avg_sq = exp_avg_sq.reshape(original_shape)
        state["exp_avg_sq"] = exp_avg_sq
        return matrices

    SOAP.get_orthogonal_matrix_qr = in_param_dtype
    try:
        yield
    finally:
        SOAP.get_orthogonal_matrix_qr = original


def soap_state(state: dict) -> dict:
    """pytorch_optimizer.SOAP's state of a parameter by lucid's names: "exp_avg", "exp_avg_sq",
    and "GG{k}", "Q{k}" for each factored dimension ``k`` (the reference's lists, whose empty
    entries are the unfactored dimensions), each basis with lucid's signs (the largest entry
    of each column positive; LAPACK's are arbitrary and the update does not depend on them).
    Its copies of ``precondition_frequency`` and ``shampoo_beta`` are hyperparameters, which
    lucid reads from the group."""
    import torch

    out = {"exp_avg": state["exp_avg"], "exp_avg_sq": state["exp_avg_sq"]}
    for key in ("GG", "Q"):
        for dim, value in enumerate(state.get(key) or []):
            if isinstance(value, torch.Tensor):
                if key == "Q":
                    largest = value.gather(0, value.abs().argmax(dim=0, keepdim=True))
                    value = value * largest.sign()
                out[f"{key}{dim}"] = value
    return out


def optimizer_class(name: str):
    """The reference class of lucid's optimizer ``name``: its registry entry's (torch.optim's
    class of that name, the reference implementation above for Lion, another library's)."""
    return BY_NAME[name].reference()


def _reference_context(name: str):
    """The context its reference steps in (Muon's: :func:`muon_in_param_dtype`)."""
    context = BY_NAME[name].reference_context
    return contextlib.nullcontext if context is None else context()


def run_torch(case: OptimCase, dtype, inputs=None) -> dict[str, np.ndarray]:
    """Run ``case`` through ``torch.optim`` and record params and state.

    Parameters
    ----------
    case : OptimCase
        The case to run, with torch's defaults (default dtype float32, CPU,
        for-loop implementation).
    dtype : {np.float64, np.float32}
        Parameter dtype.
    inputs : {None, np.float32}
        With ``dtype=np.float64``, np.float32 runs the float64 truth of the float32 run: its
        starting point and noise draws, the arithmetic in float64 (see optim_cases' docstring).

    Returns
    -------
    dict of str to np.ndarray
        ``"p{i}"``: shape ``(steps + 1, *shape)``, param ``i`` before the first
        step (index 0) and after each step.
        ``"s{i}.{key}"``: shape ``(steps, *shape)``, state tensor ``key`` after
        each step, NaN while param ``i`` has no such state; only keys that
        ever appear are recorded.
        ``"s{i}.step"``: shape ``(steps,)`` int64, ``int(state["step"])`` after
        each step, -1 while there is no state or no ``step`` key.
    """
    import torch

    steps = case.steps
    params = [torch.from_numpy(a.copy()).requires_grad_() for a in initial_params(case, dtype, inputs)]

    names = BY_NAME[case.optimizer].reference_names  # lucid's (torch's) name -> the reference's
    groups, start = [], 0
    for group in case.groups:
        n = len(group["shapes"])
        overrides = {names.get(k, k): _to_torch(v) for k, v in group.items() if k != "shapes"}
        groups.append({"params": params[start : start + n], **overrides})
        start += n
    kwargs = {names.get(k, k): _to_torch(v) for k, v in case.kwargs.items()}
    optimizer = optimizer_class(case.optimizer)(groups, **kwargs)
    context = _reference_context(case.optimizer)
    view = BY_NAME[case.optimizer].reference_state
    view = None if view is None else view()

    recorded = recorded_steps(case)
    row = {t: r for r, t in enumerate(recorded)}
    out = {f"p{i}": np.empty((len(recorded) + 1, *p.shape), dtype=dtype) for i, p in enumerate(params)}
    for i, p in enumerate(params):
        out[f"p{i}"][0] = p.detach().numpy()
        out[f"s{i}.step"] = np.full(len(recorded), -1, dtype=np.int64)

    for t in range(1, steps + 1):
        # All grads are computed from the params before this step, as a
        # backward pass would.
        for i, p in enumerate(params):
            g = gradient(case, t, i, p.detach().numpy(), inputs)
            if g is None:
                p.grad = None
            elif case.sparse_rows:
                # SparseAdam refuses dense grads: hand over exactly the
                # touched rows (possibly none) as a sparse COO tensor.
                rows = touched_rows(case, t, i, p.shape)
                p.grad = torch.sparse_coo_tensor(
                    torch.from_numpy(rows[None, :]),
                    torch.from_numpy(g[rows]),
                    size=p.shape,
                    check_invariants=True,
                )
            else:
                p.grad = torch.from_numpy(g)
        with context():
            optimizer.step()
        if t in case.eval_after:
            optimizer.eval()
        if t not in row:
            continue
        for i, p in enumerate(params):
            out[f"p{i}"][row[t] + 1] = p.detach().numpy()
            # .get, not [...]: optimizer.state is a defaultdict and indexing
            # it would create an empty state entry.
            state = optimizer.state.get(p, {})
            for key, value in (view(state) if view is not None and state else state).items():
                if key == "step":
                    # Adam keeps a 0-d float32 tensor, SparseAdam a Python int.
                    out[f"s{i}.step"][row[t]] = int(value)
                elif isinstance(value, torch.Tensor) and (value.dim() in (p.dim(), 0, 1) or view is not None):
                    # shaped like the param, or a factor of it (Adafactor's row_var, col_var),
                    # or 0-d (ASGD's eta and mu, NAdam's mu_product: float32 in torch whatever
                    # the param dtype, stored here in the param dtype, exactly), or flat
                    # (Prodigy's s and p0: every slice_p-th element of the flattened param)
                    if value.dim() == 1 != p.dim() and value.numel() == p.numel():
                        value = value.reshape(p.shape)  # lucid keeps Prodigy's s and p0 so where slice_p is 1
                    name = f"s{i}.{key}"
                    if name not in out:
                        out[name] = np.full((len(recorded), *value.shape), np.nan, dtype=dtype)
                    out[name][row[t]] = value.detach().numpy()
                else:
                    # Fail loudly rather than silently drop state lucid must match.
                    raise TypeError(f"{case.name}: unexpected state {key!r} of type {type(value).__name__}")
        if t in case.eval_after:
            optimizer.train()
    return out


def golden_arrays(case: OptimCase, dtype_name: str) -> dict[str, np.ndarray]:
    """What the golden file ``{case}.{dtype_name}.npz`` holds: torch's run in that dtype
    (:func:`run_torch`) and, in a float32 file, the float64 truth of that run under ``truth.``
    keys (``truth.p0``, ``truth.s0.exp_avg``: :func:`run_torch` in float64 from the float32
    inputs, see optim_cases' docstring), whose step counts are the float32 run's."""
    arrays = run_torch(case, DTYPES[dtype_name])
    if dtype_name == "float32":
        arrays = with_truth(arrays, run_torch(case, np.float64, inputs=np.float32), case.name)
    return arrays


def golden_lbfgs_arrays(case, dtype_name: str) -> dict[str, np.ndarray]:
    """What the LBFGS golden file of ``case`` in ``dtype_name`` holds: torch's run
    (:func:`run_torch_lbfgs`) and, in the float32 file, its float64 truth under ``truth.`` keys
    (the run in float64 from the float32 starting point and data; it takes the same
    evaluations and iterations, which :func:`trajectories.with_truth` checks)."""
    if dtype_name == "float64":
        return run_torch_lbfgs(case)
    run = run_torch_lbfgs(case, np.float32)
    return with_truth(run, run_torch_lbfgs(case, np.float64, inputs=np.float32), case.name)


def run_torch_lbfgs(case, dtype=np.float64, inputs=None) -> dict[str, np.ndarray]:
    """Run an :class:`lbfgs_cases.LBFGSCase` through ``torch.optim.LBFGS`` in ``dtype``
    (float64, or float32: the float64 starting point and data rounded to it). ``inputs``:
    with float64, np.float32 runs the float64 truth of the float32 run (its starting point and
    data, rounded to float32, and everything else in float64).

    Returns the arrays of its golden file: ``loss`` (in ``dtype``), ``func_evals`` and
    ``n_iter`` after each ``step(closure)`` call, and ``p{i}`` (in ``dtype``) before the first
    call and after each.
    """
    import torch

    from lbfgs_cases import data, initial_params, loss

    def given(array):
        return torch.from_numpy(array.astype(inputs or dtype).astype(dtype))

    params = [given(p).requires_grad_() for p in initial_params(case.problem)]
    data_ = [given(a) for a in data(case.problem)]
    optimizer = torch.optim.LBFGS(params, **{k: _to_torch(v) for k, v in case.kwargs.items()})

    def closure():
        optimizer.zero_grad()
        value = loss(case.problem, params, data_)
        value.backward()
        return value

    out = {f"p{i}": [p.detach().numpy().copy()] for i, p in enumerate(params)}
    out.update(loss=[], func_evals=[], n_iter=[])
    for _ in range(case.calls):
        out["loss"].append(optimizer.step(closure).item())
        state = optimizer.state[params[0]]
        out["func_evals"].append(state["func_evals"])
        out["n_iter"].append(state["n_iter"])
        for i, p in enumerate(params):
            out[f"p{i}"].append(p.detach().numpy().copy())
    arrays = {key: np.stack(value) for key, value in out.items() if key.startswith("p")}
    arrays["loss"] = np.array(out["loss"], dtype=dtype)  # each a value of dtype, exactly
    arrays["func_evals"] = np.array(out["func_evals"], dtype=np.int64)
    arrays["n_iter"] = np.array(out["n_iter"], dtype=np.int64)
    return arrays
