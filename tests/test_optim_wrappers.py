"""GradientAccumulation and SkipNonFinite: the big-batch equivalence, bit-identical skips, state."""

import copy
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import _backend, nn, optim
from lucid.nn.utils import clip_grad_norm_

from tolerances import close
from trajectories import judge_alike

A, B = 4, 3  # microbatches per step, rows per microbatch
ROUNDS = 3  # optimizer steps


def _data(device, dtype, inputs=None):
    """The batches in ``dtype``; ``inputs=np.float32`` rounds them to float32 first (the float64
    truth of a float32 run)."""
    rng = np.random.default_rng(7)
    x = lucid.tensor(rng.standard_normal((ROUNDS, A * B, 5)).astype(inputs), dtype=dtype, device=device)
    y = lucid.tensor(rng.standard_normal((ROUNDS, A * B, 2)).astype(inputs), dtype=dtype, device=device)
    return x, y


def _model(device, dtype):
    lucid.manual_seed(3)
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2)).to(device, dtype)


OPTIMIZERS = {
    "sgd_momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
    "adam": lambda ps: optim.Adam(ps, lr=0.01),
}


def _params_of(model):
    return [np.asarray(p.detach()) for p in model.parameters()]


def _big_batch(device, dtype, make, reduction="mean", inputs=None, record=None):
    """The big-batch run; ``record``, a list, gets the parameters after each step."""
    model = _model(device, dtype)  # initialised in float32: a float64 model starts from those values
    opt = make(model.parameters())
    x, y = _data(device, dtype, inputs)
    for r in range(ROUNDS):
        opt.zero_grad()
        F.mse_loss(model(x[r]), y[r], reduction=reduction).backward()
        opt.step()
        if record is not None:
            record.append(_params_of(model))
    return model, opt


def _accumulated(device, dtype, make, average=True, reduction="mean", zero_grad=True, record=None):
    model = _model(device, dtype)
    accumulation = optim.GradientAccumulation(make(model.parameters()), steps=A, average=average)
    x, y = _data(device, dtype)
    for r in range(ROUNDS):
        for k in range(A):
            if zero_grad:
                accumulation.zero_grad()
            rows = slice(k * B, (k + 1) * B)
            F.mse_loss(model(x[r][rows]), y[r][rows], reduction=reduction).backward()
            accumulation.step()
            assert accumulation.stepped == (k == A - 1)
        if record is not None:
            record.append(_params_of(model))
    return model, accumulation


# --- accumulation equals the big batch ---------------------------------------------------
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_microbatches_equal_the_big_batch_numpy_float64(name):
    big, big_opt = _big_batch("cpu", lucid.float64, OPTIMIZERS[name])
    small, accumulation = _accumulated("cpu", lucid.float64, OPTIMIZERS[name])
    for a, b in zip(_params_of(small), _params_of(big)):
        close(a, b, "float64")
    sa, sb = accumulation.optimizer.state_dict()["state"], big_opt.state_dict()["state"]
    assert sa.keys() == sb.keys()
    for i in sa:
        for key in sa[i]:
            close(np.asarray(sa[i][key]), np.asarray(sb[i][key]), "float64")


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_microbatches_equal_the_big_batch_on_every_device_float32(name, device):
    """Both float32 runs judged step by step against the big batch in float64 from the same
    float32 weights and data, each with the other's error as its ceiling."""
    big, small, truth = [], [], []
    _big_batch(device, lucid.float32, OPTIMIZERS[name], record=big)
    _accumulated(device, lucid.float32, OPTIMIZERS[name], record=small)
    _big_batch("cpu", lucid.float64, OPTIMIZERS[name], inputs=np.float32, record=truth)
    for k in range(len(truth[0])):
        a, b, t = (np.stack([step[k] for step in run]) for run in (small, big, truth))
        judge_alike(a, b, t, "float32", runs=True, what=f"parameter {k}")


