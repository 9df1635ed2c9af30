"""Row-sparse gradients: lucid.SparseTensor, Embedding(sparse=True), and the optimizers that
take them (SparseAdam, SGD, Adagrad) against torch 2.13, live and from golden files."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lucid
import lucid.nn.functional as F
from lucid import nn, optim
from lucid._backend import numpy_backend
from optim_registry import REGISTRY
from sparse_cases import CASES, DTYPES, GOLDEN_DIR, golden_path, load_golden, run_lucid_sparse
from tolerances import close, judge
from trajectories import TRUTH, judge_alike, judge_recording, judge_run, replay_problems


def _torch():
    return pytest.importorskip("torch")


def host(t):
    return np.array(t.detach())


def dyadic(rng, shape, dtype=np.float64):
    """Values whose sums are exact in any order (so duplicate rows sum alike in torch and lucid)."""
    return (np.round(rng.standard_normal(shape) * 64) / 64).astype(dtype)


# ----------------------------------------------------------------------------------------
# The sparse tensor
# ----------------------------------------------------------------------------------------

def test_coalesce_sums_duplicates_in_sorted_rows(device):
    g = lucid.sparse_coo_tensor([[3, 0, 3, 1, 0]], lucid.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0],
                                                                  [7.0, 8.0], [9.0, 10.0]], device=device), (5, 2))
    assert g.is_sparse and not g.is_coalesced() and g._nnz() == 5
    assert g.shape == (5, 2) and g.size(0) == 5 and g.ndim == 2 and g.dtype is lucid.float32 and g.device == device
    assert g.sparse_dim() == 1 and g.dense_dim() == 1
    c = g.coalesce()
    assert c.is_coalesced() and c.coalesce() is c
    assert c.indices().tolist() == [[0, 1, 3]]
    assert c.values().tolist() == [[12.0, 14.0], [7.0, 8.0], [6.0, 8.0]]
    dense = [[12.0, 14.0], [7.0, 8.0], [0.0, 0.0], [6.0, 8.0], [0.0, 0.0]]
    assert g.to_dense().tolist() == dense and c.to_dense().tolist() == dense
    assert not lucid.tensor([1.0]).is_sparse


def test_conversions_copies_and_pickling(device):
    g = lucid.sparse_coo_tensor([[2, 0, 2]], lucid.tensor([[1.0], [2.0], [3.0]], device=device), (4, 1))
    d = g.double()
    assert d.dtype is lucid.float64 and d.to_dense().tolist() == g.to_dense().tolist()
    assert g.to(device) is g and g.float() is g
    other = "cpu" if device == "gpu" else "gpu"
    if lucid.is_available(other):
        moved = g.to(other)
        assert moved.device == other and moved.to_dense().tolist() == g.to_dense().tolist()
    for twin in (g.clone(), copy.deepcopy(g), pickle.loads(pickle.dumps(g))):
        assert twin.device == device and twin.indices().tolist() == [[2, 0, 2]]
        assert twin.values().tolist() == [[1.0], [2.0], [3.0]]
    assert (-g).values().tolist() == [[-1.0], [-2.0], [-3.0]]
    assert g.mul(2).values().tolist() == [[2.0], [4.0], [6.0]]
    s = g + lucid.sparse_coo_tensor([[1]], lucid.tensor([[5.0]], device=device), (4, 1))
    assert s._nnz() == 4 and s.to_dense().tolist() == [[2.0], [5.0], [4.0], [0.0]]
    assert (g + lucid.ones(4, 1, device=device)).tolist() == [[3.0], [1.0], [5.0], [1.0]]
    assert "nnz=3" in repr(g)
    empty = g.clone().zero_()
    assert empty._nnz() == 0 and empty.to_dense().tolist() == [[0.0]] * 4


def test_sparse_coo_tensor_checks_its_arguments():
    with pytest.raises(ValueError, match="one sparse dimension"):
        lucid.sparse_coo_tensor([[0], [1]], [[1.0]], (2, 2))
    with pytest.raises(ValueError, match="one row per index"):
        lucid.sparse_coo_tensor([[0, 1]], [[1.0]], (2, 1))
    with pytest.raises(ValueError, match="out of range"):
        lucid.sparse_coo_tensor([[2]], [[1.0]], (2, 1))
    with pytest.raises(ValueError, match="do not fit"):
        lucid.sparse_coo_tensor([[0]], [[1.0]], (2, 3))
    assert lucid.sparse_coo_tensor([[4]], [[1.0, 2.0]]).shape == (5, 2)


def test_backend_coalesce_equals_a_reference_and_mlx_equals_numpy():
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 50, size=400).astype(np.int64)
    values = dyadic(rng, (400, 3), np.float32)
    expected_rows = np.unique(rows)
    expected = np.stack([values[rows == r].sum(axis=0) for r in expected_rows])
    backends = [lucid._backend.get("cpu")] + ([lucid._backend.get("gpu")] if lucid.is_available("gpu") else [])
    for b in backends:
        got_rows, got = b.coalesce_rows(b.asarray(rows, lucid.int64), b.asarray(values, lucid.float32))
        np.testing.assert_array_equal(b.to_numpy(got_rows), expected_rows)
        np.testing.assert_array_equal(b.to_numpy(got), expected)
        # no duplicates: sorted, nothing summed; one row: as it is
        r, v = b.coalesce_rows(b.asarray([4, 1], lucid.int64), b.asarray([[1.0], [2.0]], lucid.float32))
        assert b.to_numpy(r).tolist() == [1, 4] and b.to_numpy(v).tolist() == [[2.0], [1.0]]


def test_nonzero_rows_scan_counts_minus_zero_as_zero_and_nan_as_nonzero():
    b = lucid._backend.get("cpu")
    for dtype, width in ((np.float32, 64), (np.float64, 3), (np.float16, 5), (np.float32, 1)):
        a = np.zeros((7, width), dtype)
        a[1, -1] = -0.0
        a[3, 0] = 2.0
        a[5, width // 2] = np.nan
        assert b.nonzero_rows(a).tolist() == [3, 5]
    assert b.nonzero_rows(np.zeros((0, 4), np.float32)).tolist() == []
    assert b.nonzero_rows(np.asfortranarray(np.eye(3, dtype=np.float32))).tolist() == [0, 1, 2]


# ----------------------------------------------------------------------------------------
# Embedding(sparse=True) against torch
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [{}, {"padding_idx": 2}, {"padding_idx": -1, "max_norm": 1.0},
                                     {"max_norm": 0.5, "norm_type": 1.0}])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_embedding_sparse_gradient_equals_torchs(options, index_dtype, device):
    torch = _torch()
    rng = np.random.default_rng(5)
    table = rng.standard_normal((9, 4)).astype(np.float32)
    idx = rng.integers(0, 9, size=(6, 5))
    idx[0, :3] = 2
    idx[1, :2] = 8
    upstream = dyadic(rng, (6, 5, 4), np.float32)
    weight = lucid.tensor(table, device=device, requires_grad=True)
    tweight = torch.tensor(table, requires_grad=True)
    out = F.embedding(lucid.tensor(idx, dtype=getattr(lucid, index_dtype), device=device), weight,
                      sparse=True, **options)
    tout = torch.nn.functional.embedding(torch.tensor(idx, dtype=getattr(torch, index_dtype)), tweight,
                                         sparse=True, **options)
    # the lookup copies rows (renormed first under max_norm, in place, in both)
    np.testing.assert_array_equal(host(out), host(weight)[idx])
    np.testing.assert_array_equal(tout.detach().numpy(), tweight.detach().numpy()[idx])
    (out * lucid.tensor(upstream, device=device)).sum().backward()
    (tout * torch.tensor(upstream)).sum().backward()
    g, tg = weight.grad, tweight.grad
    assert g.is_sparse and tg.is_sparse and not g.is_coalesced()
    assert g.indices().tolist() == tg._indices().tolist()  # as they come, padding rows left out
    np.testing.assert_array_equal(host(g.values()), tg._values().numpy())
    c, tc = g.coalesce(), tg.coalesce()
    assert c.indices().tolist() == tc.indices().tolist()
    np.testing.assert_array_equal(host(c.values()), tc.values().numpy())
    if "max_norm" not in options:
        np.testing.assert_array_equal(host(weight), table)
    else:  # max_norm renormed the same rows: judged against the renorm in float64 of the same table
        truth = torch.tensor(table.astype(np.float64))
        torch.nn.functional.embedding(torch.tensor(idx), truth, **options)
        assert (host(weight) != table).any(axis=1).tolist() == (truth.numpy() != table).any(axis=1).tolist()
        judge(host(weight), tweight.detach().numpy(), truth.numpy(), "float32", what="renormed table")


def test_embedding_sparse_gradient_of_random_values_matches_torch_to_rounding(device):
    torch = _torch()
    rng = np.random.default_rng(6)
    idx = rng.integers(0, 20, size=300)
    upstream = rng.standard_normal((300, 3))
    weight = lucid.zeros(20, 3, dtype=lucid.float64, device="cpu", requires_grad=True)
    tweight = torch.zeros(20, 3, dtype=torch.float64, requires_grad=True)
    (F.embedding(lucid.tensor(idx), weight, sparse=True) * lucid.tensor(upstream)).sum().backward()
    (torch.nn.functional.embedding(torch.tensor(idx), tweight, sparse=True) * torch.tensor(upstream)).sum().backward()
    c, tc = weight.grad.coalesce(), tweight.grad.coalesce()
    assert c.indices().tolist() == tc.indices().tolist()
    close(host(c.values()), tc.values().numpy(), "float64")  # torch sums duplicates in its sort's order


def test_scale_grad_by_freq_with_sparse_raises_at_backward_as_torch():
    torch = _torch()
    emb = nn.Embedding(5, 2, sparse=True, scale_grad_by_freq=True)
    out = emb(lucid.tensor([1, 1, 3]))
    with pytest.raises(RuntimeError) as mine:
        out.sum().backward()
    temb = torch.nn.Embedding(5, 2, sparse=True, scale_grad_by_freq=True)
    with pytest.raises(RuntimeError) as theirs:
        temb(torch.tensor([1, 1, 3])).sum().backward()
    assert str(mine.value) == str(theirs.value)


def test_gradients_of_two_backward_calls_concatenate_and_coalesce_as_torchs(device):
    torch = _torch()
    emb = nn.Embedding(10, 3, sparse=True, padding_idx=0, device=device)
    temb = torch.nn.Embedding(10, 3, sparse=True, padding_idx=0)
    with torch.no_grad():
        temb.weight.copy_(torch.tensor(host(emb.weight)))
    for idx in ([[4, 0, 4], [7, 1, 4]], [[7, 9, 0]]):
        (emb(lucid.tensor(idx, device=device)) * 2).sum().backward()
        (temb(torch.tensor(idx)) * 2).sum().backward()
    g, tg = emb.weight.grad, temb.weight.grad
    # lucid concatenates; torch merges the two lists as if sorted (here 7 meets 7): the same sum
    assert g.indices().tolist() == [[4, 4, 7, 1, 4, 7, 9]] and not g.is_coalesced()
    assert g.coalesce().indices().tolist() == tg.coalesce().indices().tolist() == [[1, 4, 7, 9]]
    np.testing.assert_array_equal(host(g.coalesce().values()), tg.coalesce().values().numpy())
    # a dense gradient then a sparse one, and the other way round: dense sums, as in torch
    for first, second in ((False, True), (True, False)):
        w = lucid.zeros(5, 2, device=device, requires_grad=True)
        tw = torch.zeros(5, 2, requires_grad=True)
        for sparse in (first, second):
            F.embedding(lucid.tensor([1, 3, 1], device=device), w, sparse=sparse).sum().backward()
            torch.nn.functional.embedding(torch.tensor([1, 3, 1]), tw, sparse=sparse).sum().backward()
        assert not w.grad.is_sparse and not tw.grad.is_sparse
        np.testing.assert_array_equal(host(w.grad), tw.grad.numpy())


def test_two_lookups_in_one_graph_add_up(device):
    emb = nn.Embedding(6, 2, sparse=True, device=device)
    (emb(lucid.tensor([1, 2], device=device)).sum() + emb(lucid.tensor([2, 5], device=device)).sum()).backward()
    assert emb.weight.grad.coalesce().indices().tolist() == [[1, 2, 5]]
    assert emb.weight.grad.coalesce().values().tolist() == [[1.0, 1.0], [2.0, 2.0], [1.0, 1.0]]
    # mixed with a dense use of the same weight in one graph: the sum is dense
    w = lucid.zeros(4, 2, device=device, requires_grad=True)
    (F.embedding(lucid.tensor([3], device=device), w, sparse=True).sum() + w.sum()).backward()
    assert not w.grad.is_sparse and w.grad.tolist() == [[1.0, 1.0]] * 3 + [[2.0, 2.0]]


def test_a_sparse_gradient_through_an_op_reaches_the_leaf_dense(device):
    torch = _torch()
    w = lucid.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=device, requires_grad=True)
    F.embedding(lucid.tensor([2, 2, 0], device=device), w * 3, sparse=True).sum().backward()
    tw = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    torch.nn.functional.embedding(torch.tensor([2, 2, 0]), tw * 3, sparse=True).sum().backward()
    assert not w.grad.is_sparse  # torch keeps it sparse through the multiply; the values agree
    np.testing.assert_array_equal(host(w.grad), tw.grad.to_dense().numpy())


# ----------------------------------------------------------------------------------------
# Optimizers on sparse gradients: golden files and live torch
# ----------------------------------------------------------------------------------------

def test_sparse_golden_manifest_lists_exactly_the_cases():
    manifest = json.loads((GOLDEN_DIR / "MANIFEST.json").read_text())
    assert manifest["cases"] == [c.name for c in CASES]
    assert {p.name for p in GOLDEN_DIR.glob("*.npz")} == {golden_path(c, d).name for c in CASES for d in DTYPES}


def _compare(case, dtype_name, device, expected):
    """lucid's run against torch's recording: float64 to 1e-12, float32 judged step by step
    against the recording's truth (tests/trajectories.py)."""
    judge_recording(run_lucid_sparse(case, DTYPES[dtype_name], device), expected, runs=True,
                    what=f"{case.name} ({dtype_name} on {device})")


