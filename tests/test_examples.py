"""The README's demo runs and learns, on every device."""

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "train_embedding.py"


def test_embedding_demo_learns(device):
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--device", device, "--steps", "100"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    lines = result.stdout.strip().splitlines()
    first, last = lines[0].split(), lines[-2].split()
    assert float(last[-1]) >= 0.9 > float(first[-1]), result.stdout
    assert float(last[3]) < float(first[3]) / 10, result.stdout
    assert lines[-1].startswith(f"done on {device}: SparseAdam kept moments for 1000 rows, stepped 100 times")