def test_sum_mode_equals_the_big_batch_of_summed_losses():
    big, _ = _big_batch("cpu", lucid.float64, OPTIMIZERS["sgd_momentum"], reduction="sum")
    small, _ = _accumulated("cpu", lucid.float64, OPTIMIZERS["sgd_momentum"], average=False, reduction="sum")
    for a, b in zip(_params_of(small), _params_of(big)):
        close(a, b, "float64")


def test_without_zero_grad_the_result_is_the_same():
    a, _ = _accumulated("cpu", lucid.float64, OPTIMIZERS["adam"], zero_grad=True)
    b, _ = _accumulated("cpu", lucid.float64, OPTIMIZERS["adam"], zero_grad=False)
    for x, y in zip(_params_of(a), _params_of(b)):
        np.testing.assert_array_equal(x, y)


def test_steps_on_the_average_and_clears_the_grads():
    w = nn.Parameter(lucid.zeros(2, dtype=lucid.float64))
    opt = optim.SGD([w], lr=1.0)
    accumulation = optim.GradientAccumulation(opt, steps=3)
    for g in ([1.0, 2.0], [2.0, 2.0], [6.0, 2.0]):
        assert w.tolist() == [0.0, 0.0]
        w.grad = lucid.tensor(g, dtype=lucid.float64)
        accumulation.step()
        assert w.grad is None
    assert w.tolist() == [-3.0, -2.0]
    assert accumulation.micro_step == 0 and accumulation.stepped


def test_a_parameter_with_a_gradient_in_some_microbatches_only():
    a, b = nn.Parameter(lucid.zeros(1, dtype=lucid.float64)), nn.Parameter(lucid.zeros(1, dtype=lucid.float64))
    c = nn.Parameter(lucid.zeros(1, dtype=lucid.float64))
    accumulation = optim.GradientAccumulation(optim.SGD([a, b, c], lr=1.0), steps=2)
    a.grad = lucid.tensor([4.0], dtype=lucid.float64)
    accumulation.step()
    a.grad, b.grad = lucid.tensor([2.0], dtype=lucid.float64), lucid.tensor([6.0], dtype=lucid.float64)
    accumulation.step()
    assert (a.item(), b.item(), c.item()) == (-3.0, -3.0, 0.0)  # c had no gradient: not stepped


def test_steps_one_steps_every_call():
    w = nn.Parameter(lucid.zeros(1))
    accumulation = optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=1)
    w.grad = lucid.tensor([2.0])
    accumulation.step()
    assert w.item() == -2.0 and accumulation.stepped


def test_closure_computes_one_microbatch():
    w = nn.Parameter(lucid.tensor([1.0], dtype=lucid.float64))
    accumulation = optim.GradientAccumulation(optim.SGD([w], lr=0.5), steps=2)

    def closure():
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert accumulation.step(closure).item() == 1.0
    assert accumulation.step(closure).item() == 1.0
    assert w.item() == 0.0  # one step with the mean gradient 2


def test_clipping_in_a_pre_hook_sees_the_accumulated_gradient():
    w = nn.Parameter(lucid.zeros(2, dtype=lucid.float64))
    opt = optim.SGD([w], lr=1.0)
    norms = []
    opt.register_step_pre_hook(lambda o, args, kwargs: norms.append(clip_grad_norm_([w], 1.0).item()))
    accumulation = optim.GradientAccumulation(opt, steps=2)
    for g in ([6.0, 0.0], [0.0, 8.0]):
        w.grad = lucid.tensor(g, dtype=lucid.float64)
        accumulation.step()
    assert norms == [5.0]  # the norm of the mean [3, 4], once
    # clip_grad_norm_ scales by max_norm / (norm + 1e-6), as torch: not exactly [-0.6, -0.8]
    expected = -np.array([3.0, 4.0]) * (1.0 / (5.0 + 1e-6))
    close(w.tolist(), expected, "float64")
    assert w.tolist() != [-0.6, -0.8]


