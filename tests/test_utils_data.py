"""``lucid.utils.data`` against ``torch.utils.data``: datasets, samplers, batching, collation, errors.

Orders that do not depend on random numbers (sequential samplers, explicit samplers and
batch samplers, iterable datasets) must give torch's batches exactly; shuffled ones must
be permutations that a seeded generator repeats.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import lucid
from helpers import raised as _raised
from lucid.utils import data

torch = pytest.importorskip("torch")
tdata = torch.utils.data

Pair = namedtuple("Pair", ["a", "b"])


def _plain(x):
    """A batch as nested Python values, with each tensor's dtype name, to compare lucid's with torch's."""
    if isinstance(x, lucid.Tensor):
        return ("tensor", x.dtype.name, x.shape, x.tolist())
    if isinstance(x, torch.Tensor):
        return ("tensor", str(x.dtype).removeprefix("torch."), tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__ if not hasattr(x, "_fields") else "namedtuple", [_plain(v) for v in x])
    return x


def _tensor_dataset(m, n=7):
    return m.utils.data.TensorDataset(m.arange(n * 2).reshape(n, 2).float(), m.arange(n) * 3)


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (2, False), (3, True), (7, False), (10, True), (10, False)])
def test_sequential_batches_are_torchs(batch_size, drop_last):
    ours = data.DataLoader(_tensor_dataset(lucid), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(_tensor_dataset(torch), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]


SAMPLES = {
    "floats": [0.5, 1.5, -2.0],
    "ints": [1, 2, 3],
    "bools": [True, False, True],
    "strings": ["a", "bb", "c"],
    "tuples": [(1, 0.5), (2, 1.5), (3, 2.5)],
    "lists": [[1, 2], [3, 4], [5, 6]],
    "dicts": [{"x": 1.0, "y": [1, 2]}, {"x": 2.0, "y": [3, 4]}, {"x": 3.0, "y": [5, 6]}],
    "namedtuples": [Pair(1, "u"), Pair(2, "v"), Pair(3, "w")],
    "numpy_arrays": [np.array([1.0, 2.0], dtype=np.float32), np.array([3.0, 4.0], dtype=np.float32),
                     np.array([5.0, 6.0], dtype=np.float32)],
    "numpy_scalars": [np.float64(1.5), np.float64(2.5), np.float64(3.5)],
    "numpy_ints": [np.int32(1), np.int32(2), np.int32(3)],
}


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_default_collate_is_torchs(kind):
    samples = SAMPLES[kind]
    assert _plain(data.default_collate(samples)) == _plain(tdata.default_collate(samples))
    loader, tloader = data.DataLoader(samples, batch_size=2), tdata.DataLoader(samples, batch_size=2)
    assert [_plain(b) for b in loader] == [_plain(b) for b in tloader]


def test_collating_tensors_stacks_them_and_keeps_the_graph(device):
    x = lucid.ones(3, requires_grad=True, device=device)
    batch = data.default_collate([x * 1, x * 2])
    assert batch.shape == (2, 3) and batch.device == device
    batch.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(RuntimeError, match="equal size"):
        data.default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate"):
        data.default_collate([object(), object()])


def test_no_batching_converts_each_sample():
    ours = list(data.DataLoader([np.array([1, 2]), np.array([3, 4])], batch_size=None))
    theirs = list(tdata.DataLoader([np.array([1, 2]), np.array([3, 4])], batch_size=None))
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]


def test_shuffle_with_a_seeded_generator_repeats_and_changes_per_epoch():
    ds = data.TensorDataset(lucid.arange(50))

    def epoch(loader):
        return [i for (batch,) in loader for i in batch.tolist()]

    loader = data.DataLoader(ds, batch_size=8, shuffle=True, generator=lucid.Generator().manual_seed(3))
    first, second = epoch(loader), epoch(loader)
    assert sorted(first) == sorted(second) == list(range(50)) and first != second and first != list(range(50))
    again = data.DataLoader(ds, batch_size=8, shuffle=True, generator=lucid.Generator().manual_seed(3))
    assert epoch(again) == first
    # without a generator the default one decides, so manual_seed repeats it
    lucid.manual_seed(5)
    a = epoch(data.DataLoader(ds, batch_size=8, shuffle=True))
    lucid.manual_seed(5)
    assert epoch(data.DataLoader(ds, batch_size=8, shuffle=True)) == a


def test_samplers_give_torchs_orders_and_lengths():
    src = list(range(10))
    assert list(data.SequentialSampler(src)) == list(tdata.SequentialSampler(src))
    for batch_size, drop_last in [(3, False), (3, True), (5, True), (20, False)]:
        ours = data.BatchSampler(data.SequentialSampler(src), batch_size, drop_last)
        theirs = tdata.BatchSampler(tdata.SequentialSampler(src), batch_size, drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    explicit = [3, 1, 4, 1, 5]
    ours = data.DataLoader(src, batch_size=2, sampler=explicit)
    theirs = tdata.DataLoader(src, batch_size=2, sampler=explicit)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs] and len(ours) == len(theirs)
    batches = [[0, 2], [9], [4, 4, 4]]
    ours = data.DataLoader(src, batch_sampler=batches)
    theirs = tdata.DataLoader(src, batch_sampler=batches)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    ours = data.DataLoader(src, batch_size=4, collate_fn=lambda b: sum(b))
    assert list(ours) == list(tdata.DataLoader(src, batch_size=4, collate_fn=lambda b: sum(b)))