# every file on NumPy; MLX runs the float32 files (as test_optim_parity.py)
RUNS = [(case, dtype_name, "cpu") for case in CASES for dtype_name in sorted(DTYPES)]
RUNS += [(case, "float32", "gpu") for case in CASES]  # skipped by name without MLX (conftest.py)


@pytest.mark.parametrize("case,dtype_name,device", RUNS, ids=[f"{c.name}-{d}-{v}" for c, d, v in RUNS])
def test_sparse_cases_against_golden(case, dtype_name, device):
    _compare(case, dtype_name, device, load_golden(case, dtype_name))


@pytest.mark.parametrize("case,dtype_name,device", RUNS, ids=[f"{c.name}-{d}-{v}" for c, d, v in RUNS])
def test_sparse_cases_against_live_torch(case, dtype_name, device):
    """The same against torch run here (a float32 run with the golden file's truth)."""
    _torch()
    from sparse_cases import run_torch_sparse

    expected = run_torch_sparse(case, DTYPES[dtype_name])
    if dtype_name == "float32":
        expected.update({k: v for k, v in load_golden(case, dtype_name).items() if k.startswith(TRUTH)})
    _compare(case, dtype_name, device, expected)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_torch_reproduces_the_sparse_golden_files(case):
    """float64 to 1e-12 (and the float32 files' truth), float32 judged both ways against the
    stored truth (trajectories.replay_problems)."""
    torch = _torch()
    from sparse_cases import golden_sparse_arrays

    manifest = json.loads((GOLDEN_DIR / "MANIFEST.json").read_text())
    if torch.__version__ != manifest["torch"]:
        pytest.skip(f"golden files are from torch {manifest['torch']}")
    for dtype_name in DTYPES:
        problems = replay_problems(load_golden(case, dtype_name), golden_sparse_arrays(case, dtype_name), runs=True,
                                   what=f"{case.name}.{dtype_name}")
        assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name, kwargs", [("SparseAdam", {"lr": 0.1}), ("SGD", {"lr": 0.1}),
                                          ("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adagrad", {"lr": 0.1})])