def test_delegates_to_the_optimizer():
    model = nn.Linear(2, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    accumulation = optim.GradientAccumulation(opt, steps=2)
    assert accumulation.param_groups is opt.param_groups
    assert accumulation.state is opt.state and accumulation.defaults is opt.defaults
    model(lucid.ones(2)).sum().backward()
    accumulation.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    extra = nn.Parameter(lucid.zeros(1))
    accumulation.add_param_group({"params": [extra], "lr": 0.5})
    assert opt.param_groups[1]["params"] == [extra]
    assert "GradientAccumulation(steps=2, average=True" in repr(accumulation)


def test_a_scheduler_runs_on_the_wrapped_optimizer():
    w = nn.Parameter(lucid.zeros(1))
    accumulation = optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=2)
    scheduler = optim.lr_scheduler.StepLR(accumulation.optimizer, step_size=1, gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "scheduler before optimizer" warning
        for _ in range(4):
            w.grad = lucid.tensor([1.0])
            accumulation.step()
            if accumulation.stepped:
                scheduler.step()
    assert accumulation.param_groups[0]["lr"] == 0.25


@pytest.mark.parametrize("steps", [0, -1, 1.5, True, "2"])
def test_bad_steps(steps):
    with pytest.raises(ValueError, match="steps must be an int >= 1"):
        optim.GradientAccumulation(optim.SGD([nn.Parameter(lucid.zeros(1))]), steps=steps)


def test_bad_arguments():
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
    with pytest.raises(TypeError, match="average must be a bool"):
        optim.GradientAccumulation(opt, steps=2, average=1)
    with pytest.raises(TypeError, match="wraps an optimizer"):
        optim.GradientAccumulation([1, 2], steps=2)
    with pytest.raises(TypeError, match="wraps an optimizer"):
        optim.SkipNonFinite(object())


# --- accumulation state ------------------------------------------------------------------
def test_resuming_mid_accumulation_is_bit_identical():
    make = OPTIMIZERS["adam"]
    x, y = _data("cpu", lucid.float64)
    batches = [(x[r][k * B:(k + 1) * B], y[r][k * B:(k + 1) * B]) for r in range(ROUNDS) for k in range(A)]

    def run(model, accumulation, part):
        for xb, yb in part:
            accumulation.zero_grad()
            F.mse_loss(model(xb), yb).backward()
            accumulation.step()

    model = _model("cpu", lucid.float64)
    straight = optim.GradientAccumulation(make(model.parameters()), steps=A)
    run(model, straight, batches)

    first = _model("cpu", lucid.float64)
    accumulation = optim.GradientAccumulation(make(first.parameters()), steps=A)
    run(first, accumulation, batches[:6])  # one step and two microbatches
    saved, weights = accumulation.state_dict(), copy.deepcopy(first.state_dict())
    assert saved["accumulation"]["micro_step"] == 2 and set(saved["accumulation"]["partial_sums"]) == {0, 1, 2, 3}

    second = _model("cpu", lucid.float64)
    second.load_state_dict(weights)
    resumed = optim.GradientAccumulation(make(second.parameters()), steps=A)
    resumed.load_state_dict(saved)
    run(second, resumed, batches[6:])
    for a, b in zip(_params_of(second), _params_of(model)):
        assert a.tobytes() == b.tobytes()


def test_a_failing_last_step_changes_nothing_and_can_be_retried():
    """The wrapped optimizer raises during the accumulation's last call: partial sums,
    micro_step, .grad and the parameters are as before the call, and retrying it gives the
    uninterrupted run bit for bit."""
    make = OPTIMIZERS["adam"]
    x, y = _data("cpu", lucid.float64)
    batches = [(x[r][k * B:(k + 1) * B], y[r][k * B:(k + 1) * B]) for r in range(ROUNDS) for k in range(A)]

    def microbatch(model, accumulation, xb, yb):
        accumulation.zero_grad()
        F.mse_loss(model(xb), yb).backward()
        accumulation.step()

    model = _model("cpu", lucid.float64)
    straight = optim.GradientAccumulation(make(model.parameters()), steps=A)
    for xb, yb in batches:
        microbatch(model, straight, xb, yb)

    other = _model("cpu", lucid.float64)
    inner = make(other.parameters())
    accumulation = optim.GradientAccumulation(inner, steps=A)
    for xb, yb in batches[:A - 1]:
        microbatch(other, accumulation, xb, yb)
    before = copy.deepcopy(accumulation.state_dict())
    weights = [p.tobytes() for p in _params_of(other)]
    failures = []

    def fail_once(optimizer, args, kwargs):
        if not failures:
            failures.append(True)
            raise RuntimeError("inner step failed")

    handle = inner.register_step_pre_hook(fail_once)
    xb, yb = batches[A - 1]
    accumulation.zero_grad()
    F.mse_loss(other(xb), yb).backward()
    grads = [p.grad for p in other.parameters()]
    grad_bytes = [np.asarray(g).tobytes() for g in grads]
    with pytest.raises(RuntimeError, match="inner step failed"):
        accumulation.step()
    after = accumulation.state_dict()
    assert accumulation.micro_step == A - 1 and not accumulation.stepped
    assert after["accumulation"]["micro_step"] == before["accumulation"]["micro_step"] == A - 1
    assert after["accumulation"]["partial_sums"].keys() == before["accumulation"]["partial_sums"].keys()
    for key, value in before["accumulation"]["partial_sums"].items():
        assert np.asarray(after["accumulation"]["partial_sums"][key]).tobytes() == np.asarray(value).tobytes()
    assert [p.tobytes() for p in _params_of(other)] == weights
    assert all(p.grad is g for p, g in zip(other.parameters(), grads))
    assert [np.asarray(g).tobytes() for g in grads] == grad_bytes
    accumulation.step()  # the retry steps (the hook no longer raises)
    assert accumulation.stepped and accumulation.micro_step == 0
    handle.remove()
    for xb, yb in batches[A:]:
        microbatch(other, accumulation, xb, yb)
    for a, b in zip(_params_of(other), _params_of(model)):
        assert a.tobytes() == b.tobytes()


def test_state_dict_copies():
    w = nn.Parameter(lucid.zeros(2))
    accumulation = optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=3)
    w.grad = lucid.tensor([1.0, 2.0])
    accumulation.step()
    saved = accumulation.state_dict()
    with lucid.no_grad():
        saved["accumulation"]["partial_sums"][0].add_(100.0)
    assert accumulation.state_dict()["accumulation"]["partial_sums"][0].tolist() == [1.0, 2.0]


