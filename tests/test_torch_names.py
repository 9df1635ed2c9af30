"""The page of torch names lucid covers (docs/guide/torch_names.rst) tells the truth: every
name it lists exists in torch 2.13 and in lucid, under the same path."""

from __future__ import annotations

import re
from functools import reduce
from pathlib import Path

import pytest

import lucid

PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "torch_names.rst"
# the first cell of each row, and the function column of the losses table
NAME = re.compile(r"^\s+(?:\* - ``([A-Za-z_][\w.]*)``|- ``(nn\.functional\.\w+)``)", re.MULTILINE)


def listed_names() -> list[str]:
    found = NAME.findall(PAGE.read_text(encoding="utf-8"))
    return sorted({first or second for first, second in found} - {"torch name"})


def _lookup(module, path: str):
    return reduce(getattr, path.split("."), module)


def test_the_page_lists_the_layers_and_losses():
    names = set(listed_names())
    assert {"nn.LSTM", "nn.EmbeddingBag", "nn.BatchNorm1d", "nn.functional.gelu",
            "nn.functional.binary_cross_entropy_with_logits"} <= names
    assert len(names) > 60


@pytest.mark.parametrize("name", listed_names())
def test_listed_name_exists_in_torch_and_lucid(name):
    torch = pytest.importorskip("torch")
    import lucid.optim.lr_scheduler  # noqa: F401 - the submodules the page names
    import lucid.optim.swa_utils  # noqa: F401

    assert _lookup(torch, name) is not None
    assert callable(_lookup(lucid, name)), f"lucid.{name} is listed as covered but does not exist"
