"""Every numeric tolerance the suite uses, in one place.

float64 results are held to torch's (or to the truth) as tightly as float64 arithmetic
allows: 1e-12 relative. float32 and float16 results are never held to another library's at a
fixed tolerance, as both round differently on each CPU: each is judged in ulps against the
float64 truth of the same computation, with torch's own error on the same inputs as the
ceiling (``judge``, ``JUDGED`` below; single ops in ``tests/test_accuracy.py``; runs of many
steps in ``tests/trajectories.py``). ``close`` takes float64 only, so that a float32
comparison at a fixed tolerance cannot creep back.
"""

# parity with torch (golden files and live), and with the float64 truth: (rtol, atol)
PARITY = {
    "float64": (1e-12, 1e-14),
}

# float64 runs whose per-step scalars torch computes with its own float32 kernels (Adam's
# Tensor betas: the bias corrections 1 - beta**t and their square root). lucid reproduces
# torch's float32 pow, but torch's float32 sqrt is not IEEE-rounded (an ulp off in about
# one case in five), so the step size may differ by one float32 ulp (6e-8) on some steps.
# Measured over 50 steps: 5e-9 relative, and 1.4e-9 absolute where a parameter passes
# near zero (where relative error means nothing). rtol: one such ulp, with margin; atol:
# 3.5x the largest absolute difference measured.
TORCH_FLOAT32_SCALARS = {
    "float64": (1e-7, 5e-9),
}

# Prodigy's float64 runs (its estimate D is a sum over every element of every parameter), to
# PARITY's 1e-12 relative, normwise at each step: each recorded tensor's largest difference
# within rtol of its largest magnitude (plus atol). D itself agrees only to an ulp, as its sums
# (a dot product, a sum of |s|) are BLAS's and torch's in another order; its state s, an average
# of (D/D0) * D * g (up to 4e5 here), cancels elementwise, so that an ulp of D leaves 8e-10 on an
# element passing near zero: measured over 200 steps, 4.2e-14 normwise for s, 3.1e-14 for the
# parameters. Elementwise, the parameters and moments hold to PARITY as well.
PRODIGY = {
    "float64": (1e-12, 1e-14),
    "normwise": True,
}

# the torch-style training scripts of examples/ in float64, lucid against torch from the same
# initial weights, per step's loss over a few dozen steps of SGD/Adam/SparseAdam: measured
# 7e-16 relative (their float32 runs are judged, with JUDGED_RECURRENT)
EXAMPLES = PARITY

# MLX's float64 (its CPU device) against NumPy's for the same op
BACKENDS = {
    "float64": (1e-12, 1e-14),
}

# SOAP's float64 runs, wherever they are compared (lucid against the golden files on either
# device, torch replayed against them): its eigendecompositions (LAPACK's or MLX's eigh and QR)
# round otherwise with each build and thread count, and the matrix products around them with
# each BLAS. Over 200 steps an element passing near zero ends up to 3.1e-14 from the golden
# value: MLX's soap_merge_dims, an element of 0.011 in a (4, 3, 3, 3) parameter whose largest is
# 1.3; torch itself, replayed on another CPU than the one that made the golden files (one or two
# threads alike), 1.5e-14 (1e-11 relative) on elements of -0.0014 of soap_merge_dims's float32
# truth. atol: 3x the largest.
SOAP_FLOAT64 = {
    "float64": (1e-12, 1e-13),
}

# learning-rate schedulers against torch's golden sequences (Python-float arithmetic, so
# the numbers agree to the last bit in practice; atol covers lrs that reach 0)
SCHEDULER = {
    "float64": (1e-12, 1e-15),
}

# central finite differences in float64 against autograd
GRADCHECK = {"eps": 1e-6, "rtol": 1e-6, "atol": 1e-8}


def close(actual, expected, dtype: str, table=PARITY):
    """Assert two arrays agree within ``table[dtype]``, with a message naming the worst element.

    The tables hold float64 alone: a float32 or float16 result is judged instead (``judge``).
    A table with ``"normwise"`` compares each step (along axis 0) as one tensor: its largest
    difference within ``rtol`` of its largest magnitude, plus ``atol`` (NaNs in the same places).
    """
    import numpy as np

    if dtype not in table:
        raise ValueError(f"no fixed tolerance for {dtype}: judge it against its float64 truth (tolerances.judge)")
    rtol, atol = table[dtype]
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if not table.get("normwise"):
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
        return
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg="NaNs in other places")
    steps = len(expected) if expected.ndim else 1
    difference = np.nan_to_num(np.abs(actual - expected).reshape(steps, -1), nan=0.0).max(axis=1, initial=0.0)
    size = np.nan_to_num(np.abs(expected).reshape(steps, -1), nan=0.0).max(axis=1, initial=0.0)
    over = np.flatnonzero(difference > rtol * size + atol)
    if over.size:
        t = int(over[0])
        raise AssertionError(f"step {t}: largest difference {difference[t]:.3g}, normwise "
                             f"{difference[t] / max(size[t], 1e-300):.3g} of the largest magnitude {size[t]:.3g} "
                             f"(rtol {rtol:g}, atol {atol:g})")