def test_embedding_training_equals_torch_and_padding_rows_never_change(name, kwargs, device):
    """Six float32 steps, judged step by step against the same training in float64 (torch's,
    from the same float32 table and targets), torch's float32 run the ceiling."""
    torch = _torch()
    rng = np.random.default_rng(11)
    emb = nn.Embedding(30, 4, padding_idx=3, sparse=True, device=device)
    tables = {dtype: torch.nn.Embedding(30, 4, padding_idx=3, sparse=True, dtype=dtype)
              for dtype in (torch.float32, torch.float64)}
    optimizers = {dtype: getattr(torch.optim, name)(t.parameters(), **kwargs) for dtype, t in tables.items()}
    with torch.no_grad():
        for t in tables.values():
            t.weight.copy_(torch.tensor(host(emb.weight)))
    opt = getattr(optim, name)(emb.parameters(), **kwargs)
    padding = host(emb.weight)[3].copy()
    runs = {"lucid": [], torch.float32: [], torch.float64: []}
    for _ in range(6):
        idx = rng.integers(0, 30, size=(8, 3))
        idx[0, 0] = 3
        target = dyadic(rng, (8, 3, 4), np.float32)
        opt.zero_grad()
        ((emb(lucid.tensor(idx, device=device)) - lucid.tensor(target, device=device)) ** 2).sum().backward()
        opt.step()
        runs["lucid"].append(host(emb.weight))
        for dtype, t in tables.items():
            optimizers[dtype].zero_grad()
            ((t(torch.tensor(idx)) - torch.tensor(target, dtype=dtype)) ** 2).sum().backward()
            optimizers[dtype].step()
            runs[dtype].append(t.weight.detach().numpy().copy())
        np.testing.assert_array_equal(host(emb.weight)[3], padding)
    judge_run(np.stack(runs["lucid"]), np.stack(runs[torch.float32]), np.stack(runs[torch.float64]), "float32",
              what=f"{name} on {device}")


