"""The random state: ``lucid.get_rng_state`` / ``set_rng_state`` and ``Generator.get_state`` /
``set_state``, with torch's names and semantics.

A state given back reproduces the next draws (randn, rand, randint, randperm, uniform_,
dropout masks, a shuffling DataLoader's order, random_split) of the default generator and
of a Generator, on both devices whichever device the state was taken on; bad input is
refused, naming ``new_state``, and changes nothing; and a state saved with lucid.save beside
a model's and an optimizer's state dicts resumes a training run with dropout and a shuffling
DataLoader in a new process, bit for bit.

Run as a script (``python test_random_state.py JOBS``), this file is that new process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn, optim
from lucid.utils.data import DataLoader, TensorDataset, random_split

from conftest import DEVICES, GPU
from helpers import assert_same_signature, torch_or_skip

HERE = Path(__file__).resolve().parent


def _values(x):
    """What a draw gave, comparable across devices: dtype and bytes of tensors, recursively."""
    if isinstance(x, lucid.Tensor):
        return x.dtype.name, tuple(x.shape), np.ascontiguousarray(x.detach().numpy()).tobytes()
    if isinstance(x, (list, tuple)):
        return [_values(v) for v in x]
    return x


def _loader_order(g, device):
    dataset = TensorDataset(lucid.arange(10, device=device))
    return [batch for (batch,) in DataLoader(dataset, batch_size=3, shuffle=True, generator=g)]


DRAWS = {
    "randn": lambda g, device: lucid.randn(2, 3, generator=g, device=device),
    "rand": lambda g, device: lucid.rand(5, dtype=lucid.float64, generator=g, device=device),
    "randint": lambda g, device: lucid.randint(0, 1000, (7,), generator=g, device=device),
    "randperm": lambda g, device: lucid.randperm(9, generator=g, device=device),
    "uniform_": lambda g, device: lucid.empty(4, device=device).uniform_(-1.0, 1.0, generator=g),
    "dropout": lambda g, device: F.dropout(lucid.ones(24, device=device), p=0.5),  # the default generator only
    "DataLoader(shuffle=True)": _loader_order,
    "random_split": lambda g, device: [list(s.indices) for s in random_split(range(10), [6, 4], generator=g)],
}
SOURCES = [(draw, source) for draw in DRAWS for source in ("default", "Generator")
           if (draw, source) != ("dropout", "Generator")]  # torch's dropout takes no generator either


def _source(source):
    """``(generator, get, set)``: None and the lucid functions, or a Generator and its methods."""
    if source == "default":
        return None, lucid.get_rng_state, lucid.set_rng_state
    g = lucid.Generator().manual_seed(12)
    return g, g.get_state, g.set_state


# --- a state given back repeats the draws ------------------------------------------------
@pytest.mark.parametrize("draw,source", SOURCES)
def test_a_state_given_back_repeats_the_next_draws(draw, source, device):
    g, get, set_ = _source(source)
    DRAWS[draw](g, "cpu")  # away from the freshly seeded state
    state = get()
    expected = [_values(DRAWS[draw](g, "cpu")) for _ in range(2)]
    assert expected[0] != expected[1]  # the generator moved on
    assert set_(state) is (None if g is None else g)  # torch: set_rng_state gives None, set_state the generator
    # taken while drawing on "cpu", the state gives the same numbers on every device
    assert [_values(DRAWS[draw](g, device)) for _ in range(2)] == expected


def test_a_generators_state_moves_to_another_generator_and_to_the_default_one(device):
    g = lucid.Generator().manual_seed(3)
    lucid.randn(5, generator=g)
    state = g.get_state()
    expected = lucid.randn(6, generator=g).tolist()
    other = lucid.Generator().set_state(state)
    assert lucid.randn(6, generator=other, device=device).tolist() == expected and other.initial_seed() == 3
    lucid.set_rng_state(state)
    assert lucid.randn(6, device=device).tolist() == expected and lucid.initial_seed() == 3


def test_drawing_leaves_a_taken_state_alone_and_each_state_is_a_new_tensor():
    state = lucid.get_rng_state()
    again = lucid.get_rng_state()
    assert state is not again and _values(state) == _values(again)
    assert state.dtype == lucid.int64 and state.shape == (8,) and state.device == "cpu"
    before = _values(state)
    lucid.randn(10)
    assert _values(state) == before and _values(lucid.get_rng_state()) != before
    state.zero_()  # the tensor is the caller's: writing to it changes no generator
    assert _values(lucid.get_rng_state()) != _values(state)


def test_initial_seed_comes_back_with_the_state_as_in_torch():
    torch = torch_or_skip()
    for rng in (torch, lucid):
        rng.manual_seed(5)
        state = rng.get_rng_state()
        rng.manual_seed(9)
        rng.set_rng_state(state)
        assert rng.initial_seed() == 5
    g = lucid.Generator().manual_seed(2**64 - 1)  # the largest seed survives the int64 words
    assert lucid.Generator().set_state(g.get_state()).initial_seed() == 2**64 - 1


def test_seed_is_fresh_64_bit_and_becomes_the_initial_seed():
    seeds = [lucid.seed() for _ in range(4)]
    assert seeds[-1] == lucid.initial_seed() and len(set(seeds)) == 4
    assert all(type(s) is int and 0 <= s < 2**64 for s in seeds)
    g = lucid.Generator()
    assert g.seed() == g.initial_seed() != lucid.Generator().initial_seed()


def test_the_names_and_signatures_are_torchs():
    torch = torch_or_skip()
    assert_same_signature(lucid.get_rng_state, torch.get_rng_state)
    assert_same_signature(lucid.set_rng_state, torch.set_rng_state)
    assert set(lucid.random.__all__) <= set(dir(torch.random))
    for name in lucid.random.__all__:
        assert getattr(lucid.random, name) is getattr(lucid, name) and name in lucid.__all__
    for name in ("get_state", "set_state", "manual_seed", "seed", "initial_seed"):
        assert callable(getattr(torch.Generator, name)) and callable(getattr(lucid.Generator, name))


# --- a state saved and loaded --------------------------------------------------------------
def test_a_state_round_trips_through_lucid_save_bit_for_bit(tmp_path, device):
    g = lucid.Generator().manual_seed(2**63 + 5)
    lucid.randint(0, 10, (3,), generator=g)  # NumPy holds back half a 64-bit draw
    path = tmp_path / "rng.safetensors"
    lucid.save({"rng": lucid.get_rng_state(), "loader_rng": g.get_state()}, path)
    expected = lucid.randn(4).tolist(), lucid.randint(0, 10, (5,), generator=g).tolist()
    loaded = lucid.load(path, map_location=device)
    assert loaded["rng"].device == device and loaded["rng"].dtype == lucid.int64
    lucid.manual_seed(1)
    g.manual_seed(1)
    lucid.set_rng_state(loaded["rng"])
    g.set_state(loaded["loader_rng"])
    assert (lucid.randn(4).tolist(), lucid.randint(0, 10, (5,), generator=g).tolist()) == expected
    assert g.initial_seed() == 2**63 + 5


# --- bad input -----------------------------------------------------------------------------
def _with(state, word: int, value: int):
    """``state`` with one word replaced (``value`` read as an unsigned 64-bit word)."""
    words = state.numpy().view(np.uint64).copy()
    words[word] = value
    return lucid.tensor(words.view(np.int64))


def _inc_low(state) -> int:
    return int(state.numpy().view(np.uint64)[4])


BAD = {
    "None": (lambda s: None, TypeError, "got NoneType"),
    "a list": (lambda s: s.tolist(), TypeError, "got list"),
    "a NumPy array": (lambda s: s.numpy(), TypeError, "got ndarray"),
    "float64": (lambda s: s.double(), TypeError, "dtype lucid.float64"),
    "int32": (lambda s: s.int(), TypeError, "dtype lucid.int32"),
    "too short": (lambda s: s[:7], RuntimeError, "8 words of a lucid random state, got 7"),
    "too long": (lambda s: lucid.cat([s, s]), RuntimeError, "got 16"),
    "empty": (lambda s: lucid.zeros(0, dtype=lucid.int64), RuntimeError, "got 0"),
    "zeros": (lambda s: lucid.zeros(8, dtype=lucid.int64), RuntimeError, "tag"),
    "another tag": (lambda s: _with(s, 0, 7), RuntimeError, "tag"),
    "an even increment": (lambda s: _with(s, 4, _inc_low(s) ^ 1), RuntimeError, "odd"),
    "a flag of 2": (lambda s: _with(s, 6, 2), RuntimeError, "0 or 1"),
    "a held-back draw of 33 bits": (lambda s: _with(s, 7, 2**32), RuntimeError, "32 bits"),
}


@pytest.mark.parametrize("source", ["default", "Generator"])
@pytest.mark.parametrize("case", BAD)
def test_a_bad_state_is_refused_and_changes_nothing(case, source):
    make, kind, fragment = BAD[case]
    g, get, set_ = _source(source)
    lucid.randint(0, 10, (3,), generator=g)
    state, seed = get(), (lucid.initial_seed() if g is None else g.initial_seed())
    expected = lucid.randn(5, generator=g).tolist()
    set_(state)
    caller = "set_rng_state" if g is None else "Generator.set_state"
    with pytest.raises(kind, match=fr"^{caller}: new_state .*{fragment}"):
        set_(make(state))
    assert _values(get()) == _values(state)
    assert (lucid.initial_seed() if g is None else g.initial_seed()) == seed
    assert lucid.randn(5, generator=g).tolist() == expected


def test_the_kinds_of_error_are_torchs():
    torch = torch_or_skip()
    theirs = torch.get_rng_state()
    cases = [([1, 2], [1, 2], TypeError), (lucid.get_rng_state().double(), theirs.double(), TypeError),
             (lucid.get_rng_state()[:3], theirs[:3], RuntimeError),
             (lucid.zeros(8, dtype=lucid.int64), torch.zeros(5056, dtype=torch.uint8), RuntimeError)]
    for ours, torchs, kind in cases:
        with pytest.raises(kind):
            torch.set_rng_state(torchs)
        with pytest.raises(kind):
            lucid.set_rng_state(ours)


# --- an exact resume in a new process ------------------------------------------------------
PER_EPOCH = 4  # batches of 3 of 10 samples: 3, 3, 3, 1
STEPS = 11
# With the loader's own generator the run stops inside an epoch: that epoch's order comes
# back from the generator's state at the epoch's start. Without one, the sampler draws the
# order from the default generator when the epoch starts, so the run stops between epochs.
STOP = {"own": 6, "default": 8}


class Run:
    """A model with dropout, its optimizer, and a shuffling DataLoader, built from ``seed``."""

    def __init__(self, device: str, loader: str, seed: int):
        lucid.manual_seed(seed)
        self.model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Dropout(0.4), nn.Linear(8, 1)).to(device)
        self.optimizer = optim.Adam(self.model.parameters(), lr=0.05)
        rng = np.random.default_rng(4)  # the data is the same in every process
        x, y = rng.standard_normal((10, 3), dtype=np.float32), rng.standard_normal((10, 1), dtype=np.float32)
        dataset = TensorDataset(lucid.tensor(x, device=device), lucid.tensor(y, device=device))
        self.generator = lucid.Generator().manual_seed(seed + 1) if loader == "own" else None
        self.loader = DataLoader(dataset, batch_size=3, shuffle=True, generator=self.generator)
        self.epoch_state = None  # the loader generator's state when the current epoch began

    def train(self, start: int, stop: int) -> None:
        """Global steps ``start`` to ``stop``, resuming inside an epoch where ``start`` is."""
        step = start
        while step < stop:
            done = step % PER_EPOCH
            if self.generator is not None:
                if done == 0:
                    self.epoch_state = self.generator.get_state()
                else:
                    self.generator.set_state(self.epoch_state)  # this epoch's order again
            batches = iter(self.loader)
            for _ in range(done):  # the batches trained on before the checkpoint
                next(batches)
            for x, y in batches:
                self.optimizer.zero_grad()
                F.mse_loss(self.model(x), y).backward()
                self.optimizer.step()
                step += 1
                if step == stop:
                    return

    def checkpoint(self, step: int) -> dict:
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "rng": lucid.get_rng_state(), "loader_rng": self.epoch_state, "step": step}

    def resume(self, checkpoint: dict, restore_rng: bool = True) -> int:
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        if restore_rng:
            lucid.set_rng_state(checkpoint["rng"])
        self.epoch_state = checkpoint["loader_rng"]
        return checkpoint["step"]

    def parameters(self) -> dict:
        return {name: p.detach() for name, p in self.model.named_parameters()}


def _resume_jobs(jobs: list) -> None:
    """The new process: each job builds afresh from another seed, loads, trains to the end."""
    for job in jobs:
        run = Run(job["device"], job["loader"], seed=99)
        step = run.resume(lucid.load(job["checkpoint"]), restore_rng=job["restore_rng"])
        run.train(step, STEPS)
        lucid.save(run.parameters(), job["outcome"])


CONFIGS = [(device, loader) for device in DEVICES for loader in STOP]


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    """Every configuration on the devices here: straight runs and checkpoints, resumed in one child."""
    folder = tmp_path_factory.mktemp("rng-resume")
    jobs, straight = [], {}
    for device, loader in CONFIGS:
        if device == "gpu" and not GPU:
            continue
        run = Run(device, loader, seed=1)
        run.train(0, STEPS)
        straight[device, loader] = run.parameters()
        run = Run(device, loader, seed=1)
        run.train(0, STOP[loader])
        checkpoint = folder / f"{device}.{loader}.ckpt"
        lucid.save(run.checkpoint(STOP[loader]), checkpoint)
        for restore_rng in (True, False):
            jobs.append({"device": device, "loader": loader, "checkpoint": str(checkpoint),
                         "restore_rng": restore_rng, "outcome": str(folder / f"{device}.{loader}.{restore_rng}.out")})
    result = subprocess.run([sys.executable, __file__, json.dumps(jobs)], capture_output=True, text=True,
                            timeout=120, cwd=HERE)
    assert result.returncode == 0, result.stderr[-4000:]
    return {(job["device"], job["loader"], job["restore_rng"]): (straight[job["device"], job["loader"]],
                                                                 lucid.load(job["outcome"])) for job in jobs}


@pytest.mark.parametrize("device,loader", CONFIGS)
def test_a_run_resumed_in_a_new_process_is_bit_identical(resumed, device, loader):
    expected, got = resumed[device, loader, True]
    assert list(got) == list(expected)
    for name in expected:
        assert got[name].device == device
        assert _values(got[name]) == _values(expected[name]), name


@pytest.mark.parametrize("device,loader", CONFIGS)
def test_without_the_rng_state_the_resumed_run_differs(resumed, device, loader):
    expected, got = resumed[device, loader, False]
    assert any(_values(got[name]) != _values(expected[name]) for name in expected)


if __name__ == "__main__":
    _resume_jobs(json.loads(sys.argv[1]))