def _bad(saved, path, value):
    bad = copy.deepcopy(saved)
    target = bad
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return bad


@pytest.mark.parametrize("path, value, match", [
    (("accumulation",), KeyError, "exactly the keys"),
    (("accumulation", "micro_step"), 3, "must be below steps"),
    (("accumulation", "micro_step"), -1, "micro_step must be an int"),
    (("accumulation", "steps"), 0, "steps must be an int"),
    (("accumulation", "average"), "yes", "average must be a bool"),
    (("accumulation", "partial_sums"), [], "partial_sums must be a dict"),
    (("accumulation", "partial_sums", 7), lucid.zeros(2), "parameter 7, which no group lists"),
    (("accumulation", "partial_sums", 0), lucid.zeros(3), r"has shape \(3,\), expected \(2,\)"),
    (("accumulation", "partial_sums", 0), [1.0, 2.0], "must be a Tensor"),
    (("accumulation", "extra"), 1, "must have the keys"),
    (("optimizer", "param_groups"), [], "different number of parameter groups"),
])
def test_load_state_dict_checks_everything_first(path, value, match):
    w = nn.Parameter(lucid.zeros(2))
    opt = optim.SGD([w], lr=1.0, momentum=0.9)
    accumulation = optim.GradientAccumulation(opt, steps=3)
    w.grad = lucid.tensor([1.0, 2.0])
    accumulation.step()
    saved = accumulation.state_dict()
    other = optim.GradientAccumulation(optim.SGD([w], lr=0.5), steps=3)
    w.grad = lucid.tensor([5.0, 5.0])
    other.step()
    before = other.state_dict()
    with pytest.raises(ValueError, match=match):
        other.load_state_dict(_bad(saved, path, value))
    after = other.state_dict()
    assert after["optimizer"]["param_groups"] == before["optimizer"]["param_groups"]
    assert after["accumulation"]["micro_step"] == 1
    assert after["accumulation"]["partial_sums"][0].tolist() == [5.0, 5.0]


