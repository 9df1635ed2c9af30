"""The comparisons of tests/tolerances.py can fail: each rejects an error just past its bound."""

from __future__ import annotations

import numpy as np
import pytest

from tolerances import JUDGED, PARITY, PRODIGY, close, judge, normwise_ulps


def test_close_holds_float64_to_1e_12_and_refuses_float32():
    expected = np.array([11.1, -5.1, 0.0186])
    rtol, _ = PARITY["float64"]
    close(expected * (1 + 0.5 * rtol), expected, "float64")
    with pytest.raises(AssertionError):
        close(expected * (1 + 2 * rtol), expected, "float64")
    with pytest.raises(ValueError, match="judge"):
        close(expected, expected, "float32")


def test_close_normwise_holds_each_step_to_its_largest_magnitude():
    # two steps of a tensor whose small entry cancels: judged against each step's largest
    expected = np.array([[4e5, -1e-3], [2.0, 0.5]])
    rtol, _ = PRODIGY["float64"]
    close(expected + [[0, 0.9 * rtol * 4e5], [0, 0]], expected, "float64", PRODIGY)
    with pytest.raises(AssertionError, match="step 0"):
        close(expected + [[0, 1.1 * rtol * 4e5], [0, 0]], expected, "float64", PRODIGY)
    with pytest.raises(AssertionError, match="step 1"):  # the second step's own scale, not the first's
        close(expected + [[0, 0], [0, 1.1 * rtol * 2.0]], expected, "float64", PRODIGY)
    with pytest.raises(AssertionError, match="NaN"):
        close(expected + [[0, np.nan], [0, 0]], expected, "float64", PRODIGY)


def test_judge_bounds_lucid_by_torchs_error_or_the_floor():
    factor, floor = JUDGED["float32"]
    truth = np.array([11.1, -5.1, 0.0186])
    one_ulp = np.spacing(np.float32(11.1)).astype(np.float64)  # at the largest magnitude
    torch_result = truth + [3 * one_ulp, 0, 0]
    assert normwise_ulps(torch_result, truth, "float32") == pytest.approx(3)
    # an error anywhere counts in ulps of the largest magnitude: a cancelled entry is no outlier
    judge(truth + [0, 0, factor * 3 * one_ulp], torch_result, truth, "float32")
    with pytest.raises(AssertionError, match="torch's 3"):
        judge(truth + [0, 0, factor * 3.1 * one_ulp], torch_result, truth, "float32")
    # where torch is exact, the floor
    judge(truth + [floor * one_ulp, 0, 0], truth, truth, "float32")
    with pytest.raises(AssertionError):
        judge(truth + [1.1 * floor * one_ulp, 0, 0], truth, truth, "float32")


def test_judge_refuses_a_nan_or_an_infinity_the_truth_does_not_have():
    truth = np.array([1.0, np.inf])
    judge(truth, truth, truth, "float32")
    with pytest.raises(AssertionError):
        judge(np.array([np.nan, np.inf]), truth, truth, "float32")
    with pytest.raises(AssertionError):
        judge(np.array([1.0, 3e38]), truth, truth, "float32")
