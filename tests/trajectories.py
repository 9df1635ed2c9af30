"""A float32 run judged against torch's, step by step (tests/tolerances.py's judge, for runs).

A run is what a test records after each step of a computation that feeds back on itself: a
parameter or a state tensor after every optimizer step, the loss each LBFGS call returned,
a weight through a few training steps. Steps lie along axis 0. lucid's run and torch's run
of the same computation are each measured against its float64 truth (``truth``: the same
computation from the same float32 inputs, in float64), normwise in ulps at every step
(:func:`tolerances.normwise_ulps`); a step the truth records as NaN (a state that does not
exist yet) is not measured, and must be NaN in both runs.

The ceiling is torch's error, as in :func:`tolerances.judge`, with one difference that a run
needs: an error at step ``t`` is every earlier step's rounding carried forward, so two
implementations that round equally well have errors of the same size but not at the same
steps, and either one's can pass near zero for a while (where the two happened to cancel).
The ceiling at step ``t`` is therefore torch's largest error at any step up to ``t``:

    lucid's error at step t  <=  max(FACTOR x max over s <= t of torch's error at s, FLOOR)

with (FACTOR, FLOOR) from ``table`` (tolerances.TRAJECTORY, measured there).
"""

from __future__ import annotations

import numpy as np

from tolerances import TRAJECTORY, normwise_ulps

#: Key prefix of the float64 truth in a golden recording: ``truth.p0`` is the truth of ``p0``.
TRUTH = "truth."


def step_errors(run, truth, dtype: str) -> np.ndarray:
    """:func:`tolerances.normwise_ulps` of ``run`` from ``truth`` at each step, all steps at
    once (NaN where the truth is NaN throughout: nothing to measure there, and ``run`` must be
    NaN throughout too)."""
    from ulps import ulp

    run, truth = np.asarray(run, dtype=np.float64), np.asarray(truth, dtype=np.float64)
    assert run.shape == truth.shape, (run.shape, truth.shape)
    steps = len(truth)
    run, truth = run.reshape(steps, -1), truth.reshape(steps, -1)
    if truth.shape[1] == 0:
        return np.zeros(steps)
    absent = np.isnan(truth).all(axis=1)
    assert np.isnan(run[absent]).all(), f"steps {np.flatnonzero(absent & ~np.isnan(run).all(axis=1))}: " \
                                        "a value where the truth has none"
    finite = np.isfinite(truth)
    # NaNs or infinities where the truth has none, or other ones: infinitely far
    differs = (np.isfinite(run) != finite) | ~finite & (run != truth) & ~(np.isnan(run) & np.isnan(truth))
    differs = differs.any(axis=1)
    size = np.where(finite, np.abs(truth), 0.0).max(axis=1)
    with np.errstate(invalid="ignore"):
        error = np.where(finite, np.abs(run - truth), 0.0).max(axis=1) / ulp(size, dtype)
    error = np.where(finite.any(axis=1), error, 0.0)
    error = np.where(differs, np.inf, error)
    return np.where(absent, np.nan, error)


def run_errors(actual, reference, truth, dtype: str):
    """``(mine, ceiling)`` per step: lucid's error and torch's largest error so far (ulps)."""
    mine, theirs = step_errors(actual, truth, dtype), step_errors(reference, truth, dtype)
    ceiling = np.fmax.accumulate(np.nan_to_num(theirs, nan=0.0))
    return mine, ceiling


def judge_run(actual, reference, truth, dtype: str, table=TRAJECTORY, what: str = "") -> None:
    """Assert that lucid's run ``actual`` is, at every step, no further from ``truth`` than
    torch's run ``reference`` allows (see the module docstring). float64 runs are held to
    ``truth`` at PARITY's float64 tolerance instead, as in :func:`tolerances.judge`."""
    from tolerances import close

    if dtype == "float64":
        close(actual, truth, "float64")
        return
    factor, floor = table[dtype]
    mine, ceiling = run_errors(actual, reference, truth, dtype)
    bound = np.maximum(factor * ceiling, floor)
    over = np.flatnonzero(mine > bound)  # NaN (nothing measured) is never over
    if over.size:
        t = int(over[0])
        raise AssertionError(f"{what} at step {t}: lucid's {dtype} error {mine[t]:.3g} ulps > {bound[t]:.3g} "
                             f"(torch's largest so far {ceiling[t]:.3g}; worst step {int(np.nanargmax(mine - bound))})")


# --- recordings: a run's arrays by name, as the golden files hold them --------------------------
# A recording maps names to arrays: float32 (or float16) runs, float64 ones, integer counts. A
# golden recording of torch's also holds, for each of its float32 and float16 arrays, the float64
# truth of that array under ``truth.{name}``: each generator says what its truth is.
JUDGED_DTYPES = ("float32", "float16")


def with_truth(run: dict, truth: dict, what: str = "") -> dict:
    """``run`` with ``truth.`` entries: ``truth[name]`` (float64) for each float32 or float16
    array of ``run``. The truth's integer arrays (step counts, evaluations) must equal the
    run's, or it is not the truth of the same computation."""
    out = dict(run)
    for key, value in run.items():
        if value.dtype.name in JUDGED_DTYPES:
            out[TRUTH + key] = np.asarray(truth[key], dtype=np.float64)
        elif not np.issubdtype(value.dtype, np.floating) and key in truth:
            assert np.array_equal(truth[key], value), f"{what}: the truth's {key} differs from the run's"
    return out


