"""The shape of the optimizer base (issue 21): composed of parts, not mixins, and small.

Every class between a public optimizer and ``object`` is an ``Optimizer`` (the base's parts
are objects it holds, not classes it inherits), ``help()`` of an optimizer names no private
class, and the base and its engine inside ``lucid/optim`` stay within their measured size
(``tools/engine_size.py``).
"""

from __future__ import annotations

import pydoc
import re
import sys
from pathlib import Path

import pytest

import lucid.optim as optim
from lucid.distributed.optim import ZeroRedundancyOptimizer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import engine_size  # noqa: E402

OPTIMIZERS = [getattr(optim, name) for name in optim.__all__
              if isinstance(getattr(optim, name), type) and issubclass(getattr(optim, name), optim.Optimizer)]
OPTIMIZERS.append(ZeroRedundancyOptimizer)

#: The code lines of the base and its engine at this commit: the size may only shrink
#: (issue 21's target is 500; see its note for where the rest stands). 755 at issue 21's end,
#: counting lucid/optim/__init__.py (26 lines then), which no longer counts: each new
#: optimizer's export lengthens it without growing the base. Since then: issue 25's checks of
#: a loaded group and the optimizer's weak proxy to its parts (5), issue 22's MuonWithAdamW's
#: defaults per group and split groups added whole (14), rules that return sums (Prodigy's
#: estimate, 1) and the group step count that ADOPT and SOAP share (group_steps.py, moved
#: out of adopt.py, 20).
MEASURED_SIZE = 767


def test_every_optimizer_is_found():
    assert {"Adam", "SGD", "LBFGS", "SparseAdam", "Optimizer"} <= {cls.__name__ for cls in OPTIMIZERS}


@pytest.mark.parametrize("cls", OPTIMIZERS, ids=lambda cls: cls.__name__)
def test_every_base_class_of_an_optimizer_is_an_optimizer(cls):
    bases = [base for base in cls.__mro__ if base is not object]
    assert all(issubclass(base, optim.Optimizer) for base in bases), bases
    assert not [base for base in bases if base.__name__.startswith("_")]


@pytest.mark.parametrize("cls", OPTIMIZERS, ids=lambda cls: cls.__name__)
def test_help_names_no_private_class(cls):
    lines = [line.strip(" |") for line in pydoc.render_doc(cls, renderer=pydoc.plaintext).splitlines()]
    if "Method resolution order:" in lines:
        start = lines.index("Method resolution order:") + 1
        order = lines[start:lines.index("", start)]
        assert order[0] == cls.__name__ and order[-1] == "builtins.object"
    else:  # a class of object alone has no such section
        order = [cls.__name__, *re.findall(rf"^class {cls.__name__}\(([\w.]+)\)$", "\n".join(lines), re.M)]
        assert order == [cls.__name__, "builtins.object"]
    named = order[1:] + re.findall(r"inherited from ([\w.]+):", "\n".join(lines))
    assert not [name for name in named if "._" in "." + name], named


def test_the_base_and_its_engine_do_not_grow():
    total = sum(engine_size.code_lines(path) for path in engine_size.base_files())
    assert total <= MEASURED_SIZE, f"the base and its engine grew to {total} code lines"


def test_the_size_counts_the_base_files_and_no_optimizer():
    names = {path.name for path in engine_size.base_files()}
    assert {"optimizer.py", "_step.py", "_state.py", "_groups.py", "_hooks.py", "_state_dict.py"} <= names
    assert not names & {"adam.py", "sgd.py", "nadam.py", "lbfgs.py", "schedules.py", "wrappers.py", "__init__.py"}
