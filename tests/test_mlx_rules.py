"""How the "gpu" backend runs update rules under mx.compile: what traces, and the kernels split per output.

The golden trajectories themselves run on "gpu" in test_optim_parity.py (compiled, and eager
under LUCID_MLX_COMPILE=0); here the split path that large arrays take on MLX's CPU device
is forced onto the small cases, and the compiled functions are counted.
"""

from __future__ import annotations

import pytest

import lucid
from lucid import nn, optim
from optim_cases import load_golden
from optim_registry import CASES

pytestmark = pytest.mark.skipif(not lucid.is_available("gpu"), reason="needs MLX (the gpu device)")

if lucid.is_available("gpu"):
    import mlx.core as mx

    from lucid._backend import mlx_backend

# the kinds of rule: one state with maximize and L2 decay, three (amsgrad), decoupled decay,
# per-parameter scalars (ASGD); few, since on MLX's CPU build each new kernel is a C++ compile
# the first time (these cost about 30 s on an empty kernel cache, a busy machine; 1 s after)
SPLIT_CASES = [c for c in CASES if c.name in ("sgd_momentum_wd_maximize", "adam_wd_amsgrad", "adamw_default",
                                              "asgd_default")]


@pytest.fixture
def traces(monkeypatch):
    """Count how often mx.compile traces a group's rule (the Python function runs only then)."""
    count = [0]
    build = mlx_backend._group_step

    def counting(fn, pattern):
        step = build(fn, pattern)

        def traced(*args):
            count[0] += 1
            return step(*args)

        return traced

    monkeypatch.setattr(mlx_backend, "_group_step", counting)
    monkeypatch.setattr(mlx_backend, "_compiled", {})
    monkeypatch.delenv("LUCID_MLX_COMPILE", raising=False)
    return count


@pytest.mark.parametrize("case", SPLIT_CASES, ids=[c.name for c in SPLIT_CASES])
def test_golden_trajectory_with_one_kernel_per_output(case, monkeypatch):
    test_optim_parity = pytest.importorskip("test_optim_parity")
    monkeypatch.setattr(mlx_backend, "SPLIT_BYTES", -1)  # every array takes the large arrays' path
    monkeypatch.setattr(mlx_backend, "_compiled", {})
    monkeypatch.delenv("LUCID_MLX_COMPILE", raising=False)
    with mx.stream(mx.cpu):  # where the split applies (the default device on Linux)
        test_optim_parity._compare(case, "float32", "gpu", load_golden(case, "float32"))
    assert not mlx_backend._evaluate_first, "every split parameter was evaluated at the end of its step"


@pytest.mark.parametrize("case", SPLIT_CASES, ids=[c.name for c in SPLIT_CASES])
def test_golden_trajectory_with_numbers_of_its_own(case, monkeypatch):
    # a large float32 parameter reads its rule's numbers as float64 arrays of its own, cast
    # inside its kernel: the same float32 values, so the same trajectory (forced onto the
    # small cases here)
    test_optim_parity = pytest.importorskip("test_optim_parity")
    monkeypatch.setattr(mlx_backend, "OWN_NUMBERS_ELEMENTS", 0)
    monkeypatch.setattr(mlx_backend, "_compiled", {})
    monkeypatch.delenv("LUCID_MLX_COMPILE", raising=False)
    inputs = []
    real = mlx_backend._group_step

    def capture(fn, pattern):
        step = real(fn, pattern)

        def traced(given, numbers):
            inputs.extend(numbers)
            return step(given, numbers)

        return traced

    monkeypatch.setattr(mlx_backend, "_group_step", capture)
    with mx.stream(mx.cpu):
        test_optim_parity._compare(case, "float32", "gpu", load_golden(case, "float32"))
    assert inputs and all(number.dtype == mx.float64 for number in inputs)


OWN_NUMBERS_MAKERS = {"sgd": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01),
                      "adam": lambda ps: optim.Adam(ps, lr=1e-2, amsgrad=True),
                      "adamw": lambda ps: optim.AdamW(ps, lr=1e-2, maximize=True)}


@pytest.mark.parametrize("make", OWN_NUMBERS_MAKERS.values(), ids=OWN_NUMBERS_MAKERS.keys())
def test_numbers_of_its_own_give_the_same_bits(make, monkeypatch):
    # computed in float64 the update would drift from torch's float32 by less than the
    # golden tolerance: compare with the shared float32 numbers bit for bit instead
    _same_bits_with_own_numbers(make, monkeypatch)