def test_sparse_adam_leaves_untouched_rows_and_moments_bit_identical(device):
    emb = nn.Embedding(50, 3, sparse=True, device=device)
    opt = optim.SparseAdam(emb.parameters(), lr=0.1)
    emb(lucid.tensor([1, 2, 3], device=device)).sum().backward()
    opt.step()
    before = host(emb.weight), host(opt.state[0]["exp_avg"]), host(opt.state[0]["exp_avg_sq"])
    opt.zero_grad()
    emb(lucid.tensor([2, 40, 2], device=device)).sum().backward()
    opt.step()
    after = host(emb.weight), host(opt.state[0]["exp_avg"]), host(opt.state[0]["exp_avg_sq"])
    untouched = [r for r in range(50) if r not in (2, 40)]
    for old, new in zip(before, after):
        assert old[untouched].tobytes() == new[untouched].tobytes()
        assert (old[[2, 40]] != new[[2, 40]]).all()
    assert opt.state[0]["step"] == 2


def test_sparse_and_dense_sparse_adam_agree_where_both_apply(device):
    rng = np.random.default_rng(2)
    start = rng.standard_normal((20, 3)).astype(np.float32)
    a = nn.Embedding.from_pretrained(lucid.tensor(start, device=device), freeze=False, sparse=True)
    b = nn.Embedding.from_pretrained(lucid.tensor(start, device=device), freeze=False, sparse=False)
    oa, ob = optim.SparseAdam(a.parameters(), lr=0.05), optim.SparseAdam(b.parameters(), lr=0.05)
    for _ in range(5):
        idx = lucid.tensor(rng.integers(0, 20, size=12), device=device)
        for emb, opt in ((a, oa), (b, ob)):
            opt.zero_grad()
            (emb(idx) ** 2).sum().backward()  # every looked-up row gets a nonzero gradient
            opt.step()
        np.testing.assert_array_equal(host(a.weight), host(b.weight))
        np.testing.assert_array_equal(host(oa.state[0]["exp_avg_sq"]), host(ob.state[0]["exp_avg_sq"]))