def split_truth(recording: dict) -> tuple[dict, dict]:
    """A golden recording's own arrays and its truth (``truth.`` keys, the prefix removed)."""
    own = {k: v for k, v in recording.items() if not k.startswith(TRUTH)}
    truth = {k[len(TRUTH):]: v for k, v in recording.items() if k.startswith(TRUTH)}
    return own, truth


def _as_run(array):
    """A 0-d array as a run of one step."""
    array = np.asarray(array)
    return array[None] if array.ndim == 0 else array


def _check_array(actual, expected, truth, runs, table, float64_table, what):
    """One array of lucid's (or of a fresh torch run) against ``expected``: integers exactly,
    float64 within ``float64_table`` (PARITY's when None), float32 and float16 judged against
    ``truth``: as a run (steps along axis 0, :func:`judge_run`) when ``runs``, else as one
    value (:func:`tolerances.judge`), with ``table`` (TRAJECTORY's or JUDGED's when None)."""
    from tolerances import JUDGED, PARITY, close, judge

    actual, expected = _as_run(actual), _as_run(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, \
        f"{what}: {actual.dtype}{actual.shape}, expected {expected.dtype}{expected.shape}"
    if not np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    elif expected.dtype.name in JUDGED_DTYPES:
        assert truth is not None, f"{what}: a {expected.dtype} array without a truth to judge it against"
        check, default = (judge_run, TRAJECTORY) if runs else (judge, JUDGED)
        check(actual, expected, _as_run(truth), expected.dtype.name, table or default, what)
    else:
        close(actual, expected, "float64", float64_table or PARITY)


def judge_recording(actual: dict, expected: dict, runs: bool, table=None, float64_table=None, what: str = "") -> None:
    """lucid's recording ``actual`` against torch's golden (or live) recording ``expected``:
    the same names; integer arrays equal; float64 arrays within ``float64_table`` (PARITY's
    when None) of torch's; each float32 or float16 array judged against its truth, torch's
    array the ceiling: step by step if the arrays are ``runs`` (:func:`judge_run`), else each
    as one value (:func:`tolerances.judge`), with ``table`` (TRAJECTORY's or JUDGED's when
    None)."""
    own, truth = split_truth(expected)
    assert sorted(actual) == sorted(own), f"{what}: recorded {sorted(actual)}, expected {sorted(own)}"
    for key, want in own.items():
        _check_array(actual[key], want, truth.get(key), runs, table, float64_table, f"{what}: {key}")


def replay_problems(stored: dict, fresh: dict, runs: bool, table=None, float64_table=None,
                    what: str = "") -> list[str]:
    """What differs between a stored golden recording and torch's fresh run of it (on another
    machine, or after a change): names, dtypes and shapes; integer arrays; float64 arrays and
    truths beyond ``float64_table`` (PARITY's when None); and each float32 or float16 array
    (a run when ``runs``), judged against the stored truth both ways: the fresh run with the
    stored one as its ceiling, and the stored one with the fresh one as its ceiling, so that a
    stale or damaged file fails as surely as a torch that computes differently. One message
    per problem."""
    if sorted(stored) != sorted(fresh):
        return [f"{what}: names differ: {sorted(set(stored) ^ set(fresh))}"]
    _, truth = split_truth(stored)
    problems = []
    for key in sorted(stored):
        a, b = stored[key], fresh[key]
        both_ways = a.dtype.name in JUDGED_DTYPES and not key.startswith(TRUTH)
        for actual, expected in [(b, a), (a, b)] if both_ways else [(b, a)]:
            try:
                _check_array(actual, expected, truth.get(key), runs, table, float64_table, f"{what}: {key}")
            except AssertionError as error:
                problems.append(" ".join(str(error).split())[:400])
                break
    return problems


def judge_alike(first, second, truth, dtype: str, runs: bool = False, table=None, what: str = "") -> None:
    """Two float32 (or float16) results of one computation by two of lucid's own paths (a
    checkpoint resumed on another backend, gradients accumulated over microbatches), neither
    of them torch's: each is judged against ``truth`` with the other's error as its ceiling,
    so that neither may be less accurate than the other allows (as a run when ``runs``)."""
    from tolerances import JUDGED, judge

    check, default = (judge_run, TRAJECTORY) if runs else (judge, JUDGED)
    check(first, second, truth, dtype, table or default, what)
    check(second, first, truth, dtype, table or default, what)


def judge_exact(actual, truth, dtype: str, what: str = "") -> None:
    """A float32 (or float16) result checked against a closed form, with no torch to set the
    ceiling: :func:`tolerances.judge` with the truth correctly rounded to ``dtype`` standing
    for the reference (the best any implementation can do), so that ``actual`` is within
    JUDGED's floor of the truth; float64 at PARITY's float64 tolerance."""
    from tolerances import judge

    truth = np.asarray(truth, dtype=np.float64)
    judge(actual, truth.astype(dtype), truth, dtype, what=what)