def test_numbers_of_its_own_give_the_same_bits_one_kernel_per_output(monkeypatch):
    # a large array takes both (over SPLIT_BYTES, float32): one rule shows they compose; each
    # rule's split kernels are a C++ build apiece on a fresh machine
    monkeypatch.setattr(mlx_backend, "SPLIT_BYTES", -1)
    _same_bits_with_own_numbers(OWN_NUMBERS_MAKERS["sgd"], monkeypatch)


def _same_bits_with_own_numbers(make, monkeypatch):
    monkeypatch.delenv("LUCID_MLX_COMPILE", raising=False)
    runs = []
    for threshold in (0, 1 << 62):
        monkeypatch.setattr(mlx_backend, "OWN_NUMBERS_ELEMENTS", threshold)
        params = _params()
        with mx.stream(mx.cpu):
            _step(make(params), params, 4)
        runs.append([p.detach().numpy() for p in params])
    for own, shared in zip(*runs):
        assert own.dtype == shared.dtype and (own.view("u4") == shared.view("u4")).all()


def test_numbers_of_its_own_are_for_large_float32_parameters_on_the_cpu_only():
    large = mx.zeros(mlx_backend.OWN_NUMBERS_ELEMENTS)
    assert mlx_backend._owns_numbers(large, on_cpu=True)
    assert not mlx_backend._owns_numbers(large, on_cpu=False)  # a GPU has no float64
    assert not mlx_backend._owns_numbers(large[1:], on_cpu=True)
    assert not mlx_backend._owns_numbers(large.astype(mx.float64), on_cpu=True)
    assert not mlx_backend._owns_numbers(large.astype(mx.float16), on_cpu=True)


def _params(count=3):
    return [nn.Parameter(lucid.tensor([[0.5, -1.0], [2.0, 0.25]], device="gpu") * (i + 1)) for i in range(count)]


def _step(optimizer, params, steps):
    for _ in range(steps):
        for p in params:
            p.grad = lucid.tensor([[0.1, -0.2], [0.3, 0.4]], device="gpu")
        optimizer.step()


@pytest.mark.parametrize("split", [False, True, "own numbers"], ids=["fused", "one kernel per output", "own numbers"])
def test_a_new_learning_rate_or_step_does_not_trace_again(traces, monkeypatch, split):
    if split == "own numbers":
        monkeypatch.setattr(mlx_backend, "OWN_NUMBERS_ELEMENTS", 0)
        split = False
    if split:
        monkeypatch.setattr(mlx_backend, "SPLIT_BYTES", -1)
    params = _params()
    adam = optim.Adam(params, lr=1e-3)
    scheduler = optim.lr_scheduler.LambdaLR(adam, lambda epoch: 1 / (epoch + 1))
    with mx.stream(mx.cpu):
        on_cpu = mx.default_device() == mx.cpu  # where the split applies
        _step(adam, params, 1)
        first = traces[0]
        for _ in range(4):  # a new lr and new bias corrections each step
            scheduler.step()
            _step(adam, params, 1)
        adam.param_groups[0]["lr"] = 0.5  # set by hand
        adam.param_groups[0]["betas"] = (0.8, 0.9)
        _step(adam, params, 1)
    assert first == (3 if split and on_cpu else 1)  # Adam's 3 outputs, one kernel each, when split
    assert traces[0] == first, "a changed hyperparameter traced the rule again"


def test_sgd_first_momentum_step_and_the_next_share_one_trace(traces):
    params = _params()
    sgd = optim.SGD(params, lr=0.1, momentum=0.9)
    _step(sgd, params, 3)
    assert traces[0] == 1


def test_a_new_flag_traces_again(traces):
    params = _params()
    sgd = optim.SGD(params, lr=0.1, momentum=0.9)
    _step(sgd, params, 2)
    sgd.param_groups[0]["maximize"] = True  # a bool is a constant of the compiled function
    _step(sgd, params, 2)
    assert traces[0] == 2


def test_parameters_sharing_scalars_pass_them_once():
    numbers = []
    real = mlx_backend._group_step

    def capture(fn, pattern):
        step = real(fn, pattern)

        def traced(inputs, scalars):
            numbers.append(len(scalars))
            return step(inputs, scalars)

        return traced

    params = _params(5)
    adam = optim.Adam(params, lr=1e-3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mlx_backend, "_group_step", capture)
        patch.setattr(mlx_backend, "_compiled", {})
        patch.delenv("LUCID_MLX_COMPILE", raising=False)
        _step(adam, params, 1)
    assert numbers == [len(adam.elementwise_rule(adam.param_groups[0]).scalars)]  # once for 5 parameters