def test_load_rejects_partial_sums_without_micro_steps():
    w = nn.Parameter(lucid.zeros(2))
    accumulation = optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=3)
    saved = accumulation.state_dict()
    saved["accumulation"]["partial_sums"] = {0: lucid.zeros(2)}
    with pytest.raises(ValueError, match="micro_step is 0"):
        accumulation.load_state_dict(saved)


# --- SkipNonFinite ---------------------------------------------------------------------------
def _trained_adam(device):
    model = _model(device, lucid.float32)
    guard = optim.SkipNonFinite(optim.Adam(model.parameters(), lr=0.01))
    x, y = _data(device, lucid.float32)
    for r in range(2):
        guard.zero_grad()
        F.mse_loss(model(x[r]), y[r]).backward()
        guard.step()
    return model, guard


def _bytes(model, opt):
    params = [np.asarray(p.detach()).tobytes() for p in model.parameters()]
    state = opt.state_dict()["state"]
    return params, {i: {k: (np.asarray(v).tobytes() if isinstance(v, lucid.Tensor) else v)
                        for k, v in s.items()} for i, s in state.items()}


@pytest.mark.parametrize("poison", [float("nan"), float("inf"), float("-inf")])
def test_a_nonfinite_step_leaves_everything_bit_identical(device, poison):
    model, guard = _trained_adam(device)
    before = _bytes(model, guard.optimizer)
    calls = []
    guard.optimizer.register_step_pre_hook(lambda *a: calls.append(1))
    x, y = _data(device, lucid.float32)
    guard.zero_grad()
    F.mse_loss(model(x[2]), y[2]).backward()
    grad = list(model.parameters())[2].grad
    with lucid.no_grad():
        grad[0, 1] = poison
    with pytest.warns(RuntimeWarning, match=r"SkipNonFinite skipped a step: a gradient holds NaN or inf \(1 skipped"):
        guard.step()
    assert _bytes(model, guard.optimizer) == before
    assert guard.skipped_steps == 1 and guard.last_step_skipped and calls == []
    assert guard.state_dict()["skip_nonfinite"] == {"skipped_steps": 1, "last_step_skipped": True}
    guard.zero_grad()
    F.mse_loss(model(x[2]), y[2]).backward()
    guard.step()
    assert not guard.last_step_skipped and guard.skipped_steps == 1 and calls == [1]
    assert _bytes(model, guard.optimizer)[0] != before[0]


def test_finite_steps_are_the_plain_optimizer_bit_for_bit(device):
    model, guard = _trained_adam(device)
    plain_model = _model(device, lucid.float32)
    plain = optim.Adam(plain_model.parameters(), lr=0.01)
    x, y = _data(device, lucid.float32)
    for r in range(2):
        plain.zero_grad()
        F.mse_loss(plain_model(x[r]), y[r]).backward()
        plain.step()
    assert _bytes(model, guard.optimizer) == _bytes(plain_model, plain)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_without_the_guard_nan_propagates_as_in_torch():
    torch = pytest.importorskip("torch")
    w = nn.Parameter(lucid.ones(2))
    opt = optim.Adam([w], lr=0.1)
    w.grad = lucid.tensor([float("nan"), 1.0])
    opt.step()
    t = torch.nn.Parameter(torch.ones(2))
    topt = torch.optim.Adam([t], lr=0.1)
    t.grad = torch.tensor([float("nan"), 1.0])
    topt.step()
    np.testing.assert_array_equal(np.asarray(w.detach()), t.detach().numpy())
    assert np.isnan(np.asarray(w.detach())[0])


