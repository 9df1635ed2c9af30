"""lucid.nn.utils: clipping and flat vectors, against torch (golden files and live) and for errors.

The golden files (tests/golden/grad_tools/, from ``tools/make_golden.py --grad-tools``) hold
torch 2.13's total norm and clipped gradients for every case of ``grad_tools_cases.CLIP_CASES``.
"""

import json
import math
import warnings

import numpy as np
import pytest

import lucid
from lucid import _backend, nn
from lucid.nn.utils import (
    clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
    parameters_to_vector, vector_to_parameters,
)

from grad_tools_cases import ALL_CASES, CLIP_CASES, GOLDEN_DIR, clip_inputs, golden_path, load_golden, run_lucid_clip
from tolerances import close, normwise_ulps, ulps_ceiling
from trajectories import judge_recording

GPU = lucid.is_available("gpu")
needs_gpu = pytest.mark.skipif(not GPU, reason="needs the MLX backend")
# inf * 0 in NumPy's in-place multiply warns; torch does not, and neither should these tests fail on it
nonfinite_ok = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


def _compare(actual: dict, expected: dict) -> None:
    """float64 arrays to 1e-12 of torch's; each float32 one judged against its truth (the
    clipping in float64 of the same float32 gradients), torch's the ceiling."""
    judge_recording(actual, expected, runs=False)


# --- golden files and live torch ---------------------------------------------------------
def test_golden_files_are_exactly_the_cases():
    names = [name for name, *_ in ALL_CASES]
    assert len(set(names)) == len(names)
    assert {p.name for p in GOLDEN_DIR.glob("*.npz")} == {golden_path(n).name for n in names}
    assert json.loads((GOLDEN_DIR / "MANIFEST.json").read_text())["cases"] == names


@nonfinite_ok
@pytest.mark.parametrize("case", CLIP_CASES, ids=lambda c: c.name)
def test_clip_grad_norm_matches_golden(case, device):
    _compare(run_lucid_clip(case, device), load_golden(case.name))


@nonfinite_ok
@pytest.mark.parametrize("case", CLIP_CASES, ids=lambda c: c.name)
def test_clip_grad_norm_matches_torch_live(case):
    pytest.importorskip("torch")
    from grad_tools_cases import golden_grad_tools_arrays, run_torch_clip

    _compare(run_lucid_clip(case), golden_grad_tools_arrays(run_torch_clip, case))


# --- what clip_grad_norm_ returns and does -----------------------------------------------
def _params(device="cpu", dtype=lucid.float32, grads=((3.0, 4.0), (12.0,))):
    params = []
    for g in grads:
        p = nn.Parameter(lucid.zeros(len(g), dtype=dtype, device=device))
        p.grad = lucid.tensor(list(g), dtype=dtype, device=device)
        params.append(p)
    return params


def test_returns_the_norm_before_clipping_as_a_0d_tensor(device):
    params = _params(device)
    norm = clip_grad_norm_(params, max_norm=1.3)
    assert isinstance(norm, lucid.Tensor) and norm.shape == () and norm.device == device
    assert norm.dtype is lucid.float32 and norm.item() == 13.0
    coef = np.float32(1.3) / (np.float32(13.0) + np.float32(1e-6))
    np.testing.assert_array_equal(np.asarray(params[0].grad), np.float32([3.0, 4.0]) * coef)
    # the clipped grads' norm: lucid's norm op within its own ceiling (in ulps) of the norm of
    # those float32 values, which is 1.3 * 13 / (13 + 1e-6) up to three roundings of half an
    # ulp (of 1.3 to float32, of the coefficient, of each scaled gradient)
    expected = np.linalg.norm(np.concatenate([np.asarray(p.grad, dtype=np.float64) for p in params]))
    norm = get_total_norm([p.grad for p in params]).item()
    assert normwise_ulps(norm, expected, "float32") <= ulps_ceiling(device, "float32", "norm", gradient=False)
    assert normwise_ulps(expected, 1.3 * 13.0 / (13.0 + 1e-6), "float32") <= 1.5


def test_never_scales_up_and_multiplies_by_exactly_one(device):
    params = _params(device, lucid.float64)
    norm = clip_grad_norm_(params, max_norm=100.0)
    assert norm.item() == 13.0
    assert params[0].grad.tolist() == [3.0, 4.0] and params[1].grad.tolist() == [12.0]


def test_single_tensor_and_string_inf(device):
    (p,) = _params(device, grads=((3.0, -4.0),))
    assert clip_grad_norm_(p, 10.0, norm_type="inf").item() == 4.0
    assert clip_grad_norm_([p], 10.0, norm_type=float("inf")).item() == 4.0
    assert get_total_norm(p.grad, norm_type=1).item() == 7.0