# --- accuracy in ulps of the true value (tests/test_accuracy.py; measured by tests/ulps.py) ----
# Not a tolerance between lucid and torch: each is measured against a float64 truth computed
# from the same inputs, and torch's error is the ceiling, as it rounds differently on each CPU.

# "cpu" (NumPy) evaluates float16 and float32 formulas in float64 and rounds once: within half
# an ulp of the truth, plus what the float64 evaluation itself leaves (well under 2**-20 ulps)
CORRECTLY_ROUNDED = 0.5 + 2**-20

# "gpu" (MLX, whose arithmetic is the format's own: GPUs have no float64) is held to torch's
# own error on the same inputs plus this many ulps...
GPU_ABOVE_TORCH = 4.0
# ...and, wherever torch's error is larger, to a ceiling of its own: float16 formulas are
# evaluated in float32 and rounded once; float32 ones per op, (value, gradient), about twice
# what MLX's CPU build measured on the development machine (in brackets), as MLX's kernels
# round differently with each CPU's vector units. The largest are where float32 arithmetic
# itself decides: gelu (tanh) and silu where the result is near 2**-126 or its argument is
# large (its rounding scaled by up to 66), pow's rounding of y - 1 in the gradient.
GPU_FLOAT16 = 0.6
GPU_FLOAT32 = {
    "exp": (2, 2),  # (0.9, 0.9)
    "log": (2, 1),  # (0.755, 0.5)
    "sqrt": (1, 3),  # (0.5, 1.28)
    "log1p": (1.5, 3),  # (0.718, 1.46)
    "expm1": (1.5, 2),  # (0.735, 0.896)
    "tanh": (4, 6),  # (1.89, 2.96)
    "sigmoid": (4, 6),  # (1.79, 2.96)
    "erf": (8, 8),  # (3.97, 3.12)
    "sin": (3, 3),  # (1.37, 1.18)
    "cos": (3, 3),  # (1.18, 1.37)
    "add": (1, 1),  # (0.5, 0)
    "mul": (1, 1),  # (0.5, 0)
    "div": (1, 1),  # (0.5, 0.5)
    "pow": (1.5, 4),  # (0.501, 1.82)
    "gelu": (24, 12),  # (8.37, 5.89)
    "gelu (tanh)": (256, 384),  # (125, 140)
    "silu": (96, 96),  # (44.8, 44.3)
    "softplus": (3, 3),  # (1.08, 1.47)
    "mish": (6, 6),  # (2.83, 2.83)
    "elu": (1.5, 2),  # (0.71, 0.827)
    "softsign": (3, 6),  # (1.4, 2.97)
    "leaky_relu": (2, 1),  # (0.84, 0.24)
    "softmax": (6, 8),  # (2.68, 3.52)
    "log_softmax": (1.5, 1.5),  # (0.515, 0.516)
    "log_softmax (short rows)": (4, 2),  # (1.64, 0.808)
    "logsumexp": (1, 8),  # (0.274, 3.83)
    "sum": (3, 1),  # (1.09, 0)
    "mean": (1, 1),  # (0.378, 0.3)
    "var": (1, 4),  # (0.462, 1.79)
    "std": (1.5, 6),  # (0.659, 2.32)
    "norm": (3, 3),  # (1.21, 1.48)
    "cumsum": (6, 1.5),  # (2.71, 0.531)
    "layer_norm": (4, 6),  # (1.63, 2.06)
    "batch_norm": (4, 6),  # (1.84, 2.54)
    "batch_norm (eval)": (4, 4),  # (1.96, 1.66)
    "mse_loss": (1, 3),  # (0.205, 1.31)
    "l1_loss": (1.5, 1),  # (0.527, 0)
    "smooth_l1_loss": (1.5, 3),  # (0.51, 1.15)
    "huber_loss": (1.5, 2),  # (0.51, 0.971)
    "cross_entropy": (3, 8),  # (1.19, 3.55)
    "nll_loss": (3, 1),  # (1.15, 0)
    "binary_cross_entropy": (1.5, 4),  # (0.514, 1.79)
    "binary_cross_entropy_with_logits": (3, 6),  # (1.46, 2.32)
}


