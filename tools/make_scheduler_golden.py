"""Regenerate (or check) the torch lr_scheduler golden files for lucid's scheduler tests.

Usage, from the repository root::

    python tools/make_scheduler_golden.py           # write tests/golden/lr_scheduler/*.json
    python tools/make_scheduler_golden.py --check   # recompute, exit 1 if any file differs

Each case of ``tests/scheduler_cases.py`` is run through ``torch.optim.lr_scheduler``
and stored as ``{case}.json``: each group's ``lr`` and ``get_last_lr()`` (and
``momentum`` or ``betas[0]`` where the optimizer has them) after construction and after
every ``optimizer.step(); scheduler.step()``. JSON keeps every float exactly (shortest
round-trip repr).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from scheduler_cases import CASES, GOLDEN_DIR, Library, golden_path, run  # noqa: E402


def torch_library() -> Library:
    """torch, as :func:`scheduler_cases.run` uses it."""
    import torch
    import torch.optim.lr_scheduler  # noqa: F401 - the submodule, as an attribute of torch.optim

    return Library(
        optim=torch.optim,
        parameter=lambda: torch.nn.Parameter(torch.zeros(2, dtype=torch.float64)),
        tensor=lambda value: torch.tensor(value, dtype=torch.float64),
    )


def golden_text(case) -> str:
    """The golden file of ``case``, as text."""
    import torch

    record = {"case": case.name, "torch": torch.__version__.split("+")[0], **run(case, torch_library())}
    return json.dumps(record, indent=1) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    stale = []
    for case in CASES:
        text, path = golden_text(case), golden_path(case)
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(path.name)
        else:
            path.write_text(text)
    if not args.check:
        known = {golden_path(case).name for case in CASES}
        for path in GOLDEN_DIR.glob("*.json"):
            if path.name not in known:
                path.unlink()
        print(f"wrote {len(CASES)} files to {GOLDEN_DIR.relative_to(ROOT)}")
    elif stale:
        print("stale golden files:", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