def test_sparse_step_allocates_nothing_table_sized_and_scans_nothing(monkeypatch):
    rows, dim = 100_000, 8
    emb = nn.Embedding(rows, dim, sparse=True)
    opt = optim.SparseAdam(emb.parameters(), lr=0.01)
    emb(lucid.tensor([5, 7])).sum().backward()
    opt.step()  # the first step creates the (table-sized) moments, as torch does
    calls = []
    cls = numpy_backend.NumpyBackend
    for name in ("zeros", "ones", "full", "scatter_add", "nonzero_rows", "nonzero", "copy"):
        original = getattr(cls, name)

        def spy(self, *args, _name=name, _original=original, **kwargs):
            out = _original(self, *args, **kwargs)
            calls.append((_name, int(np.size(out))))
            return out

        monkeypatch.setattr(cls, name, spy)
    for step in range(3):
        opt.zero_grad()
        emb(lucid.tensor([[5, 9, 5], [rows - 1, 9, 0]])).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
        opt.step()  # an empty sparse gradient: the count advances, nothing changes
    assert calls, "the spy saw nothing"
    assert all(size < rows for _, size in calls), [c for c in calls if c[1] >= rows]
    assert not any(name in ("scatter_add", "nonzero_rows") for name, _ in calls)
    assert opt.state[0]["step"] == 7


