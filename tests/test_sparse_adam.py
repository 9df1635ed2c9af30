"""SparseAdam against its specification page (docs/spec/sparse_adam_page.txt) and torch.

The page: each step updates the moments and values of only the rows the gradient touches
(a row is a slice along dim 0; on dense gradients, one holding a nonzero value); every
element of a touched row is updated; one step count per parameter, advanced by every step
in which it has a gradient (an all-zero one too, which changes nothing else); ``maximize``
negates the touched rows.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from helpers import host, param, torch_or_skip
from tolerances import close
from trajectories import judge_exact, judge_recording

# a copy of ../shared/seeds/002_ee29e4dd45433aeb.txt, kept in the repository so the check always runs
PAGE = Path(__file__).resolve().parents[1] / "docs" / "spec" / "sparse_adam_page.txt"
DTYPE = {"cpu": ("float64", lucid.float64, np.float64), "gpu": ("float32", lucid.float32, np.float32)}


def row_grad(shape, rows, rng, dtype=np.float64):
    """A dense gradient whose nonzero rows are exactly ``rows`` (each row's elements all nonzero)."""
    g = np.zeros(shape, dtype)
    for r in rows:
        g[r] = rng.uniform(0.1, 1.0, shape[1:]) * rng.choice([-1, 1], shape[1:])
    return g


def snapshot(opt, p):
    s = opt.state.for_param(p) or {}
    return host(p), {k: (host(v) if isinstance(v, lucid.Tensor) else v) for k, v in s.items()}


# ----------------------------------------------------------------------------------------
# The page's examples
# ----------------------------------------------------------------------------------------

def _page_examples():
    """The page's example blocks: runs of non-blank lines that start with ``>>> ``."""
    blocks, current = [], []
    for line in PAGE.read_text().splitlines() + [""]:
        if current and line.strip():
            current.append(line.strip())
        elif line.startswith(">>> ") and ">>>" not in line[4:]:
            current = [line.strip()]
        elif current:
            blocks.append(current)
            current = []
    return blocks


def _doc_lines(obj):
    return "\n".join(line.strip() for line in (obj.__doc__ or "").splitlines())


def test_docstrings_carry_the_page_examples_verbatim():
    class_example, step_example = _page_examples()
    assert class_example[-2:] == ['>>> optimizer.state[0]["step"]', "1"]
    assert step_example[-1] == ">>> optimizer.step()"
    assert "\n".join(class_example) in _doc_lines(optim.SparseAdam)
    assert "\n".join(step_example) in _doc_lines(optim.SparseAdam.step)


def test_page_example_1_touches_rows_0_and_2_and_counts_one_step():
    embedding = nn.Embedding(4, 2)
    optimizer = optim.SparseAdam(embedding.parameters(), lr=0.1)
    before = embedding.weight.detach().clone()
    embedding(lucid.tensor([0, 2])).sum().backward()
    optimizer.step()
    assert (embedding.weight != before).any(dim=1).tolist() == [True, False, True, False]
    assert optimizer.state[0]["step"] == 1
    # the first step moves each element of a touched row by lr (exactly, up to eps: 3e-8, a
    # fraction of an ulp of the parameters), to within JUDGED's floor of the float64 result
    moved = host(embedding.weight) - host(before)
    np.testing.assert_array_equal(moved[[1, 3]], 0.0)
    judge_exact(host(embedding.weight)[[0, 2]], host(before)[[0, 2]].astype(np.float64) - 0.1, "float32")


def test_page_example_2_runs_and_updates_rows_3_and_17_only():
    embedding = nn.Embedding(100, 8)
    optimizer = optim.SparseAdam(embedding.parameters(), lr=1e-3)
    before = host(embedding.weight)
    optimizer.zero_grad()
    loss = embedding(lucid.tensor([[3, 17, 3]])).sum()
    loss.backward()
    assert optimizer.step() is None
    changed = np.flatnonzero((host(embedding.weight) != before).any(axis=1))
    assert changed.tolist() == [3, 17]
    state = optimizer.state[0]
    assert state["step"] == 1 and sorted(state) == ["exp_avg", "exp_avg_sq", "step"]
    # row 3 was looked up twice: its gradient is 2 (torch's coalesce sums duplicates the same way)
    np.testing.assert_array_equal(host(state["exp_avg"])[3], np.full(8, 0.2, np.float32))
    np.testing.assert_array_equal(host(state["exp_avg"])[17], np.full(8, np.float32(1 - 0.9)))


def test_page_example_2_equals_torch_sparse_embedding():
    torch = torch_or_skip()
    weight = np.random.default_rng(0).normal(size=(100, 8))
    ours = nn.Embedding(100, 8)
    ours.weight.data = lucid.tensor(weight)
    theirs = torch.nn.Embedding(100, 8, sparse=True, dtype=torch.float64)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(weight))
    opt = optim.SparseAdam(ours.parameters(), lr=1e-3)
    topt = torch.optim.SparseAdam(theirs.parameters(), lr=1e-3)
    for batch in ([[3, 17, 3]], [[17, 5, 99]], [[3, 3, 3]]):
        opt.zero_grad()
        topt.zero_grad()
        (ours(lucid.tensor(batch)) ** 2).sum().backward()
        (theirs(torch.tensor(batch)) ** 2).sum().backward()
        opt.step()
        topt.step()
        close(host(ours.weight), theirs.weight.detach().numpy(), "float64")
        close(host(opt.state[0]["exp_avg_sq"]), topt.state[theirs.weight]["exp_avg_sq"].numpy(), "float64")


