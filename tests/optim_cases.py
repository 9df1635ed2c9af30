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

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tolerances import PARITY, PRODIGY, SOAP_FLOAT64, TORCH_FLOAT32_SCALARS

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
    record_every : int
        Record params and state after every ``record_every``-th step only (and after the
        last step and the ``eval_after`` steps; see :func:`recorded_steps`), so that a long
        run (Schedule-Free's 1,000 steps) keeps a small golden file; every step still runs.
    eval_after : tuple of int
        Steps after which the optimizer goes to evaluation mode (``optimizer.eval()``: the
        params recorded then are the evaluation weights) and back to training mode
        (``optimizer.train()``) before the next step: Schedule-Free's mode switches.
    """

    name: str
    optimizer: str
    kwargs: dict
    groups: tuple
    steps: int = 50
    none_grad: tuple = ()
    sparse_rows: bool = False
    seed: int = 0
    record_every: int = 1
    eval_after: tuple = ()

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        """Shapes of all params, flat over groups in order."""
        return [tuple(s) for g in self.groups for s in g["shapes"]]


def recorded_steps(case: OptimCase) -> list[int]:
    """The steps (1-based) after which a run of ``case`` is recorded: every ``record_every``-th,
    each of ``eval_after`` and the last. ``p{i}`` holds the initial value, then one row per
    recorded step; ``s{i}.{key}`` one row per recorded step.

    Examples
    --------
    >>> recorded_steps(OptimCase("c", "SGD", {}, (), steps=10, record_every=4, eval_after=(3,)))
    [3, 4, 8, 10]
    """
    return sorted({t for t in range(1, case.steps + 1) if t % case.record_every == 0} | set(case.eval_after) | {case.steps})


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
    >>> case = make_case("sparse_example", "SparseAdam", {}, {"lr": 0.01})
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
    (see tests/tolerances.py), PRODIGY (normwise at each step) for Prodigy's, SOAP_FLOAT64 for
    SOAP's (its eigendecompositions round otherwise with each LAPACK and thread count), else PARITY.
    float32 runs are judged against their truth instead (tests/trajectories.py)."""
    if case.optimizer == "Prodigy":
        return PRODIGY
    if case.optimizer == "SOAP":
        return SOAP_FLOAT64
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
# What the cases are made of (the cases themselves: each optimizer's entry in
# tests/optim_registry.py)
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


def make_case(name, optimizer, kwargs, second, first=None, *, none_grad=NONE_GRAD, steps=50):
    """Two-group case of ``steps`` steps: group 0 with ``first`` overrides, group 1 with ``second``."""
    sparse = optimizer == "SparseAdam"
    shapes = SPARSE_SHAPES if sparse else DENSE_SHAPES
    groups = ({"shapes": shapes[0], **(first or {})}, {"shapes": shapes[1], **second})
    return OptimCase(name, optimizer, kwargs, groups, steps, none_grad=none_grad, sparse_rows=sparse)


# Muon takes 2-D params only: a tall, a wide and a square one. Adafactor also runs on a
# 3-D param, factored over its last two dimensions.
MUON_SHAPES = (((4, 3), (3, 5)), ((4, 4),))
ADAFACTOR_3D_SHAPES = (((2, 4, 3), (5,)), ((3, 2),))
# SOAP: a vector of 2 (its first statistic g g^T has one zero eigenvalue, not a repeated one);
# 4-D and 2-D params whose merged shapes (max_precondition_dim 9 and 4; 12 and 9, NHWC) are
# (4, 9, 3), (3, 4), (3, 4, 2); (8, 9), (5, 4), (4, 9, 3).
# SOAP observes a late parameter's first gradient before it projects it, so that gradient's
# component along the zero eigenvalue's eigenvector is rounding alone, divided by about eps:
# reproducible to 1e-12 only where eps is large (soap_eps_wd keeps NONE_GRAD); the others skip
# steps without a late parameter.
SOAP_NONE_GRAD = ((0, 10), (1, 25), (0, 40), (1, 40), (2, 40))
SOAP_1D_SHAPES = (((4, 3), (2,)), ((2, 3),))
SOAP_MERGE_SHAPES = (((4, 3, 3, 3), (3, 4)), ((3, 2, 2, 2),))
SOAP_CHANNELS_LAST_SHAPES = (((2, 3, 3, 4), (5, 4)), ((4, 3, 3, 3),))
# The exactly convergent quintic Newton-Schulz polynomial (15/8, -10/8, 3/8).
NS_CONVERGENT = (1.875, -1.25, 0.375)


def schedule_free_case(name, optimizer, kwargs, second, first=None):
    """A Schedule-Free case: :func:`make_case`'s two groups over 1,000 steps, recorded every
    50th step, with a switch to evaluation mode and back after steps 100, 333 and 1,000 (the
    last record is the evaluation weights)."""
    case = make_case(name, optimizer, kwargs, second, first, steps=1000)
    return dataclasses.replace(case, record_every=50, eval_after=(100, 333, 1000))


def with_shapes(case, shapes):
    """``case`` with the params of group ``g`` shaped ``shapes[g]``."""
    groups = tuple({**group, "shapes": shape} for group, shape in zip(case.groups, shapes))
    return dataclasses.replace(case, groups=groups)
