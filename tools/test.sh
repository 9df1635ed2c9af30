#!/usr/bin/env bash
# Install lucid with its test dependencies into a virtual environment and run the whole
# suite: unit tests, parity with torch.optim, docstring doctests and the docs build.
#
#   bash tools/test.sh              # from the repository root (or anywhere inside it)
#   bash tools/test.sh -k adam      # extra arguments go to pytest (this one builds no docs)
#
# Environment:
#   LUCID_VENV   the virtual environment to create or reuse (default: .venv-test)
#   PYTHON       the interpreter that creates it (default: python3)
#   LUCID_TEST_WORKERS
#                the pytest-xdist workers of a whole-suite run (default: one per core, at
#                most 4; 0 runs it in one process)
#   CI=true      also require the MLX ("gpu") backend, torch, Sphinx and mypy to be importable,
#                so that a missing one fails the run instead of skipping tests.
#
# Run as root with apt-get at hand, it also installs Debian's chromium for the docs' browser
# test when it is missing (idempotent: nothing happens once it is there).
#
# Exits non-zero on any failure, including a run that collects no tests (pytest's exit 5).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

venv="${LUCID_VENV:-.venv-test}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "== creating $venv with $("$python" --version 2>&1)"
    "$python" -m venv "$venv"
fi
py="$venv/bin/python"

# An environment made before the distribution was renamed lucid-autograd holds this checkout
# as the distribution "lucid" as well: uninstalled, so that one distribution owns the package.
if "$py" -m pip show --quiet lucid >/dev/null 2>&1; then
    echo "== pip uninstall lucid (this checkout's old distribution name)"
    "$py" -m pip uninstall --quiet --yes lucid
fi

echo "== pip install -e \".[test]\""
"$py" -m pip install --quiet -e ".[test]"

# The "references" extra (reference implementations from other libraries: ADOPT's, from
# pytorch-optimizer) goes in without its dependencies, which would let pip swap the pinned torch.
references="$("$py" -c 'from importlib.metadata import requires
print(" ".join(r.split(";")[0] for r in requires("lucid-autograd") if r.endswith("extra == \"references\"")))')"
echo "== pip install --no-deps $references"
"$py" -m pip install --quiet --no-deps $references

if [ "${CI:-}" = "true" ]; then
    echo "== CI: checking that the MLX backend, torch, Sphinx and mypy are present"
    "$py" -c "import lucid; assert lucid.is_available('gpu'), 'MLX backend (gpu) is not available'"
    "$py" -c "import torch, sphinx, mypy.version; print('torch', torch.__version__, '| sphinx', sphinx.__version__, '| mypy', mypy.version.__version__)"
fi

# The docs' browser test (tests/test_docs.py) opens the built site in Debian's headless
# chromium: installed here when missing and we may (root, apt-get), once; else it is skipped
# (and under CI=true a skip fails).
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "== apt-get install chromium (for the docs' browser test)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core \
        >/dev/null; } || echo "warning: could not install chromium: the browser tests will be skipped" >&2
fi

# A run limited to some tests (-k, or paths) is a developer's: pytest gets the arguments as
# they are, and the extra passes below are skipped. A -k that does not name the docs' tests
# (-k docs, -k test_html_builds, ...) leaves them and their Sphinx build out (tests/conftest.py).
whole=1
for arg in "$@"; do
    case "$arg" in -k|-k*|tests*|lucid*|*.py|*::*) whole=0 ;; esac
done

# The whole suite runs the docs' tests (the Sphinx builds and the browser checks, about 100 s
# of one core, no torch) beside the rest, in a process with caches of its own (temporary
# files, MLX's compiled kernels, lucid's numba kernels), so that the two never build the same
# kernel file at once; its output is printed after the rest's.
docs_pid=""
if [ "$whole" -eq 1 ]; then
    docs_dir="$(mktemp -d)"
    trap 'rm -rf "$docs_dir"' EXIT
    mkdir -p "$docs_dir/tmp"
    TMPDIR="$docs_dir/tmp" LUCID_KERNEL_CACHE="$docs_dir/kernels" \
        "$py" -m pytest tests/test_docs.py "$@" >"$docs_dir/log" 2>&1 &
    docs_pid=$!
    workers="${LUCID_TEST_WORKERS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}"
    [ "$workers" -le 4 ] || workers=4
    set -- -n "$workers" --ignore=tests/test_docs.py "$@"
fi

echo "== python -m pytest $*"
status=0
"$py" -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
if [ -n "$docs_pid" ]; then
    docs_status=0
    wait "$docs_pid" || docs_status=$?
    echo "== python -m pytest tests/test_docs.py (run beside the rest): exit $docs_status"
    cat "$docs_dir/log"
    [ "$docs_status" -eq 0 ] || status=$docs_status
fi

# The update rules run two more ways than the default (numba on "cpu", mx.compile on "gpu"):
# as NumPy array expressions (no numba, or LUCID_JIT=0) and as eager MLX
# (LUCID_MLX_COMPILE=0). The golden trajectories must hold on each.
if [ "$whole" -eq 1 ] && [ "$status" -eq 0 ]; then
    echo "== parity without numba: LUCID_JIT=0 python -m pytest tests/test_optim_parity.py (cpu)"
    LUCID_JIT=0 "$py" -m pytest -q tests/test_optim_parity.py -k "golden_trajectory and cpu" || status=$?
    echo "== parity with eager MLX: LUCID_MLX_COMPILE=0 python -m pytest tests/test_optim_parity.py (gpu)"
    LUCID_MLX_COMPILE=0 "$py" -m pytest -q tests/test_optim_parity.py \
        -k "golden_trajectory and gpu and (default or amsgrad or centered or nesterov or momentum or tensor)" \
        || status=$?
fi
exit "$status"
