"""The judge of runs (tests/trajectories.py) can fail: each check rejects an error just past its bound."""

from __future__ import annotations

import numpy as np
import pytest

from tolerances import JUDGED, TRAJECTORY, normwise_ulps
from trajectories import (TRUTH, judge_alike, judge_exact, judge_recording, judge_run, replay_problems, step_errors,
                          with_truth)
from ulps import ulp

FACTOR, FLOOR = TRAJECTORY["float32"]


def test_step_errors_are_normwise_ulps_step_by_step():
    rng = np.random.default_rng(0)
    for _ in range(300):
        steps, size = 4, int(rng.integers(1, 5))
        truth = rng.standard_normal((steps, size)) * 10.0 ** rng.integers(-40, 3)
        run = (truth * (1 + 1e-7 * rng.standard_normal((steps, size)))).astype(np.float32).astype(np.float64)
        for array in (truth, run):  # infinities, NaNs and zeros in either, agreeing or not
            array[rng.random((steps, size)) < 0.1] = rng.choice([np.inf, -np.inf, np.nan, 0.0])
        truth[1] = np.nan  # a state that does not exist at step 1
        run[np.isnan(truth).all(axis=1)] = np.nan
        want = [np.nan if np.isnan(truth[t]).all() else normwise_ulps(run[t], truth[t], "float32")
                for t in range(steps)]
        np.testing.assert_array_equal(step_errors(run, truth, "float32"), want)


def test_a_value_where_the_truth_has_none_is_refused():
    with pytest.raises(AssertionError, match="a value where the truth has none"):
        step_errors(np.array([1.0, 2.0]), np.array([1.0, np.nan]), "float32")


def _run(ulps_off, scale=1.0):
    """A truth of three steps, and a float32-like run ``ulps_off[t]`` ulps (at ``scale``) from it."""
    truth = np.array([[scale, -0.5 * scale]] * len(ulps_off))
    return truth + np.asarray(ulps_off)[:, None] * ulp(scale, "float32") * np.array([1.0, 0.0]), truth


def test_judge_run_holds_lucid_to_torchs_largest_error_so_far():
    theirs, truth = _run([1.0, 10.0, 2.0])
    # torch's error dips to 2 ulps at step 2; its largest so far is still 10
    judge_run(_run([1.0, FACTOR * 10.0, FACTOR * 10.0])[0], theirs, truth, "float32")
    with pytest.raises(AssertionError, match="at step 2"):
        judge_run(_run([1.0, 10.0, FACTOR * 10.0 * 1.01])[0], theirs, truth, "float32")
    # lucid's error now cannot lean on torch's later one
    with pytest.raises(AssertionError, match="at step 0"):
        judge_run(_run([FACTOR * 1.01, 0.0, 0.0])[0], theirs, truth, "float32")


def test_judge_run_allows_the_floor_where_torch_is_exact():
    theirs, truth = _run([0.0, 0.0])
    judge_run(_run([FLOOR, FLOOR])[0], theirs, truth, "float32")
    with pytest.raises(AssertionError):
        judge_run(_run([0.0, FLOOR + 0.01])[0], theirs, truth, "float32")


def test_judge_run_skips_absent_steps_and_catches_nonfinite_ones():
    theirs, truth = _run([1.0, 1.0, 1.0])
    truth[0] = theirs[0] = np.nan
    mine = _run([np.nan, 1.0, 1.0])[0]
    mine[0] = np.nan
    judge_run(mine, theirs, truth, "float32")
    mine[2, 1] = np.inf
    with pytest.raises(AssertionError, match="inf ulps"):
        judge_run(mine, theirs, truth, "float32")


def _recording():
    truth = {"p0": np.linspace(1.0, 2.0, 6).reshape(3, 2), "loss": np.array([3.0, 2.0, 1.0])}
    run = {"p0": truth["p0"].astype(np.float32), "loss": truth["loss"].astype(np.float32),
           "count": np.arange(3), "exact": np.array([0.25, 0.5])}
    return with_truth(run, {**truth, "count": np.arange(3)})


def test_a_recording_is_judged_array_by_array():
    expected = _recording()
    assert sorted(expected) == ["count", "exact", "loss", "p0", TRUTH + "loss", TRUTH + "p0"]
    actual = {k: v.copy() for k, v in expected.items() if not k.startswith(TRUTH)}
    judge_recording(actual, expected, runs=True)
    for key, change in [("count", 1), ("exact", 1e-11), ("p0", 1e-5)]:
        damaged = {**actual, key: actual[key] + np.asarray(change).astype(actual[key].dtype)}
        with pytest.raises(AssertionError):
            judge_recording(damaged, expected, runs=True)
    with pytest.raises(AssertionError, match="recorded"):
        judge_recording({k: v for k, v in actual.items() if k != "loss"}, expected, runs=True)


def test_with_truth_refuses_a_truth_that_counts_otherwise():
    with pytest.raises(AssertionError, match="count"):
        with_truth({"count": np.arange(3)}, {"count": np.arange(1, 4)})


def test_a_replay_fails_on_a_damaged_file_and_on_a_torch_that_computes_otherwise():
    stored = _recording()
    assert replay_problems(stored, dict(stored), runs=True) == []
    worse = {**stored, "p0": stored["p0"] * np.float32(1 + 1e-5)}
    # torch's fresh run far from the truth, or the stored one: caught either way
    assert replay_problems(stored, worse, runs=True) and replay_problems(worse, stored, runs=True)
    moved_truth = {**stored, TRUTH + "p0": stored[TRUTH + "p0"] * (1 + 1e-9)}
    assert replay_problems(stored, moved_truth, runs=True)


def test_two_of_lucids_paths_are_each_held_to_the_other():
    truth = np.array([1.0, 2.0])
    near, far = truth + ulp(2.0, "float32") * np.array([0.0, 1.0]), truth + ulp(2.0, "float32") * np.array([0.0, 9.0])
    judge_alike(near, truth + ulp(2.0, "float32") * np.array([0.0, 3.0]), truth, "float32")
    for first, second in ((near, far), (far, near)):
        with pytest.raises(AssertionError):
            judge_alike(first, second, truth, "float32")


def test_a_closed_form_allows_judgeds_floor_and_no_more():
    floor = JUDGED["float32"][1]
    truth = np.array([0.5, -1.0, 2.0])
    judge_exact(truth + np.array([0.0, 0.0, floor]) * ulp(2.0, "float32"), truth, "float32")
    with pytest.raises(AssertionError):
        judge_exact(truth + np.array([0.0, 0.0, floor + 0.5]) * ulp(2.0, "float32"), truth, "float32")
