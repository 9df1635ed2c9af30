"""eigh and qr (lucid._ops.linalg) against torch.linalg, on both devices.

An eigenvector is unique only up to its sign (and, for a repeated eigenvalue, up to a rotation
within its eigenspace), and a QR factor's columns up to theirs: which one comes back is the
LAPACK build's choice, which differs between NumPy's, MLX's and torch's. So the tests compare
what does not depend on it: eigenvalues, the projector ``v v^T`` of each (simple) eigenvalue,
``Q`` and ``R`` with the signs of ``R``'s diagonal made positive; and, where an eigenvalue
repeats, the decomposition's reconstruction and orthogonality. float64 is held to torch's at
PARITY; float32 is judged against the float64 truth with torch's float32 error as the ceiling.
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid._ops.linalg import eigh, qr
from tolerances import close, judge

torch = pytest.importorskip("torch")

DTYPES = {"float64": (lucid.float64, torch.float64), "float32": (lucid.float32, torch.float32)}


def _symmetric(n, seed, batch=()):
    """A symmetric matrix with eigenvalues 1..n (gaps of 1, so every eigenvector is well
    conditioned) in a random orthonormal basis."""
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((*batch, n, n)))
    return (basis * np.arange(1.0, n + 1)[..., None, :]) @ np.swapaxes(basis, -1, -2)


def _projectors(vectors):
    """``v v^T`` of each column: what an eigenvector is, whatever its sign."""
    return vectors[..., :, None, :] * vectors[..., None, :, :]


def _positive_diagonal(q, r):
    """``Q D, D R`` with ``D = sign(diag(R))``: the QR factors whatever each column's sign."""
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    return q * signs[..., None, :], r * signs[..., :, None]


def _check(mine, theirs, truth, dtype_name, what):
    for m, t, x, name in zip(mine, theirs, truth, ("first", "second")):
        judge(m, t, x, dtype_name, what=f"{what}: {name} factor")


@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(1,), (5,), (2, 3, 4)], ids=["1x1", "5x5", "batched"])
def test_eigh_against_torch(device, dtype_name, shape):
    batch, n = shape[:-1], shape[-1]
    a = _symmetric(n, seed=n, batch=batch).astype(DTYPES[dtype_name][0].name)
    w, v = eigh(lucid.tensor(a, device=device))
    tw, tv = torch.linalg.eigh(torch.from_numpy(a))
    xw, xv = np.linalg.eigh(a.astype(np.float64))
    assert w.dtype == v.dtype == DTYPES[dtype_name][0] and w.shape == shape and v.shape == (*shape, n)
    mine = (np.asarray(w), _projectors(np.asarray(v, dtype=np.float64)))
    theirs = (tw.numpy(), _projectors(tv.double().numpy()))
    if dtype_name == "float64":
        for m, t in zip(mine, theirs):
            close(m, t, "float64")
    else:
        _check(mine, theirs, (xw, _projectors(xv)), dtype_name, f"eigh {shape} on {device}")


@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 5), (2, 5, 4)], ids=["square", "tall", "wide", "batched"])
def test_qr_against_torch(device, dtype_name, shape):
    a = np.random.default_rng(len(shape) + shape[-1]).standard_normal(shape).astype(DTYPES[dtype_name][0].name)
    q, r = qr(lucid.tensor(a, device=device))
    tq, tr = torch.linalg.qr(torch.from_numpy(a))
    assert q.shape == tuple(tq.shape) and r.shape == tuple(tr.shape) and q.dtype == DTYPES[dtype_name][0]
    assert np.array_equal(np.triu(np.asarray(r)), np.asarray(r)), "R is upper triangular"
    mine = _positive_diagonal(np.asarray(q, dtype=np.float64), np.asarray(r, dtype=np.float64))
    theirs = _positive_diagonal(tq.double().numpy(), tr.double().numpy())
    if dtype_name == "float64":
        for m, t in zip(mine, theirs):
            close(m, t, "float64")
    else:
        truth = _positive_diagonal(*np.linalg.qr(a.astype(np.float64)))
        _check(mine, theirs, truth, dtype_name, f"qr {shape} on {device}")


def test_eigh_of_a_repeated_eigenvalue_is_an_eigenbasis(device):
    """A rank-1 matrix ``g g^T`` (SOAP's first statistics): the eigenvectors of its zero
    eigenvalue are any orthonormal basis of g's complement; whichever comes back, it
    reconstructs the matrix and is orthonormal, to float64 rounding."""
    g = np.random.default_rng(3).standard_normal(6)
    a = np.outer(g, g)
    w, v = (np.asarray(t) for t in eigh(lucid.tensor(a, device=device)))
    close(v @ np.diag(w) @ v.T, a, "float64", table={"float64": (1e-12, 1e-14)})
    close(v.T @ v, np.eye(6), "float64", table={"float64": (0.0, 1e-14)})
    close(w, np.linalg.eigvalsh(a), "float64", table={"float64": (1e-12, 1e-14)})


@pytest.mark.parametrize("fn,args,error,message", [
    (eigh, (3,), RuntimeError, "linalg.eigh: The input tensor A must have at least 2 dimensions."),
    (eigh, (3, 4), RuntimeError, "linalg.eigh: A must be batches of square matrices, but they are 3 by 4 matrices"),
    (qr, (3,), RuntimeError, "linalg.qr: The input tensor A must have at least 2 dimensions."),
])
def test_bad_shapes_raise_torchs_errors(fn, args, error, message):
    with pytest.raises(error, match=message):
        fn(lucid.ones(*args))
    with pytest.raises(error, match=message):
        getattr(torch.linalg, fn.__name__)(torch.ones(*args))


@pytest.mark.parametrize("fn", [eigh, qr])
def test_no_gradient_is_recorded_silently(fn):
    a = lucid.eye(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="no gradient"):
        fn(a)
    with lucid.no_grad():
        assert fn(a)[0].grad_fn is None


@pytest.mark.parametrize("fn", [eigh, qr])
@pytest.mark.parametrize("dtype", ["int64", "float16"])
def test_unsupported_dtypes_raise_torchs_errors(fn, dtype):
    with pytest.raises(Exception) as theirs:
        getattr(torch.linalg, fn.__name__)(torch.ones(3, 3, dtype=getattr(torch, dtype)))
    with pytest.raises(type(theirs.value), match=str(theirs.value).replace("(", r"\(").replace(")", r"\)")):
        fn(lucid.ones(3, 3, dtype=getattr(lucid, dtype)))