def test_zero_grad_on_sparse_gradients_as_torch(device):
    torch = _torch()
    emb = nn.Embedding(5, 2, sparse=True, device=device)
    opt = optim.SGD(emb.parameters(), lr=0.1)
    emb(lucid.tensor([1, 4], device=device)).sum().backward()
    opt.zero_grad(set_to_none=False)
    temb = torch.nn.Embedding(5, 2, sparse=True)
    topt = torch.optim.SGD(temb.parameters(), lr=0.1)
    temb(torch.tensor([1, 4])).sum().backward()
    topt.zero_grad(set_to_none=False)
    assert emb.weight.grad.is_sparse and emb.weight.grad._nnz() == temb.weight.grad._nnz() == 0
    before = host(emb.weight)
    opt.step()
    np.testing.assert_array_equal(host(emb.weight), before)
    opt.zero_grad()
    assert emb.weight.grad is None


# ----------------------------------------------------------------------------------------
# Refusals, hyperparameters sparse gradients rule out, state_dict
# ----------------------------------------------------------------------------------------

# every optimizer without a sparse path (tests/optim_registry.py)
REFUSING = [info.name for info in REGISTRY if info.sparse == "refuses"]


@pytest.mark.parametrize("name", REFUSING)
def test_other_optimizers_refuse_sparse_gradients_with_torchs_message(name, device):
    torch = _torch()
    p = nn.Parameter(lucid.ones(4, 3, device=device))
    p.grad = lucid.sparse_coo_tensor([[1]], lucid.ones(1, 3, device=device), (4, 3))
    opt = getattr(optim, name)([p])
    with pytest.raises(RuntimeError) as mine:
        opt.step()
    assert (host(p) == 1).all() and not opt.state
    if hasattr(torch.optim, name):
        tp = torch.nn.Parameter(torch.ones(4, 3))
        tp.grad = torch.sparse_coo_tensor([[1]], torch.ones(1, 3), (4, 3))
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch.optim, name)([tp]).step()
        assert str(mine.value) == str(theirs.value)
    else:
        assert str(mine.value) == f"{name} does not support sparse gradients"


@pytest.mark.parametrize("name, kwargs", [("SGD", {"lr": 0.1, "weight_decay": 0.1}),
                                          ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}),
                                          ("Adagrad", {"weight_decay": 0.1})])
