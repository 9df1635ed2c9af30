"""The torch names real scripts use (issue 24): against torch, live, on both devices.

``multinomial`` and ``bernoulli`` draw from lucid's own generator, so their draws are judged
by their distribution (chi-square at a fixed seed) and their invariants (no repeats without
replacement, zero weights never drawn); ``roll``, ``as_tensor``, the aliases, the deprecated
scalar-first overloads and the in-place shape methods by values, errors and versions equal
to torch's. Their gradients are op_cases.py's (test_gradcheck.py, test_backends.py).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lucid
from tolerances import close
from conftest import DEVICES
from helpers import raised
from lucid import _deprecation

torch = pytest.importorskip("torch")


def _both(values, device, dtype="float32", **kwargs):
    return (lucid.tensor(values, dtype=getattr(lucid, dtype), device=device, **kwargs),
            torch.tensor(values, dtype=getattr(torch, dtype), **kwargs))


def _same_error(ours, theirs):
    mine, reference = raised(ours), raised(theirs)
    assert reference is not None and mine is not None, (mine, reference)
    assert (type(mine), str(mine)) == (type(reference), str(reference))


def _chi_square_bound(categories: int) -> float:
    """The 99.9% quantile of chi-square with ``categories - 1`` degrees of freedom (Wilson-Hilferty)."""
    df = categories - 1
    return df * (1 - 2 / (9 * df) + 3.09 * math.sqrt(2 / (9 * df))) ** 3


def _chi_square(counts, probs) -> float:
    expected = np.asarray(probs) / np.sum(probs) * np.sum(counts)
    return float(np.sum((np.asarray(counts) - expected) ** 2 / expected))


# --- multinomial ---------------------------------------------------------------------------------

WEIGHTS = [0.1, 0.4, 0.0, 1.5, 0.5, 2.0]  # unnormalised, one zero


@pytest.mark.parametrize("device", DEVICES)
def test_multinomial_with_replacement_draws_the_distribution(device):
    lucid.manual_seed(0)
    weights = lucid.tensor([WEIGHTS, WEIGHTS[::-1]], dtype=lucid.float64, device=device)
    drawn = lucid.multinomial(weights, 20_000, replacement=True)
    assert drawn.shape == (2, 20_000) and drawn.dtype is lucid.int64 and drawn.device == device
    for row, probs in zip(drawn.cpu().numpy(), (WEIGHTS, WEIGHTS[::-1])):
        counts = np.bincount(row, minlength=len(probs))
        assert counts[np.asarray(probs) == 0].sum() == 0, "a zero weight was drawn"
        positive = np.asarray(probs) > 0
        assert _chi_square(counts[positive], np.asarray(probs)[positive]) < _chi_square_bound(int(positive.sum()))


@pytest.mark.parametrize("device", DEVICES)
def test_multinomial_without_replacement_never_repeats_and_draws_first_by_weight(device):
    lucid.manual_seed(1)
    weights = lucid.tensor(WEIGHTS, device=device).expand(4000, 6)
    drawn = lucid.multinomial(weights, 5).cpu().numpy()  # all five of positive weight
    assert drawn.shape == (4000, 5)
    assert all(sorted(row) == [0, 1, 3, 4, 5] for row in drawn.tolist())
    positive = np.asarray(WEIGHTS) > 0
    first = np.bincount(drawn[:, 0], minlength=6)[positive]  # the first draw follows the weights
    assert _chi_square(first, np.asarray(WEIGHTS)[positive]) < _chi_square_bound(5)
    # every category, once the positive ones are used up, as torch
    assert sorted(lucid.multinomial(lucid.tensor([0.0, 1.0, 0.0], device=device), 3).tolist()) == [0, 1, 2]


def test_multinomial_is_reproducible_and_the_same_on_both_devices():
    probs = [0.2, 0.3, 0.5]
    runs = []
    for device in DEVICES:
        if device == "gpu" and not lucid.is_available("gpu"):
            continue
        for replacement in (True, False):
            generator = lucid.Generator().manual_seed(7)
            runs.append((replacement, lucid.tensor(probs, device=device).multinomial(
                3, replacement, generator=generator).tolist()))
    assert runs[0::2] == [runs[0]] * len(runs[0::2]) and runs[1::2] == [runs[1]] * len(runs[1::2])
    lucid.manual_seed(3)
    first = lucid.multinomial(lucid.tensor(probs), 8, True).tolist()
    lucid.manual_seed(3)
    assert lucid.multinomial(lucid.tensor(probs), 8, True).tolist() == first


MULTINOMIAL_ERRORS = [
    ("3-d", lambda m: m.multinomial(m.ones(2, 2, 2), 1)),
    ("0-d", lambda m: m.multinomial(m.tensor(1.0), 1)),
    ("no samples", lambda m: m.multinomial(m.tensor([0.2, 0.8]), 0)),
    ("too many", lambda m: m.multinomial(m.tensor([0.2, 0.8]), 3)),
    ("no categories", lambda m: m.multinomial(m.zeros(2, 0), 1)),
    ("negative", lambda m: m.multinomial(m.tensor([-1.0, 1.0]), 1)),
    ("nan", lambda m: m.multinomial(m.tensor([float("nan"), 1.0]), 1, True)),
    ("inf", lambda m: m.multinomial(m.tensor([float("inf"), 1.0]), 1)),
    ("zero sum", lambda m: m.multinomial(m.tensor([[0.0, 1.0], [0.0, 0.0]]), 1, True)),
    ("integers", lambda m: m.multinomial(m.tensor([1, 2]), 1)),
    ("float count", lambda m: m.multinomial(m.tensor([0.2, 0.8]), 2.0)),
]


@pytest.mark.parametrize("name,call", MULTINOMIAL_ERRORS, ids=[n for n, _ in MULTINOMIAL_ERRORS])
def test_multinomial_refuses_what_torch_refuses(name, call):
    _same_error(lambda: call(lucid), lambda: call(torch))


# --- bernoulli -----------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_bernoulli_draws_each_probability(device):
    lucid.manual_seed(2)
    probs = lucid.tensor([0.0, 0.1, 0.5, 0.9, 1.0], dtype=lucid.float64, device=device)
    drawn = lucid.bernoulli(probs.expand(20_000, 5))
    assert drawn.dtype is lucid.float64 and drawn.device == device
    values = drawn.cpu().numpy()
    assert set(np.unique(values)) <= {0.0, 1.0}
    ones = values.sum(axis=0)
    assert ones[0] == 0 and ones[-1] == 20_000
    for p, count in zip((0.1, 0.5, 0.9), ones[1:4]):  # within 4.5 binomial deviations
        assert abs(count - 20_000 * p) < 4.5 * math.sqrt(20_000 * p * (1 - p))
    x = lucid.zeros(20_000, 2, device=device)
    assert x.bernoulli_(lucid.tensor([0.25, 1.0], device=device)) is x and x._version == 1
    assert abs(x[:, 0].sum().item() - 5000) < 4.5 * math.sqrt(20_000 * 0.25 * 0.75) and x[:, 1].sum().item() == 20_000
    assert abs(lucid.zeros(20_000, device=device).bernoulli(0.3).mean().item() - 0.3) < 0.015


def test_bernoulli_records_a_zero_gradient_as_torch():
    ours, theirs = _both([0.2, 0.7], "cpu", requires_grad=True)
    mine, reference = lucid.bernoulli(ours), torch.bernoulli(theirs)
    assert mine.requires_grad and reference.requires_grad
    (mine * 3).sum().backward()
    (reference * 3).sum().backward()
    assert ours.grad.tolist() == theirs.grad.tolist() == [0.0, 0.0]
    _same_error(lambda: lucid.ones(2, requires_grad=True).bernoulli_(0.5),
                lambda: torch.ones(2, requires_grad=True).bernoulli_(0.5))


BERNOULLI_ERRORS = [
    ("integers", lambda m: m.bernoulli(m.tensor([0, 1]))),
    ("below 0", lambda m: m.bernoulli(m.tensor([-0.5, 1.0]))),
    ("above 1", lambda m: m.bernoulli(m.tensor([1.5, 1.0]))),
    ("p above 1", lambda m: m.zeros(3).bernoulli_(1.5)),
    ("tensor p above 1", lambda m: m.zeros(3).bernoulli_(m.tensor([1.5, 1.0, 1.0]))),
    ("tensor p too wide", lambda m: m.zeros(3).bernoulli_(m.ones(2, 3))),
]


@pytest.mark.parametrize("name,call", BERNOULLI_ERRORS, ids=[n for n, _ in BERNOULLI_ERRORS])
def test_bernoulli_refuses_what_torch_refuses(name, call):
    mine, reference = raised(lambda: call(lucid)), raised(lambda: call(torch))
    assert type(mine) is type(reference)
    if name != "tensor p too wide":  # torch's wording of a broadcast failure is its expand's
        assert str(mine) == str(reference)


def test_bernoulli_of_integer_and_bool_tensors_keeps_their_dtype():
    for dtype in ("int64", "bool"):
        ours, theirs = _both([0, 0, 1], "cpu", dtype)
        assert ours.bernoulli_(1.0).tolist() == theirs.bernoulli_(1.0).tolist()
        assert ours.dtype is getattr(lucid, dtype)


# --- roll ----------------------------------------------------------------------------------------

ROLLS = [(1, None), (-7, None), (1, 0), (2, -1), ((1, -1), (0, 1)), ((1, 2), (1, 1)), ((0, 5), (0, 2))]


@pytest.mark.parametrize("device", DEVICES)
def test_roll_matches_torch(device):
    values = np.arange(24).reshape(2, 3, 4).tolist()
    ours, theirs = _both(values, device, "int64")
    for shifts, dims in ROLLS:
        assert ours.roll(shifts, dims).tolist() == torch.roll(theirs, shifts, dims).tolist(), (shifts, dims)
    assert lucid.roll(lucid.tensor(3.0, device=device), 1).tolist() == 3.0
    assert lucid.roll(lucid.zeros(0, device=device), 1).shape == (0,)
    rolled = lucid.roll(ours, 0, 0)
    rolled[0, 0, 0] = 99  # a copy, even when nothing moves
    assert ours[0, 0, 0].item() == 0


ROLL_ERRORS = [
    ("more shifts", lambda m, x: m.roll(x, (1, -1), (0,))),
    ("more dims", lambda m, x: m.roll(x, (1,), (0, 1))),
    ("no dims for two", lambda m, x: m.roll(x, (1, 1))),
    ("dim out of range", lambda m, x: m.roll(x, 1, 3)),
    ("no shifts", lambda m, x: m.roll(x, [], [])),
    ("float shift", lambda m, x: m.roll(x, 1.5)),
    ("0-d with a dim", lambda m, x: m.roll(x.sum(), 1, 0)),
]


@pytest.mark.parametrize("name,call", ROLL_ERRORS, ids=[n for n, _ in ROLL_ERRORS])
def test_roll_refuses_what_torch_refuses(name, call):
    ours, theirs = _both(np.zeros((2, 3, 4)).tolist(), "cpu")
    _same_error(lambda: call(lucid, ours), lambda: call(torch, theirs))


# --- as_tensor -----------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_as_tensor_copies_only_when_it_must(device):
    x = lucid.ones(2, device=device)
    assert lucid.as_tensor(x) is x and lucid.as_tensor(x, dtype=lucid.float32, device=device) is x
    converted = lucid.as_tensor(x, dtype=lucid.float64)
    assert converted is not x and converted.dtype is lucid.float64 and converted.device == device
    listed = lucid.as_tensor([[1, 2]], device=device)
    expected = torch.as_tensor([[1, 2]])
    assert listed.tolist() == expected.tolist() and listed.dtype is lucid.int64 and listed.device == device
    assert lucid.as_tensor(3.5).tolist() == torch.as_tensor(3.5).item()


def test_as_tensor_shares_a_numpy_arrays_memory_as_torch():
    array = np.arange(3.0)
    ours, theirs = lucid.as_tensor(array), torch.as_tensor(array)
    array[0] = 9.0
    assert ours.tolist() == theirs.tolist() == [9.0, 1.0, 2.0] and ours.dtype is lucid.float64
    as_float = lucid.as_tensor(array, dtype=lucid.float32)
    array[1] = 7.0
    assert as_float.tolist() == torch.as_tensor(array, dtype=torch.float32).tolist()[:1] + [1.0, 2.0]
    weights = lucid.ones(2, requires_grad=True)
    assert lucid.as_tensor(weights) is weights
    _same_error(lambda: lucid.as_tensor("a"), lambda: torch.as_tensor("a"))


# --- torch's aliases -----------------------------------------------------------------------------

FUNCTION_ALIASES = {
    "multiply": "mul", "subtract": "sub", "divide": "div", "true_divide": "div", "absolute": "abs",
    "negative": "neg", "clip": "clamp", "greater": "gt", "greater_equal": "ge", "less": "lt",
    "less_equal": "le", "not_equal": "ne", "concat": "cat", "concatenate": "cat", "swapdims": "transpose",
    "swapaxes": "transpose",
}


def _arguments(name, m, a, b):
    if name in ("absolute", "negative"):
        return (a,)
    if name == "clip":
        return (a, -0.5, 0.5)
    if name in ("concat", "concatenate"):
        return ([a, b],)
    if name in ("swapdims", "swapaxes"):
        return (a, 0, 1)
    return (a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_aliases_compute_what_torch_computes(device):
    values = [[-1.5, 0.25, 2.0], [0.75, -0.125, 3.0]]
    ours, theirs = _both(values, device)
    other, other_t = _both([[0.5, -2.0, 1.0], [0.75, 4.0, -1.0]], device)
    for alias, name in FUNCTION_ALIASES.items():
        assert getattr(lucid, alias) is not None and getattr(torch, alias) is not None
        mine = getattr(lucid, alias)(*_arguments(alias, lucid, ours, other))
        reference = getattr(torch, alias)(*_arguments(alias, torch, theirs, other_t))
        assert mine.tolist() == reference.tolist(), alias
        assert mine.tolist() == getattr(lucid, name)(*_arguments(alias, lucid, ours, other)).tolist()
        method = getattr(ours, alias, None)
        if alias not in ("concat", "concatenate"):
            assert method(*_arguments(alias, lucid, ours, other)[1:]).tolist() == reference.tolist(), alias
    for fn in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
        assert getattr(lucid, fn)(ours > 0, other > 0).tolist() == getattr(torch, fn)(theirs > 0, other_t > 0).tolist()
    assert lucid.logical_not(ours > 0).tolist() == torch.logical_not(theirs > 0).tolist()
    assert ours.ndimension() == 2 and ours.nelement() == 6


INPLACE_ALIASES = [("multiply_", (2.0,)), ("subtract_", (0.5,)), ("divide_", (4.0,)), ("true_divide_", (2.0,)),
                   ("absolute_", ()), ("negative_", ()), ("clip_", (-1.0, 1.0))]


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_aliases_write_into_self_as_torch(device):
    ours, theirs = _both([-1.5, 0.25, 2.0], device)
    for name, args in INPLACE_ALIASES:
        assert getattr(ours, name)(*args) is ours
        getattr(theirs, name)(*args)
        assert ours.tolist() == theirs.tolist(), name
    assert ours._version == theirs._version == len(INPLACE_ALIASES)


# --- the deprecated scalar-first overloads -------------------------------------------------------

DEPRECATED = [
    ("add_", lambda m, x, y, z: x.add_(-0.5, y)), ("sub_", lambda m, x, y, z: x.sub_(2, y)),
    ("add", lambda m, x, y, z: x.add(2, y)), ("sub", lambda m, x, y, z: x.sub(0.5, y)),
    ("torch.add", lambda m, x, y, z: m.add(x, 3, y)), ("torch.sub", lambda m, x, y, z: m.sub(x, 3, y)),
    ("addcmul_", lambda m, x, y, z: x.addcmul_(0.5, y, z)), ("addcdiv_", lambda m, x, y, z: x.addcdiv_(2, y, z)),
    ("addcmul", lambda m, x, y, z: x.addcmul(-1, y, z)), ("addcdiv", lambda m, x, y, z: x.addcdiv(0.25, y, z)),
    ("torch.addcmul", lambda m, x, y, z: m.addcmul(x, 2, y, z)),
    ("torch.addcdiv", lambda m, x, y, z: m.addcdiv(x, 2, y, z)),
]


@pytest.fixture
def fresh_warning(monkeypatch):
    """lucid's once-per-process flag as at the start of a process."""
    monkeypatch.setattr(_deprecation, "_warned", [False])


