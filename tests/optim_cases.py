"""Optimizer parity cases shared by the golden generator and lucid's tests.

This module is deliberately torch-free: it only describes *what* to run (the
optimizer, its hyperparameters, parameter shapes and a deterministic gradient
stream) so that ``tools/make_golden.py`` can replay it through ``torch.optim``
and lucid's tests can replay it through ``lucid.optim`` and compare against the
stored golden arrays.

Conventions
-----------
* Parameters are numbered by a flat index over all groups, in group order
  (the same order as torch's ``state_dict`` ids).
* Steps are 1-based: step ``t`` is the ``t``-th call to ``optimizer.step()``.
* A hyperparameter given as a 0-d ``np.ndarray`` (e.g.
  ``lr=np.array(0.001, dtype=np.float32)``) stands for a *Tensor*
  hyperparameter: torch receives ``torch.from_numpy(value)``, which equals
  ``torch.tensor(0.001)`` (float32).
  These mirror the "tensor lr" configs of torch's own ``OptimizerInfo``.
* Golden files live in ``tests/golden/optim/{case.name}.{dtype}.npz`` and hold
  ``p{i}`` (``steps + 1`` snapshots of param ``i``, index 0 = initial),
  ``s{i}.{key}`` (state tensor ``key`` after each step, NaN before the state
  exists) and ``s{i}.step`` (int64 step count after each step, -1 while the
  param has no ``step`` in its state; always -1 for SGD, which keeps none).
  A float32 file also holds the float64 truth of its run under ``truth.`` keys
  (``truth.p{i}``, ``truth.s{i}.{key}``; no step counts, which are the run's).

The float64 truth of a float32 run
----------------------------------
A float32 trajectory (torch's or lucid's) is judged against the float64 run of the *same
computation* (tests/trajectories.py), not against the float64 golden run: that one starts
from the unrounded draws and adds unrounded noise, so it differs from every float32 run by
the rounding of the inputs (half an ulp of each initial value and of each step's noise,
carried through 50 steps), which no float32 implementation can avoid and which would hide
their own rounding. The truth (``torch_reference.run_torch(case, np.float64,
inputs=np.float32)``) takes as given what a float32 run takes as given, and rounds nothing
else:

* The inputs are the float32 run's: the initial parameters and the gradient's noise draws
  rounded to float32 (``inputs=np.float32`` of :func:`initial_params` and :func:`gradient`),
  held exactly in float64. The hyperparameters are the case's: Python floats as written, a
  Tensor hyperparameter its float32 value (as in any float64 run of torch). The rows of a
  sparse gradient and the steps without a gradient are the same integers.
* The gradient is a function of the parameters (``0.5 * param + 0.1 * noise``), so the
  truth evaluates it in float64 at its own parameters after each step, as the float32 run
  evaluates it in float32 at its own. Replaying the float32 run's gradients instead would
  make the truth follow that run's errors and measure only each step's last rounding.
* The update is torch.optim's, in float64 (lucid's float64 agrees with it to 1e-12). Where
  torch computes a scalar in float32 whatever the parameter dtype (ASGD's eta and mu,
  NAdam's mu_product, Adam's bias corrections from Tensor betas), so does the truth: that
  is the computation as torch defines it, and float32 runs reproduce those scalars exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tolerances import PARITY, TORCH_FLOAT32_SCALARS

GOLDEN_DIR = Path(__file__).resolve().parent / "golden" / "optim"

#: Parameter dtypes every case is recorded in, by golden-file suffix.
DTYPES = {"float64": np.float64, "float32": np.float32}

#: In sparse cases no row of any param is touched at this step, so every
#: param receives an *empty* sparse gradient (not a None one).
EMPTY_SPARSE_STEP = 7

# Extra seed word that separates the row-choice stream from the noise stream,
# so ``touched_rows`` can be called on its own and the dense part of a sparse
# gradient is the same noise a dense case would see.
_ROWS_STREAM = 1


@dataclass(frozen=True)
class OptimCase:
    """One optimizer run to compare between torch and lucid.

    Attributes
    ----------
    name : str
        Unique, file-name safe identifier, e.g. ``"adam_amsgrad_wd"``.
    optimizer : str
        Class name, identical in ``torch.optim`` and ``lucid.optim``.
    kwargs : dict
        Constructor keyword arguments (defaults for all groups).
    groups : tuple of dict
        One dict per param group: ``{"shapes": ((3, 4), (5,)), **overrides}``.
    steps : int
        Number of ``optimizer.step()`` calls.
    none_grad : tuple of (int, int)
        ``(flat_param_index, step)`` pairs where that param's grad is None.
    sparse_rows : bool
        If True (SparseAdam), each step only some rows of each param get a
        gradient; see :func:`touched_rows`.
    seed : int
        Seed of the initial params and of the gradient stream.
    """

    name: str
    optimizer: str
    kwargs: dict
    groups: tuple
    steps: int = 50
    none_grad: tuple = ()
    sparse_rows: bool = False
    seed: int = 0

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        """Shapes of all params, flat over groups in order."""
        return [tuple(s) for g in self.groups for s in g["shapes"]]


def initial_params(case: OptimCase, dtype, inputs=None) -> list[np.ndarray]:
    """Initial parameter values of ``case``.

    Parameters
    ----------
    case : OptimCase
        The case.
    dtype : {np.float64, np.float32}
        Parameter dtype.
    inputs : {None, np.float32}
        The dtype the draws are rounded to first (``dtype`` when None): np.float32 with
        ``dtype=np.float64`` gives the float32 starting point exactly, in float64, for the
        float64 truth of a float32 run (see the module docstring).

    Returns
    -------
    list of np.ndarray
        Flat list over groups in order. Values are standard normal draws from
        ``np.random.default_rng(case.seed)`` (float64), cast to ``dtype``, so
        the float32 params are the rounded float64 ones.
    """
    rng = np.random.default_rng(case.seed)
    return [rng.standard_normal(shape).astype(inputs or dtype).astype(dtype) for shape in case.shapes]


def touched_rows(case: OptimCase, step: int, index: int, shape) -> np.ndarray:
    """Rows (along dim 0) of param ``index`` that get a gradient at ``step``.

    Only meaningful for ``case.sparse_rows``. On average about a third of the
    rows are touched (at least one), except at :data:`EMPTY_SPARSE_STEP`
    where none are, to exercise an empty sparse gradient.

    Parameters
    ----------
    case : OptimCase
        The case.
    step : int
        1-based step number.
    index : int
        Flat parameter index.
    shape : tuple of int
        Shape of the parameter (at least 1-D; a 1-D param has one row per
        element).

    Returns
    -------
    np.ndarray
        Sorted, unique int64 row indices.

    Examples
    --------
    >>> case = CASES_BY_NAME["sparse_adam_default"]
    >>> touched_rows(case, EMPTY_SPARSE_STEP, 0, (6, 2))
    array([], dtype=int64)
    """
    if step == EMPTY_SPARSE_STEP:
        return np.empty(0, dtype=np.int64)
    n = shape[0]
    rng = np.random.default_rng([case.seed, step, index, _ROWS_STREAM])
    # Uniform on 1..2n/3, so a third of the rows on average and never zero.
    k = int(rng.integers(1, max(1, (2 * n) // 3) + 1))
    return np.sort(rng.choice(n, size=k, replace=False)).astype(np.int64)


def gradient(case: OptimCase, step: int, index: int, param: np.ndarray, inputs=None) -> np.ndarray | None:
    """Gradient of param ``index`` at ``step``, given its current value.

    The gradient is ``param * 0.5 + 0.1 * noise`` (the gradient of
    ``0.25 * |param|**2`` plus noise), evaluated in ``param.dtype`` so torch
    and lucid see bit-identical inputs. Depending on the current value makes
    the trajectories feed back like real training.

    Parameters
    ----------
    case : OptimCase
        The case.
    step : int
        1-based step number.
    index : int
        Flat parameter index.
    param : np.ndarray
        Current value of the parameter (before this step).
    inputs : {None, np.float32}
        The dtype the noise draws are rounded to before use (``param.dtype`` when None):
        the float64 truth of a float32 run passes np.float32, so that it sees the float32
        run's data and evaluates the formula in float64 (see the module docstring).

    Returns
    -------
    np.ndarray or None
        None if ``(index, step)`` is in ``case.none_grad``. For sparse cases,
        rows not in :func:`touched_rows` are zero; the caller builds the
        sparse gradient from the touched rows only.
    """
    if (index, step) in case.none_grad:
        return None
    dtype = param.dtype.type
    rng = np.random.default_rng([case.seed, step, index])
    noise = rng.standard_normal(param.shape).astype(inputs or dtype).astype(dtype) * dtype(0.1)
    grad = param * dtype(0.5) + noise
    if case.sparse_rows:
        keep = np.zeros(param.shape[0], dtype=bool)
        keep[touched_rows(case, step, index, param.shape)] = True
        grad[~keep] = 0
    return grad


def tolerance_table(case: OptimCase) -> dict:
    """The table ``case``'s float64 arrays (and the float32 files' float64 truth) are compared
    at, wherever they are compared (lucid against the golden files, torch replayed against
    them, ``tools/make_golden.py --check``): TORCH_FLOAT32_SCALARS for cases with Tensor betas
    (see tests/tolerances.py), else PARITY. float32 runs are judged against their truth
    instead (tests/trajectories.py)."""
    settings = [case.kwargs, *case.groups]
    tensor_betas = any(isinstance(s.get("betas"), tuple) and isinstance(s["betas"][0], np.ndarray) for s in settings)
    return TORCH_FLOAT32_SCALARS if tensor_betas else PARITY


def golden_path(case: OptimCase, dtype_name: str) -> Path:
    """Path of the golden file of ``case`` for ``dtype_name`` ("float64"/"float32")."""
    return GOLDEN_DIR / f"{case.name}.{dtype_name}.npz"


def load_golden(case: OptimCase, dtype_name: str) -> dict[str, np.ndarray]:
    """Load the golden arrays of ``case`` as a plain dict.

    Parameters
    ----------
    case : OptimCase
        The case.
    dtype_name : {"float64", "float32"}
        Parameter dtype of the recording.

    Returns
    -------
    dict of str to np.ndarray
        Keys ``p{i}``, ``s{i}.{state_key}`` and ``s{i}.step``, as described in
        the module docstring.
    """
    with np.load(golden_path(case, dtype_name), allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


# --------------------------------------------------------------------------
# The case matrix
# --------------------------------------------------------------------------

DENSE_SHAPES = (((4, 3), (5,)), ((2, 3),))
# SparseAdam: >= 6 rows each, with a 1-D param (every element is a row) and a
# 3-D param (rows along dim 0).
SPARSE_SHAPES = (((6, 2), (8,)), ((6, 2, 2),))

# Param 2 gets no grad for steps 1-3, so its state is created late; params 0
# and 1 skip single steps; at step 40 no param has a grad (a no-op step).
NONE_GRAD = ((2, 1), (2, 2), (2, 3), (0, 10), (1, 25), (0, 40), (1, 40), (2, 40))
# Param 2's first grad is the empty one of EMPTY_SPARSE_STEP: its state is
# created (and its step counted) without any row ever being updated.
NONE_GRAD_LATE_EMPTY = tuple((2, t) for t in range(1, EMPTY_SPARSE_STEP)) + ((0, 10), (1, 25))

# A 0-d float32 array marks a Tensor hyperparameter, like torch.tensor(0.001).
TENSOR_LR = np.array(0.001, dtype=np.float32)
TENSOR_BETAS = (np.array(0.9, dtype=np.float32), np.array(0.999, dtype=np.float32))


def _case(name, optimizer, kwargs, second, first=None, *, none_grad=NONE_GRAD):
    """Two-group case: group 0 with ``first`` overrides, group 1 with ``second``."""
    sparse = optimizer == "SparseAdam"
    shapes = SPARSE_SHAPES if sparse else DENSE_SHAPES
    groups = ({"shapes": shapes[0], **(first or {})}, {"shapes": shapes[1], **second})
    return OptimCase(name, optimizer, kwargs, groups, none_grad=none_grad, sparse_rows=sparse)


CASES: list[OptimCase] = [
    # SGD: torch's OptimizerInfo configs (default, lr, tensor lr, wd, momentum,
    # wd+maximize, dampening, momentum+wd, nesterov+wd), then extra combinations.
    _case("sgd_default", "SGD", {}, {"lr": 0.05}),
    _case("sgd_lr", "SGD", {"lr": 0.01}, {"lr": 0.002}),
    _case("sgd_tensor_lr", "SGD", {"lr": TENSOR_LR}, {"lr": 0.01}),
    _case("sgd_wd", "SGD", {"weight_decay": 0.5}, {"weight_decay": 0.0}),
    _case("sgd_momentum", "SGD", {"lr": 0.01, "momentum": 0.9}, {"lr": 0.05}),
    _case("sgd_wd_maximize", "SGD", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}, {"maximize": False}),
    _case("sgd_dampening", "SGD", {"lr": 0.01, "momentum": 0.9, "dampening": 0.5}, {"dampening": 0.0}),
    _case("sgd_momentum_wd", "SGD", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1}, {"weight_decay": 0.01}),
    _case(
        "sgd_nesterov_wd",
        "SGD",
        {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1},
        {"momentum": 0.5},
    ),
    _case(
        "sgd_momentum_wd_maximize",
        "SGD",
        {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1, "maximize": True},
        {"lr": 0.03},
    ),
    # Group 0 keeps no state at all (momentum 0) next to a momentum group.
    _case("sgd_mixed_momentum", "SGD", {"lr": 0.01, "momentum": 0.9}, {}, {"momentum": 0.0}),
    # Adam: OptimizerInfo's CPU configs (default, lr, wd, wd+maximize,
    # wd+amsgrad), then extra combinations.
    _case("adam_default", "Adam", {}, {"lr": 0.01}),
    _case("adam_lr", "Adam", {"lr": 0.01}, {"betas": (0.5, 0.9)}),
    _case("adam_wd", "Adam", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
    _case("adam_wd_maximize", "Adam", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.005}),
    # Group 1 without amsgrad: max_exp_avg_sq exists for params 0-1 only.
    _case("adam_wd_amsgrad", "Adam", {"weight_decay": 0.1, "amsgrad": True}, {"amsgrad": False}),
    _case("adam_amsgrad_maximize", "Adam", {"lr": 0.01, "amsgrad": True, "maximize": True}, {"eps": 1e-3}),
    # Group 1 falls back to L2 weight decay: same wd, different placement.
    _case(
        "adam_decoupled_wd",
        "Adam",
        {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
        {"decoupled_weight_decay": False},
    ),
    _case("adam_tensor_betas", "Adam", {"betas": TENSOR_BETAS, "amsgrad": True}, {"lr": 0.01}),
    _case("adam_tensor_lr", "Adam", {"lr": TENSOR_LR, "weight_decay": 0.1}, {"lr": 0.01}),
    _case("adam_betas_eps", "Adam", {"betas": (0.8, 0.99), "eps": 1e-6}, {"betas": (0.5, 0.9), "eps": 1e-4}),
    # AdamW: the same OptimizerInfo configs as Adam, then extra combinations.
    _case("adamw_default", "AdamW", {}, {"weight_decay": 0.1}),
    _case("adamw_lr", "AdamW", {"lr": 0.01}, {"lr": 0.001}),
    _case("adamw_wd", "AdamW", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
    _case("adamw_wd_maximize", "AdamW", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.005}),
    _case("adamw_wd_amsgrad", "AdamW", {"weight_decay": 0.1, "amsgrad": True}, {"lr": 0.01}),
    _case("adamw_amsgrad", "AdamW", {"lr": 0.01, "amsgrad": True}, {"amsgrad": False}),
    _case("adamw_maximize", "AdamW", {"lr": 0.01, "maximize": True}, {"maximize": False}),
    _case("adamw_tensor_betas", "AdamW", {"lr": TENSOR_LR, "betas": TENSOR_BETAS}, {"lr": 0.01}),
    _case("adamw_tensor_lr", "AdamW", {"lr": TENSOR_LR, "weight_decay": 0.1}, {"lr": 0.01}),
    _case("adamw_wd_lr", "AdamW", {"weight_decay": 0.1, "lr": 0.01}, {"lr": 0.05}),
    # SparseAdam: OptimizerInfo's configs (default, lr, tensor lr, maximize),
    # then betas/eps. eps=1e-3 in group 1 makes its eps placement visible.
    _case("sparse_adam_default", "SparseAdam", {}, {"lr": 0.01}),
    _case("sparse_adam_lr", "SparseAdam", {"lr": 0.01}, {"lr": 0.05}),
    _case("sparse_adam_tensor_lr", "SparseAdam", {"lr": TENSOR_LR}, {"lr": 0.01}),
    _case("sparse_adam_maximize", "SparseAdam", {"lr": 0.01, "maximize": True}, {"maximize": False}),
    _case(
        "sparse_adam_betas_eps",
        "SparseAdam",
        {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6},
        {"betas": (0.5, 0.9), "eps": 1e-3},
        none_grad=NONE_GRAD_LATE_EMPTY,
    ),
]

# --- the optimizer family, part A (Adadelta, Adagrad, Adamax, ASGD, NAdam, RAdam, RMSprop, Rprop)
FAMILY_A_CASES: list[OptimCase] = [
    # Adadelta: OptimizerInfo's CPU configs (default, lr, wd, maximize, maximize+wd, rho+wd).
    _case("adadelta_default", "Adadelta", {}, {"lr": 0.5}),
    _case("adadelta_lr", "Adadelta", {"lr": 0.01}, {"lr": 0.1}),
    _case("adadelta_wd", "Adadelta", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
    _case("adadelta_maximize", "Adadelta", {"maximize": True}, {"maximize": False}),
    _case("adadelta_wd_maximize", "Adadelta", {"weight_decay": 0.1, "maximize": True}, {"eps": 1e-3}),
    _case("adadelta_rho_wd", "Adadelta", {"rho": 0.95, "weight_decay": 0.9}, {"rho": 0.5}),
    _case("adadelta_tensor_lr", "Adadelta", {"lr": TENSOR_LR}, {"lr": 0.1}),
    # Adagrad: OptimizerInfo's CPU configs (default, wd, wd+maximize, lr, initial
    # accumulator+wd, lr_decay+wd, Tensor lr). State exists from construction, so param 2
    # (no grad for steps 1-3) has step 0 and its initial sum recorded from step 1.
    _case("adagrad_default", "Adagrad", {}, {"lr": 0.05}),
    _case("adagrad_wd", "Adagrad", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
    _case("adagrad_wd_maximize", "Adagrad", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.05}),
    _case("adagrad_lr", "Adagrad", {"lr": 0.1}, {"eps": 1e-3}),
    _case("adagrad_initial_accumulator_wd", "Adagrad", {"initial_accumulator_value": 0.1, "weight_decay": 0.1},
          {"weight_decay": 0.0}),
    _case("adagrad_lr_decay_wd", "Adagrad", {"lr": 0.1, "lr_decay": 0.5, "weight_decay": 0.1}, {"lr_decay": 0.01}),
    # A Tensor lr with lr_decay: the decayed rate is computed in float32, as torch does.
    _case("adagrad_tensor_lr", "Adagrad", {"lr": TENSOR_LR}, {"lr": 0.01}, {"lr_decay": 0.1}),
    # torch starts every accumulator at the constructor's value; group 1's own is unused.
    _case("adagrad_group_initial_accumulator", "Adagrad", {"initial_accumulator_value": 0.5},
          {"initial_accumulator_value": 2.0}),
    # Adamax: OptimizerInfo's CPU configs (default, lr, wd, maximize, maximize+wd), betas/eps.
    _case("adamax_default", "Adamax", {}, {"lr": 0.01}),
    _case("adamax_lr", "Adamax", {"lr": 0.1}, {"lr": 0.01}),
    _case("adamax_wd", "Adamax", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
    _case("adamax_maximize", "Adamax", {"maximize": True}, {"maximize": False}),
    _case("adamax_wd_maximize", "Adamax", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.01}),
    # eps=0.05 in group 1 makes its placement (inside the max) visible.
    _case("adamax_betas_eps", "Adamax", {"betas": (0.8, 0.99), "eps": 1e-6}, {"betas": (0.5, 0.9), "eps": 0.05}),
    _case("adamax_tensor_lr", "Adamax", {"lr": TENSOR_LR}, {"lr": 0.01}),
    # ASGD: OptimizerInfo's CPU configs (default, lambd, lr, t0, maximize, wd, maximize+wd);
    # then a small t0, so that the average ax (mu < 1) and the eta/mu schedule are exercised.
    _case("asgd_default", "ASGD", {}, {"lr": 0.05}),
    _case("asgd_lambd", "ASGD", {"lambd": 0.1}, {"lambd": 1e-4}),
    _case("asgd_lr", "ASGD", {"lr": 0.02}, {"lr": 0.1}),
    _case("asgd_t0", "ASGD", {"t0": 100}, {"t0": 1e6}),
    _case("asgd_maximize", "ASGD", {"maximize": True}, {"maximize": False}),
    _case("asgd_wd", "ASGD", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
    _case("asgd_wd_maximize", "ASGD", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.05}),
    _case("asgd_averaging", "ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 5}, {"t0": 20, "alpha": 0.9}),
    # A Tensor lr: eta's schedule is then computed in float32 Tensor arithmetic, as torch does.
    _case("asgd_tensor_lr", "ASGD", {"lr": TENSOR_LR, "lambd": 0.01, "t0": 5}, {"lr": 0.05}),
    # NAdam: OptimizerInfo's CPU configs (default, lr, momentum_decay, wd, wd+momentum_decay,
    # decoupled wd, wd+maximize).
    _case("nadam_default", "NAdam", {}, {"lr": 0.01}),
    _case("nadam_lr", "NAdam", {"lr": 1e-3}, {"lr": 0.02}),
    _case("nadam_momentum_decay", "NAdam", {"momentum_decay": 6e-3}, {"momentum_decay": 0.1}),
    _case("nadam_wd", "NAdam", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
    _case("nadam_wd_momentum_decay", "NAdam", {"weight_decay": 0.1, "momentum_decay": 6e-3}, {"lr": 0.01}),
    # Group 1 falls back to L2 weight decay: same wd, different placement.
    _case("nadam_decoupled_wd", "NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
          {"decoupled_weight_decay": False}),
    _case("nadam_wd_maximize", "NAdam", {"weight_decay": 0.1, "maximize": True}, {"betas": (0.5, 0.9), "eps": 1e-3}),
    _case("nadam_tensor_lr_decoupled_wd", "NAdam", {"lr": TENSOR_LR, "weight_decay": 0.1,
          "decoupled_weight_decay": True}, {"lr": 0.01}),
    # RAdam: OptimizerInfo's CPU configs (default, lr, eps, wd, decoupled wd, wd+maximize).
    # With betas (0.5, 0.9) rho_t passes 5 from step 7 on; with the default betas, step 6.
    _case("radam_default", "RAdam", {}, {"lr": 0.01}),
    _case("radam_lr", "RAdam", {"lr": 2e-3}, {"betas": (0.5, 0.9)}),
    _case("radam_eps", "RAdam", {"eps": 1e-6}, {"eps": 1e-2}),
    _case("radam_wd", "RAdam", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
    _case("radam_decoupled_wd", "RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
          {"decoupled_weight_decay": False}),
    _case("radam_wd_maximize", "RAdam", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.01}),
    _case("radam_tensor_lr_decoupled_wd", "RAdam", {"lr": TENSOR_LR, "weight_decay": 0.1,
          "decoupled_weight_decay": True}, {"lr": 0.01}),
    # RMSprop: OptimizerInfo's CPU configs (default, lr, wd, maximize, centered+wd,
    # maximize+wd, momentum+centered+wd, all combined).
    _case("rmsprop_default", "RMSprop", {}, {"lr": 0.001}),
    _case("rmsprop_lr", "RMSprop", {"lr": 1e-3}, {"alpha": 0.9}),
    _case("rmsprop_wd", "RMSprop", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
    _case("rmsprop_maximize", "RMSprop", {"maximize": True}, {"maximize": False}),
    # Group 1 is not centered: grad_avg exists for params 0-1 only.
    _case("rmsprop_centered_wd", "RMSprop", {"weight_decay": 0.1, "centered": True}, {"centered": False}),
    _case("rmsprop_wd_maximize", "RMSprop", {"weight_decay": 0.1, "maximize": True}, {"eps": 1e-3}),
    # Group 0 without momentum: momentum_buffer exists for param 2 only.
    _case("rmsprop_momentum_centered_wd", "RMSprop", {"weight_decay": 0.1, "centered": True, "momentum": 0.1},
          {"momentum": 0.9}, {"momentum": 0.0}),
    _case("rmsprop_all", "RMSprop",
          {"lr": 0.005, "weight_decay": 0.1, "centered": True, "momentum": 0.1, "maximize": True}, {"alpha": 0.9}),
    _case("rmsprop_tensor_lr", "RMSprop", {"lr": TENSOR_LR, "momentum": 0.5}, {"lr": 0.01}),
    # Rprop: OptimizerInfo's CPU configs (default, lr, etas, step_sizes, maximize); tight
    # step_sizes in group 1 make both clamps bite.
    _case("rprop_default", "Rprop", {}, {"lr": 0.05}),
    _case("rprop_lr", "Rprop", {"lr": 2e-4}, {"lr": 0.01}),
    _case("rprop_etas", "Rprop", {"etas": (0.5, 1.5)}, {"etas": (0.3, 1.1)}),
    _case("rprop_step_sizes", "Rprop", {"step_sizes": (2e-6, 100)}, {"step_sizes": (5e-3, 2e-2)}),
    _case("rprop_maximize", "Rprop", {"maximize": True}, {"maximize": False}),
    _case("rprop_tensor_lr", "Rprop", {"lr": TENSOR_LR}, {"lr": 0.01}),
]
# --- end of part A

# --- the optimizer family, part B (Adafactor, Muon, Lion; LBFGS has its own closure cases)
# Muon takes 2-D params only: a tall, a wide and a square one. Adafactor also runs on a
# 3-D param, factored over its last two dimensions.
MUON_SHAPES = (((4, 3), (3, 5)), ((4, 4),))
ADAFACTOR_3D_SHAPES = (((2, 4, 3), (5,)), ((3, 2),))
# The exactly convergent quintic Newton-Schulz polynomial (15/8, -10/8, 3/8).
NS_CONVERGENT = (1.875, -1.25, 0.375)


def _shaped(case, shapes):
    """``case`` with the params of group ``g`` shaped ``shapes[g]``."""
    import dataclasses

    groups = tuple({**group, "shapes": shape} for group, shape in zip(case.groups, shapes))
    return dataclasses.replace(case, groups=groups)


FAMILY_B_CASES: list[OptimCase] = [
    # Adafactor: OptimizerInfo's configs (default, lr, tensor lr, wd, maximize, beta2_decay,
    # eps), then d, and a 3-D param. Group 1 (a (2, 3) param) keeps its own settings.
    _case("adafactor_default", "Adafactor", {}, {"lr": 0.05}),
    _case("adafactor_tensor_lr", "Adafactor", {"lr": TENSOR_LR}, {"lr": 0.01}),
    _case("adafactor_lr_wd", "Adafactor", {"lr": 0.05, "weight_decay": 0.1}, {"weight_decay": 0.0}),
    _case("adafactor_maximize", "Adafactor", {"lr": 0.05, "maximize": True, "weight_decay": 0.1}, {"maximize": False}),
    _case("adafactor_beta2_decay_d", "Adafactor", {"beta2_decay": -0.5, "d": 1.5}, {"beta2_decay": -0.8, "d": 1.0}),
    # eps1 large enough that the variance floor eps1**2 and the mean-row floor eps1 bite.
    _case("adafactor_eps", "Adafactor", {"lr": 0.05, "eps": (0.05, 1e-2)}, {"eps": (None, 0.5)}),
    _shaped(_case("adafactor_3d", "Adafactor", {"lr": 0.05}, {"weight_decay": 0.1}), ADAFACTOR_3D_SHAPES),
    # Muon (2-D only): default, tensor lr, momentum and nesterov, weight decay, the lr
    # adjustments, and the Newton-Schulz settings.
    _shaped(_case("muon_default", "Muon", {}, {"lr": 0.01}), MUON_SHAPES),
    _shaped(_case("muon_tensor_lr", "Muon", {"lr": TENSOR_LR}, {"lr": 0.01}), MUON_SHAPES),
    _shaped(
        _case("muon_momentum_nesterov", "Muon", {"lr": 0.02, "momentum": 0.9}, {"nesterov": False}, {"nesterov": True}),
        MUON_SHAPES,
    ),
    _shaped(_case("muon_wd", "Muon", {"lr": 0.02, "weight_decay": 0.5}, {"weight_decay": 0.0}), MUON_SHAPES),
    _shaped(
        _case("muon_adjust_lr", "Muon", {"lr": 0.02, "adjust_lr_fn": "match_rms_adamw"}, {"adjust_lr_fn": "original"}),
        MUON_SHAPES,
    ),
    _shaped(
        _case(
            "muon_ns",
            "Muon",
            {"lr": 0.02, "ns_coefficients": NS_CONVERGENT, "ns_steps": 3, "eps": 1e-3},
            {"ns_steps": 7, "ns_coefficients": (3.4445, -4.775, 2.0315), "eps": 1e-7},
        ),
        MUON_SHAPES,
    ),
    # Lion (torch has none; the golden values come from torch_reference.lion_class):
    # default, tensor lr, betas, weight decay, maximize.
    _case("lion_default", "Lion", {}, {"lr": 1e-3}),
    _case("lion_tensor_lr", "Lion", {"lr": TENSOR_LR}, {"lr": 1e-4}),
    _case("lion_lr_betas", "Lion", {"lr": 1e-3, "betas": (0.95, 0.98)}, {"betas": (0.5, 0.9)}),
    _case("lion_wd", "Lion", {"lr": 1e-3, "weight_decay": 0.5}, {"weight_decay": 0.0}),
    _case("lion_maximize", "Lion", {"lr": 1e-3, "maximize": True, "weight_decay": 0.1}, {"maximize": False}),
]
# --- end of part B

CASES += FAMILY_A_CASES + FAMILY_B_CASES

CASES_BY_NAME: dict[str, OptimCase] = {case.name: case for case in CASES}
