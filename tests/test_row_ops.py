"""The public row operations the sparse optimizers use: ``Tensor.index_copy_``,
``Tensor.nonzero_rows``, ``dense.add_(sparse, alpha=)`` and ``lucid.eval`` of a sparse tensor,
against torch 2.13 and closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def _torch():
    return pytest.importorskip("torch")


def test_index_copy_writes_the_named_rows_only_as_torch(device):
    torch = _torch()
    rng = np.random.default_rng(0)
    table, rows, source = rng.standard_normal((5, 3)), np.array([4, 1]), rng.standard_normal((2, 3))
    x = lucid.tensor(table, device=device)
    version = x._version
    out = x.index_copy_(0, lucid.tensor(rows, device=device), lucid.tensor(source, device=device))
    expected = torch.tensor(table).index_copy_(0, torch.tensor(rows), torch.tensor(source)).numpy()
    assert out is x and x._version == version + 1
    np.testing.assert_array_equal(x.numpy(), expected)  # copies, no arithmetic


def test_index_copy_along_dim_1(device):
    x = lucid.zeros(2, 3, device=device)
    x.index_copy_(1, lucid.tensor([2], device=device), lucid.tensor([[1.0], [2.0]], device=device))
    assert x.tolist() == [[0.0, 0.0, 1.0], [0.0, 0.0, 2.0]]


@pytest.mark.parametrize("bad, error", [
    (lambda x: x.index_copy_(0, lucid.tensor([3]), lucid.ones(1, 2)), IndexError),
    (lambda x: x.index_copy_(0, lucid.tensor([0]), lucid.ones(2, 2)), RuntimeError),
    (lambda x: x.index_copy_(0, lucid.tensor([0]), lucid.ones(1, 2, dtype=lucid.float64)), RuntimeError),
    (lambda x: x.index_copy_(0, lucid.tensor([0.0]), lucid.ones(1, 2)), RuntimeError),
    (lambda x: x.index_copy_(0, lucid.tensor([0]), [[1.0, 1.0]]), TypeError),
])
def test_index_copy_refuses_bad_input_and_changes_nothing(bad, error):
    x = lucid.zeros(3, 2)
    with pytest.raises(error):
        bad(x)
    assert x.tolist() == [[0.0, 0.0]] * 3


def test_nonzero_rows_finds_rows_with_a_nonzero_value(device):
    x = lucid.tensor([[0.0, 0.0], [0.0, -1.0], [-0.0, 0.0], [2.0, 0.0], [float("nan"), 0.0]], device=device)
    assert x.nonzero_rows().tolist() == [1, 3, 4]
    assert x.nonzero_rows().dtype is lucid.int64
    assert lucid.zeros(0, 3, device=device).nonzero_rows().tolist() == []
    assert lucid.tensor(2.0, device=device).nonzero_rows().tolist() == [0]


def test_dense_add_sparse_adds_each_listed_row_as_torch(device):
    torch = _torch()
    rng = np.random.default_rng(1)
    table, rows, values = rng.standard_normal((6, 2)), np.array([[4, 0, 4, 2]]), rng.standard_normal((4, 2))
    x = lucid.tensor(table, device=device)
    x.add_(lucid.sparse_coo_tensor(rows, values, (6, 2), device=device), alpha=-0.5)
    expected = torch.tensor(table).add_(torch.sparse_coo_tensor(rows, values, (6, 2)), alpha=-0.5).numpy()
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-15, atol=0)
    assert x.numpy()[[1, 3, 5]].tolist() == table[[1, 3, 5]].tolist()  # rows not listed: untouched


def test_dense_add_sparse_refuses_another_shape():
    x = lucid.zeros(3, 2)
    with pytest.raises(RuntimeError, match="sizes to match"):
        x.add_(lucid.sparse_coo_tensor([[0]], [[1.0, 1.0, 1.0]], (1, 3)))
    assert x.tolist() == [[0.0, 0.0]] * 3


def test_eval_takes_sparse_tensors(device):
    g = lucid.sparse_coo_tensor([[1, 1]], [[1.0], [2.0]], (3, 1), device=device) * 2
    lucid.eval(g, [g], {"g": g})
    assert g.to_dense().tolist() == [[0.0], [6.0], [0.0]]
