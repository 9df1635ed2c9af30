"""The in-place vocabulary update rules are written in, against torch's CPU kernels.

A single correctly rounded IEEE operation (a product, a quotient, a maximum) gives the same
bits on every CPU, so lucid must be bit-identical to torch there. A compound kernel such as
``addcdiv`` may be contracted into fused multiply-adds by torch's vectorised build for one
CPU and not for another, so it is held to the float64 parity tolerance instead: whether the
bits agree is a property of the machine, not of lucid.
"""

import numpy as np
import pytest

import lucid
from tolerances import close

torch = pytest.importorskip("torch")


def _pair(seed=0, n=4096, positive=False):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(n)
    return np.abs(values) + 0.1 if positive else values


@pytest.mark.parametrize("value", [1, -0.0123456789, 3.5])
def test_addcdiv_matches_torch(value):
    a, b, c = _pair(0), _pair(1), _pair(2, positive=True)
    expected = torch.tensor(a).addcdiv_(torch.tensor(b), torch.tensor(c), value=value).numpy()
    got = lucid.tensor(a).addcdiv_(lucid.tensor(b), lucid.tensor(c), value=value).numpy()
    close(got, expected, "float64")
    # and it is the compound a + (value * b) / c in torch's order, each step rounded once
    assert np.array_equal(got, a + (value * b) / c)


# sqrt_ is left out on purpose: torch's vectorised CPU sqrt is not correctly rounded (about
# 1% of float64 elements differ by one ulp from IEEE sqrt, which NumPy computes)
@pytest.mark.parametrize("name,args", [("mul_", (0.999,)), ("div_", (1.7,)), ("maximum_", None)])
def test_simple_inplace_ops_match_torch_bitwise(name, args):
    a = _pair(3, positive=True)
    other = _pair(4, positive=True)
    if args is None:
        expected = torch.maximum(torch.tensor(a), torch.tensor(other)).numpy()
        got = lucid.tensor(a).maximum_(lucid.tensor(other)).numpy()
    else:
        expected = getattr(torch.tensor(a), name)(*args).numpy()
        got = getattr(lucid.tensor(a), name)(*args).numpy()
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("base", [0.9, 0.99, 0.999, 1.7])
def test_scalar_power_of_a_float32_value_rounds_as_torch(base):
    """``t ** k`` on a 0-d float32 tensor, as in Adam's bias corrections with Tensor betas.

    torch rounds the double-precision power once (NumPy's powf differs in about one case in
    ten) and computes a few exponents (2, 3, -1, -2, -0.5) by multiplication and division.
    """
    exponents = [float(k) for k in range(-5, 300)] + [-0.5, 1.5, 2.5]
    expected = [(torch.tensor(base) ** e).item() for e in exponents]
    got = [(lucid.tensor(base) ** e).item() for e in exponents]
    assert got == expected