@pytest.mark.parametrize("device", DEVICES)
def test_deprecated_overloads_compute_torchs_values_and_warn_once(device, fresh_warning):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, call in DEPRECATED:
            x, y, z = (_both(v, device, "float64") for v in ([1.0, -2.0], [0.5, 3.0], [4.0, -0.25]))
            mine = call(lucid, x[0], y[0], z[0])
            reference = call(torch, x[1], y[1], z[1])
            assert mine.tolist() == reference.tolist(), name
            if name.endswith("_"):
                assert mine is x[0]
    ours = [w for w in caught if "Triggered internally" not in str(w.message)]  # torch's own may be there
    assert [w.category for w in ours] == [UserWarning], "torch warns once per process, for all of them"
    assert str(ours[0].message).startswith("This overload of add_ is deprecated:")


def _torch_text(call) -> str:
    """torch's warning for ``call()``, up to its C++ location (torch.set_warn_always lifts its
    once-per-process rule for the moment)."""
    before = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
    finally:
        torch.set_warn_always(before)
    (warning,) = caught
    assert warning.category is UserWarning
    return str(warning.message).split(" (Triggered internally")[0]


@pytest.mark.parametrize("name,call", DEPRECATED, ids=[n for n, _ in DEPRECATED])
def test_deprecated_overload_warns_torchs_text(name, call, fresh_warning):
    x, y, z = (_both(v, "cpu") for v in ([1.0, -2.0], [0.5, 3.0], [4.0, -0.25]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(lucid, x[0], y[0], z[0])
    assert len(caught) == 1 and caught[0].category is UserWarning
    assert str(caught[0].message) == _torch_text(lambda: call(torch, x[1], y[1], z[1]))


# --- the in-place shape methods ------------------------------------------------------------------

SHAPE_METHODS = [
    ("unsqueeze_", (0,)), ("unsqueeze_", (-1,)), ("squeeze_", ()), ("squeeze_", (0,)), ("squeeze_", ((0, 2),)),
    ("t_", ()), ("transpose_", (0, 2)), ("swapdims_", (1, 0)), ("swapaxes_", (-1, 0)),
]


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_shape_methods_change_the_tensor_itself_as_torch(device):
    for name, args in SHAPE_METHODS:
        values = np.arange(6.0).reshape((1, 6, 1) if name != "t_" else (2, 3)).tolist()
        ours, theirs = _both(values, device)
        view_ours, view_theirs = ours.view(ours.shape), theirs.view(theirs.shape)
        assert getattr(view_ours, name)(*args) is view_ours
        getattr(view_theirs, name)(*args)
        assert view_ours.shape == tuple(view_theirs.shape) and view_ours.tolist() == view_theirs.tolist(), name
        assert (view_ours._version, ours._version) == (view_theirs._version, theirs._version) == (1, 1), name
        assert ours.shape == tuple(theirs.shape)  # the tensor it views keeps its shape
        index = (0,) * view_ours.ndim
        view_ours[index] = 5.0  # still a view of the same storage
        view_theirs[index] = 5.0
        assert ours.tolist() == theirs.tolist(), name


def test_in_place_shape_methods_follow_torchs_autograd_rules():
    ours, theirs = _both([[1.0, 2.0, 3.0]], "cpu", requires_grad=True)
    _same_error(lambda: ours.unsqueeze_(0), lambda: theirs.unsqueeze_(0))
    assert ours.shape == (1, 3) and ours._version == 0  # refused: nothing changed
    with lucid.no_grad(), torch.no_grad():
        ours.t_(), theirs.t_()
    assert ours.shape == tuple(theirs.shape) == (3, 1) and ours.is_leaf and theirs.is_leaf
    assert ours.requires_grad and ours._version == theirs._version == 1
    _same_error(lambda: lucid.zeros(2, 3, 4).t_(), lambda: torch.zeros(2, 3, 4).t_())
    _same_error(lambda: lucid.zeros(2, 3).transpose_(0, 2), lambda: torch.zeros(2, 3).transpose_(0, 2))
    _same_error(lambda: lucid.zeros(2, 3).unsqueeze_(5), lambda: torch.zeros(2, 3).unsqueeze_(5))
    moved, moved_t = ours * 2, theirs * 2
    moved.squeeze_(1).unsqueeze_(0)  # the grad_fn becomes the view's, twice
    moved_t.squeeze_(1).unsqueeze_(0)
    saved = lucid.tensor([[1.0, -1.0, 2.0]])
    (moved * saved).sum().backward()
    (moved_t * torch.tensor([[1.0, -1.0, 2.0]])).sum().backward()
    assert ours.grad.tolist() == theirs.grad.tolist()


def test_an_in_place_reshape_makes_a_saved_tensor_stale_as_torch():
    ours, theirs = _both([1.0, 2.0], "cpu", requires_grad=True)
    hidden, hidden_t = ours * 1, theirs * 1
    out, out_t = (hidden * hidden).sum(), (hidden_t * hidden_t).sum()
    hidden.unsqueeze_(0)
    hidden_t.unsqueeze_(0)
    mine, reference = raised(out.backward), raised(out_t.backward)
    assert type(mine) is type(reference) is RuntimeError
    assert "modified by an inplace operation" in str(mine) and "modified by an inplace operation" in str(reference)


# --- more of the survey's names: select, diag, outer, prod, unique, random_, the device queries --

@pytest.mark.parametrize("device", DEVICES)
def test_integer_results_match_torch(device):
    values = [[3, 1, 2], [2, 3, 3]]
    ours, theirs = _both(values, device, "int64")
    assert ours.prod().tolist() == theirs.prod().tolist() and ours.prod().dtype is lucid.int64
    assert ours.prod(1, keepdim=True).tolist() == theirs.prod(1, keepdim=True).tolist()
    assert (ours > 1).prod(0).tolist() == (theirs > 1).prod(0).tolist()
    for diagonal in (-2, -1, 0, 1, 3):
        assert lucid.diag(ours, diagonal).tolist() == torch.diag(theirs, diagonal).tolist(), diagonal
        assert ours[0].diag(diagonal).tolist() == theirs[0].diag(diagonal).tolist(), diagonal
    assert lucid.outer(ours[0], ours[1]).tolist() == torch.outer(theirs[0], theirs[1]).tolist()
    assert lucid.ger(ours[0], ours[1]).tolist() == torch.outer(theirs[0], theirs[1]).tolist()
    mine = lucid.unique(ours, return_inverse=True, return_counts=True)
    reference = torch.unique(theirs, return_inverse=True, return_counts=True)
    assert [t.tolist() for t in mine] == [t.tolist() for t in reference] and mine[0].device == device
    assert ours.unique().tolist() == theirs.unique().tolist()
    assert ours.select(1, -1).tolist() == theirs.select(1, -1).tolist()
    assert ours.where(ours > 2, -1).tolist() == theirs.where(theirs > 2, -1).tolist()
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        assert getattr(lucid, name)(ours, 6).tolist() == getattr(torch, name)(theirs, 6).tolist(), name
        assert getattr(ours > 2, name)(ours < 3).tolist() == getattr(theirs > 2, name)(theirs < 3).tolist(), name
    assert lucid.bitwise_not(ours).tolist() == torch.bitwise_not(theirs).tolist()
    assert (ours > 2).bitwise_not().tolist() == (theirs > 2).bitwise_not().tolist()


def test_a_zero_in_a_product_gets_the_product_of_the_others_as_torch():
    ours, theirs = _both([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]], "cpu", "float64", requires_grad=True)
    ours.prod(1).sum().backward()
    theirs.prod(1).sum().backward()
    assert ours.grad.tolist() == theirs.grad.tolist()


SURVEY_ERRORS = [
    ("select index", lambda m, x: x.select(0, 5)),
    ("select dim", lambda m, x: m.select(x, 2, 0)),
    ("diag 3-d", lambda m, x: m.diag(x.unsqueeze(0))),
    ("diag 0-d", lambda m, x: m.diag(x.sum())),
    ("outer matrix", lambda m, x: m.outer(x, x[0])),
    ("outer vec2", lambda m, x: m.outer(x[0], x)),
    ("random_ bounds", lambda m, x: x.random_(5, 3)),
    ("cross no 3", lambda m, x: m.cross(x[:, :2], x[:, :2], dim=1)),
    ("cross dim", lambda m, x: m.cross(x, x, dim=0)),
    ("cross ndim", lambda m, x: m.cross(x, x[0], dim=-1)),
    ("bitwise of floats", lambda m, x: m.bitwise_xor(x, x)),
    ("bitwise_not of floats", lambda m, x: m.bitwise_not(x)),
]


@pytest.mark.parametrize("name,call", SURVEY_ERRORS, ids=[n for n, _ in SURVEY_ERRORS])
def test_survey_names_refuse_what_torch_refuses(name, call):
    ours, theirs = _both(np.zeros((2, 3)).tolist(), "cpu")
    _same_error(lambda: call(lucid, ours), lambda: call(torch, theirs))
    assert ours.tolist() == np.zeros((2, 3)).tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_random_fills_with_integers_of_torchs_ranges(device):
    lucid.manual_seed(4)
    for dtype, args, low, high in (("float32", (3, 7), 3, 7), ("int64", (5,), 0, 5), ("float64", (), 0, 2**53 + 1),
                                   ("float32", (), 0, 2**24 + 1), ("bool", (), 0, 2)):
        x = lucid.zeros(2000, dtype=getattr(lucid, dtype), device=device)
        assert x.random_(*args) is x and x._version == 1 and x.dtype is getattr(lucid, dtype)
        values = x.cpu().numpy().astype(np.float64)
        assert (values == np.round(values)).all() and values.min() >= low and values.max() < high
        if high - low < 10:
            assert set(values.tolist()) == set(range(low, high))


def test_the_device_queries_answer_for_lucids_devices():
    gpu = lucid.is_available("gpu")
    assert lucid.accelerator.is_available() is gpu
    assert lucid.accelerator.device_count() == int(gpu)
    assert lucid.accelerator.current_accelerator() == ("gpu" if gpu else None)
    if gpu:
        assert lucid.accelerator.current_device_index() == 0
        lucid.accelerator.set_device_index(0)
        assert raised(lambda: lucid.accelerator.set_device_index(1)) is not None
    # no CUDA in lucid: what torch says on a machine without it
    assert lucid.cuda.is_available() is False and lucid.cuda.device_count() == 0
    assert lucid.device("cuda" if lucid.cuda.is_available() else "cpu") == "cpu"


# --- a tutorial's loop: the char-RNN of pytorch/tutorials, trained by p.data.add_(-lr, p.grad.data) ----

def _char_rnn(m, letters: int, hidden: int):
    class RNN(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.i2h = m.nn.Linear(letters + hidden, hidden)
            self.i2o = m.nn.Linear(letters + hidden, letters)
            self.o2o = m.nn.Linear(hidden + letters, letters)
            self.softmax = m.nn.LogSoftmax(dim=1)

        def forward(self, input, hidden_state):
            combined = m.cat((input, hidden_state), 1)
            hidden_state, output = self.i2h(combined), self.i2o(combined)
            return self.softmax(self.o2o(m.cat((hidden_state, output), 1))), hidden_state

    return RNN().double()


def _train_char_rnn(m, model, lines, letters, hidden, lr=0.05):
    criterion, losses = m.nn.NLLLoss(), []
    for line in lines:
        model.zero_grad()
        state, loss = m.zeros(1, hidden, dtype=m.float64), 0
        for current, following in zip(line, line[1:]):
            one_hot = m.zeros(1, letters, dtype=m.float64)
            one_hot[0][current] = 1
            output, state = model(one_hot, state)
            loss += criterion(output, m.tensor([following]))
        loss.backward()
        for p in model.parameters():
            p.data.add_(-lr, p.grad.data)  # torch's deprecated order, as the tutorial writes it
        losses.append(loss.item())
    return losses


def test_the_char_rnn_tutorials_loop_runs_as_on_torch(fresh_warning):
    letters, hidden = 6, 8
    lines = [[0, 3, 1, 4, 5], [2, 2, 0, 1], [5, 4, 3, 2, 1, 0]] * 2
    torch.manual_seed(0)
    reference = _char_rnn(torch, letters, hidden)
    ours = _char_rnn(lucid, letters, hidden)
    ours.load_state_dict({k: lucid.tensor(v.detach().numpy()) for k, v in reference.state_dict().items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the deprecation, checked above
        expected = _train_char_rnn(torch, reference, lines, letters, hidden)
        got = _train_char_rnn(lucid, ours, lines, letters, hidden)
    close(got, expected, "float64")
    with lucid.no_grad():  # and sampling the next letter from the trained model, as the scripts do
        output, _ = ours(lucid.zeros(1, letters, dtype=lucid.float64), lucid.zeros(1, hidden, dtype=lucid.float64))
        drawn = lucid.multinomial(output.exp(), 10, replacement=True)
    assert drawn.shape == (1, 10) and 0 <= drawn.min().item() and drawn.max().item() < letters


# --- the common names of tutorials and lecture scripts: in-place math, predicates, indices ----------

IN_PLACE_MATH = [("exp_", ()), ("log_", ()), ("log1p_", ()), ("expm1_", ()), ("sin_", ()), ("cos_", ()),
                 ("tanh_", ()), ("sigmoid_", ()), ("relu_", ()), ("floor_", ()), ("ceil_", ()), ("round_", ()),
                 ("pow_", (2,)), ("square_", ()), ("reciprocal_", ()), ("erf_", ()), ("clamp_min_", (0.6,)),
                 ("clamp_max_", (0.9,))]


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_math_writes_torchs_values_into_self(device):
    for name, args in IN_PLACE_MATH:
        ours, theirs = _both([0.5, 1.25, 2.0], device, "float64")
        assert getattr(ours, name)(*args) is ours and ours._version == 1, name
        getattr(theirs, name)(*args)
        close(ours.cpu().numpy(), theirs.numpy(), "float64")
    _same_error(lambda: lucid.tensor([1]).exp_(), lambda: torch.tensor([1]).exp_())
    _same_error(lambda: lucid.ones(2, requires_grad=True).tanh_(), lambda: torch.ones(2, requires_grad=True).tanh_())


@pytest.mark.parametrize("device", DEVICES)
def test_predicates_and_indices_match_torch(device):
    values = [[0.0, 1.5, float("inf")], [float("nan"), -2.0, 0.0]]
    ours, theirs = _both(values, device, "float64")
    near, near_t = ours + 1e-9, theirs + 1e-9
    assert lucid.isnan(ours).tolist() == torch.isnan(theirs).tolist()
    assert ours.isinf().tolist() == theirs.isinf().tolist()
    for equal_nan in (False, True):
        assert lucid.isclose(ours, near, equal_nan=equal_nan).tolist() == torch.isclose(
            theirs, near_t, equal_nan=equal_nan).tolist()
        assert lucid.allclose(ours, near, equal_nan=equal_nan) == torch.allclose(theirs, near_t, equal_nan=equal_nan)
    assert lucid.allclose(ours[0, :2], ours[0, :2] * 1.1, rtol=0.2) == torch.allclose(theirs[0, :2], theirs[0, :2] * 1.1, rtol=0.2)
    assert lucid.equal(ours[0], ours[0]) == torch.equal(theirs[0], theirs[0]) and not lucid.equal(ours, ours[0])
    assert ours.nonzero().tolist() == theirs.nonzero().tolist()
    assert [t.tolist() for t in ours.nonzero(as_tuple=True)] == [t.tolist() for t in theirs.nonzero(as_tuple=True)]
    assert lucid.is_tensor(ours) and not lucid.is_tensor(values) and lucid.numel(ours) == torch.numel(theirs)
    assert lucid.get_default_dtype() is lucid.float32 and torch.get_default_dtype() is torch.float32


@pytest.mark.parametrize("device", DEVICES)
def test_exponential_draws_its_distribution(device):
    lucid.manual_seed(5)
    x = lucid.zeros(20_000, dtype=lucid.float64, device=device)
    assert x.exponential_(4.0) is x and x._version == 1
    values = x.cpu().numpy()
    assert values.min() >= 0 and abs(values.mean() - 0.25) < 4.5 * 0.25 / math.sqrt(20_000)
    assert abs(np.mean(values > 0.25) - math.exp(-1)) < 0.015  # P(X > mean) = 1/e


COMMON_ERRORS = [
    ("dot 2-d", lambda m, x: m.dot(x, x[0])),
    ("dot sizes", lambda m, x: m.dot(x[0], x[0, :2])),
    ("dot dtypes", lambda m, x: m.dot(x[0], x[0].double())),
    ("movedim counts", lambda m, x: m.movedim(x, (0, 1), (1,))),
    ("movedim range", lambda m, x: m.movedim(x, 3, 0)),
    ("exponential_ rate", lambda m, x: x.exponential_(-1)),
    ("allclose dtypes", lambda m, x: m.allclose(x, x.double())),
]


@pytest.mark.parametrize("name,call", COMMON_ERRORS, ids=[n for n, _ in COMMON_ERRORS])
def test_common_names_refuse_what_torch_refuses(name, call):
    ours, theirs = _both(np.zeros((2, 3)).tolist(), "cpu")
    _same_error(lambda: call(lucid, ours), lambda: call(torch, theirs))


NUMPY_NAMED = ["sum", "mean", "max", "min", "std", "var", "logsumexp", "prod", "any", "all"]


@pytest.mark.parametrize("device", DEVICES)
def test_reductions_take_numpys_names_as_torch(device):
    """``P.sum(1, keepdims=True)``, as the makemore lectures write it, and ``axis=``."""
    ours, theirs = _both([[0.5, 2.0, 1.5], [3.0, 0.25, 1.0]], device, "float64")
    for name in NUMPY_NAMED:
        mine, reference = getattr(ours, name)(1, keepdims=True), getattr(theirs, name)(1, keepdims=True)
        mine, reference = (r[0] if isinstance(r, tuple) else r for r in (mine, reference))  # max's values
        close(mine.cpu().numpy(), reference.numpy(), "float64")
        mine, reference = getattr(lucid, name)(ours, axis=0), getattr(torch, name)(theirs, axis=0)
        mine, reference = (r[0] if isinstance(r, tuple) else r for r in (mine, reference))  # max's values
        close(mine.cpu().numpy(), reference.numpy(), "float64")
    assert type(raised(lambda: ours.sum(1, keepdim=True, keepdims=True))) is type(
        raised(lambda: theirs.sum(1, keepdim=True, keepdims=True))) is TypeError


# --- the operators &, |, ^ and ~: bitwise as torch's, logical on bool tensors -----------------
OPERATORS = {
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "rand": lambda a, b: 6 & a, "ror": lambda a, b: 6 | a, "rxor": lambda a, b: True ^ b,
    "invert": lambda a, b: ~a,
}


@pytest.mark.parametrize("name", sorted(OPERATORS))
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("bool", "bool"), ("int32", "bool"), ("bool", "int64")],
                         ids=lambda d: "-".join(d))
def test_bitwise_operators_compute_torchs_values_and_dtypes(device, name, dtypes):
    # lucid once made & | ^ ~ logical on every dtype: 12 & 6 gave True where torch gives 4
    mine_a, theirs_a = _both([12, 5, -3, 0], device, dtypes[0])
    mine_b, theirs_b = _both([6, 0, 7, -1], device, dtypes[1])
    mine, theirs = OPERATORS[name](mine_a, mine_b), OPERATORS[name](theirs_a, theirs_b)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert mine.tolist() == theirs.tolist()


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_bitwise_operators_refuse_float_tensors_as_torch(name):
    _same_error(lambda: OPERATORS[name](lucid.tensor([1.5]), lucid.tensor([1.0])),
                lambda: OPERATORS[name](torch.tensor([1.5]), torch.tensor([1.0])))