def test_weight_decay_with_sparse_gradients_raises_torchs_error_before_any_change(name, kwargs):
    torch = _torch()
    a, b = nn.Parameter(lucid.ones(3)), nn.Parameter(lucid.ones(4, 2))
    a.grad = lucid.ones(3)
    b.grad = lucid.sparse_coo_tensor([[0]], [[1.0, 1.0]], (4, 2))
    opt = getattr(optim, name)([a, b], **kwargs)
    with pytest.raises(RuntimeError) as mine:
        opt.step()
    assert host(a).tolist() == [1.0] * 3
    tp = torch.nn.Parameter(torch.ones(4, 2))
    tp.grad = torch.sparse_coo_tensor([[0]], [[1.0, 1.0]], (4, 2))
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.optim, name)([tp], **kwargs).step()
    assert str(mine.value) == str(theirs.value)


def test_state_dict_round_trip_after_sparse_steps():
    emb = nn.Embedding(6, 2, sparse=True)
    opt = optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)
    emb(lucid.tensor([1, 1, 5])).sum().backward()
    opt.step()
    saved = opt.state_dict()
    assert not saved["state"][0]["momentum_buffer"].is_sparse  # lucid keeps the buffer dense
    fresh = optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)
    fresh.load_state_dict(saved)
    assert host(fresh.state[0]["momentum_buffer"]).tolist() == [[0, 0], [2, 2], [0, 0], [0, 0], [0, 0], [1, 1]]


# ----------------------------------------------------------------------------------------
# clip_grad_norm_
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("norm_type", [2.0, 1.0, "inf", 3.0])
def test_clip_grad_norm_of_sparse_gradients_equals_torch_on_their_dense_values(norm_type, device):
    torch = _torch()
    rng = np.random.default_rng(4)
    emb = nn.Embedding(12, 3, sparse=True, device=device)
    other = nn.Parameter(lucid.tensor(rng.standard_normal(5).astype(np.float32), device=device))
    idx = rng.integers(0, 12, size=9)
    upstream = rng.standard_normal((9, 3)).astype(np.float32)
    ((emb(lucid.tensor(idx, device=device)) * lucid.tensor(upstream, device=device)).sum()
     + (other * other).sum()).backward()
    dense = [host(emb.weight.grad.to_dense()), host(other.grad)]
    norm = nn.utils.clip_grad_norm_([emb.weight, other], 0.5, norm_type=norm_type)
    # torch 2.13 has no sparse vector_norm: the reference is its clipping of the same dense
    # values, in float32, and in float64 for the truth
    clipped = {}
    for dtype in (torch.float32, torch.float64):
        tps = [torch.nn.Parameter(torch.zeros(d.shape, dtype=dtype)) for d in dense]
        for tp, d in zip(tps, dense):
            tp.grad = torch.tensor(d, dtype=dtype)
        clipped[dtype] = [torch.nn.utils.clip_grad_norm_(tps, 0.5, norm_type=norm_type)] + [tp.grad for tp in tps]
    assert emb.weight.grad.is_sparse
    ours = [norm, emb.weight.grad.to_dense(), other.grad]
    for what, mine, theirs, truth in zip(["norm", "table's gradient", "other's gradient"], ours,
                                         clipped[torch.float32], clipped[torch.float64]):
        judge(host(mine), theirs.numpy(), truth.numpy(), "float32", what=what)
    empty = nn.Parameter(lucid.zeros(4, 2, device=device))
    empty.grad = lucid.sparse_coo_tensor(lucid.zeros(1, 0, dtype=lucid.int64, device=device),
                                         lucid.zeros(0, 2, device=device), (4, 2))
    assert nn.utils.clip_grad_norm_([empty], 1.0, norm_type=norm_type).item() == 0.0


