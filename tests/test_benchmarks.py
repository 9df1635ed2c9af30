"""The benchmark command runs (its figures are measured in benchmarks/, never asserted here)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))


def test_optimizer_benchmark_quick_mode_prints_every_table(capsys):
    pytest.importorskip("torch")
    import bench_optim_step

    assert bench_optim_step.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for heading in ("## 1. optimizer.step()", "## 3. training step"):
        assert heading in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    cpu_rows = [r for r in rows if r.split("|")[2].strip() in bench_optim_step.QUICK_LAYOUTS]
    # every optimizer at every layout on "cpu", and again on "gpu" where MLX is installed
    import lucid

    per_table = len(bench_optim_step.OPTIMIZERS) * len(bench_optim_step.QUICK_LAYOUTS)
    assert len(cpu_rows) == per_table * (2 if lucid.is_available("gpu") else 1)
    for row in cpu_rows:
        cells = [c.strip() for c in row.split("|")[3:6]]
        assert all(c == "—" or float(c) > 0 for c in cells), row


def test_optimizer_benchmark_only_prints_the_one_table_asked_for(capsys):
    pytest.importorskip("torch")
    import bench_optim_step

    assert bench_optim_step.main(["--quick", "--only", "training"]) == 0
    out = capsys.readouterr().out
    assert "## 3. training step" in out
    assert "## 1. optimizer.step()" not in out and "## 2." not in out


def test_mlx_floor_benchmark_quick_mode_prints_a_row_per_optimizer_and_layout(capsys):
    pytest.importorskip("mlx.core")
    import bench_mlx_floor
    import bench_optim_step

    assert bench_mlx_floor.main(["--quick"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and "---" not in line and "optimizer" not in line]
    assert len(rows) == 3 * len(bench_optim_step.QUICK_LAYOUTS)
    for row in rows:
        assert all(float(c.strip()) > 0 for c in row.split("|")[3:8]), row


def test_transformer_benchmark_quick_mode_prints_a_row_per_activation(capsys):
    pytest.importorskip("torch")
    import bench_transformer

    assert bench_transformer.main(["--quick"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and "---" not in line and "feed-forward" not in line]
    assert [row.split("|")[1].strip() for row in rows] == ["GELU", "ReLU"]
    for row in rows:
        assert all(float(c.strip().rstrip("x")) > 0 for c in row.split("|")[2:7]), row


def test_conv_net_benchmark_quick_mode_prints_the_table(capsys):
    pytest.importorskip("torch")
    import bench_conv_net

    assert bench_conv_net.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "## MNIST Net training step" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line and "batch" not in line]
    assert len(rows) == 1
    cells = [c.strip() for c in rows[0].split("|")[1:5]]
    assert cells[0] == "4" and float(cells[1]) > 0 and float(cells[2]) > 0 and cells[3].endswith("x")


def test_reference_benchmark_quick_mode_prints_a_row_per_optimizer_and_layout(capsys):
    pytest.importorskip("torch")
    import bench_optim_references
    import bench_optim_step

    for name, (_, module, _, _) in bench_optim_references.REFERENCES.items():
        pytest.importorskip(module)
    assert bench_optim_references.main(["--quick"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and "---" not in line and "optimizer" not in line]
    assert len(rows) == len(bench_optim_references.REFERENCES) * len(bench_optim_step.QUICK_LAYOUTS)
    for row in rows:
        cells = [c.strip() for c in row.split("|")[3:6]]
        assert all(c == "—" or float(c) > 0 for c in cells), row


def test_schedule_free_benchmark_quick_mode_prints_a_row_per_optimizer_and_layout(capsys):
    pytest.importorskip("schedulefree")
    import bench_optim_step
    import bench_schedule_free_step

    assert bench_schedule_free_step.main(["--quick"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and "---" not in line and "optimizer" not in line]
    assert len(rows) == len(bench_schedule_free_step.OPTIMIZERS) * len(bench_optim_step.QUICK_LAYOUTS)
    for row in rows:  # the reference's cells are differences of medians: numbers, of either sign in --quick
        lucid_ms, *reference_ms = (float(c.strip()) for c in row.split("|")[3:6])
        assert lucid_ms > 0, row


def test_soap_benchmark_quick_mode_prints_a_row_per_layout(capsys):
    pytest.importorskip("torch")
    pytest.importorskip("pytorch_optimizer")
    import bench_soap_step

    assert bench_soap_step.main(["--quick"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and "---" not in line and "layout" not in line]
    assert len(rows) == len(bench_soap_step.QUICK_LAYOUTS)
    for row in rows:
        assert all(float(c.strip()) > 0 for c in row.split("|")[3:6]), row


def test_algorithm_comparison_quick_mode_prints_a_row_per_algorithm_and_workload(capsys):
    import bench_algorithms

    assert bench_algorithms.main(["--quick"]) == 0
    out = capsys.readouterr().out
    algorithms = 2 + len(bench_algorithms.UNTUNED)  # tuned AdamW, AdamW warmup+cosine, the untuned
    for name in bench_algorithms.WORKLOADS:
        section = out.split(f"### {name}:")[1].split("###")[0]
        rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line
                and "algorithm" not in line]
        assert len(rows) == algorithms, section
        for row in rows:
            final = float(row.split("|")[5])
            assert math.isfinite(final) and final > 0, row
