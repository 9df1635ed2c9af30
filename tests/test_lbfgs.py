"""lucid.optim.LBFGS against torch.optim.LBFGS 2.13, one ``step(closure)`` call at a time.

Every case of ``lbfgs_cases.CASES`` (Rosenbrock valleys and a least-squares fit, with and
without the strong-Wolfe line search) is replayed through lucid in float64 and compared,
after each call, on the loss the call returned, the parameters, and the first parameter's
``func_evals`` and ``n_iter``: against the committed golden values, and live against torch
when it is importable. In float32 (on NumPy and MLX) the counts are exact and the loss and
parameters are judged, call by call, against the float64 truth of the float32 run (the
committed ``.float32.npz`` holds torch's float32 run and that truth), torch's float32 run the
ceiling (tests/trajectories.py with tolerances.LBFGS_TRAJECTORY). Then the errors torch
raises, and the state's round trip.
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lbfgs_cases import CASES, LBFGSCase, data, initial_params, load_golden, loss
from tolerances import LBFGS_TRAJECTORY, close
from trajectories import judge_recording, replay_problems, split_truth

def _lr(value):
    return lucid.tensor(value) if isinstance(value, np.ndarray) else value


def run_lucid(case, device="cpu", dtype=np.float64):
    """Replay ``case`` through lucid.optim.LBFGS; record what ``run_torch_lbfgs`` records."""
    params = [lucid.nn.Parameter(lucid.tensor(p.astype(dtype), device=device)) for p in initial_params(case.problem)]
    inputs = [lucid.tensor(a.astype(dtype), device=device) for a in data(case.problem)]
    optimizer = lucid.optim.LBFGS(params, **{k: _lr(v) for k, v in case.kwargs.items()})

    def closure():
        optimizer.zero_grad()
        value = loss(case.problem, params, inputs)
        value.backward()
        return value

    out = {f"p{i}": [np.asarray(p.detach()).copy()] for i, p in enumerate(params)}
    out.update(loss=[], func_evals=[], n_iter=[])
    for _ in range(case.calls):
        returned = optimizer.step(closure)
        assert isinstance(returned, lucid.Tensor), "step returns what the closure returned"
        out["loss"].append(returned.item())
        out["func_evals"].append(optimizer.state[0]["func_evals"])
        out["n_iter"].append(optimizer.state[0]["n_iter"])
        for i, p in enumerate(params):
            out[f"p{i}"].append(np.asarray(p.detach()).copy())
    return {key: np.array(value, dtype=dtype if key == "loss" else None) for key, value in out.items()}, optimizer


def _compare(got, expected, what=""):
    """lucid's recording against torch's: ``func_evals`` and ``n_iter`` exactly; in float64 the
    loss and parameters to 1e-12, in float32 judged against the recording's truth, call by
    call (each value a float32 number: the loss too)."""
    own, _ = split_truth(expected)
    for key in own:
        if key.startswith("p") or key == "loss":
            assert got[key].dtype == own[key].dtype, key
        if key.startswith("p"):
            np.testing.assert_array_equal(got[key][0], own[key][0], err_msg=f"{what}: {key} initially")
    judge_recording(got, expected, runs=True, table=LBFGS_TRAJECTORY, what=what)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden(case):
    _compare(run_lucid(case)[0], load_golden(case), case.name)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_float32(case, device):
    """lucid in float32, per call, against torch's float32 run (the committed
    ``.float32.npz``): the same evaluations and iterations exactly, the loss and the
    parameters judged against the truth of the float32 run (tolerances.LBFGS_TRAJECTORY)."""
    got, optimizer = run_lucid(case, device, np.float32)
    assert optimizer.state[0]["d"].device == device and optimizer.state[0]["d"].dtype is lucid.float32
    _compare(got, load_golden(case, "float32"), f"{case.name} on {device}")


@pytest.mark.parametrize("problem,lr", [("rosenbrock", 0.2), ("least_squares", 1.0)])
def test_first_iterations_float32_against_torch_live(problem, lr, device):
    """The first three iterations (one per call, before L-BFGS has amplified much), against
    torch's float32 run here and the truth computed here."""
    pytest.importorskip("torch")
    from torch_reference import golden_lbfgs_arrays

    case = LBFGSCase(f"{problem}_one_iteration", problem, {"lr": lr, "max_iter": 1}, calls=3)
    _compare(run_lucid(case, device, np.float32)[0], golden_lbfgs_arrays(case, "float32"), case.name)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_float32_golden_is_torchs_float32_run(case):
    """The committed float32 files are torch's float32 run (bit for bit on the machine that
    wrote them; another CPU path rounds differently, hence the judge), not a float64 one,
    with the truth of that run."""
    pytest.importorskip("torch")
    from torch_reference import golden_lbfgs_arrays

    stored = load_golden(case, "float32")
    assert all(stored[k].dtype == np.float32 for k in stored if k.startswith("p"))
    problems = replay_problems(stored, golden_lbfgs_arrays(case, "float32"), runs=True, table=LBFGS_TRAJECTORY,
                               what=case.name)
    assert not problems, "\n".join(problems)
    assert any(not np.array_equal(stored[k], load_golden(case)[k]) for k in stored if k.startswith("p"))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_live_against_torch(case):
    pytest.importorskip("torch")
    from torch_reference import run_torch_lbfgs

    _compare(run_lucid(case)[0], run_torch_lbfgs(case), case.name)