def test_mixed_dtypes_give_the_widest_norm():
    a = nn.Parameter(lucid.zeros(2))
    b = nn.Parameter(lucid.zeros(1, dtype=lucid.float64))
    a.grad, b.grad = lucid.tensor([3.0, 4.0]), lucid.tensor([12.0], dtype=lucid.float64)
    norm = clip_grad_norm_([a, b], 1.0)
    assert norm.dtype is lucid.float64 and a.grad.dtype is lucid.float32 and b.grad.dtype is lucid.float64


def test_none_grads_are_skipped_and_all_none_gives_zero():
    a, b = nn.Parameter(lucid.zeros(2)), nn.Parameter(lucid.zeros(2))
    a.grad = lucid.tensor([3.0, 4.0])
    assert clip_grad_norm_([a, b], 1.0).item() == 5.0  # exact: sqrt(25) in float32
    assert b.grad is None
    a.grad = None
    zero = clip_grad_norm_([a, b], 1.0)
    assert zero.item() == 0.0 and zero.shape == () and zero.dtype is lucid.float32


def test_empty_list_returns_zero_and_empty_generator_warns():
    assert clip_grad_norm_([], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator, no gradient clipping will occur."):
        clip_grad_norm_((p for p in []), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clip_grad_norm_([], 1.0)  # a list does not warn, as in torch


def test_a_generator_is_consumed_once():
    model = nn.Linear(3, 2)
    model(lucid.ones(3)).sum().backward()
    before = [p.grad.tolist() for p in model.parameters()]
    norm = clip_grad_norm_(model.parameters(), 1e-3)
    assert norm.item() > 1e-3
    assert all(p.grad.tolist() != b for p, b in zip(model.parameters(), before))


@nonfinite_ok
def test_nonfinite_norm_default_propagates_as_torch(device):
    (p,) = _params(device, lucid.float64, grads=((float("inf"), 1.0, 2.0),))
    norm = clip_grad_norm_(p, 1.0)
    assert norm.item() == math.inf
    grad = np.asarray(p.grad)
    assert math.isnan(grad[0]) and grad[1] == 0.0 and grad[2] == 0.0  # torch: [nan, 0, 0]


def test_error_if_nonfinite_raises_torch_message_and_changes_nothing(device):
    (p,) = _params(device, lucid.float64, grads=((float("nan"), 1.0),))
    with pytest.raises(RuntimeError, match=r"The total norm of order 2.0 for gradients from `parameters` is "
                                           r"non-finite, so it cannot be clipped\. To disable this error"):
        clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert np.asarray(p.grad)[1] == 1.0
    with pytest.raises(RuntimeError, match="order inf"):
        get_total_norm([lucid.tensor([float("inf")])], "inf", error_if_nonfinite=True)


def test_no_host_sync(device, monkeypatch):
    params = _params(device)
    backend = _backend.get(device)

    def boom(*args, **kwargs):
        raise AssertionError("clip_grad_norm_ read a value back from the device")

    monkeypatch.setattr(backend, "item", boom)
    monkeypatch.setattr(backend, "to_numpy", boom)
    norm = clip_grad_norm_(params, 1.0)
    monkeypatch.undo()
    assert norm.item() == 13.0


def test_foreach_is_accepted():
    for foreach in (None, True, False):
        params = _params()
        assert clip_grad_norm_(params, 1.0, foreach=foreach).item() == 13.0


# --- bad inputs ----------------------------------------------------------------------------
@pytest.mark.parametrize("max_norm", [0.0, -1.0, float("nan"), 0])
def test_nonpositive_max_norm_raises(max_norm):
    params = _params()
    with pytest.raises(ValueError, match="max_norm must be positive"):
        clip_grad_norm_(params, max_norm)
    with pytest.raises(ValueError, match="max_norm must be positive"):
        clip_grads_with_norm_(params, max_norm, lucid.tensor(13.0))
    assert params[0].grad.tolist() == [3.0, 4.0]


def test_max_norm_inf_computes_the_norm_and_changes_nothing():
    params = _params()
    assert clip_grad_norm_(params, math.inf).item() == 13.0
    assert params[0].grad.tolist() == [3.0, 4.0]


@pytest.mark.parametrize("norm_type", [0, -1.0, float("-inf"), float("nan"), "two", None])
def test_bad_norm_type_raises(norm_type):
    with pytest.raises(ValueError, match="norm_type must be a positive number or 'inf'"):
        clip_grad_norm_(_params(), 1.0, norm_type=norm_type)


@pytest.mark.parametrize("bad", [5, 1.0, None])
def test_non_iterable_raises(bad):
    with pytest.raises(TypeError, match="parameters must be a Tensor or an iterable of Tensors, got"):
        clip_grad_norm_(bad, 1.0)


def test_iterable_of_non_tensors_raises():
    with pytest.raises(TypeError, match="but one of them is float"):
        clip_grad_norm_([1.0, 2.0], 1.0)
    with pytest.raises(TypeError, match="tensors must be a Tensor or an iterable of Tensors"):
        get_total_norm(3, 2.0)


def test_max_norm_must_be_a_number():
    with pytest.raises(TypeError, match="max_norm must be a real number"):
        clip_grad_norm_(_params(), "1.0")


@needs_gpu
def test_gradients_on_different_devices_raise():
    a, b = _params("cpu")[0], _params("gpu")[1]
    with pytest.raises(RuntimeError, match=r"gradients are on different devices \(cpu, gpu\)"):
        clip_grad_norm_([a, b], 1.0)
    assert a.grad.tolist() == [3.0, 4.0]
    with pytest.raises(RuntimeError, match="different devices"):
        get_total_norm([a.grad, b.grad])


# --- clip_grad_value_ ----------------------------------------------------------------------
def test_clip_grad_value_matches_torch(device):
    torch = pytest.importorskip("torch")
    grads = clip_inputs(CLIP_CASES[2])
    lucid_params, torch_params = [], []
    for g in grads:
        p = nn.Parameter(lucid.zeros(*g.shape, dtype=lucid.float64, device=device))
        p.grad = lucid.tensor(g, device=device)
        lucid_params.append(p)
        q = torch.nn.Parameter(torch.zeros(g.shape, dtype=torch.float64))
        q.grad = torch.from_numpy(g.copy())
        torch_params.append(q)
    assert clip_grad_value_(lucid_params, 1.5) is None
    torch.nn.utils.clip_grad_value_(torch_params, 1.5)
    for p, q in zip(lucid_params, torch_params):
        np.testing.assert_array_equal(np.asarray(p.grad), q.grad.numpy())


@pytest.mark.parametrize("value", [0.0, -1.0])
def test_clip_grad_value_rejects_nonpositive(value):
    with pytest.raises(ValueError, match="clip_value must be positive"):
        clip_grad_value_(_params(), value)
    with pytest.raises(TypeError, match="parameters must be a Tensor or an iterable"):
        clip_grad_value_(7, 1.0)


# --- parameters_to_vector / vector_to_parameters -------------------------------------------
def test_vectors_round_trip_as_torch(device):
    torch = pytest.importorskip("torch")
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).to(device)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for p, q in zip(model.parameters(), ref.parameters()):
            q.copy_(torch.from_numpy(np.asarray(p.detach())))
    vec = parameters_to_vector(model.parameters())
    np.testing.assert_array_equal(np.asarray(vec.detach()), torch.nn.utils.parameters_to_vector(ref.parameters()).detach().numpy())
    assert vec.requires_grad and vec.shape == (26,)
    vec.sum().backward()  # the vector is recorded: every parameter gets a gradient of ones
    assert all(bool((p.grad == 1).all()) for p in model.parameters())

    new = lucid.arange(26, dtype=lucid.float32, device=device)
    objects = list(model.parameters())
    vector_to_parameters(new, model.parameters())
    assert list(model.parameters()) == objects
    torch.nn.utils.vector_to_parameters(torch.arange(26, dtype=torch.float32), ref.parameters())
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_array_equal(np.asarray(p.detach()), q.detach().numpy())
        assert p.device == device and p.requires_grad


def test_vector_errors():
    layer = nn.Linear(2, 1)
    with pytest.raises(TypeError, match="expected lucid.Tensor, but got: list"):
        vector_to_parameters([1.0, 2.0, 3.0], layer.parameters())
    with pytest.raises(ValueError, match="total size 3"):
        vector_to_parameters(lucid.zeros(4), layer.parameters())
    with pytest.raises(ValueError, match="total size 3"):
        vector_to_parameters(lucid.zeros(3, 1), layer.parameters())
    with pytest.raises(TypeError, match="parameters must be a Tensor or an iterable"):
        parameters_to_vector(3)


@needs_gpu
def test_vectors_refuse_two_devices():
    a, b = nn.Parameter(lucid.zeros(2)), nn.Parameter(lucid.zeros(2, device="gpu"))
    with pytest.raises(TypeError, match="different devices"):
        parameters_to_vector([a, b])
    with pytest.raises(TypeError, match="different devices"):
        vector_to_parameters(lucid.zeros(4), [a, b])


def test_nn_utils_is_reachable_from_nn():
    assert nn.utils.clip_grad_norm_ is clip_grad_norm_
    assert set(nn.utils.__all__) == {
        "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
        "parameters_to_vector", "vector_to_parameters",
    }