def test_lbfgs_takes_sparse_gradients_as_their_dense_values_as_torch():
    torch = _torch()
    rng = np.random.default_rng(8)
    start = rng.standard_normal((10, 3))
    idx = rng.integers(0, 10, size=7)
    results = []
    for sparse in (True, False):
        emb = nn.Embedding.from_pretrained(lucid.tensor(start), freeze=False, sparse=sparse)
        opt = optim.LBFGS(emb.parameters(), lr=0.5, max_iter=5)

        def closure():
            opt.zero_grad()
            loss = ((emb(lucid.tensor(idx)) - 1.0) ** 2).sum()
            loss.backward()
            return loss

        opt.step(closure)
        results.append(host(emb.weight))
    temb = torch.nn.Embedding.from_pretrained(torch.tensor(start), freeze=False, sparse=True)
    topt = torch.optim.LBFGS(temb.parameters(), lr=0.5, max_iter=5)

    def tclosure():
        topt.zero_grad()
        loss = ((temb(torch.tensor(idx)) - 1.0) ** 2).sum()
        loss.backward()
        return loss

    topt.step(tclosure)
    np.testing.assert_array_equal(results[0], results[1])
    close(results[0], temb.weight.detach().numpy(), "float64")


def test_wrappers_clipping_by_value_and_conversions_take_sparse_gradients(device):
    rng = np.random.default_rng(12)
    start = rng.standard_normal((15, 3)).astype(np.float32)
    batches = [rng.integers(0, 15, size=6) for _ in range(3)]

    def one_step(accumulate, device, dtype=lucid.float32):
        emb = nn.Embedding.from_pretrained(lucid.tensor(start, dtype=dtype, device=device), freeze=False, sparse=True)
        opt = optim.SparseAdam(emb.parameters(), lr=0.1)
        acc = optim.GradientAccumulation(opt, steps=3)
        for idx in batches:
            (emb(lucid.tensor(idx, device=device)) ** 2).sum().backward()
            if accumulate:
                acc.step()
        if not accumulate:
            emb.weight.grad = emb.weight.grad / 3
            opt.step()
        return host(emb.weight)

    # GradientAccumulation over three microbatches = one step on the mean gradient: the two
    # float32 results each judged against the float64 step, with the other's error the ceiling
    judge_alike(one_step(True, device), one_step(False, device), one_step(False, "cpu", lucid.float64), "float32",
                what="accumulated and summed")
    # SkipNonFinite looks at the listed values
    c = nn.Embedding(5, 2, sparse=True, device=device)
    skip = optim.SkipNonFinite(optim.SGD(c.parameters(), lr=0.1))
    before = host(c.weight)
    c.weight.grad = lucid.sparse_coo_tensor([[1]], lucid.tensor([[float("nan"), 1.0]], device=device), (5, 2))
    skip.step()
    assert skip.skipped_steps == 1 and (host(c.weight) == before).all()
    # clip_grad_value_ clamps the listed values
    c.weight.grad = lucid.sparse_coo_tensor([[1, 3]], lucid.tensor([[5.0, -5.0], [0.5, 2.0]], device=device), (5, 2))
    nn.utils.clip_grad_value_(c.parameters(), 1.0)
    assert c.weight.grad.values().tolist() == [[1.0, -1.0], [0.5, 1.0]]
    # module conversions carry a sparse gradient along
    c.double()
    assert c.weight.grad.is_sparse and c.weight.grad.dtype is lucid.float64
    assert c.weight.grad.to_dense().tolist()[3] == [0.5, 1.0]


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 12), nnz=st.integers(0, 40), tail=st.sampled_from([(), (3,), (2, 2)]),
       seed=st.integers(0, 2**31 - 1), sort=st.booleans())
def test_coalesce_and_to_dense_equal_a_reference_on_every_backend(rows, nnz, tail, seed, sort):
    rng = np.random.default_rng(seed)
    index = rng.integers(0, rows, size=nnz)
    if sort:
        index = np.sort(index)
    values = dyadic(rng, (nnz,) + tail, np.float32)
    expected = np.zeros((rows,) + tail, np.float32)
    np.add.at(expected, index, values)
    devices = ["cpu"] + (["gpu"] if lucid.is_available("gpu") else [])
    for device in devices:
        g = lucid.sparse_coo_tensor(index[None, :], lucid.tensor(values, device=device), (rows,) + tail)
        c = g.coalesce()
        assert c.indices().tolist() == [sorted(set(index.tolist()))]
        np.testing.assert_array_equal(host(c.to_dense()), expected)
        np.testing.assert_array_equal(host(g.to_dense()), expected)
        np.testing.assert_array_equal(host(c.values()), expected[np.unique(index)])