# --- the strong-Wolfe line search on its own, against torch's -----------------------------
# One-dimensional problems (a 1-element parameter) and first steps chosen so that, together,
# they take every branch of the bracketing and the zoom phases but one (moving a trial
# step away from the upper end of the bracket): extrapolation, the evaluation budget
# running out, a bracket too small to split, a zoom that keeps hitting a boundary, and
# cubic interpolation without a real minimiser. Only ``** 2``, ``abs`` and products, so the
# values and gradients of torch and lucid agree to the last bit.
LINE_FUNCTIONS = {
    "double_well": lambda x: ((x**2 - 1) ** 2 + x * 0.3).sum(),
    "kink": lambda x: ((x - 0.7).abs() + x**2 * 0.1).sum(),
    "two_kinks": lambda x: ((x - 0.7).abs() * 3 + (x + 0.2).abs() + x**2 * 0.01).sum(),
}
LINE_SEARCHES = [  # (function, x0, first step, max_ls)
    ("double_well", -1.7, 0.001, 25),
    ("double_well", 0.3, 0.001, 25),
    ("kink", -1.7, 0.001, 3),
    ("kink", -1.7, 0.03, 25),
    ("kink", -1.7, 0.4, 25),
    ("kink", -1.7, 30.0, 25),
    ("kink", -1.7, 100.0, 25),
    ("kink", 0.3, 0.001, 25),
    ("two_kinks", 0.3, 0.001, 25),
]


def _line_search(lib, name, x0, t, max_ls):
    """Run torch's or lucid's ``_strong_wolfe`` along the steepest descent from ``x0``."""
    f = LINE_FUNCTIONS[name]
    if lib == "torch":
        import torch
        from torch.optim.lbfgs import _strong_wolfe

        x = torch.tensor([x0], dtype=torch.float64)

        def evaluate(point):
            p = point.detach().clone().requires_grad_()
            with torch.enable_grad():
                value = f(p)
            value.backward()
            return float(value.detach()), p.grad
    else:
        from lucid.optim.lbfgs import _dot, _strong_wolfe

        x = lucid.tensor([x0], dtype=lucid.float64)

        def evaluate(point):
            p = lucid.nn.Parameter(point.detach().clone())
            with lucid.enable_grad():
                value = f(p)
            value.backward()
            return float(value), p.grad

    f0, g0 = evaluate(x)
    d = -g0
    gtd = g0.dot(d) if lib == "torch" else _dot(g0, d)
    f_new, g_new, t_new, evals = _strong_wolfe(
        lambda xs, step, direction: evaluate(xs + direction * float(step)), x, t, d, f0, g0, gtd, max_ls=max_ls
    )
    return f_new, np.asarray(g_new.detach() if lib == "torch" else g_new), float(t_new), evals


@pytest.mark.parametrize("search", LINE_SEARCHES, ids=[f"{n}-{x}-{t}-{m}" for n, x, t, m in LINE_SEARCHES])
def test_strong_wolfe_line_search_against_torch(search):
    pytest.importorskip("torch")
    f_new, g_new, t_new, evals = _line_search("lucid", *search)
    want_f, want_g, want_t, want_evals = _line_search("torch", *search)
    assert evals == want_evals
    close(t_new, want_t, "float64")
    close(f_new, want_f, "float64")
    close(g_new, want_g, "float64")


# --- errors, as torch raises them -----------------------------------------------------------
def _params():
    return [lucid.nn.Parameter(lucid.tensor(p)) for p in initial_params("rosenbrock")]


def _closure(optimizer, params):
    def closure():
        optimizer.zero_grad()
        value = loss("rosenbrock", params, [])
        value.backward()
        return value

    return closure


def test_step_without_closure_raises_type_error():
    optimizer = lucid.optim.LBFGS(_params())
    with pytest.raises(TypeError, match=r"LBFGS.step\(\) missing 1 required positional argument: 'closure'"):
        optimizer.step()
    with pytest.raises(TypeError, match="closure"):
        optimizer.step(None)


def test_step_without_closure_message_is_torchs():
    torch = pytest.importorskip("torch")
    optimizer = torch.optim.LBFGS([torch.zeros(2, requires_grad=True)])
    with pytest.raises(TypeError) as torch_error:
        optimizer.step()
    with pytest.raises(TypeError) as lucid_error:
        lucid.optim.LBFGS(_params()).step()
    assert str(lucid_error.value) == str(torch_error.value)


def test_parameter_groups_are_refused():
    a, b = _params()
    message = r"LBFGS doesn't support per-parameter options \(parameter groups\)"
    with pytest.raises(ValueError, match=message):
        lucid.optim.LBFGS([{"params": [a]}, {"params": [b]}])
    optimizer = lucid.optim.LBFGS([a])
    with pytest.raises(ValueError, match=message):
        optimizer.add_param_group({"params": [b]})
    assert len(optimizer.param_groups) == 1


