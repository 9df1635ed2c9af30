"""The registry of optimizers under test (tests/optim_registry.py) is complete and sound.

Every generic optimizer test takes its optimizers from the registry, so an optimizer missing
from it would go untested: the registry must name exactly the optimizers lucid.optim
exports, and each entry must hold what those tests need. An optimizer's API page follows
from its export (docs/_ext/api_pages.py): each entry's class must be on one.
"""

from __future__ import annotations

import inspect

import pytest

import lbfgs_cases
from lucid import optim
from optim_registry import BY_NAME, REGISTRY, OptimizerInfo
from test_optim_docstrings import DOCUMENTED

IDS = [info.name for info in REGISTRY]


def exported_optimizers() -> set[str]:
    """The optimizer classes of ``lucid.optim.__all__`` (the base excluded)."""
    return {name for name in optim.__all__ if inspect.isclass(getattr(optim, name))
            and issubclass(getattr(optim, name), optim.Optimizer) and name != "Optimizer"}


def test_the_registry_names_exactly_the_optimizers_of_lucid_optim():
    assert len(BY_NAME) == len(REGISTRY), "an optimizer has two entries"
    assert set(BY_NAME) == exported_optimizers()


@pytest.mark.parametrize("info", REGISTRY, ids=IDS)
def test_each_entry_holds_what_the_generic_tests_need(info: OptimizerInfo):
    assert info.cls is getattr(optim, info.name)
    assert callable(info.reference)
    assert info.sparse in ("accepts", "refuses", None)
    assert info.resume and len({run[0] for run in info.resume}) == len(info.resume)
    if info.closure:  # its golden runs are step(closure) calls: tests/lbfgs_cases.py
        assert not info.cases and lbfgs_cases.CASES and info.sparse is None
    else:
        assert info.cases and info.sparse is not None
    assert all(case.optimizer == info.name for case in info.cases)
    if info.matrices_only:
        assert all(len(shape) == 2 for case in info.cases for shape in case.shapes)
    for kwargs in (info.state_kwargs, info.bad_input_kwargs, *(run[1] for run in info.resume)):
        assert set(kwargs) <= set(inspect.signature(info.cls).parameters), kwargs


def test_resume_runs_have_distinct_names_across_entries():
    names = [run[0] for info in REGISTRY for run in info.resume]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("info", REGISTRY, ids=IDS)
def test_each_optimizer_has_its_api_page(info):
    """docs/_ext/api_pages.py makes a page for each name of ``lucid.optim.__all__``: the
    entry's class is on one (with its numpydoc sections: tests/test_optim_docstrings.py)."""
    assert info.name in DOCUMENTED