def ulps_ceiling(device: str, dtype: str, op: str, gradient: bool) -> float:
    """lucid's own bound on its error in ulps for ``op`` (its value or its gradient)."""
    if device == "cpu":
        return CORRECTLY_ROUNDED
    if dtype == "float16":
        return GPU_FLOAT16
    return GPU_FLOAT32[op][1 if gradient else 0]


# --- float32 and float16 results of a computation against torch's (the audit's judge) ---------
# A float32 result is never held to torch's float32 result at a fixed tolerance: both are
# compared with the float64 truth of the same computation (torch's, or lucid's, run in float64
# on the same float32 values), and torch's error is the ceiling of lucid's. Errors are counted
# normwise, in ulps of the tensor's largest true magnitude, as an element of a sum (a matmul,
# a gradient over a batch, a trajectory) can cancel to any small number that no float32
# algorithm gets to a relative ulp: lucid's error is at most FACTOR times torch's, or FLOOR
# ulps where torch's is smaller, per dtype (FACTOR, FLOOR).
JUDGED = {
    "float32": (2.0, 4.0),
    "float16": (2.0, 2.0),
}

# The same judge for a layer or function on "gpu": MLX's kernels (its matmul's order of
# accumulation, softmax's exp) round differently with each CPU's vector units, so a result
# composed of them is held to the largest of its ops' "gpu" ceilings (GPU_FLOAT32: softmax's
# gradient, 8 ulps) where twice torch's error is smaller. Measured: MultiheadAttention's
# in_proj gradients (bias_kv, add_zero_attn) at 4.03 and 5.69 ulps on one CPU, where torch's
# were 1.35 and 1.63, and within JUDGED on another.
JUDGED_GPU = {
    "float32": (2.0, 8.0),
    "float16": (2.0, 2.0),
}


def judged_on(device: str, table: dict) -> dict:
    """The judge's table for results on ``device``: JUDGED_GPU where JUDGED is asked for on "gpu"."""
    return JUDGED_GPU if device == "gpu" and table is JUDGED else table


def normwise_ulps(actual, truth, dtype: str) -> float:
    """``max|actual - truth|`` in ulps of ``dtype`` at ``max|truth|`` (inf where their NaNs or
    infinities differ)."""
    import numpy as np

    from ulps import ulp

    actual, truth = np.broadcast_arrays(np.asarray(actual, dtype=np.float64), np.asarray(truth, dtype=np.float64))
    if actual.size == 0:
        return 0.0
    finite = np.isfinite(truth)
    if not np.array_equal(np.isfinite(actual), finite) or not np.array_equal(actual[~finite], truth[~finite], equal_nan=True):
        return float("inf")
    if not finite.any():
        return 0.0
    scale = float(np.max(np.abs(truth[finite])))
    return float(np.max(np.abs(actual[finite] - truth[finite])) / ulp(scale, dtype))


def judge(actual, reference, truth, dtype: str, table=JUDGED, what: str = "") -> None:
    """Assert that ``actual`` (lucid's float32 or float16 result) is no further from ``truth``
    (float64) than ``reference`` (torch's result of the same computation) allows: see JUDGED.
    float64 results are held to ``truth`` at PARITY's float64 tolerance instead."""
    if dtype == "float64":
        close(actual, truth, "float64")
        return
    factor, floor = table[dtype]
    mine, theirs = normwise_ulps(actual, truth, dtype), normwise_ulps(reference, truth, dtype)
    bound = max(factor * theirs, floor)
    assert mine <= bound, f"{what}: lucid's {dtype} error {mine:.3g} ulps > {bound:.3g} (torch's {theirs:.3g})"


# --- judging recurrences in float32 (tests/test_nn_rnn.py, tests/test_torch_style_examples.py) ---
# A recurrence (an RNN, LSTM or GRU over its time steps and its backward through them; a training
# run over its steps) carries each last-bit difference of a step into all the later ones, and
# some of its results amplify them: a GRU's d/dn = 1 - z loses the bits of z near 1. Two equally
# accurate implementations then differ from the truth by amounts whose ratio JUDGED's factor does
# not bound: lucid's "cpu" (each op correctly rounded), with a third of its float32 sigmoid outputs
# moved by one ulp, reached 6.06 ulps on a 2-layer bidirectional GRU's weight_hh_l1 gradient where
# torch's error is 2.06; over 40 seeds of 2-layer bidirectional RNNs, LSTMs and GRUs with initial
# states, lucid's and torch's largest errors are alike (medians 2.5-3.8 and 3.0-3.2 ulps, largest
# 4.5-9.6 and 6.8-8.3), yet JUDGED failed lucid in 1 of 40 LSTMs on "cpu" and in 3-8 of 40 on
# "gpu" (MLX). The largest measured in the tests: 13.1 ulps (that GRU on "gpu", torch's 2.06);
# the examples' training runs, 3.8 ulps on a step's loss. FLOOR: about twice the largest; FACTOR
# as JUDGED's.
JUDGED_RECURRENT = {
    "float32": (2.0, 24.0),
}


