"""lucid.save under SIGKILL, and lucid.load against mutated and random files (hypothesis)."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lucid

from conftest import GPU

# --- a process killed in the middle of saving a 200 MB checkpoint ------------------------------
BIG = 50_000_000  # int32 values: 200 MB
SAVER = """
import sys, lucid
path = sys.argv[1]
big = lucid.arange({n}, dtype=lucid.int32)
print("saving", flush=True)
lucid.save({{"version": 2, "big": big}}, path)
print("saved", flush=True)
"""


def _kill_while_saving(path, delay: float | None) -> float:
    """Start a child that saves the big checkpoint over ``path``; SIGKILL it ``delay`` s after it
    starts saving (None: let it finish). Returns the seconds from the start of the save to its end."""
    child = subprocess.Popen([sys.executable, "-c", SAVER.format(n=BIG), str(path)], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout.readline().strip() == "saving"
    start = time.monotonic()
    if delay is None:
        assert child.stdout.readline().strip() == "saved"
        elapsed = time.monotonic() - start
        child.wait(timeout=300)
        return elapsed
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    return time.monotonic() - start


def test_a_save_killed_at_any_moment_leaves_the_old_file_or_the_whole_new_one(tmp_path):
    """The first save runs to the end and is timed; the next ones are killed at fractions of
    that time (at once, a quarter, half, three quarters in), so that the kills land in the
    encoding, the write and the fsync whatever the machine's speed. Each next save removes
    the temporary file the killed one left."""
    path = tmp_path / "run.safetensors"
    old = {"version": 1, "weights": lucid.arange(10, dtype=lucid.float64)}
    outcomes, duration = [], None
    for fraction in (None, 0.0, 0.25, 0.5, 0.75):
        lucid.save(old, path)
        elapsed = _kill_while_saving(path, None if fraction is None else fraction * duration)
        duration = duration or elapsed
        assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".tmp")) == ["run.safetensors"]
        loaded = lucid.load(path)
        outcomes.append(loaded["version"])
        if loaded["version"] == 1:
            assert loaded["weights"].tolist() == list(range(10))
        else:
            assert loaded["version"] == 2
            big = loaded["big"].numpy()
            assert big.shape == (BIG,) and np.array_equal(big, np.arange(BIG, dtype=np.int32))
        del loaded
    assert outcomes[0] == 2 and outcomes[1] == 1  # not killed: the new file; killed at once: the old one
    lucid.save(old, path)
    assert os.listdir(tmp_path) == ["run.safetensors"]


# --- fuzzing lucid.load -----------------------------------------------------------------------------
def _valid_file() -> bytes:
    buffer = io.BytesIO()
    lucid.save({"model": {"w": lucid.tensor([[1.0, -2.0], [3.0, 0.5]]), "b": lucid.zeros(2, dtype=lucid.float16)},
                "step": 7, "flags": (True, None), "ints": lucid.tensor([1, 2, 3]),
                "mask": lucid.tensor([True, False])}, buffer)
    return buffer.getvalue()


VALID = _valid_file()
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _load_or_refuse(data: bytes, map_location=None) -> None:
    """lucid.load either returns or raises ValueError naming the file: nothing else may come out."""
    try:
        lucid.load(io.BytesIO(data), map_location=map_location)
    except ValueError as error:
        assert "<BytesIO>" in str(error)


# where the tensors go: each device's own limits (MLX's int32 dimensions) must end in ValueError too
PLACES = st.sampled_from([None, "cpu"] + (["gpu"] if GPU else []))


@FUZZ
@given(st.binary(max_size=2048))
def test_random_bytes_only_ever_raise_value_error(data):
    _load_or_refuse(data)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), min_size=1, max_size=8))
def test_a_valid_file_with_bytes_changed_only_ever_raises_value_error(changes):
    data = bytearray(VALID)
    for position, value in changes:
        data[position] = value
    _load_or_refuse(bytes(data))


@FUZZ
@given(st.integers(0, len(VALID)), st.binary(max_size=64))
def test_a_valid_file_cut_or_extended_only_ever_raises_value_error(cut, tail):
    _load_or_refuse(VALID[:cut] + tail)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_SIZE = int.from_bytes(VALID[:8], "little")
_HEADER, _BODY = json.loads(VALID[8 : 8 + _SIZE]), VALID[8 + _SIZE :]


def _with_header(header) -> bytes:
    text = json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + _BODY


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replace(value[head], rest, new)
    return copy


_STRUCTURE = json.loads(_HEADER["__metadata__"]["lucid.structure"])
STRUCTURE_PATHS = list(_paths(_STRUCTURE))
HEADER_PATHS = [p for p in _paths({k: v for k, v in _HEADER.items() if k != "__metadata__"}) if p]


def _with_structure(structure) -> bytes:
    header = dict(_HEADER, __metadata__=dict(_HEADER["__metadata__"]))
    header["__metadata__"]["lucid.structure"] = json.dumps(structure)
    return _with_header(header)


@FUZZ
@given(st.sampled_from(STRUCTURE_PATHS), JSON, PLACES)
def test_any_json_anywhere_in_the_structure_only_ever_raises_value_error(path, new, place):
    _load_or_refuse(_with_structure(_replace(_STRUCTURE, path, new)), place)


@FUZZ
@given(st.sampled_from(HEADER_PATHS), JSON, PLACES)
def test_any_json_anywhere_in_the_header_only_ever_raises_value_error(path, new, place):
    _load_or_refuse(_with_header(_replace(_HEADER, path, new)), place)


# sizes around every limit: MLX's int32 dimensions, NumPy's 2**63, safetensors' 2**64
SIZES = st.integers(0, 3) | st.sampled_from([2**31 - 1, 2**31, 2**32, 2**40, 2**62, 2**63, 2**64]) | st.integers(0)
EMPTY_SHAPES = st.tuples(st.lists(SIZES, max_size=5), st.integers(0, 5)).map(lambda s: [*s[0][: s[1]], 0, *s[0][s[1]:]])


@settings(max_examples=150, deadline=None)
@given(EMPTY_SHAPES, PLACES)
def test_an_empty_tensor_of_any_shape_loads_or_raises_value_error_on_every_device(shape, place):
    """Shape and structure agree and the data is empty, so only the devices' own limits can object."""
    buffer = io.BytesIO()
    lucid.save({"t": lucid.zeros(0), "n": 1}, buffer)
    data = buffer.getvalue()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    header["t"]["shape"] = shape
    structure = json.loads(header["__metadata__"]["lucid.structure"])
    structure["dict"][0][1]["shape"] = shape
    header["__metadata__"]["lucid.structure"] = json.dumps(structure)
    text = json.dumps(header).encode()
    _load_or_refuse(len(text).to_bytes(8, "little") + text, place)


DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=6)
INT_TEXTS = (st.text(alphabet="-+ _0123456789\u0663\u00b2xe.", max_size=12)
             | st.builds(lambda sign, n: sign + "7" * n, st.sampled_from(["", "-", "--"]), st.integers(4290, 4310))
             | st.builds(lambda a, b: f"{a}-{b}", DIGITS, DIGITS))


@settings(max_examples=150, deadline=None)
@given(INT_TEXTS, PLACES)
def test_any_text_as_a_big_int_loads_as_that_int_or_raises_value_error(text, place):
    try:
        loaded = lucid.load(io.BytesIO(_with_structure({"int": text})), map_location=place)
    except ValueError as error:
        assert "<BytesIO>" in str(error)
    else:
        assert re.fullmatch(r"-?[0-9]{1,4300}", text) and loaded == int(text)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_any_text_as_the_structure_only_ever_raises_value_error(text):
    header = dict(_HEADER, __metadata__=dict(_HEADER["__metadata__"], **{"lucid.structure": text}))
    _load_or_refuse(_with_header(header))


def test_the_fuzzed_file_is_valid_to_begin_with():
    assert lucid.load(io.BytesIO(VALID))["step"] == 7
    assert os.path.basename(__file__).startswith("test_")
