"""The torch reference Lion (tests/torch_reference.py), and lucid's, against ``mlx.optimizers.Lion``.

torch.optim has no Lion, so its golden values come from a reference written in torch ops;
this checks that reference, step by step, against MLX's implementation, which lucid.optim.Lion
follows (float32, MLX's CPU device, with and without weight decay). Each float32 run is judged
against MLX's Lion run in float64 from the same float32 values (MLX's CPU device computes in
float64), with MLX's float32 run the ceiling (tests/trajectories.py): a reference that
computed something else would be far from MLX's own truth.
"""

import numpy as np
import pytest

import lucid
from trajectories import judge_run

STEPS = 8
CONFIGS = [
    {"lr": 1e-2, "betas": (0.9, 0.99), "weight_decay": 0.0},
    {"lr": 3e-2, "betas": (0.8, 0.95), "weight_decay": 0.5},
]


def _problem(dtype=np.float32):
    """Initial params and a gradient stream that depends on the params, in ``dtype`` (float32,
    or float64 from the same float32 values: the truth's)."""
    rng = np.random.default_rng(7)
    params = [rng.standard_normal(shape).astype(np.float32).astype(dtype) for shape in ((4, 3), (5,))]

    def grad(step, index, value):
        noise = np.random.default_rng([7, step, index]).standard_normal(value.shape).astype(np.float32)
        return value * dtype(0.5) + noise.astype(dtype) * dtype(0.1)

    return params, grad


def _run_mlx(config, dtype=np.float32):
    mx = pytest.importorskip("mlx.core")
    optimizers = pytest.importorskip("mlx.optimizers")
    params, grad = _problem(dtype)
    opt = optimizers.Lion(learning_rate=config["lr"], betas=list(config["betas"]), weight_decay=config["weight_decay"])
    history, kind = [], getattr(mx, np.dtype(dtype).name)  # (mx.array makes float64 data float32)
    with mx.stream(mx.cpu):  # float64 runs on the CPU only
        tree = {str(i): mx.array(p, dtype=kind) for i, p in enumerate(params)}
        for step in range(1, STEPS + 1):
            grads = {k: mx.array(grad(step, int(k), np.array(v)), dtype=kind) for k, v in tree.items()}
            tree = opt.apply_gradients(grads, tree)
            mx.eval(tree, opt.state)
            history.append(([np.array(tree[str(i)]) for i in range(len(params))],
                            [np.array(opt.state[str(i)]["m"]) for i in range(len(params))]))
    return history


def _run_torch(config):
    torch = pytest.importorskip("torch")
    from torch_reference import lion_class

    params, grad = _problem()
    tensors = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
    opt = lion_class()(tensors, **config)
    history = []
    for step in range(1, STEPS + 1):
        for i, p in enumerate(tensors):
            p.grad = torch.from_numpy(grad(step, i, p.detach().numpy()))
        opt.step()
        history.append(([p.detach().numpy().copy() for p in tensors],
                        [opt.state[p]["exp_avg"].numpy().copy() for p in tensors]))
    return history


def _run_lucid(config, device):
    params, grad = _problem()
    tensors = [lucid.nn.Parameter(lucid.tensor(p, device=device)) for p in params]
    opt = lucid.optim.Lion(tensors, **config)
    history = []
    for step in range(1, STEPS + 1):
        for i, p in enumerate(tensors):
            p.grad = lucid.tensor(grad(step, i, np.asarray(p.detach())), device=device)
        opt.step()
        history.append(([np.asarray(p.detach()) for p in tensors],
                        [np.asarray(opt.state[i]["exp_avg"]) for i in range(len(tensors))]))
    return history


def _runs(history):
    """Each tensor's run (steps along axis 0): the params, then the moments."""
    tensors = [params + moments for params, moments in history]
    return [np.stack([step[k] for step in tensors]) for k in range(len(tensors[0]))]


def _assert_same(history, config):
    """``history`` (float32) judged step by step against MLX's float64 run, MLX's float32 run
    the ceiling."""
    expected, truth = _runs(_run_mlx(config)), _runs(_run_mlx(config, np.float64))
    assert truth[0].dtype == np.float64
    for k, (got, want, exact) in enumerate(zip(_runs(history), expected, truth, strict=True)):
        assert got.dtype == want.dtype == np.float32
        judge_run(got, want, exact, "float32", what=f"tensor {k}")


@pytest.mark.parametrize("config", CONFIGS, ids=["plain", "weight_decay"])
def test_torch_reference_matches_mlx(config):
    _assert_same(_run_torch(config), config)


@pytest.mark.parametrize("config", CONFIGS, ids=["plain", "weight_decay"])
def test_lucid_matches_mlx(config, device):
    _assert_same(_run_lucid(config, device), config)