# ----------------------------------------------------------------------------------------
# The formula, closed form
# ----------------------------------------------------------------------------------------

def test_one_step_equals_the_page_formula(device):
    """On every device: a touched row holding a zero element is a touched row."""
    name, dtype, np_dtype = DTYPE[device]
    lr, (b1, b2), eps = 0.01, (0.8, 0.95), 1e-3
    theta = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    g = np.array([[0.3, -0.2, 0.0], [0.0, 0.0, 0.0]])  # row 0 touched (with a zero element), row 1 not
    p = param(theta, device, dtype)
    opt = optim.SparseAdam([p], lr=lr, betas=(b1, b2), eps=eps)
    p.grad = lucid.tensor(g.astype(np_dtype), device=device)
    opt.step()
    m = (1 - b1) * g[0]
    v = (1 - b2) * g[0] ** 2
    expected = theta.copy()
    expected[0] = theta[0] - lr * math.sqrt(1 - b2) / (1 - b1) * m / (np.sqrt(v) + eps)
    np.testing.assert_array_equal(host(p)[1], theta[1])  # untouched
    judge_exact(host(p), expected, name)
    judge_exact(host(opt.state[0]["exp_avg"])[0], m, name)
    judge_exact(host(opt.state[0]["exp_avg_sq"])[0], v, name)


def test_two_steps_use_the_parameters_step_count_in_the_bias_correction():
    lr, (b1, b2), eps = 0.05, (0.9, 0.999), 1e-8
    theta = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    g1 = np.array([[0.5, -0.5], [0.0, 0.0], [0.0, 0.0]])  # step 1: row 0 only
    g2 = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, -2.0]])  # step 2: row 2 first touched, at t = 2
    p = param(theta)
    opt = optim.SparseAdam([p], lr=lr, eps=eps)
    for g in (g1, g2):
        p.grad = lucid.tensor(g)
        opt.step()
    expected = theta.copy()
    m0, v0 = (1 - b1) * g1[0], (1 - b2) * g1[0] ** 2
    expected[0] -= lr * math.sqrt(1 - b2) / (1 - b1) * m0 / (np.sqrt(v0) + eps)
    m2, v2 = (1 - b1) * g2[2], (1 - b2) * g2[2] ** 2
    expected[2] -= lr * math.sqrt(1 - b2**2) / (1 - b1**2) * m2 / (np.sqrt(v2) + eps)
    close(host(p), expected, "float64")
    # a first update at t = 2 is smaller than lr (0.0744 of 0.1 in the notes' example)
    assert abs(expected[2, 0] - theta[2, 0]) < lr
    assert opt.state[0]["step"] == 2


# ----------------------------------------------------------------------------------------
# Laziness invariants
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(7,), (6, 3), (5, 2, 3)], ids=["1d", "2d", "3d"])
def test_untouched_rows_and_their_moments_stay_bit_identical(shape, device):
    _, dtype, np_dtype = DTYPE[device]
    rng = np.random.default_rng(1)
    p = param(rng.normal(size=shape), device, dtype)
    opt = optim.SparseAdam([p], lr=0.05)
    for step in range(1, 13):
        rows = sorted(rng.choice(shape[0], size=rng.integers(1, shape[0]), replace=False).tolist())
        before_p, before_s = snapshot(opt, p)
        p.grad = lucid.tensor(row_grad(shape, rows, rng, np_dtype), device=device)
        opt.step()
        after_p, after_s = snapshot(opt, p)
        untouched = [r for r in range(shape[0]) if r not in rows]
        np.testing.assert_array_equal(after_p[untouched], before_p[untouched])
        if before_s:
            for key in ("exp_avg", "exp_avg_sq"):
                np.testing.assert_array_equal(after_s[key][untouched], before_s[key][untouched])
        else:
            for key in ("exp_avg", "exp_avg_sq"):
                np.testing.assert_array_equal(after_s[key][untouched], 0)
        # touched rows move (every element here has a nonzero gradient)
        assert (after_p[rows] != before_p[rows]).all()
        assert after_s["step"] == step


