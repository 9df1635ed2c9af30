"""``lucid.finfo``: torch.finfo's machine limits, computed without an array library."""

from __future__ import annotations

import pytest

import lucid

torch = pytest.importorskip("torch")

PAIRS = [(lucid.float16, torch.float16), (lucid.float32, torch.float32), (lucid.float64, torch.float64)]


@pytest.mark.parametrize("dtype, reference", PAIRS, ids=lambda d: getattr(d, "name", None))
def test_finfo_matches_torch(dtype, reference):
    ours, theirs = lucid.finfo(dtype), torch.finfo(reference)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, name) == getattr(theirs, name), name


def test_finfo_defaults_to_float32():
    assert lucid.finfo().eps == torch.finfo().eps


@pytest.mark.parametrize("dtype", [lucid.int64, lucid.bool, "float32"])
def test_finfo_refuses_what_is_not_a_floating_dtype(dtype):
    with pytest.raises(TypeError):
        lucid.finfo(dtype)