def test_one_device_read_per_step(device, monkeypatch):
    model = nn.Sequential(*[nn.Linear(3, 3) for _ in range(5)]).to(device)
    guard = optim.SkipNonFinite(optim.SGD(model.parameters(), lr=0.1), warn=False)
    model(lucid.ones(2, 3, device=device)).sum().backward()
    backend = _backend.get(device)
    reads = []
    item, to_numpy = backend.item, backend.to_numpy
    monkeypatch.setattr(backend, "item", lambda a: reads.append("item") or item(a))
    monkeypatch.setattr(backend, "to_numpy", lambda a: reads.append("to_numpy") or to_numpy(a))
    guard.step()
    assert reads == ["item"]  # ten gradients, one read


def test_warn_false_is_silent_and_no_grads_steps():
    w = nn.Parameter(lucid.ones(1))
    guard = optim.SkipNonFinite(optim.SGD([w], lr=0.1), warn=False)
    w.grad = lucid.tensor([float("nan")])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        guard.step()
    assert guard.skipped_steps == 1
    w.grad = None
    guard.step()  # no gradient at all: nothing non-finite, the optimizer steps (and skips w)
    assert not guard.last_step_skipped
    with pytest.raises(TypeError, match="warn must be a bool"):
        optim.SkipNonFinite(optim.SGD([w]), warn=1)


def test_guard_around_accumulation_drops_a_bad_microbatch():
    w = nn.Parameter(lucid.zeros(1, dtype=lucid.float64))
    guard = optim.SkipNonFinite(optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=2), warn=False)
    for g in (2.0, float("nan"), 4.0):
        guard.zero_grad()
        w.grad = lucid.tensor([g], dtype=lucid.float64)
        guard.step()
    assert w.item() == -3.0 and guard.skipped_steps == 1 and guard.stepped
    saved = guard.state_dict()
    assert set(saved) == {"optimizer", "skip_nonfinite"} and set(saved["optimizer"]) == {"optimizer", "accumulation"}
    guard.load_state_dict(saved)


def test_stepped_says_when_the_parameters_changed():
    w = nn.Parameter(lucid.zeros(1, dtype=lucid.float64))
    guard = optim.SkipNonFinite(optim.GradientAccumulation(optim.SGD([w], lr=1.0), steps=2), warn=False)
    seen = []
    for g in (1.0, 1.0, 1.0, float("nan"), 1.0):
        w.grad = lucid.tensor([g], dtype=lucid.float64)
        guard.step()
        seen.append(guard.stepped)
    assert seen == [False, True, False, False, True]  # the skip after a step does not say "stepped"


def test_accumulation_around_guard_checks_the_accumulated_gradient():
    w = nn.Parameter(lucid.zeros(1, dtype=lucid.float64))
    inner = optim.SkipNonFinite(optim.SGD([w], lr=1.0), warn=False)
    accumulation = optim.GradientAccumulation(inner, steps=2)
    seen = []
    for g in (2.0, float("inf"), 2.0, 4.0):
        w.grad = lucid.tensor([g], dtype=lucid.float64)
        accumulation.step()
        seen.append(accumulation.stepped)
    assert inner.skipped_steps == 1 and w.item() == -3.0
    assert seen == [False, False, False, True]


@pytest.mark.parametrize("own, match", [
    ({"skipped_steps": -1, "last_step_skipped": False}, "skipped_steps must be an int"),
    ({"skipped_steps": 1}, "must have the keys"),
    ({"skipped_steps": 1, "last_step_skipped": 1}, "last_step_skipped must be a bool"),
])
def test_guard_load_checks_first(own, match):
    w = nn.Parameter(lucid.zeros(1))
    guard = optim.SkipNonFinite(optim.SGD([w], lr=0.1))
    saved = guard.state_dict()
    saved["skip_nonfinite"] = own
    saved["optimizer"]["param_groups"][0]["lr"] = 0.7
    with pytest.raises(ValueError, match=match):
        guard.load_state_dict(saved)
    assert guard.param_groups[0]["lr"] == 0.1 and guard.skipped_steps == 0
    with pytest.raises(ValueError, match="exactly the keys"):
        guard.load_state_dict({"optimizer": saved["optimizer"]})
