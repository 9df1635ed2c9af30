"""torch's implementation flags (``foreach``, ``fused``, ``capturable``): an accepted flag gives
torch's numbers for that flag, and a refused one is refused before anything exists.

lucid runs one implementation, torch's single-tensor path. Each case of tests/optim_registry.py
is replayed with each flag its optimizer takes: where lucid accepts the flag, its float64 run
must equal torch's run with the flag, live, to float64 parity (tests/tolerances.py); where it
refuses it (``Optimizer.unmatched_flags``, ``capturable``), torch's run with the flag must
differ from its single-tensor run beyond that parity or raise, so that nothing is refused
that torch computes alike.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from helpers import torch_or_skip
from optim_cases import tolerance_table
from optim_registry import CASES
from test_optim_parity import run_lucid
from torch_reference import run_torch

FLAGS = ("foreach", "fused", "capturable")
RUNS = [(case, flag) for case in CASES for flag in FLAGS
        if flag in inspect.signature(getattr(optim, case.optimizer).__init__).parameters and not case.sparse_rows]


STEPS = 8  # enough for every refused flag to differ (ASGD's foreach from its second step)


def _with(case, flag=None):
    """``case`` over its first STEPS steps, with ``flag`` set."""
    kwargs = {**case.kwargs, flag: True} if flag else case.kwargs
    steps = min(case.steps, STEPS)  # every step recorded (a Schedule-Free case records every 50th)
    return dataclasses.replace(case, name=f"{case.name}_{flag}", kwargs=kwargs, steps=steps, record_every=1,
                               eval_after=tuple(t for t in case.eval_after if t < steps))


def _params_close(got, want, table) -> bool:
    rtol, atol = table["float64"]
    return all(np.allclose(got[k], want[k], rtol=rtol, atol=atol, equal_nan=True) for k in want if k.startswith("p"))


@pytest.mark.parametrize("case, flag", RUNS, ids=[f"{case.name}-{flag}" for case, flag in RUNS])
def test_an_accepted_flag_gives_torch_numbers_and_a_refused_one_differs(case, flag):
    torch_or_skip()
    flagged = _with(case, flag)
    try:
        trajectory, _ = run_lucid(flagged, "float64", "cpu")
    except ValueError as refused:  # torch's refusal (Adam's Tensor betas with foreach): torch's words
        with pytest.raises(ValueError, match=str(refused).replace("[", r"\[").replace("]", r"\]")):
            run_torch(flagged, np.float64)
        return
    except NotImplementedError as refused:
        assert flag in str(refused)
        try:
            theirs = run_torch(flagged, np.float64)
        except (AssertionError, RuntimeError, ValueError):
            return  # torch refuses it too (capturable on the CPU)
        assert not _params_close(theirs, run_torch(_with(case), np.float64), tolerance_table(case)), (
            f"{case.name}: {flag}=True is refused, but torch computes its single-tensor numbers with it")
        return
    theirs = run_torch(flagged, np.float64)
    table = tolerance_table(case)
    for key, want in theirs.items():
        if key.startswith("p"):
            rtol, atol = table["float64"]
            np.testing.assert_allclose(trajectory[key], want, rtol=rtol, atol=atol, err_msg=f"{flagged.name}: {key}")


REFUSED = [
    ("ASGD-foreach", optim.ASGD, {"foreach": True}),
    ("Adamax-foreach-tensor-lr", optim.Adamax, {"foreach": True, "lr": lucid.tensor(0.01)}),
    ("NAdam-foreach-tensor-lr", optim.NAdam, {"foreach": True, "lr": lucid.tensor(0.01)}),
    ("RAdam-foreach-tensor-lr", optim.RAdam, {"foreach": True, "lr": lucid.tensor(0.01)}),
    ("Adam-fused-tensor-lr", optim.Adam, {"fused": True, "lr": lucid.tensor(0.01)}),
    ("AdamW-fused-tensor-betas", optim.AdamW, {"fused": True, "betas": (lucid.tensor(0.9), lucid.tensor(0.99))}),
    ("Adagrad-fused-tensor-lr", optim.Adagrad, {"fused": True, "lr": lucid.tensor(0.01)}),
    ("Adam-capturable", optim.Adam, {"capturable": True}),
]


@pytest.mark.parametrize("cls, kwargs", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_a_flag_with_other_numbers_is_refused_at_construction_and_in_add_param_group(cls, kwargs):
    flag = next(k for k in FLAGS if k in kwargs)
    with pytest.raises(NotImplementedError, match=f"{flag}=True"):
        cls([nn.Parameter(lucid.ones(2))], **kwargs)
    opt = cls([nn.Parameter(lucid.ones(2))])
    with pytest.raises(NotImplementedError, match=f"{flag}=True"):
        opt.add_param_group({"params": [nn.Parameter(lucid.ones(2))], **kwargs})
    assert len(opt.param_groups) == 1
