"""SOAP beyond its golden runs: what makes its parity independent of the LAPACK build.

An eigenvector is unique only up to its sign, and those of a repeated eigenvalue only up to a
rotation within their eigenspace; which one comes back is the LAPACK build's choice. SOAP's
update does not depend on the signs (each basis is applied forward and back around an
elementwise division by a sign-free second moment), nor does its QR refresh (power iteration
from a basis with flipped columns gives the QR of a matrix with flipped columns: the same Q):
checked here exactly, with lucid's canonical signs and without. Where a first statistic
has a repeated eigenvalue (a vector's ``g g^T``, a matrix's on its longer side), the basis is
the build's choice, and the reference is compared with lucid's first basis given to it. The
golden cases (tests/optim_registry.py) avoid repeated eigenvalues, and are replayed here in
float64 on the "gpu" device too (MLX's decompositions, on its CPU stream).
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid.optim import soap
from optim_cases import load_golden
from optim_registry import BY_NAME
from test_optim_parity import _recorded, run_lucid
from tolerances import PARITY, SOAP_FLOAT64, close

SOAP_CASES = BY_NAME["SOAP"].cases


def _params(shapes, device="cpu", seed=0):
    rng = np.random.default_rng(seed)
    return [nn.Parameter(lucid.tensor(rng.standard_normal(s), dtype=lucid.float64, device=device)) for s in shapes]


def _gradient(param, step, index):
    noise = np.random.default_rng([1, step, index]).standard_normal(param.shape) * 0.1
    return np.asarray(param.detach()) * 0.5 + noise


def _run(params, optimizer, steps, flip_at=None, device="cpu"):
    """The parameters after each step; at step ``flip_at``, the sign of every other column of
    each basis flipped first."""
    out = []
    for step in range(1, steps + 1):
        if step == flip_at:
            for state in optimizer.state.values():
                for key in [k for k in state if k.startswith("Q")]:
                    flips = lucid.tensor(np.where(np.arange(state[key].shape[1]) % 2, -1.0, 1.0), device=device)
                    state[key] = state[key] * flips
        for i, p in enumerate(params):
            p.grad = lucid.tensor(_gradient(p, step, i), device=device)
        optimizer.step()
        out.append([np.asarray(p.detach()).copy() for p in params])
    return out


@pytest.mark.parametrize("canonical", [True, False], ids=["canonical-signs", "lapack-signs"])
def test_the_update_does_not_depend_on_the_eigenvectors_signs(monkeypatch, canonical):
    """Flipping basis columns at step 5 changes no parameter at any step, through two refreshes:
    bit for bit, as negation is exact."""
    if not canonical:
        monkeypatch.setattr(soap, "signed", lambda basis: basis)
    kwargs = dict(lr=0.01, precondition_frequency=4, precondition_1d=True)
    shapes = ((4, 3), (3,), (2, 3, 2))
    baseline = _run(p := _params(shapes), first := optim.SOAP(p, **kwargs), 12)
    flipped = _run(q := _params(shapes), second := optim.SOAP(q, **kwargs), 12, flip_at=5)
    for step, (want, got) in enumerate(zip(baseline, flipped), 1):
        for a, b in zip(want, got):
            np.testing.assert_array_equal(b, a, err_msg=f"step {step}")
    assert not np.array_equal(baseline[0][0], baseline[-1][0])  # the runs moved
    # the refresh at the end of step 5 forgets the flips: Householder QR of a matrix with flipped
    # columns gives the same Q (its reflectors do not change; R takes the signs)
    for key in ("Q0", "Q1"):
        close(np.asarray(second.state[0][key]), np.asarray(first.state[0][key]), "float64")


def test_bases_have_canonical_signs():
    p = _params(((4, 3),))
    optimizer = optim.SOAP(p, lr=0.01, precondition_frequency=2)
    _run(p, optimizer, 5)
    for key in ("Q0", "Q1"):
        basis = np.asarray(optimizer.state[0][key])
        close(basis.T @ basis, np.eye(basis.shape[1]), "float64", table={"float64": (0.0, 1e-14)})
        assert (basis[np.abs(basis).argmax(axis=0), np.arange(basis.shape[1])] > 0).all()


def test_repeated_eigenvalues_against_the_reference_given_lucids_first_basis():
    """A (6, 2) matrix and a vector of 5 (factored): their first statistics have 4 and 3 zero
    eigenvalues, whose eigenvectors are any basis of their eigenspace. Given lucid's, the
    reference follows lucid over 60 steps (5 refreshes) at PARITY."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("pytorch_optimizer")
    from torch_reference import soap_qr_in_param_dtype, soap_state

    from pytorch_optimizer import SOAP

    shapes, kwargs = ((6, 2), (5,)), dict(lr=0.01, precondition_frequency=10, precondition_1d=True)
    ours = _params(shapes)
    theirs = [torch.from_numpy(np.asarray(p.detach()).copy()).requires_grad_() for p in ours]
    mine, reference = optim.SOAP(ours, **kwargs), SOAP(theirs, **kwargs)
    for step in range(1, 61):
        for i, (a, b) in enumerate(zip(ours, theirs)):
            g = _gradient(a, step, i)
            a.grad, b.grad = lucid.tensor(g), torch.from_numpy(g)
        mine.step()
        with soap_qr_in_param_dtype():
            reference.step()
        if step == 1:  # the first bases: lucid's, for the reference too
            for i, b in enumerate(theirs):
                bases = reference.state[b]["Q"]
                reference.state[b]["Q"] = [torch.from_numpy(np.asarray(mine.state[i][f"Q{k}"]).copy())
                                           if len(q) else q for k, q in enumerate(bases)]
        for i, (a, b) in enumerate(zip(ours, theirs)):
            close(np.asarray(a.detach()), b.detach().numpy(), "float64", PARITY)
            for key, value in soap_state(reference.state[b]).items():
                close(np.asarray(mine.state[i][key]), value.numpy(), "float64", PARITY)


