"""The examples run and learn, on every device: the README's demo and the embedding classifier."""

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

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
    # not a terminal: one whole line per tenth of the run, no bar redrawn with carriage returns
    assert "\r" not in result.stderr, result.stderr[-500:]
    progress = [line for line in result.stderr.splitlines() if line.startswith(f"training on {device}: ")]
    assert [line.split(": ")[1].split(" steps")[0] for line in progress] == [f"{k}/60" for k in range(6, 61, 6)], \
        result.stderr
    assert all(re.fullmatch(rf"training on {device}: \d+/60 steps, loss=[\d.]+, tokens/s=[\d,]+, [\d.]+ s", line)
               for line in progress), progress

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


@pytest.mark.parametrize("value", ["0", "-5"])
def test_word2vec_refuses_steps_below_one(value):
    """A usage error (argparse's exit status 2 and one line naming the option), not a traceback."""
    result = subprocess.run([sys.executable, str(EXAMPLES / "word2vec.py"), "--steps", value],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"word2vec.py: error: argument --steps: must be at least 1, not {value}"
    assert result.stdout == ""


def test_word2vec_refuses_a_plot_in_a_missing_folder(tmp_path):
    """Checked before the training, not found when it ends."""
    plot = tmp_path / "no" / "such" / "folder" / "loss.png"
    result = subprocess.run([sys.executable, str(EXAMPLES / "word2vec.py"), "--plot", str(plot)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "error: --plot: there is no folder" in result.stderr.strip().splitlines()[-1]


def test_word2vec_shows_tqdms_bar_in_a_terminal():
    """With stderr a terminal (a pseudo-terminal here), the progress is tqdm's bar, redrawn in place."""
    pytest.importorskip("tqdm")
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a window: tqdm sizes its bar
    chunks = []

    def read():
        while True:
            try:
                data = os.read(controller, 4096)
            except OSError:  # the terminal's last writer has gone
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read)
    try:
        process = subprocess.Popen([sys.executable, str(EXAMPLES / "word2vec.py"), "--steps", "5", "--plot", ""],
                                   stdout=subprocess.PIPE, stderr=terminal, text=True)
        os.close(terminal)
        reader.start()
        out, _ = process.communicate(timeout=300)
        reader.join(timeout=60)
    finally:
        os.close(controller)
    shown = b"".join(chunks).decode("utf-8", "replace")
    assert process.returncode == 0, shown
    assert "\r" in shown and re.search(r"training on cpu: 100%\|.*\| 5/5 \[", shown), shown
    assert "training on cpu: 5/5 steps" not in shown  # not the plain lines
    assert out.strip().splitlines()[-1].startswith("loss ") and "loss curve: drawn, no file written" in out