def test_unknown_line_search_raises_at_construction():
    # torch accepts it and raises RuntimeError("only 'strong_wolfe' is supported") at the first step
    with pytest.raises(ValueError, match="line_search_fn must be None or 'strong_wolfe', got 'backtracking': "
                                         "only 'strong_wolfe' is supported"):
        lucid.optim.LBFGS(_params(), line_search_fn="backtracking")


def test_unknown_line_search_set_after_construction_raises_at_step_before_moving_anything():
    params = _params()
    optimizer = lucid.optim.LBFGS(params)
    optimizer.param_groups[0]["line_search_fn"] = "backtracking"
    before = [np.asarray(p.detach()).copy() for p in params]
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        optimizer.step(_closure(optimizer, params))
    for p, was in zip(params, before):  # raised before moving anything
        np.testing.assert_array_equal(np.asarray(p.detach()), was)


def test_invalid_learning_rate():
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        lucid.optim.LBFGS(_params(), lr=-1)


def test_defaults_as_torch():
    torch = pytest.importorskip("torch")
    want = torch.optim.LBFGS([torch.zeros(1, requires_grad=True)], max_iter=8).defaults
    got = lucid.optim.LBFGS(_params(), max_iter=8).defaults
    assert got == want  # max_eval = max_iter * 5 // 4


# --- what step returns, and the state ------------------------------------------------------
def test_returns_the_closures_first_value_of_its_type():
    params = _params()
    optimizer = lucid.optim.LBFGS(params)
    tensor_closure = _closure(optimizer, params)
    first = float(loss("rosenbrock", params, []))
    returned = optimizer.step(lambda: float(tensor_closure()))
    assert type(returned) is float and returned == first
    # converged: the early return gives the closure's value, of its type, too
    optimizer = lucid.optim.LBFGS(params, tolerance_grad=1e6)
    assert isinstance(optimizer.step(_closure(optimizer, params)), lucid.Tensor)
    assert optimizer.state[0]["func_evals"] == 1 and optimizer.state[0]["n_iter"] == 0


def test_state_keys_as_torch():
    torch = pytest.importorskip("torch")
    tparams = [torch.from_numpy(p).requires_grad_() for p in initial_params("rosenbrock")]
    topt = torch.optim.LBFGS(tparams, max_iter=4)

    def tclosure():
        topt.zero_grad()
        value = loss("rosenbrock", tparams, [])
        value.backward()
        return value

    topt.step(tclosure)
    params = _params()
    optimizer = lucid.optim.LBFGS(params, max_iter=4)
    optimizer.step(_closure(optimizer, params))
    assert sorted(optimizer.state[0]) == sorted(topt.state[tparams[0]])
    assert 1 not in optimizer.state  # everything sits on the first parameter
    size = sum(p.numel() for p in params)
    assert optimizer.state[0]["d"].shape == (size,)
    assert all(s.shape == (size,) for s in optimizer.state[0]["old_stps"])


def test_state_dict_round_trip_continues_identically():
    params, twin = _params(), _params()
    optimizer = lucid.optim.LBFGS(params, line_search_fn="strong_wolfe", max_iter=4, history_size=3)
    for _ in range(2):
        optimizer.step(_closure(optimizer, params))
    with lucid.no_grad():
        for p, q in zip(twin, params):
            p.copy_(q)
    restored = lucid.optim.LBFGS(twin, line_search_fn="strong_wolfe", max_iter=4, history_size=3)
    restored.load_state_dict(optimizer.state_dict())
    for _ in range(2):
        want = optimizer.step(_closure(optimizer, params)).item()
        got = restored.step(_closure(restored, twin)).item()
        assert got == want
    for p, q in zip(twin, params):
        np.testing.assert_array_equal(np.asarray(p.detach()), np.asarray(q.detach()))
    assert restored.state[0]["func_evals"] == optimizer.state[0]["func_evals"]


def test_state_dict_is_a_copy_and_checked_on_load():
    params = _params()
    optimizer = lucid.optim.LBFGS(params, max_iter=3)
    optimizer.step(_closure(optimizer, params))
    saved = optimizer.state_dict()
    assert saved["state"][0]["old_dirs"][0] is not optimizer.state[0]["old_dirs"][0]
    saved["state"][0]["d"] = lucid.zeros(5, dtype=lucid.float64)
    with pytest.raises(ValueError, match="'d' of shape"):
        optimizer.load_state_dict(saved)


def test_runs_on_every_device(device):
    params = [lucid.nn.Parameter(lucid.tensor(p, dtype=lucid.float32, device=device))
              for p in initial_params("rosenbrock")]
    optimizer = lucid.optim.LBFGS(params, line_search_fn="strong_wolfe", max_iter=5)
    closure = _closure(optimizer, params)
    first = optimizer.step(closure).item()
    assert closure().item() < first
    state = optimizer.state[0]
    assert state["d"].device == device and state["d"].dtype is lucid.float32
    assert all(s.device == device for s in state["old_dirs"])
