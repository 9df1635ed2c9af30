"""Regenerate (or check) the torch.optim golden files for lucid's optimizer tests.

Usage, from the repository root::

    python tools/make_golden.py           # write tests/golden/optim/*.npz + MANIFEST.json
    python tools/make_golden.py --check   # recompute in memory, exit 1 if anything differs
    python tools/make_golden.py --new     # write only the missing files (a new optimizer's)
    python tools/make_golden.py --grad-tools [--check]   # only tests/golden/grad_tools/
    python tools/make_golden.py --sparse [--check]       # only tests/golden/sparse/
    python tools/make_golden.py --check --exact          # bit for bit (same machine only)

``--check`` compares as the tests do, since torch's vectorised kernels round differently on
another CPU model: float64 arrays (and the float32 files' truths) at the case's own table
(``optim_cases.tolerance_table``; PARITY elsewhere), float32 ones judged against the stored
truth both ways (``trajectories.replay_problems``: the fresh run no less accurate than the
stored one allows, and the stored one no less accurate than the fresh one; LBFGS with
``LBFGS_TRAJECTORY``), integers exactly. ``--exact``
compares raw bytes instead (dtype, shape, NaNs and -0.0 included): a check that torch on
the machine that wrote the files still reproduces them, not a property of the code.

Each case of ``tests/optim_registry.py`` is run through its entry's reference (``torch.optim``'s
class, or another library's) once per dtype (float64 and float32) and stored as ``{case}.{dtype}.npz``, the float32 file with the
float64 truth of its run (``torch_reference.golden_arrays``); each case of
``tests/lbfgs_cases.py`` through ``torch.optim.LBFGS``, stored as
``tests/golden/lbfgs/{case}.npz`` (float64) and ``{case}.float32.npz`` (with its truth). The files
are ordinary ``.npz`` archives (``np.load`` reads them), written with fixed
zip timestamps and sorted keys so that regenerating gives the same bytes.
Checks compare array contents rather than file bytes, since zlib builds may
compress differently.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import lbfgs_cases  # noqa: E402
from optim_cases import DTYPES, GOLDEN_DIR, golden_path, tolerance_table  # noqa: E402
from optim_registry import CASES, REGISTRY, info_of  # noqa: E402
from tolerances import LBFGS_TRAJECTORY, PARITY  # noqa: E402
from torch_reference import golden_arrays, golden_lbfgs_arrays, torch_version  # noqa: E402
from trajectories import replay_problems  # noqa: E402

MANIFEST = GOLDEN_DIR / "MANIFEST.json"
# Any fixed date works; this is the earliest a zip header can hold.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """Serialise ``arrays`` as a compressed ``.npz`` archive, deterministically.

    Parameters
    ----------
    arrays : dict of str to np.ndarray
        Arrays to store; keys become member names (``key + ".npy"``).

    Returns
    -------
    bytes
        The archive. Unlike ``np.savez_compressed``, it carries no
        wall-clock timestamps, and members are in sorted key order.
    """
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # the zip default depends on the host OS
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


def manifest() -> dict:
    """Describe what produced the golden files (versions, cases, files)."""
    import torch

    return {
        "generator": "tools/make_golden.py",
        "torch": torch_version(),
        "numpy": np.__version__,
        # Recorded for diagnosis only: the numbers may depend on the SIMD path.
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "python": platform.python_version(),
        **reference_versions(),
        "cases": [
            {"name": c.name, "optimizer": c.optimizer, "files": [golden_path(c, d).name for d in DTYPES]}
            for c in CASES
        ],
    }


def reference_versions() -> dict:
    """``{"references": {package: version}}`` for the reference libraries other than torch
    that registry entries name (none: an empty dict, so the manifest has no such key)."""
    from importlib.metadata import version

    packages = sorted({info.reference_package for info in REGISTRY} - {"torch"})
    return {"references": {package: version(package) for package in packages}} if packages else {}


def manifest_bytes(data: dict) -> bytes:
    """Serialise the manifest as stable, diff-friendly JSON."""
    return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()


def generate() -> dict[Path, dict[str, np.ndarray]]:
    """Run every case in every dtype (and the truth of each float32 run); return the arrays
    keyed by golden path."""
    return {golden_path(c, name): golden_arrays(c, name) for c in CASES for name in DTYPES}


def generate_lbfgs() -> dict[Path, dict[str, np.ndarray]]:
    """Run every LBFGS case (``step(closure)`` calls) in float64 and in float32 (with the
    float32 run's truth, ``{case}.float32.npz``); arrays keyed by golden path."""
    return {lbfgs_cases.golden_path(c, d): golden_lbfgs_arrays(c, d) for c in lbfgs_cases.CASES
            for d in ("float64", "float32")}


def diff_arrays(path: Path, fresh: dict[str, np.ndarray], tolerance, runs: bool = True, table=None) -> list[str]:
    """List the differences between the stored file at ``path`` and ``fresh``.

    ``tolerance`` is the table float64 arrays are held to (``{"float64": (rtol, atol)}``, as in
    tests/tolerances.py), or ``None`` to compare raw bytes. Integer arrays are compared
    exactly; float32 arrays are judged against the stored truth, both ways, as runs of steps
    along axis 0 (``runs``) or as single values, with ``table`` (the judge's default when
    None; ``trajectories.replay_problems``).
    """
    if not path.exists():
        return [f"{path.name}: missing"]
    with np.load(path, allow_pickle=False) as data:
        stored = {key: data[key] for key in data.files}
    if tolerance is not None:
        return replay_problems(stored, fresh, runs, table, float64_table=tolerance, what=path.name)
    problems = [f"{path.name}: key sets differ: {sorted(set(stored) ^ set(fresh))}"] if set(stored) != set(fresh) else []
    for key in sorted(set(stored) & set(fresh)):
        a, b = stored[key], fresh[key]
        if a.dtype != b.dtype or a.shape != b.shape:
            problems.append(f"{path.name}: {key} has dtype/shape {b.dtype}{b.shape}, stored {a.dtype}{a.shape}")
        elif a.tobytes() != b.tobytes():
            problems.append(f"{path.name}: {key} differs")
    return problems


def write_or_check(label: str, directory: Path, fresh: dict, case_names: list, check: bool,
                   exact: bool = False, runs: bool = True) -> int:
    """Write the ``fresh`` arrays (path -> arrays) and a MANIFEST.json into ``directory``, or
    check that the stored files hold them (float64 at PARITY, float32 judged against the
    stored truth, as runs when ``runs``: see :func:`diff_arrays`; or bit for bit when
    ``exact``); returns the process exit code.

    Files in ``directory`` that no case produces are removed (or, when checking, reported).
    """
    import torch

    meta = {
        "generator": f"tools/make_golden.py --{label}",
        "torch": torch_version(),
        "numpy": np.__version__,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "python": platform.python_version(),
        "cases": case_names,
    }
    manifest_path = directory / "MANIFEST.json"
    stale = sorted(set(directory.glob("*.npz")) - set(fresh)) if directory.exists() else []
    if check:
        table = None if exact else PARITY
        problems = [msg for path, arrays in fresh.items() for msg in diff_arrays(path, arrays, table, runs)]
        problems += [f"{p.name}: not produced by any case" for p in stale]
        if not manifest_path.exists() or json.loads(manifest_path.read_text()).get("cases") != case_names:
            problems.append(f"{directory.name}/MANIFEST.json: missing or a different case list")
        for msg in problems:
            print(msg)
        print(f"{'FAILED' if problems else 'ok'}: checked {len(fresh)} {label} golden files")
        return 1 if problems else 0
    directory.mkdir(parents=True, exist_ok=True)
    for path in stale:
        path.unlink()
    for path, arrays in fresh.items():
        path.write_bytes(npz_bytes(arrays))
    manifest_path.write_bytes(manifest_bytes(meta))
    print(f"wrote {len(fresh)} {label} golden files to {directory}")
    return 0


def grad_tools_golden(check: bool = False, exact: bool = False) -> int:
    """Write (or check) ``tests/golden/grad_tools/``: clipping, SWA/EMA and SWALR from torch.

    One ``{case}.npz`` per case of ``tests/grad_tools_cases.py`` (the arrays its
    ``run_torch_*`` function returns) and a ``MANIFEST.json``; the optimizer golden files
    are not touched. Returns the process exit code.
    """
    from grad_tools_cases import ALL_CASES, GOLDEN_DIR, golden_grad_tools_arrays, golden_path

    fresh = {golden_path(name): golden_grad_tools_arrays(run, case) for name, run, _, case in ALL_CASES}
    return write_or_check("grad-tools", GOLDEN_DIR, fresh, [name for name, *_ in ALL_CASES], check, exact,
                          runs=False)


def sparse_golden(check: bool = False, exact: bool = False) -> int:
    """Write (or check) ``tests/golden/sparse/``: SparseAdam, SGD and Adagrad on sparse gradients.

    One ``{case}.{dtype}.npz`` per case of ``tests/sparse_cases.py`` and dtype, and a
    ``MANIFEST.json``; no other golden file is touched. Returns the process exit code.
    """
    import sparse_cases

    cases = sparse_cases.CASES
    fresh = {sparse_cases.golden_path(c, d): sparse_cases.golden_sparse_arrays(c, d)
             for c in cases for d in sparse_cases.DTYPES}
    return write_or_check("sparse", sparse_cases.GOLDEN_DIR, fresh, [c.name for c in cases], check, exact)


def write_new() -> int:
    """Write the optimizer golden files that are missing (a new optimizer's, or new cases'),
    and list them in MANIFEST.json; the stored files, and the manifest's record of what made
    them, stay as they are. Returns the process exit code."""
    missing = [(case, name) for case in CASES for name in DTYPES if not golden_path(case, name).exists()]
    for case, name in missing:
        golden_path(case, name).write_bytes(npz_bytes(golden_arrays(case, name)))
    stored = json.loads(MANIFEST.read_text())
    stored["cases"] = manifest()["cases"]
    stored.update(reference_versions())
    MANIFEST.write_bytes(manifest_bytes(stored))
    print(f"wrote {len(missing)} new golden files: {', '.join(golden_path(c, d).name for c, d in missing) or 'none'}")
    return 0


def main(argv=None) -> int:
    """Command line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the stored files instead of writing them")
    parser.add_argument("--grad-tools", action="store_true",
                        help="only the clipping/SWA/SWALR files of tests/golden/grad_tools/")
    parser.add_argument("--sparse", action="store_true",
                        help="only the sparse-gradient files of tests/golden/sparse/")
    parser.add_argument("--new", action="store_true",
                        help="write only the missing optimizer files, and add them to MANIFEST.json")
    parser.add_argument("--exact", action="store_true",
                        help="with --check: bit for bit instead of at the tests' tolerances")
    args = parser.parse_args(argv)
    if args.exact and not args.check:
        parser.error("--exact goes with --check")
    if args.grad_tools:
        return grad_tools_golden(check=args.check, exact=args.exact)
    if args.sparse:
        return sparse_golden(check=args.check, exact=args.exact)
    if args.new:
        return write_new()

    t0 = time.perf_counter()
    fresh = generate()
    fresh_lbfgs = generate_lbfgs()
    meta = manifest()
    elapsed = time.perf_counter() - t0
    stale = sorted(set(GOLDEN_DIR.glob("*.npz")) - set(fresh)) if GOLDEN_DIR.exists() else []
    lbfgs_dir = lbfgs_cases.GOLDEN_DIR
    stale += sorted(set(lbfgs_dir.glob("*.npz")) - set(fresh_lbfgs)) if lbfgs_dir.exists() else []

    if args.check:
        tables = {golden_path(c, d): tolerance_table(c) for c in CASES for d in DTYPES}
        trajectory_tables = {golden_path(c, d): info_of(c).trajectory_table for c in CASES for d in DTYPES}
        problems = [msg for path, arrays in fresh.items()
                    for msg in diff_arrays(path, arrays, None if args.exact else tables[path],
                                           table=trajectory_tables[path])]
        problems += [msg for path, arrays in fresh_lbfgs.items()
                     for msg in diff_arrays(path, arrays, None if args.exact else PARITY, table=LBFGS_TRAJECTORY)]
        problems += [f"{p.name}: not produced by any case" for p in stale]
        if not MANIFEST.exists():
            problems.append("MANIFEST.json: missing")
        else:
            stored = json.loads(MANIFEST.read_text())
            if stored.get("cases") != meta["cases"]:
                problems.append("MANIFEST.json: case list differs")
            for tool in ("torch", "numpy"):
                # Only a warning: the arrays above are what must not change.
                if stored.get(tool) != meta[tool]:
                    print(f"note: golden files made with {tool} {stored.get(tool)}, running {meta[tool]}")
        for msg in problems:
            print(msg)
        status = "FAILED" if problems else "ok"
        print(f"{status}: checked {len(fresh) + len(fresh_lbfgs)} golden files of "
              f"{len(CASES) + len(lbfgs_cases.CASES)} cases in {elapsed:.1f} s")
        return 1 if problems else 0

    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for path in stale:
        path.unlink()
    for path, arrays in fresh.items():
        path.write_bytes(npz_bytes(arrays))
    MANIFEST.write_bytes(manifest_bytes(meta))
    lbfgs_dir.mkdir(parents=True, exist_ok=True)
    for path, arrays in fresh_lbfgs.items():
        path.write_bytes(npz_bytes(arrays))
    size = sum(p.stat().st_size for p in GOLDEN_DIR.iterdir())
    print(f"wrote {len(fresh)} golden files of {len(CASES)} cases ({size / 1024:.0f} KiB) "
          f"and {len(fresh_lbfgs)} LBFGS files in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
