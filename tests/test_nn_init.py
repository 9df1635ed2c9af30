"""``lucid.nn.init`` against ``torch.nn.init``: fans, gains, bounds, distributions, errors.

lucid draws other numbers than torch (see ``lucid._backend.random``), so the random fills
are compared as distributions: the same bounds, and a two-sample Kolmogorov-Smirnov
distance between 20000 of lucid's draws and 20000 of torch's below the 1e-6 critical
value (fixed seeds: the check is deterministic). Layers initialise through these
functions, so their weights are compared the same way.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from helpers import raised as _raised
from lucid import nn

torch = pytest.importorskip("torch")

N = 20000
KS_CRITICAL = math.sqrt(-math.log(1e-6 / 2) / 2) * math.sqrt(2 / N)  # 1e-6 level, two equal samples


def ks_distance(a, b) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between the empirical CDFs."""
    a, b = np.sort(np.ravel(a)), np.sort(np.ravel(b))
    grid = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, grid, side="right") / a.size
                               - np.searchsorted(b, grid, side="right") / b.size)))


def _values(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


SHAPES = {"matrix": (200, 100), "conv": (100, 8, 5, 5)}


@pytest.mark.parametrize("name,kwargs", [
    ("uniform_", {"a": -0.3, "b": 0.7}),
    ("normal_", {"mean": 0.5, "std": 2.0}),
    ("trunc_normal_", {"mean": 0.1, "std": 1.0, "a": -0.5, "b": 1.5}),
    ("trunc_normal_", {"std": 0.02}),
    ("xavier_uniform_", {"gain": 2.0}),
    ("xavier_normal_", {}),
    ("kaiming_uniform_", {}),
    ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", {"nonlinearity": "tanh"}),
    ("kaiming_normal_", {"a": 0.2, "mode": "fan_out"}),
    ("orthogonal_", {"gain": 1.5}),
])
@pytest.mark.parametrize("shape", ["matrix", "conv"])
def test_random_init_has_torchs_distribution(name, kwargs, shape, device):
    size = SHAPES[shape]
    count = max(1, N // math.prod(size[1:]))
    ours = [getattr(nn.init, name)(lucid.empty(*size, dtype=lucid.float64, device=device), **kwargs)
            for _ in range(max(1, N // math.prod(size)))]
    torch.manual_seed(0)
    theirs = [getattr(torch.nn.init, name)(torch.empty(*size, dtype=torch.float64), **kwargs)
              for _ in range(max(1, N // math.prod(size)))]
    assert ours[0].shape == size and ours[0].dtype is lucid.float64 and ours[0].device == device
    a = np.concatenate([_values(t).ravel() for t in ours])
    b = np.concatenate([t.numpy().ravel() for t in theirs])
    assert count and ks_distance(a, b) < KS_CRITICAL
    # the bounds are torch's: the support of a uniform fill ends where torch's does
    if "uniform" in name:
        bound = np.abs(b).max()
        assert np.abs(a).max() <= bound * (1 + 1e-3) and np.abs(a).max() >= bound * (1 - 1e-3)
    if name == "trunc_normal_":
        low, high = kwargs.get("a", -2.0), kwargs.get("b", 2.0)
        assert a.min() >= low and a.max() <= high


def test_orthogonal_rows_or_columns_are_orthonormal(device):
    for shape in [(3, 7), (7, 3), (4, 2, 3)]:
        w = nn.init.orthogonal_(lucid.empty(*shape, dtype=lucid.float64, device=device), gain=2.0)
        flat = _values(w).reshape(shape[0], -1)
        gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
        np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-12)


@pytest.mark.parametrize("nonlinearity,param", [
    ("linear", None), ("conv2d", None), ("conv_transpose3d", None), ("sigmoid", None), ("tanh", None),
    ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 1), ("selu", None),
])
def test_calculate_gain_is_torchs(nonlinearity, param):
    assert nn.init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(nonlinearity, param)


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (2, 3, 4, 5)])
def test_fans_are_torchs(shape):
    ours = nn.init._calculate_fan_in_and_fan_out(lucid.empty(*shape))
    assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_deterministic_fills_match_torch(device):
    for name, args, shape in [("constant_", (0.25,), (2, 3)), ("ones_", (), (3,)), ("zeros_", (), (2, 2)),
                              ("eye_", (), (3, 5)), ("eye_", (), (4, 2)), ("dirac_", (), (4, 2, 3)),
                              ("dirac_", (2,), (4, 3, 3, 3)), ("dirac_", (), (2, 2, 3, 3, 3))]:
        ours = getattr(nn.init, name)(lucid.ones(*shape, dtype=lucid.float64, device=device), *args)
        theirs = getattr(torch.nn.init, name)(torch.ones(*shape, dtype=torch.float64), *args)
        np.testing.assert_array_equal(_values(ours), theirs.numpy(), err_msg=name)


def test_sparse_zeroes_the_fraction_of_each_column():
    w = nn.init.sparse_(lucid.empty(10, 4, dtype=lucid.float64), sparsity=0.3, std=0.5)
    assert (_values(w) == 0).sum(axis=0).tolist() == [3, 3, 3, 3]


def test_init_fills_a_parameter_in_place_without_recording():
    w = nn.Parameter(lucid.ones(4, 3))
    out = nn.init.kaiming_uniform_(w)
    assert out is w and w.requires_grad and w.is_leaf and w.grad_fn is None
    assert not bool((w == 1).all())
    g = lucid.Generator().manual_seed(9)
    first = nn.init.xavier_normal_(w, generator=g).tolist()
    g.manual_seed(9)
    assert nn.init.xavier_normal_(w, generator=g).tolist() == first


def test_zero_element_tensors_warn_and_stay_as_they_are():
    with pytest.warns(UserWarning, match="zero-element"):
        nn.init.kaiming_uniform_(lucid.empty(0, 3))
    with pytest.warns(UserWarning, match="zero-element"):
        nn.init.kaiming_normal_(lucid.empty(3, 0))
    assert nn.init.orthogonal_(lucid.empty(0, 3)).shape == (0, 3)



@pytest.mark.parametrize("call", [
    lambda m: m.nn.init.calculate_gain("swish"),
    lambda m: m.nn.init.calculate_gain("leaky_relu", "x"),
    lambda m: m.nn.init.xavier_uniform_(m.empty(3)),
    lambda m: m.nn.init.kaiming_normal_(m.empty(3, 3), mode="fan_avg"),
    lambda m: m.nn.init.eye_(m.empty(2, 2, 2)),
    lambda m: m.nn.init.dirac_(m.empty(2, 2)),
    lambda m: m.nn.init.dirac_(m.empty(3, 2, 2), groups=2),
    lambda m: m.nn.init.orthogonal_(m.empty(3)),
    lambda m: m.nn.init.sparse_(m.empty(3), 0.5),
    lambda m: m.nn.init.uniform_(m.empty(3), 1.0, 0.0),
])
def test_bad_arguments_raise_torchs_error(call):
    ours, theirs = _raised(lambda: call(lucid)), _raised(lambda: call(torch))
    assert theirs is not None and ours is not None
    assert type(ours) is type(theirs), (ours, theirs)
    if isinstance(theirs, ValueError):
        assert str(ours) == str(theirs)


@pytest.mark.parametrize("make", [
    lambda m: m.nn.Linear(400, 50),
    lambda m: m.nn.Linear(3, 2000, bias=True),
    lambda m: m.nn.Embedding(400, 50),
    lambda m: m.nn.Embedding(400, 50, padding_idx=3),
])
def test_layers_initialise_as_torchs(make, device):
    torch.manual_seed(0)
    ours, theirs = make(lucid).to(device), make(torch)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname and p.shape == tuple(tp.shape)
        a, b = _values(p), tp.detach().numpy().astype(np.float64)
        critical = math.sqrt(-math.log(1e-6 / 2) / 2) * math.sqrt(2 / a.size)
        assert ks_distance(a, b) < critical, name
        if isinstance(theirs, torch.nn.Linear) and name == "weight":
            bound = 1 / math.sqrt(theirs.in_features)
            assert np.abs(a).max() <= bound and np.abs(a).max() > 0.98 * bound
    if getattr(theirs, "padding_idx", None) is not None:
        assert not _values(ours.weight)[3].any()
