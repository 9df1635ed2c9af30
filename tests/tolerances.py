"""Every numeric tolerance the suite uses, in one place.

float64 comparisons are as tight as the arithmetic allows; float32 ones cover float32
rounding accumulated over a trajectory, not algorithmic differences.
"""

# parity with torch (golden files and live), per dtype: (rtol, atol)
PARITY = {
    "float64": (1e-12, 1e-14),
    "float32": (1e-5, 1e-6),
    # one float16 rounding (2**-11 relative) either way: torch computes half ops in float32
    "float16": (2e-3, 1e-3),
}

# LBFGS in float32 (lucid on MLX against torch's float32 run), per step(closure) call of
# up to 20 iterations. Each iteration's inputs differ from torch's by an ulp or two (2**-24
# relative: summation order, torch's fused multiply-adds), and L-BFGS amplifies that from
# iteration to iteration: measured 0-2 ulps after the first iteration, ~100 after five,
# ~1e4 after eight on the least-squares fit. torch's own float32 run is as far (up to 7e-5
# relative) from its float64 run, so 1e-5 cannot hold past the first few iterations;
# 5e-4 is three times the largest difference measured here (1.6e-4, after 16 iterations).
# atol: parameters that pass near 0. The first iterations are held to PARITY["float32"].
LBFGS_FLOAT32 = {
    "float32": (5e-4, 1e-5),
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
    "float32": PARITY["float32"],
}

# the torch-style training scripts of examples/, lucid against torch from the same initial
# weights, per step's loss over a few dozen steps of SGD/Adam/SparseAdam. Measured: 7e-16
# relative in float64 and 3e-7 in float32 (torch with one thread); the parity bounds hold
# with margin, as the runs are short enough that the ulp differences do not grow.
EXAMPLES = PARITY

# MLX (float32 by default) against NumPy for the same op
BACKENDS = {
    "float64": (1e-12, 1e-14),
    "float32": (1e-5, 1e-6),
}

# learning-rate schedulers against torch's golden sequences (Python-float arithmetic, so
# the numbers agree to the last bit in practice; atol covers lrs that reach 0)
SCHEDULER = {
    "float64": (1e-12, 1e-15),
}

# central finite differences in float64 against autograd
GRADCHECK = {"eps": 1e-6, "rtol": 1e-6, "atol": 1e-8}


def close(actual, expected, dtype: str, table=PARITY):
    """Assert two arrays agree within ``table[dtype]``, with a message naming the worst element."""
    import numpy as np

    rtol, atol = table[dtype]
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)


def close_summed(actual, expected, dtype: str, table=PARITY):
    """:func:`close` for gradients, each element a sum of many terms (a weight's gradient
    over a batch and time steps). In float32 and float16 such an element is accurate to the
    rounding of the terms, not of the sum, which can cancel to a small number: an RNN weight
    gradient of 0.0186 among entries up to 11 was measured 1.25e-6 from torch's, with torch
    on ATen's default (unvectorised) kernels, 1.1e-7 of the largest entry. So every entry
    gets the bound of the largest, ``atol + rtol * max|expected|`` (the largest entry's own
    bound is unchanged); float64 keeps ``table``'s elementwise bounds."""
    import numpy as np

    rtol, atol = table[dtype]
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    finite = np.abs(expected[np.isfinite(expected)])
    if dtype == "float64" or not finite.size:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_allclose(actual, expected, rtol=0, atol=atol + rtol * float(finite.max()), equal_nan=True)