# --- float32 runs of many steps against torch's (the audit of the optimizer tests) ------------
# A run (a golden optimizer trajectory, LBFGS's calls, a few training steps) is judged at every
# recorded step by tests/trajectories.py: lucid's error there (normwise ulps from the float64
# truth of the same float32 computation) is at most FACTOR times torch's largest error at that
# step or before, or FLOOR ulps where that is smaller. (FACTOR, FLOOR) per dtype.
#
# Measured on the golden trajectories (115 cases of 50 steps; 973 runs of a parameter or state
# tensor, about 49,000 judged steps per device): one step of lucid's rounds as well as one of
# torch's (from torch's own float32 state, each optimizer's mean error per step within 4% of
# torch's, 0.3-0.7 ulps; torch's fused multiply-add in L2 weight decay, grad + wd * param,
# makes its own a little smaller there). Over 50 steps the errors grow to 15-45 ulps (100 for
# SGD with momentum, 738 for Rprop's sign-driven steps, in lucid and torch alike), and two runs
# that round equally well are not equally far at every step: torch's run on one CPU against
# its run on another reaches 3.47 times the other's largest error so far (this machine's
# AVX512 kernels against ATEN_CPU_CAPABILITY=default; 2.62 against the CPU that made the
# previous golden files), lucid's against torch's 3.31 (Adadelta's acc_delta; 3.21 Muon with
# weight decay), the same on NumPy with and without numba, for a generic CPU, and on MLX
# compiled or eager. FACTOR 6 is 1.7 times either; FLOOR as JUDGED's.
TRAJECTORY = {
    "float32": (6.0, 4.0),
}

# SOAP's float32 runs: its state holds eigenvectors from a float32 eigendecomposition, each
# accurate to about eps * |L| / gap (its eigenvalue's distance to the next), whose error LAPACK
# builds distribute differently between the vectors, and its second moment is the square of
# the gradient projected on them. So one run's second moment can start off 9.2 ulps from the
# truth where torch's (its basis itself 9.2 ulps off) is 1.2 ulps off (soap_default on MLX,
# the worst of its 10 cases on both devices: 1.98 ulps over 6 x torch's). Between two CPUs
# torch's own first basis differs as much: soap_channels_last's stored Q1 (made on another
# machine) is 23.7 ulps from its truth early in the run, where torch's run here is at most 3.8
# ulps off so far (on torch's non-vectorised kernels the two runs part by 17.3). FLOOR: twice
# the largest first-basis error of a torch run measured; FACTOR as TRAJECTORY's.
TRAJECTORY_EIGENBASIS = {
    "float32": (6.0, 48.0),
}

# Schedule-Free's float32 runs (1,000 steps, recorded every 50th, through eval/train switches):
# the parameter is an average of z whose weight c_t shrinks as 1/t, and eval() moves it by
# lerp(y, z, 1 - 1/beta), a negative weight, so a last-bit change in z moves it by many ulps of
# its own magnitude. Measured: torch itself, rerun on its non-vectorised kernels
# (ATEN_CPU_CAPABILITY=default), reached 14.8 ulps on radam_schedule_free_default's third
# record where the golden's torch error was 2.09 (TRAJECTORY's bound 12.6). FLOOR as
# JUDGED_RECURRENT's, for a run that carries each step's rounding into all later ones.
TRAJECTORY_SCHEDULE_FREE = {
    "float32": (6.0, 24.0),
}

# L-BFGS in float32 (tests/test_lbfgs.py): each iteration builds its curvature pairs from
# differences of nearly equal gradients, so a run's error after a few iterations is its early
# roundings amplified a hundred- to ten-thousandfold, in a direction that depends on where each
# rounding fell. Over 100 starting points perturbed around each case, lucid's errors (NumPy and
# MLX) and torch's have the same distribution (median ratio 1.0-1.3 per call), but one run's
# error is up to 16 times the other's at the 99th percentile (52 on rosenbrock_short_history),
# and torch's run against torch's (ATEN_CPU_CAPABILITY=default against AVX512) on the committed
# cases up to 11.9. On the committed cases lucid's reaches 27 (rosenbrock_strong_wolfe on MLX)
# and 17.6 against torch's default kernels. The step counts (evaluations, iterations) are
# compared exactly, so a different algorithm cannot pass; FACTOR 64 is 2.4 times the largest
# ratio measured on the committed cases.
LBFGS_TRAJECTORY = {
    "float32": (64.0, 4.0),
}
