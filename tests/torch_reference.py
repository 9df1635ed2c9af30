"""Replay an :class:`optim_cases.OptimCase` through ``torch.optim``.

torch is imported lazily, inside the functions, so this module can be
imported (and doctest-collected) where torch is not installed.
"""

from __future__ import annotations

import numpy as np

from optim_cases import OptimCase, gradient, initial_params, touched_rows


def torch_version() -> str:
    """Return ``torch.__version__`` as a plain string."""
    import torch

    return str(torch.__version__)


def _to_torch(value):
    """Map a case hyperparameter to what torch gets: 0-d arrays become Tensors."""
    import torch

    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy())
    return value


def run_torch(case: OptimCase, dtype) -> dict[str, np.ndarray]:
    """Run ``case`` through ``torch.optim`` and record params and state.

    Parameters
    ----------
    case : OptimCase
        The case to run, with torch's defaults (default dtype float32, CPU,
        for-loop implementation).
    dtype : {np.float64, np.float32}
        Parameter dtype.

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
    params = [torch.from_numpy(a.copy()).requires_grad_() for a in initial_params(case, dtype)]

    groups, start = [], 0
    for group in case.groups:
        n = len(group["shapes"])
        overrides = {k: _to_torch(v) for k, v in group.items() if k != "shapes"}
        groups.append({"params": params[start : start + n], **overrides})
        start += n
    kwargs = {k: _to_torch(v) for k, v in case.kwargs.items()}
    optimizer = getattr(torch.optim, case.optimizer)(groups, **kwargs)

    out = {f"p{i}": np.empty((steps + 1, *p.shape), dtype=dtype) for i, p in enumerate(params)}
    for i, p in enumerate(params):
        out[f"p{i}"][0] = p.detach().numpy()
        out[f"s{i}.step"] = np.full(steps, -1, dtype=np.int64)

    for t in range(1, steps + 1):
        # All grads are computed from the params before this step, as a
        # backward pass would.
        for i, p in enumerate(params):
            g = gradient(case, t, i, p.detach().numpy())
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
        optimizer.step()

        for i, p in enumerate(params):
            out[f"p{i}"][t] = p.detach().numpy()
            # .get, not [...]: optimizer.state is a defaultdict and indexing
            # it would create an empty state entry.
            for key, value in optimizer.state.get(p, {}).items():
                if key == "step":
                    # Adam keeps a 0-d float32 tensor, SparseAdam a Python int.
                    out[f"s{i}.step"][t - 1] = int(value)
                elif isinstance(value, torch.Tensor) and value.shape == p.shape:
                    name = f"s{i}.{key}"
                    if name not in out:
                        out[name] = np.full((steps, *p.shape), np.nan, dtype=dtype)
                    out[name][t - 1] = value.detach().numpy()
                else:
                    # Fail loudly rather than silently drop state lucid must match.
                    raise TypeError(f"{case.name}: unexpected state {key!r} of type {type(value).__name__}")
    return out
