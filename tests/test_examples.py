"""The examples run and learn, on every device: the README's demo and the embedding classifier."""

import re
import struct
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_embedding_demo_learns(device):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "train_embedding.py"), "--device", device, "--steps", "100"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    lines = result.stdout.strip().splitlines()
    first, last = lines[0].split(), lines[-2].split()
    assert float(last[-1]) >= 0.9 > float(first[-1]), result.stdout
    assert float(last[3]) < float(first[3]) / 10, result.stdout
    assert lines[-1].startswith(f"done on {device}: SparseAdam kept moments for 1000 rows, stepped 100 times")


def _png_size(path: Path) -> tuple:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG file"
    return struct.unpack(">II", data[16:24])


def test_word2vec_short_run(device, tmp_path):
    """The README's demo in its short mode: real text, a progress bar, neighbours, a real loss plot."""
    plot = tmp_path / "loss.png"
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "word2vec.py"), "--device", device, "--steps", "60", "--plot", str(plot)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    lines = result.stdout.strip().splitlines()
    words = int(re.match(r"corpus: ([\d,]+) words", lines[0]).group(1).replace(",", ""))
    assert words > 200_000, lines[0]  # several hundred thousand words of the stdlib's documentation
    assert "tokens/s=" in result.stderr and "60/60" in result.stderr, result.stderr[-500:]

    neighbours = [line for line in lines if re.fullmatch(r"[a-z]+: [a-z]+(, [a-z]+){5}", line)]
    assert [line.split(":")[0] for line in neighbours][:3] == ["file", "thread", "string"], result.stdout
    for line in neighbours:
        word, rest = line.split(": ")
        assert word not in rest.split(", ") and len(set(rest.split(", "))) == 6, line

    first, last = map(float, re.search(r"loss ([\d.]+) -> ([\d.]+)", lines[-1]).groups())
    assert first > 4.0 > 3.5 > last, lines[-1]  # from log(2) * 6 = 4.16 at the start
    assert lines[-1].split("loss curve: ")[1].startswith(str(plot))

    import matplotlib.image

    assert _png_size(plot) == (840, 420)
    pixels = matplotlib.image.imread(plot)
    assert pixels.shape[:2] == (420, 840) and len({tuple(p) for p in pixels.reshape(-1, pixels.shape[2])}) > 50