@pytest.mark.parametrize("case", SOAP_CASES, ids=[c.name for c in SOAP_CASES])
def test_golden_float64_on_the_gpu_device(case):
    """The golden float64 runs on MLX (its float64 eigh and QR, on its CPU stream), every
    parameter and state entry after every step (SOAP_FLOAT64: its matrix products round otherwise)."""
    if not lucid.is_available("gpu"):
        pytest.skip("MLX is not installed")
    expected = load_golden(case, "float64")
    got = _recorded(case, *run_lucid(case, "float64", "gpu"), expected)
    for key, want in expected.items():
        if key.endswith(".step"):
            np.testing.assert_array_equal(got[key], want)
        else:
            close(got[key], want, "float64", SOAP_FLOAT64)


def test_merge_dims_into_one_and_vectors():
    """With merge_dims, a (2, 3) param whose dimensions merge into one is preconditioned as a
    vector of 6 (pytorch-optimizer's reshape to [1] fails), and a vector is not merged: its run
    is the one without merge_dims."""
    group = {"merge_dims": True, "max_precondition_dim": 100, "data_format": "channels_first",
             "precondition_1d": False}
    assert soap.preconditioned_shape(lucid.zeros(2, 3), group) == (6,)
    assert soap.preconditioned_dims(lucid.zeros(2, 3), group) == [(0, 6)]
    assert soap.preconditioned_dims(lucid.zeros(5), {**group, "precondition_1d": True}) == [(0, 5)]
    assert soap.merge_small_dims((1, 2, 512, 1, 2048, 1, 3, 4), 1024) == (1024, 2048, 12)  # the reference's examples
    assert soap.merge_small_dims((1, 2, 768, 1, 2048), 1024) == (2, 768, 2048)
    p = _params(((2, 3),))
    optimizer = optim.SOAP(p, lr=0.01, merge_dims=True, max_precondition_dim=100)
    _run(p, optimizer, 3)
    assert {k: tuple(v.shape) for k, v in optimizer.state[0].items()} == {
        "exp_avg": (2, 3), "exp_avg_sq": (2, 3), "GG0": (6, 6), "Q0": (6, 6)}
    runs = []
    for merge in (True, False):
        q = _params(((5,),))
        runs.append(_run(q, optim.SOAP(q, lr=0.01, merge_dims=merge, precondition_1d=True), 12))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a[0], b[0])
