"""LBFGS parity cases shared by the golden generator and ``tests/test_lbfgs.py``.

Torch-free, like ``optim_cases``: a case names a problem, LBFGS's keyword arguments and a
number of ``step(closure)`` calls. The problems are written with operators and ``.sum()``
/ ``.mean()`` only, so the same function builds the loss from torch tensors and from lucid
tensors.

Golden files live in ``tests/golden/lbfgs/{case.name}.npz`` and hold, for ``calls`` calls
to ``step(closure)``: ``loss`` (float64, the value each call returned: the closure's first
value of the step), ``func_evals`` and ``n_iter`` (int64, the first parameter's state after
each call), and ``p{i}`` (``calls + 1`` snapshots of parameter ``i``, index 0 = initial).
Everything is float64. ``{case.name}.float32.npz`` holds the same run in float32 (the
starting point and data rounded to float32; ``loss`` float32 too) and, under ``truth.`` keys,
the float64 truth of that run: the run in float64 from the float32 starting point and data
(``torch_reference.golden_lbfgs_arrays``), which takes the same evaluations and iterations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

GOLDEN_DIR = Path(__file__).resolve().parent / "golden" / "lbfgs"


@dataclass(frozen=True)
class LBFGSCase:
    """One LBFGS run: ``calls`` calls to ``step(closure)`` on ``problem`` with ``kwargs``.

    A 0-d float32 array in ``kwargs`` (``lr``) stands for a Tensor hyperparameter, as in
    ``optim_cases``.
    """

    name: str
    problem: str
    kwargs: dict = field(default_factory=dict)
    calls: int = 6


def initial_params(problem: str) -> list[np.ndarray]:
    """The float64 starting point of ``problem``, one array per parameter."""
    if problem == "rosenbrock":
        # three 2-D Rosenbrock valleys: the x coordinates in one parameter, y in the other
        return [np.array([-1.2, -1.5, 0.5]), np.array([1.0, 2.0, -0.5])]
    if problem == "least_squares":
        rng = np.random.default_rng(3)
        return [rng.standard_normal((3, 2)), np.zeros(2)]
    raise KeyError(problem)


def data(problem: str) -> list[np.ndarray]:
    """The fixed float64 inputs of ``problem`` (none for Rosenbrock)."""
    if problem == "least_squares":
        rng = np.random.default_rng(4)
        # badly scaled columns, so that L-BFGS needs its curvature pairs
        x = rng.standard_normal((20, 3)) * np.array([1.0, 2.0, 0.5])
        y = rng.standard_normal((20, 2))
        return [x, y]
    return []


def loss(problem: str, params: list, inputs: list):
    """The loss of ``problem`` at ``params`` (torch or lucid tensors alike)."""
    if problem == "rosenbrock":
        a, b = params
        # ``a ** 2`` rather than ``a * a``: one gradient term per use, so the order in
        # which autograd adds them up cannot matter
        return ((b - a**2) ** 2 * 100 + (1 - a) ** 2).sum()
    if problem == "least_squares":
        w, bias = params
        x, y = inputs
        return ((x @ w + bias - y) ** 2).mean()
    raise KeyError(problem)


TENSOR_LR = np.array(0.2, dtype=np.float32)  # not exact in float32: t rounds as in torch

CASES: list[LBFGSCase] = [
    # L-BFGS amplifies last-bit differences (torch's dot products are MKL's ddot, its
    # add(alpha=) a fused multiply-add) from iteration to iteration, a hundredfold and
    # more within 10-20 iterations here; each case stops while lucid and torch still
    # agree to ~1e-14 (a hundredth of the float64 tolerance).
    # Fixed step (the lr) after the first iteration.
    LBFGSCase("rosenbrock_fixed_step", "rosenbrock", {"lr": 0.2, "max_iter": 5}, calls=5),
    LBFGSCase("rosenbrock_strong_wolfe", "rosenbrock", {"line_search_fn": "strong_wolfe", "max_iter": 8}, calls=2),
    # A history of 3 pairs, shifted from the 4th iteration on.
    LBFGSCase("rosenbrock_short_history", "rosenbrock",
              {"line_search_fn": "strong_wolfe", "history_size": 3, "max_iter": 5}, calls=3),
    # max_eval cuts the line search, and the step, short.
    LBFGSCase("rosenbrock_max_eval", "rosenbrock", {"line_search_fn": "strong_wolfe", "max_iter": 10, "max_eval": 6},
              calls=3),
    LBFGSCase("rosenbrock_tensor_lr", "rosenbrock", {"lr": TENSOR_LR, "max_iter": 5}, calls=4),
    # max_eval defaults to max_iter * 5 // 4 = 3: each call stops after 3 evaluations.
    LBFGSCase("least_squares_fixed_step", "least_squares", {"max_iter": 3}, calls=3),
    # lr 3 overshoots: the line search brackets and zooms.
    LBFGSCase("least_squares_strong_wolfe", "least_squares", {"line_search_fn": "strong_wolfe", "lr": 3.0, "max_iter": 3},
              calls=3),
    # Converged in the first call: the next ones stop at their first evaluation.
    LBFGSCase("least_squares_tolerance_grad", "least_squares", {"tolerance_grad": 0.1}, calls=3),
    # Stops when the loss changes by less than tolerance_change.
    LBFGSCase("least_squares_tolerance_change", "least_squares",
              {"line_search_fn": "strong_wolfe", "tolerance_change": 0.01}, calls=3),
]

CASES_BY_NAME = {case.name: case for case in CASES}


def golden_path(case: LBFGSCase, dtype: str = "float64") -> Path:
    """``{name}.npz`` for the float64 run, ``{name}.float32.npz`` for the float32 one."""
    if dtype not in ("float64", "float32"):
        raise ValueError(dtype)
    return GOLDEN_DIR / (f"{case.name}.npz" if dtype == "float64" else f"{case.name}.{dtype}.npz")


def load_golden(case: LBFGSCase, dtype: str = "float64") -> dict[str, np.ndarray]:
    with np.load(golden_path(case, dtype), allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}