def test_random_samplers_are_permutations_or_draws_in_range():
    g = lucid.Generator().manual_seed(0)
    assert sorted(data.RandomSampler(range(9), generator=g)) == list(range(9))
    long = list(data.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(long) == 10 and sorted(long[:4]) == sorted(long[4:8]) == [0, 1, 2, 3]
    drawn = list(data.RandomSampler(range(3), replacement=True, num_samples=100, generator=g))
    assert len(drawn) == 100 and set(drawn) == {0, 1, 2}
    assert sorted(data.SubsetRandomSampler([5, 8, 2], generator=g)) == [2, 5, 8]
    weighted = list(data.WeightedRandomSampler([0.0, 3.0, 1.0], 400, generator=g))
    assert set(weighted) == {1, 2} and 0.65 < weighted.count(1) / 400 < 0.85
    assert sorted(data.WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=g)) == [0, 1, 2, 3]
    assert len(data.RandomSampler(range(4), num_samples=10)) == len(tdata.RandomSampler(range(4), num_samples=10))


def test_datasets_index_as_torchs():
    ours, theirs = _tensor_dataset(lucid), _tensor_dataset(torch)
    assert len(ours) == len(theirs) and _plain(ours[3]) == _plain(theirs[3]) and _plain(ours[-1]) == _plain(theirs[-1])
    sub, tsub = data.Subset(ours, [4, 0, 4]), tdata.Subset(theirs, [4, 0, 4])
    assert len(sub) == len(tsub) and _plain(sub[1]) == _plain(tsub[1])
    cat, tcat = data.ConcatDataset([[1, 2], [3], [4, 5, 6]]), tdata.ConcatDataset([[1, 2], [3], [4, 5, 6]])
    assert [cat[i] for i in range(-6, 6)] == [tcat[i] for i in range(-6, 6)] and len(cat) == len(tcat)
    with pytest.raises(AssertionError):
        data.TensorDataset(lucid.zeros(3), lucid.zeros(4))
    with pytest.raises(NotImplementedError):
        data.Dataset()[0]


@pytest.mark.parametrize("lengths", [[3, 7], [0.5, 0.5], [0.3, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.1, 0.9], [10]])
def test_random_split_has_torchs_lengths_and_covers_the_dataset(lengths):
    ours = data.random_split(range(10), lengths, generator=lucid.Generator().manual_seed(1))
    theirs = tdata.random_split(range(10), lengths, generator=torch.Generator().manual_seed(1))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(10))


def test_random_split_refuses_bad_lengths_as_torch():
    for lengths in ([3, 3], [0.5, 0.6], [-0.5, 1.5]):
        ours = _raised(lambda: data.random_split(range(10), lengths))
        theirs = _raised(lambda: tdata.random_split(range(10), lengths))
        assert type(ours) is type(theirs) is ValueError, (lengths, ours, theirs)


class _Stream:
    """An IterableDataset for module m (lucid or torch): 0..6."""

    @staticmethod
    def make(m, n=7):
        class Stream(m.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(n))

            def __len__(self):
                return n

        return Stream()


@pytest.mark.parametrize("batch_size,drop_last", [(2, False), (2, True), (None, False), (7, True)])
def test_iterable_datasets_batch_as_torch(batch_size, drop_last):
    ours = data.DataLoader(_Stream.make(lucid), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(_Stream.make(torch), batch_size=batch_size, drop_last=drop_last)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs] and len(ours) == len(theirs)



@pytest.mark.parametrize("kwargs", [
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1},
    {"batch_size": 0},
    {"batch_size": 2, "drop_last": "yes"},
])
def test_bad_loader_arguments_raise_torchs_error(kwargs):
    ours = _raised(lambda: data.DataLoader(list(range(4)), **kwargs))
    theirs = _raised(lambda: tdata.DataLoader(list(range(4)), **kwargs))
    assert theirs is not None and type(ours) is type(theirs), (ours, theirs)


def test_iterable_dataset_refuses_shuffle_and_samplers_as_torch():
    for kwargs in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
        ours = _raised(lambda: data.DataLoader(_Stream.make(lucid), **kwargs))
        theirs = _raised(lambda: tdata.DataLoader(_Stream.make(torch), **kwargs))
        assert type(ours) is type(theirs) is ValueError


def test_sampler_arguments_are_checked_as_torch():
    for make in (lambda d: d.RandomSampler(range(3), replacement=1),
                 lambda d: d.RandomSampler(range(3), num_samples=0),
                 lambda d: d.BatchSampler(range(3), 0, False),
                 lambda d: d.WeightedRandomSampler([1.0], num_samples=0)):
        ours, theirs = _raised(lambda: make(data)), _raised(lambda: make(tdata))
        assert theirs is not None and type(ours) is type(theirs), (ours, theirs)
