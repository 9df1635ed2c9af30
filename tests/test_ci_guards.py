"""The suite's CI rules themselves (tests/conftest.py), run on small throwaway suites in a
subprocess: under CI=true a skipped test and a module skipped at collection both fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

MODULE_SKIP = "import pytest\npytest.importorskip('no_such_module_here')\n\ndef test_never():\n    pass\n"
TEST_SKIP = "import pytest\n\ndef test_skips():\n    pytest.skip('for no reason')\n\ndef test_passes():\n    pass\n"


def _run(tmp_path, source, ci):
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_case.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CI": "true" if ci else "false"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("source", [MODULE_SKIP, TEST_SKIP], ids=["module_skip", "test_skip"])
def test_a_skip_fails_under_ci_and_is_a_skip_elsewhere(tmp_path, source):
    code, out = _run(tmp_path, source, ci=True)
    assert code in (1, 2) and "skipped under CI=true" in out, out  # 2: a collection error
    code, out = _run(tmp_path, source, ci=False)
    assert code in (0, 5) and "skipped" in out, out  # 5: nothing left to run
