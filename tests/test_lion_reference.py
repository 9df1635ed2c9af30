"""The torch reference Lion (tests/torch_reference.py), and lucid's, against ``mlx.optimizers.Lion``.

torch.optim has no Lion, so its golden values come from a reference written in torch ops;
this checks that reference, step by step, against MLX's implementation, which lucid.optim.Lion
follows (float32, MLX's CPU device, with and without weight decay).
"""

import numpy as np
import pytest

import lucid
from tolerances import close

STEPS = 8
CONFIGS = [
    {"lr": 1e-2, "betas": (0.9, 0.99), "weight_decay": 0.0},
    {"lr": 3e-2, "betas": (0.8, 0.95), "weight_decay": 0.5},
]


def _problem():
    """Initial params and a gradient stream that depends on the params (float32)."""
    rng = np.random.default_rng(7)
    params = [rng.standard_normal(shape).astype(np.float32) for shape in ((4, 3), (5,))]

    def grad(step, index, value):
        noise = np.random.default_rng([7, step, index]).standard_normal(value.shape).astype(np.float32)
        return value * np.float32(0.5) + noise * np.float32(0.1)

    return params, grad


def _run_mlx(config):
    mx = pytest.importorskip("mlx.core")
    optimizers = pytest.importorskip("mlx.optimizers")
    params, grad = _problem()
    opt = optimizers.Lion(learning_rate=config["lr"], betas=list(config["betas"]), weight_decay=config["weight_decay"])
    tree = {str(i): mx.array(p) for i, p in enumerate(params)}
    history = []
    for step in range(1, STEPS + 1):
        grads = {k: mx.array(grad(step, int(k), np.array(v))) for k, v in tree.items()}
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


def _assert_same(history, expected):
    for (params, moments), (want_params, want_moments) in zip(history, expected, strict=True):
        for got, want in zip(params + moments, want_params + want_moments, strict=True):
            close(got, want, "float32")


@pytest.mark.parametrize("config", CONFIGS, ids=["plain", "weight_decay"])
def test_torch_reference_matches_mlx(config):
    _assert_same(_run_torch(config), _run_mlx(config))


@pytest.mark.parametrize("config", CONFIGS, ids=["plain", "weight_decay"])
def test_lucid_matches_mlx(config, device):
    _assert_same(_run_lucid(config, device), _run_mlx(config))
