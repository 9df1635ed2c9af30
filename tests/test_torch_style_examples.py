"""The torch-style training scripts of examples/ run unchanged on torch and on lucid, and
from the same initial weights give the same loss at every step.

Each script's ``train(torch, ...)`` takes the module to use (torch, or lucid in its place),
returns the state it started from and its per-step losses; the lucid run starts from
torch's initial state, converted. float64 on cpu, float32 on gpu (MLX), where each loss is
judged against the float64 truth (torch's run in float64 from the same float32 weights and
data), torch's float32 error the ceiling, as a recurrence's (``JUDGED_RECURRENT``).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
from nn_parity import DEVICES
from tolerances import EXAMPLES, JUDGED_RECURRENT, close, judge

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent / "examples"
# each script with a short run: a few dozen steps of every part of its loop
SCRIPTS = {
    "mlp_regression": {"epochs": 2},
    "lstm_language_model": {"epochs": 1, "dropout": 0.0},  # dropout masks come from different generators
    "sparse_recommender": {"epochs": 1},
    # attention and the Transformer (issue 24): a dozen steps of small models, dropout off
    "char_gpt": {"epochs": 1, "steps_per_epoch": 12, "n_embd": 32, "block_size": 16, "batch": 8, "dropout": 0.0,
                 "sample_length": 4},
    "transformer_seq2seq": {"epochs": 1, "batches": 12, "batch": 8, "dropout": 0.0},
    # convolutions and max pooling (issue 24): 11 steps of 8 images, without dropout (as above)
    "mnist_net": {"epochs": 1, "dropout": 0.0, "samples": 88, "batch_size": 8},
}
# the scripts' own options for the run as a program, beside --epochs 1: a short one
PROGRAM_OPTIONS = {"mnist_net": ["--samples", "32"]}


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Rounded:
    """torch, whose ``tensor`` rounds float data to ``dtype`` first: a float64 run of a script fed
    the same float32 numbers as torch's float32 run, the truth of that run."""

    def __init__(self, dtype: str):
        self._dtype = getattr(torch, dtype)

    def __getattr__(self, name):
        return getattr(torch, name)

    def tensor(self, data, dtype=None, **kwargs):
        out = torch.tensor(data, dtype=dtype, **kwargs)
        return out.to(self._dtype).to(out.dtype) if out.is_floating_point() else out


@pytest.fixture
def one_torch_thread():
    """torch's sums in one thread: the same order on every machine, and no contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(SCRIPTS))
def test_lucid_follows_torch_step_by_step(name, device, one_torch_thread):
    dtype = "float64" if device == "cpu" else "float32"
    script = _load(name)
    reference = script.train(torch, dtype_name=dtype, **SCRIPTS[name])
    start = {key: lucid.tensor(value.numpy(), device=device) for key, value in reference["initial_state"].items()}
    ours = script.train(lucid, dtype_name=dtype, device=device, initial_state=start, **SCRIPTS[name])
    assert len(ours["losses"]) == len(reference["losses"]) > 10
    if dtype == "float64":
        close(ours["losses"], reference["losses"], dtype, table=EXAMPLES)
        close([ours["final"]], [reference["final"]], dtype, table=EXAMPLES)
    else:
        truth = script.train(_Rounded(dtype), dtype_name="float64", initial_state=reference["initial_state"],
                             **SCRIPTS[name])
        assert len(truth["losses"]) == len(reference["losses"])
        for step, values in enumerate(zip(ours["losses"], reference["losses"], truth["losses"])):
            judge(*values, dtype, JUDGED_RECURRENT, f"loss at step {step}")  # a training run: a recurrence
        judge(ours["final"], reference["final"], truth["final"], dtype, JUDGED_RECURRENT, "final")
    for key, value in ours["initial_state"].items():  # it did start from torch's weights
        assert np.array_equal(np.asarray(value), reference["initial_state"][key].numpy()), key


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_script_runs_as_a_program_on_lucid(name):
    result = subprocess.run([sys.executable, str(ROOT / f"{name}.py"), "--epochs", "1", *PROGRAM_OPTIONS.get(name, [])],
                            capture_output=True, text=True, timeout=300, check=True)
    assert result.stdout.strip().splitlines()[-1].startswith("done with lucid:")
