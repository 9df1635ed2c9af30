"""The comparisons of tests/tolerances.py can fail: each rejects an error just past its bound."""

from __future__ import annotations

import numpy as np
import pytest

from tolerances import PARITY, close, close_summed


def test_close_summed_allows_cancellation_only_up_to_the_largest_entry():
    expected = np.array([11.1, -5.1, 0.0186], dtype=np.float64)
    rtol, _ = PARITY["float32"]
    # a small entry off by half of rtol x the largest: float32 rounding of the terms, accepted
    close_summed(expected + [0, 0, 0.5 * rtol * 11.1], expected, "float32")
    with pytest.raises(AssertionError):
        close(expected + [0, 0, 0.5 * rtol * 11.1], expected, "float32")
    # past the bound, or the largest entry off by more than rtol of itself (plus atol): rejected
    with pytest.raises(AssertionError):
        close_summed(expected + [0, 0, 2 * rtol * 11.1], expected, "float32")
    with pytest.raises(AssertionError):
        close_summed(expected * (1 + np.array([1.2 * rtol, 0, 0])), expected, "float32")


def test_close_summed_keeps_float64_elementwise():
    expected = np.array([11.1, 0.0186])
    with pytest.raises(AssertionError):
        close_summed(expected + [0, 1e-10], expected, "float64")