def test_every_element_of_a_touched_row_is_updated_even_where_its_gradient_is_zero(device):
    name, dtype, _ = DTYPE[device]
    b1, b2 = 0.9, 0.999
    p = param([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device, dtype)
    opt = optim.SparseAdam([p], lr=0.1)
    p.grad = lucid.tensor([[0.5, 0.5, 0.5], [0.0, 0.0, 0.0]], dtype=dtype, device=device)
    opt.step()
    m1, v1 = host(opt.state[0]["exp_avg"]).copy(), host(opt.state[0]["exp_avg_sq"]).copy()
    before = host(p)
    # row 0 touched through element 1 only
    p.grad = lucid.tensor([[0.0, 0.7, 0.0], [0.0, 0.0, 0.0]], dtype=dtype, device=device)
    opt.step()
    m2, v2, after = host(opt.state[0]["exp_avg"]), host(opt.state[0]["exp_avg_sq"]), host(p)
    # the zero-gradient elements of the touched row decay their moments and still move
    judge_exact(m2[0, [0, 2]], b1 * m1[0, [0, 2]].astype(np.float64), name)
    judge_exact(v2[0, [0, 2]], b2 * v1[0, [0, 2]].astype(np.float64), name)
    assert (after[0] != before[0]).all()
    np.testing.assert_array_equal(after[1], before[1])
    np.testing.assert_array_equal(m2[1], 0.0)


def test_a_looked_up_row_with_an_exactly_zero_gradient_is_left_alone():
    # the page's Notes: on dense gradients such a row is untouched (torch, given the row in
    # a sparse gradient, would decay its moments)
    p = param([[1.0, 2.0], [3.0, 4.0]])
    opt = optim.SparseAdam([p], lr=0.1)
    p.grad = lucid.tensor([[1.0, 1.0], [1.0, 1.0]])
    opt.step()
    before_p, before_s = snapshot(opt, p)
    p.grad = lucid.tensor([[0.0, 0.0], [2.0, 2.0]])
    opt.step()
    after_p, after_s = snapshot(opt, p)
    np.testing.assert_array_equal(after_p[0], before_p[0])
    np.testing.assert_array_equal(after_s["exp_avg"][0], before_s["exp_avg"][0])
    np.testing.assert_array_equal(after_s["exp_avg_sq"][0], before_s["exp_avg_sq"][0])


def test_an_all_zero_gradient_advances_the_count_and_changes_nothing_else(device):
    _, dtype, np_dtype = DTYPE[device]
    rng = np.random.default_rng(2)
    p = param(rng.normal(size=(4, 3)), device, dtype)
    opt = optim.SparseAdam([p], lr=0.1)
    p.grad = lucid.tensor(row_grad((4, 3), [1, 3], rng, np_dtype), device=device)
    opt.step()
    before_p, before_s = snapshot(opt, p)
    p.grad = lucid.zeros(4, 3, dtype=dtype, device=device)
    opt.step()
    after_p, after_s = snapshot(opt, p)
    assert after_s["step"] == before_s["step"] + 1 == 2
    np.testing.assert_array_equal(after_p, before_p)
    for key in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_array_equal(after_s[key], before_s[key])


def test_an_all_zero_first_gradient_creates_state_and_counts(device):
    p = param([[1.0, 2.0]], device)
    opt = optim.SparseAdam([p])
    p.grad = lucid.zeros(1, 2, device=device)
    opt.step()
    assert opt.state[0]["step"] == 1
    np.testing.assert_array_equal(host(p), np.array([[1.0, 2.0]], np.float32))


def test_a_none_gradient_does_not_advance_the_count(device):
    a, b = param([[1.0], [2.0]], device), param([3.0, 4.0], device)
    opt = optim.SparseAdam([a, b], lr=0.1)
    counts = []
    for step in range(1, 7):
        a.grad = lucid.tensor([[1.0], [0.0]], device=device)
        b.grad = lucid.tensor([1.0, 1.0], device=device) if step % 3 == 0 else None
        opt.step()
        counts.append((opt.state[0]["step"], opt.state[1]["step"] if 1 in opt.state else None))
    assert counts == [(1, None), (2, None), (3, 1), (4, 1), (5, 1), (6, 2)]


def test_counts_are_per_parameter_python_ints():
    a, b = param([[1.0, 1.0]]), param([[2.0], [3.0]])
    opt = optim.SparseAdam([{"params": [a]}, {"params": [b], "lr": 0.5}])
    a.grad = lucid.tensor([[1.0, 0.0]])
    opt.step()
    b.grad = lucid.tensor([[0.0], [1.0]])
    opt.step()
    assert (opt.state[0]["step"], opt.state[1]["step"]) == (2, 1)
    assert type(opt.state[0]["step"]) is int and type(opt.state_dict()["state"][1]["step"]) is int


@pytest.mark.parametrize("shape", [(6,), (5, 3), (4, 2, 2)], ids=["1d", "2d", "3d"])
def test_maximize_equals_minimising_the_negated_objective(shape, device):
    _, dtype, np_dtype = DTYPE[device]
    rng = np.random.default_rng(5)
    start = rng.normal(size=shape)
    grads = [row_grad(shape, sorted(rng.choice(shape[0], 2, replace=False).tolist()), rng, np_dtype)
             for _ in range(8)]
    runs = []
    for maximize in (True, False):
        p = param(start, device, dtype)
        opt = optim.SparseAdam([p], lr=0.03, maximize=maximize)
        trajectory = []
        for g in grads:
            p.grad = lucid.tensor(g if maximize else -g, device=device)
            opt.step()
            trajectory.append(snapshot(opt, p))
        runs.append(trajectory)
    for (pa, sa), (pb, sb) in zip(*runs):
        np.testing.assert_array_equal(pa, pb)
        for key in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_array_equal(sa[key], sb[key])


def test_maximize_moves_touched_rows_uphill_only():
    p = param([[0.0, 0.0], [0.0, 0.0]])
    opt = optim.SparseAdam([p], lr=0.1, maximize=True)
    p.grad = lucid.tensor([[1.0, -1.0], [0.0, 0.0]])
    opt.step()
    after = host(p)
    assert after[0, 0] > 0 > after[0, 1]
    np.testing.assert_array_equal(after[1], 0.0)


# ----------------------------------------------------------------------------------------
# Against torch's SparseAdam fed the equivalent sparse gradient
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("maximize", [False, True])
def test_agrees_with_torch_on_an_embedding_like_problem(maximize, device):
    """30 steps against torch's SparseAdam fed the same rows: float64 to 1e-12; float32 (MLX)
    judged step by step against torch's float64 run from the same float32 values, torch's
    float32 run the ceiling. Step counts and which parameters have state: exactly torch's."""
    torch = torch_or_skip()
    dtype_name, dtype, np_dtype = DTYPE[device]
    rng = np.random.default_rng(9)
    shapes = [(20,), (12, 4), (8, 3, 2)]
    starts = [rng.normal(size=s).astype(np_dtype) for s in shapes]
    ours = [param(s, device, dtype) for s in starts]
    kwargs = dict(lr=0.02, betas=(0.85, 0.99), eps=1e-6, maximize=maximize)
    opt = optim.SparseAdam([{"params": ours[:2]}, {"params": ours[2:], "lr": 0.05}], **kwargs)
    # torch's run in the same dtype, and (for float32) its float64 run: the truth
    torch_dtypes = [np_dtype] + ([np.float64] if np_dtype == np.float32 else [])
    theirs = {d: [torch.nn.Parameter(torch.tensor(s.astype(d))) for s in starts] for d in torch_dtypes}
    topts = {d: torch.optim.SparseAdam([{"params": t[:2]}, {"params": t[2:], "lr": 0.05}], **kwargs)
             for d, t in theirs.items()}
    runs = {who: {} for who in ["lucid", *torch_dtypes]}

    def record(who, i, key, value):
        runs[who].setdefault((i, key), []).append(value)

    for step in range(1, 31):
        for i, (p, shape) in enumerate(zip(ours, shapes)):
            if step % 7 == i:  # now and then a parameter has no gradient at all
                p.grad = None
                for t in theirs.values():
                    t[i].grad = None
                continue
            if step % 10 == 0:
                rows = []  # an all-zero gradient: the count advances, nothing else moves
            else:
                rows = sorted(rng.choice(shape[0], size=rng.integers(1, max(2, shape[0] // 2)), replace=False))
            g = row_grad(shape, rows, rng, np_dtype)
            p.grad = lucid.tensor(g, device=device)
            index = torch.tensor([list(rows)], dtype=torch.int64).reshape(1, len(rows))
            for d, t in theirs.items():
                values = torch.tensor(g[list(rows)].astype(d)).reshape(len(rows), *shape[1:])
                t[i].grad = torch.sparse_coo_tensor(index, values, shape, check_invariants=True)
        opt.step()
        for topt in topts.values():
            topt.step()
        for i, p in enumerate(ours):
            tp = theirs[np_dtype][i]
            record("lucid", i, "p", host(p))
            for d, t in theirs.items():
                record(d, i, "p", t[i].detach().numpy().copy())
            if tp in topts[np_dtype].state:
                assert opt.state[i]["step"] == topts[np_dtype].state[tp]["step"]
                for key in ("exp_avg", "exp_avg_sq"):
                    record("lucid", i, key, host(opt.state[i][key]))
                    for d, t in theirs.items():
                        record(d, i, key, topts[d].state[t[i]][key].numpy().copy())
            else:
                assert i not in opt.state
    expected = {f"{key}{i}": np.stack(v) for (i, key), v in runs[np_dtype].items()}
    if np_dtype == np.float32:
        expected.update({f"truth.{key}{i}": np.stack(v) for (i, key), v in runs[np.float64].items()})
    # a state's run starts at its parameter's first step; the runs are judged from there
    judge_recording({f"{key}{i}": np.stack(v) for (i, key), v in runs["lucid"].items()}, expected, runs=True,
                    what=f"{dtype_name} on {device}")


# ----------------------------------------------------------------------------------------
# Construction
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [{"lr": 0.0}, {"eps": 0.0}, {"lr": -1e-3}, {"eps": -1.0}],
                         ids=["lr=0", "eps=0", "lr<0", "eps<0"])
def test_lr_and_eps_must_be_strictly_positive_like_torch(kwargs):
    torch = torch_or_skip()
    with pytest.raises(ValueError) as mine:
        optim.SparseAdam([param([1.0])], **kwargs)
    with pytest.raises(ValueError) as theirs:
        torch.optim.SparseAdam([torch.nn.Parameter(torch.ones(1))], **kwargs)
    assert str(mine.value) == str(theirs.value)


def test_defaults_and_group_keys_are_the_pages():
    opt = optim.SparseAdam([param([1.0])])
    assert opt.defaults == {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "maximize": False}
    assert sorted(opt.param_groups[0]) == ["betas", "eps", "lr", "maximize", "params"]


def test_invalid_lr_in_a_loaded_group_is_rejected_too():
    p = param([1.0])
    opt = optim.SparseAdam([p], lr=0.1)
    saved = opt.state_dict()
    saved["param_groups"][0]["lr"] = 0.0
    with pytest.raises(ValueError, match="Invalid learning rate: 0.0"):
        opt.load_state_dict(saved)
    assert opt.param_groups[0]["lr"] == 0.1


def test_a_warmup_schedule_starting_at_zero_is_accepted_and_its_first_update_changes_nothing():
    from lucid.optim.schedules import cosine, warmup

    table = param([[1.0, 2.0], [3.0, 4.0]])
    opt = optim.SparseAdam([table], lr=warmup(2, cosine(0.1, 10)))
    table.grad = lucid.tensor([[1.0, 1.0], [0.0, 0.0]])
    opt.step()
    assert table.tolist() == [[1.0, 2.0], [3.0, 4.0]] and opt.state[0]["step"] == 1
    table.grad = lucid.tensor([[1.0, 1.0], [0.0, 0.0]])
    opt.step()  # lr 0.05 now: row 0 moves by lr * sqrt(1 - b2**2) / (1 - b1**2) * m / (sqrt(v) + eps)
    b1, b2 = 0.9, 0.999
    m, v = (1 - b1) * (1 + b1), (1 - b2) * (1 + b2)
    judge_exact(host(table)[0], np.array([1.0, 2.0]) - 0.05 * math.sqrt(1 - b2**2) / (1 - b1**2) * m / (math.sqrt(v) + 1e-8),
                "float32")
    with pytest.raises(ValueError, match="Invalid learning rate: 0.0"):
        optim.SparseAdam([table], lr=0.0)  # a number lr stays strictly positive, as torch
