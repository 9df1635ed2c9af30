"""Every public class of lucid.optim is documented: numpydoc sections, and a place in the API pages.

Each class docstring has ``Parameters``, ``Attributes``, ``Notes`` and ``Examples``
sections, in numpydoc's order, and each class is on an API page (an ``.. autoclass::`` of
lucid.optim among the pages docs/_ext/api_pages.py generates), so a new optimizer cannot
ship undocumented.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import pytest

from lucid import optim
from optim_registry import REGISTRY

REQUIRED = ("Parameters", "Attributes", "Notes", "Examples")
# numpydoc's order of the sections of a class docstring
ORDER = ("Parameters", "Attributes", "Methods", "Raises", "Warns", "See Also", "Notes", "References", "Examples")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "_ext"))
import api_pages  # noqa: E402 - docs/_ext: writes docs/api/ when the docs are built

CLASSES = sorted(
    (name for name in optim.__all__ if inspect.isclass(getattr(optim, name))), key=str.lower
)


def sections(doc: str) -> list[str]:
    """The numpydoc section titles of ``doc``: a line followed by an underline of its length."""
    lines = inspect.cleandoc(doc or "").splitlines()
    return [
        title.strip() for title, rule in zip(lines, lines[1:])
        if title.strip() and re.fullmatch(r"-+", rule.strip()) and len(rule.strip()) == len(title.strip())
    ]


def test_every_optimizer_is_checked():
    optimizers = {name for name in CLASSES if issubclass(getattr(optim, name), optim.Optimizer)}
    assert {"Optimizer", *(info.name for info in REGISTRY)} <= optimizers


@pytest.mark.parametrize("name", CLASSES)
def test_class_docstring_has_the_numpydoc_sections(name):
    found = sections(getattr(optim, name).__doc__)
    missing = [s for s in REQUIRED if s not in found]
    assert not missing, f"lucid.optim.{name} lacks the sections {missing} (has {found})"
    known = [s for s in found if s in ORDER]
    assert known == sorted(known, key=ORDER.index), f"lucid.optim.{name}: sections out of numpydoc's order: {found}"
    assert len(found) == len(set(found)), f"lucid.optim.{name}: a section appears twice: {found}"


def _documented_on(page: str) -> set[str]:
    """The classes an ``.. autoclass::`` puts on ``page`` while its current module is lucid.optim."""
    names, module = set(), None
    for line in page.splitlines():
        if line.startswith(".. currentmodule::"):
            module = line.split("::", 1)[1].strip()
        elif line.startswith(".. autoclass::"):
            target = line.split("::", 1)[1].strip()
            qualified = target if "." in target else f"{module}.{target}"
            if qualified.rpartition(".")[0] == "lucid.optim":
                names.add(qualified.rpartition(".")[2])
    return names


DOCUMENTED = set().union(*(_documented_on(text) for text in api_pages.pages().values()))


@pytest.mark.parametrize("name", CLASSES)
def test_class_is_on_an_api_page(name):
    assert name in DOCUMENTED, f"lucid.optim.{name} is on no API page"


def test_sections_reads_numpydoc_titles():
    doc = """Summary.

    Parameters
    ----------
    x : int

    Notes
    -----
    Text, then a rule of another length
    ---
    """
    assert sections(doc) == ["Parameters", "Notes"]
