"""lucid.save / lucid.load: what round-trips, what is refused, and every bad file."""

from __future__ import annotations

import collections
import io
import json
import math
import os
import pickle
import sys
import zipfile

import numpy as np
import pytest
import safetensors.numpy

import lucid
from lucid import nn, optim
from lucid.optim import lr_scheduler, schedules, swa_utils
from snapshots import snapshot

from conftest import DEVICES, GPU, NO_MLX

AVAILABLE = [d for d in DEVICES if d == "cpu" or GPU]

DTYPES = [lucid.bool, lucid.int32, lucid.int64, lucid.float16, lucid.float32, lucid.float64]


def roundtrip(obj, **load_kwargs):
    buffer = io.BytesIO()
    lucid.save(obj, buffer)
    buffer.seek(0)
    return lucid.load(buffer, **load_kwargs)


def _sample(dtype, shape, device="cpu"):
    values = np.arange(math.prod(shape)).reshape(shape) * 1.25 - 3
    if dtype is lucid.bool:
        values = values > 0
    return lucid.tensor(values.astype(dtype.name), dtype=dtype, device=device)


# --- what round-trips ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 3), (2, 3, 4)])
def test_every_dtype_and_shape_round_trips_bit_for_bit(dtype, shape, device):
    tensor = _sample(dtype, shape, device)
    out = roundtrip({"t": tensor})["t"]
    assert snapshot(out) == snapshot(tensor)


def test_non_contiguous_tensors_are_saved_by_value():
    base = lucid.arange(24, dtype=lucid.float64).reshape(2, 3, 4)
    view = base.permute(2, 0, 1)
    out = roundtrip([view, base.transpose(0, 2)])
    assert out[0].tolist() == view.tolist() and out[0].shape == (4, 2, 3)
    assert out[1].tolist() == base.transpose(0, 2).tolist()


def test_python_values_come_back_with_their_types():
    obj = {
        "none": None, "bools": [True, False], "str": "héllo\n\"x\"", "ints": [0, -7, 2**53, 2**80, -(2**90)],
        "floats": [1.5, -0.0, float("inf"), float("-inf"), 1e-320, 1.7976931348623157e308],
        "nan": float("nan"), 3: "int key", -1: "negative key", 2.5: "float key", (1, "a"): "tuple key",
        None: "none key", True: "bool key", "tuple": (1, (2, [3])), "empty": ({}, [], ()),
        "odict": collections.OrderedDict([("b", 1), ("a", 2)]), "counter": collections.Counter([4, 4, 5]),
        "dtype": lucid.float16, "numpy": np.arange(4, dtype=np.int32), "npscalar": np.float32(0.1),
    }
    out = roundtrip(obj)
    assert list(out) == list(obj)
    assert snapshot(out) == snapshot(obj)
    for key in obj:
        assert type(out[key]) is type(obj[key])
    assert math.copysign(1.0, out["floats"][1]) == -1.0 and math.isnan(out["nan"])
    assert type(out["odict"]) is collections.OrderedDict and type(out["counter"]) is collections.Counter


def test_ints_of_up_to_4300_digits_round_trip_whatever_the_interpreters_limit():
    """4300 digits is Python's default limit on int <-> str; a file holds the same ints
    whatever sys.set_int_max_str_digits says where it is written or read (here 640, the least)."""
    values = [10**4300 - 1, -(10**4300 - 1), 2**53 + 1, -(2**64)]
    buffer = io.BytesIO()
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        lucid.save(values, buffer)
        buffer.seek(0)
        assert lucid.load(buffer) == values
    finally:
        sys.set_int_max_str_digits(previous)


def test_parameters_and_requires_grad_are_kept():
    p = nn.Parameter(lucid.ones(2))
    frozen = nn.Parameter(lucid.ones(1), requires_grad=False)
    leaf = lucid.zeros(3, requires_grad=True)
    out = roundtrip([p, frozen, leaf, lucid.ones(1)])
    assert [type(t) for t in out] == [nn.Parameter, nn.Parameter, lucid.Tensor, lucid.Tensor]
    assert [t.requires_grad for t in out] == [True, False, True, False]


def test_loaded_tensors_share_nothing_with_what_was_saved():
    t = lucid.ones(3)
    out = roundtrip({"a": t, "b": t})
    out["a"].add_(1.0)
    assert t.tolist() == [1.0, 1.0, 1.0] and out["b"].tolist() == [1.0, 1.0, 1.0]


def test_a_whole_training_state_round_trips():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = optim.Adam(model.parameters(), lr=schedules.warmup(2, schedules.cosine(0.1, 10)))
    sched_opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = lr_scheduler.OneCycleLR(sched_opt, max_lr=1.0, total_steps=10)
    plateau = lr_scheduler.ReduceLROnPlateau(optim.SGD(model.parameters(), lr=0.1))
    multistep = lr_scheduler.MultiStepLR(optim.SGD(model.parameters(), lr=0.1), milestones=[2, 2, 5])
    ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9))
    accumulation = optim.GradientAccumulation(optim.AdamW(model.parameters()), steps=3)
    guard = optim.SkipNonFinite(optim.RMSprop(model.parameters()))
    x = lucid.randn(5, 3)
    for _ in range(2):
        for o in (opt, sched_opt, accumulation, guard):
            o.zero_grad()
            model(x).sum().backward()
            o.step()
        scheduler.step()
        plateau.step(1.0)
        ema.update_parameters(model)
    checkpoint = {
        "model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": scheduler.state_dict(),
        "plateau": plateau.state_dict(), "multistep": multistep.state_dict(), "ema": ema.state_dict(),
        "accumulation": accumulation.state_dict(), "guard": guard.state_dict(), "epoch": 2,
    }
    out = roundtrip(checkpoint)
    assert snapshot(out) == snapshot(checkpoint)
    assert type(out["model"]) is collections.OrderedDict
    assert type(out["multistep"]["milestones"]) is collections.Counter
    assert list(out["optimizer"]["state"]) == [0, 1, 2, 3]


def test_the_file_is_a_plain_safetensors_file(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    lucid.save({"weights": {"w": lucid.ones(2, 3)}, "step": 4}, path)
    arrays = safetensors.numpy.load_file(str(path))
    assert [a.shape for a in arrays.values()] == [(2, 3)]
    with open(path, "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    assert header["__metadata__"]["lucid.format"] == "1"
    structure = json.loads(header["__metadata__"]["lucid.structure"])
    assert structure["dict"][1] == ["step", 4]


def test_a_safetensors_file_lucid_did_not_write_loads_as_a_flat_dict(tmp_path):
    path = tmp_path / "plain.safetensors"
    arrays = {"b": np.arange(6, dtype=np.float32).reshape(2, 3), "a": np.array(7, dtype=np.int64),
              "m": np.array([True, False])}
    safetensors.numpy.save_file(arrays, str(path), metadata={"format": "np"})
    out = lucid.load(path)
    assert sorted(out) == ["a", "b", "m"]
    for name, array in arrays.items():
        assert out[name].numpy().tobytes() == array.tobytes() and out[name].shape == array.shape
        assert out[name].device == "cpu"


@pytest.mark.parametrize("target", DEVICES)
def test_map_location_places_every_tensor(target):
    obj = {"a": lucid.ones(2, device="cpu"), "b": [lucid.zeros(1, device=AVAILABLE[-1])]}
    out = roundtrip(obj, map_location=target)
    assert out["a"].device == target and out["b"][0].device == target
    assert out["a"].tolist() == [1.0, 1.0]


@pytest.mark.skipif(not GPU, reason=NO_MLX)
def test_without_map_location_tensors_go_back_to_their_devices():
    out = roundtrip([lucid.ones(1, device=d) for d in DEVICES])
    assert [t.device for t in out] == DEVICES


@pytest.mark.parametrize("bad", ["cuda", "tpu", 0, "", {"gpu": "cpu"}, lucid.float32])
def test_a_bad_map_location_is_a_value_error(bad):
    buffer = io.BytesIO()
    lucid.save([1], buffer)
    buffer.seek(0)
    with pytest.raises(ValueError, match="map_location must be None, 'cpu' or 'gpu'"):
        lucid.load(buffer, map_location=bad)


@pytest.mark.skipif(not GPU, reason=NO_MLX)
def test_a_shape_the_device_cannot_hold_is_a_value_error_naming_the_file(tmp_path):
    """An empty tensor of shape [0, 2**40] is a NumPy array, not an MLX one (its dimensions are
    int32): on "gpu" the file is refused, naming it, the tensor and the way out."""
    header, body = _parts(_good())
    header["w"].update(shape=[0, 2**40], data_offsets=[0, 0])
    structure = json.loads(header["__metadata__"]["lucid.structure"])
    structure["dict"][0][1]["shape"] = [0, 2**40]
    header["__metadata__"]["lucid.structure"] = json.dumps(structure)
    path = tmp_path / "wide.ckpt"
    path.write_bytes(_file_with(header, body[8:]))
    assert lucid.load(path, map_location="cpu")["w"].shape == (0, 2**40)
    with pytest.raises(ValueError, match=rf"{path}: obj\['w'\] has shape \[0, {2**40}\], with a dimension over "
                                         r"2147483647, .* load it with map_location='cpu'"):
        lucid.load(path, map_location="gpu")


def test_a_gpu_checkpoint_loads_on_cpu_where_mlx_is_missing(tmp_path):
    """In a child process where ``import mlx`` fails: map_location="cpu" works, None says what to do."""
    import subprocess
    import sys

    path = tmp_path / "gpu.safetensors"
    saved = lucid.tensor([1.5, -2.0])
    buffer = io.BytesIO()
    lucid.save({"w": saved}, buffer)
    # the same file as a "gpu" run writes it: the device is a field of the structure
    header, body = _parts(buffer.getvalue())
    header["__metadata__"]["lucid.structure"] = header["__metadata__"]["lucid.structure"].replace(
        '"device":"cpu"', '"device":"gpu"')
    path.write_bytes(_file_with(header, body))
    script = f"""
import sys
sys.modules["mlx"] = None  # any import of mlx now fails, as where it is not installed
sys.modules["mlx.core"] = None
import lucid
assert not lucid.is_available("gpu")
out = lucid.load({str(path)!r}, map_location="cpu")
assert out["w"].device == "cpu" and out["w"].tolist() == [1.5, -2.0], out
try:
    lucid.load({str(path)!r})
except RuntimeError as error:
    assert "map_location='cpu'" in str(error), error
else:
    raise AssertionError("no error")
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def _file_with(header, body: bytes = b"", raw: bytes | None = None) -> bytes:
    text = raw if raw is not None else json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + body


# --- writes --------------------------------------------------------------------------------
def test_save_writes_atomically_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "ckpt"
    lucid.save({"v": 1}, path)
    lucid.save({"v": 2}, str(path))
    assert lucid.load(path) == {"v": 2}
    assert os.listdir(tmp_path) == ["ckpt"]


def test_a_failed_write_removes_its_temporary_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    path = tmp_path / "ckpt"
    lucid.save({"v": 1}, path)

    def failing_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk on fire"):
        lucid.save({"v": 2}, path)
    monkeypatch.undo()
    assert lucid.load(path) == {"v": 1}
    assert os.listdir(tmp_path) == ["ckpt"]


def test_save_to_a_file_object_writes_at_its_position():
    buffer = io.BytesIO(b"prefix")
    buffer.seek(6)
    lucid.save([lucid.ones(1)], buffer)
    buffer.seek(6)
    assert lucid.load(buffer)[0].tolist() == [1.0]


# --- what save refuses -----------------------------------------------------------------------
def _cycle():
    a = {"x": []}
    a["x"].append(a)
    return a


def _deep(n):
    value = []
    for _ in range(n):
        value = [value]
    return value


class _Thing:
    pass


REFUSED = [
    ("lambda", {"a": [lambda x: x]}, r"obj\['a'\]\[0\]: a lambda"),
    ("function", {"f": print}, r"obj\['f'\]"),
    ("object", {"o": _Thing()}, r"obj\['o'\]: a .*_Thing"),
    ("set", {"s": {1, 2}}, r"obj\['s'\]: a set"),
    ("frozenset", [frozenset()], r"obj\[0\]: a frozenset"),
    ("generator", {"g": (i for i in range(2))}, r"obj\['g'\]: a builtins.generator"),
    ("cycle", _cycle(), r"obj\['x'\]\[0\]: it contains itself"),
    ("object array", {"n": np.array([1, None], dtype=object)}, r"obj\['n'\]: a NumPy array of dtype object"),
    ("complex array", [np.zeros(2, dtype=np.complex64)], r"obj\[0\]: a NumPy array of dtype complex64"),
    ("uint8 scalar", [np.uint8(3)], r"obj\[0\]: a NumPy scalar of dtype uint8"),
    ("complex", {"c": 1j}, r"obj\['c'\]: a builtins.complex"),
    ("bytes", {"b": b"raw"}, r"obj\['b'\]: a builtins.bytes"),
    ("sparse", {"g": lucid.sparse_coo_tensor([[0]], lucid.ones(1, 2), (3, 2))}, r"obj\['g'\]: a SparseTensor"),
    ("module", {"m": nn.Linear(1, 1)}, r"obj\['m'\]: a lucid.nn.modules.linear.Linear \(save its state_dict"),
    ("optimizer", [optim.SGD([nn.Parameter(lucid.zeros(1))])], r"obj\[0\]: a lucid.optim.sgd.SGD \(save its"),
    ("defaultdict", {"d": collections.defaultdict(list)}, r"obj\['d'\]: a collections.defaultdict"),
    ("list key", {"k": {frozenset(): 1}}, r"the key frozenset\(\) of obj\['k'\]"),
    ("tensor key", [{lucid.ones(1): 1}], r"the key .* of obj\[0\]"),
    ("too deep", _deep(250), r"nested deeper than 200 levels"),
    ("top-level lambda", lambda: 0, r"the object itself: a lambda"),
    ("int of 4301 digits", {"n": [-(10**4300)]}, r"obj\['n'\]\[0\]: an int of more than 4300 digits"),
]


@pytest.mark.parametrize("name, obj, message", REFUSED, ids=[r[0] for r in REFUSED])
def test_save_refuses_what_it_cannot_store_and_leaves_the_old_file(tmp_path, name, obj, message):
    path = tmp_path / "ckpt"
    lucid.save({"old": lucid.arange(3)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match=message):
        lucid.save(obj, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt"]


@pytest.mark.parametrize("f", [None, 3, 2.5, ["a"], object()])
def test_save_and_load_refuse_what_is_not_a_path_or_file(f):
    with pytest.raises(TypeError, match="f must be a path or a binary file object"):
        lucid.save({"a": 1}, f)
    with pytest.raises(TypeError, match="f must be a path or a binary file object"):
        lucid.load(f)


def test_load_refuses_a_text_mode_file(tmp_path):
    path = tmp_path / "ckpt"
    lucid.save([1], path)
    with open(path, encoding="latin-1") as f, pytest.raises(TypeError, match="open it in binary mode"):
        lucid.load(f)


# --- bad files -------------------------------------------------------------------------------
def _good() -> bytes:
    buffer = io.BytesIO()
    lucid.save({"w": lucid.tensor([[1.0, 2.0]]), "n": [1, 2]}, buffer)
    return buffer.getvalue()


def _parts(data: bytes):
    size = int.from_bytes(data[:8], "little")
    return json.loads(data[8 : 8 + size]), data[8 + size :]


def _with_header(edit):
    header, body = _parts(_good())
    edit(header)
    return _file_with(header, body)


def _with_structure(edit_or_text):
    header, body = _parts(_good())
    if isinstance(edit_or_text, str):
        header["__metadata__"]["lucid.structure"] = edit_or_text
    else:
        structure = json.loads(header["__metadata__"]["lucid.structure"])
        edit_or_text(structure)
        header["__metadata__"]["lucid.structure"] = json.dumps(structure)
    return _file_with(header, body)


def _set(path, value):
    def edit(header):
        target = header
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


def _torch_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:  # torch.save's layout: archive/data.pkl and friends
        archive.writestr("archive/data.pkl", pickle.dumps({"w": 1}))
        archive.writestr("archive/version", "3\n")
    return buffer.getvalue()


def _npy() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ones(3))
    return buffer.getvalue()


_RNG = np.random.default_rng(12)
GOOD = _good()
_HEADER_SIZE = int.from_bytes(GOOD[:8], "little")

BAD_FILES = [
    ("empty", b"", "the file is empty"),
    ("seven bytes", b"\x01\x00\x00", "truncated"),
    ("cut in the header", GOOD[: 8 + _HEADER_SIZE // 2], "truncated"),
    ("cut in the data", GOOD[:-3], "take 8 bytes but the file holds 5|past the"),
    ("one byte more", GOOD + b"\x00", "truncated or padded"),
    ("random bytes", _RNG.bytes(4096), "not a safetensors file|truncated|not valid JSON|not UTF-8"),
    ("random small", _RNG.bytes(20), "not a safetensors file|truncated|not valid JSON|not UTF-8"),
    ("zeros", bytes(64), "not valid JSON|must be a JSON object"),
    ("pickle", pickle.dumps({"w": [1.0]}), "this is a pickle, which lucid never loads"),
    ("pickle protocol 2", pickle.dumps([1], protocol=2), "this is a pickle"),
    ("torch zip", _torch_zip(), "this is a zip archive, as torch.save writes"),
    ("npy", _npy(), "this is a NumPy .npy file"),
    ("huge header length", (2**62).to_bytes(8, "little") + b"{}", "over the 104857600-byte limit"),
    ("header longer than file", (1000).to_bytes(8, "little") + b"{}", "its header says 1000 bytes"),
    ("header not utf-8", _file_with(None, raw=b'{"\xff": 1}'), "not UTF-8"),
    ("header not json", _file_with(None, raw=b"{nope"), "the safetensors header is not valid JSON"),
    ("header a list", _file_with([1, 2]), "must be a JSON object, got list"),
    ("header NaN", _file_with(None, raw=b'{"a": NaN}'), "not valid JSON"),
    ("header duplicate names", _file_with(None, raw=b'{"a": {}, "a": {}}'), "appears twice"),
    ("header too deep", _file_with(None, raw=b"[" * 100000 + b"]" * 100000), "nested too deeply|not valid JSON"),
    ("metadata not a dict", _with_header(_set(["__metadata__"], [1])), "__metadata__ must map names to strings"),
    ("metadata value int", _with_header(_set(["__metadata__", "lucid.format"], 1)), "must map names to strings"),
    ("entry not a dict", _with_header(_set(["w"], 5)), "'w': a header entry must be an object"),
    ("entry extra field", _with_header(_set(["w", "extra"], 1)), "exactly 'dtype', 'shape' and 'data_offsets'"),
    ("entry missing dtype", _with_header(lambda h: h["w"].pop("dtype")), "exactly 'dtype'"),
    ("dtype unknown", _with_header(_set(["w", "dtype"], "F128")), "unknown dtype 'F128'"),
    ("dtype bf16", _with_header(_set(["w", "dtype"], "BF16")), "dtype BF16, which lucid has no dtype for"),
    ("dtype int", _with_header(_set(["w", "dtype"], 3)), "has a dtype that is not a string: 3"),
    ("dtype other size", _with_header(_set(["w", "dtype"], "F64")), "takes 16 bytes, but its data_offsets give 8"),
    ("shape negative", _with_header(_set(["w", "shape"], [-1, 2])), "bad shape"),
    ("shape float", _with_header(_set(["w", "shape"], [1.0, 2])), "bad shape"),
    ("shape bool", _with_header(_set(["w", "shape"], [True, 2])), "bad shape"),
    ("shape string", _with_header(_set(["w", "shape"], "12")), "bad shape"),
    ("shape too many dims", _with_header(_set(["w", "shape"], [1] * 40)), "at most 32 sizes"),
    ("shape too big", _with_header(_set(["w", "shape"], [2**40, 2**40, 0])), "too large for any array"),
    ("shape other size", _with_header(_set(["w", "shape"], [3])), "takes 12 bytes"),
    ("offsets reversed", _with_header(_set(["w", "data_offsets"], [8, 0])), "bad data_offsets"),
    ("offsets three", _with_header(_set(["w", "data_offsets"], [0, 8, 9])), "bad data_offsets"),
    ("offsets negative", _with_header(_set(["w", "data_offsets"], [-8, 0])), "bad data_offsets"),
    ("offsets past end", _with_header(_set(["w", "data_offsets"], [8, 16])), "past the 8 bytes of data"),
    ("offsets gap", _with_header(lambda h: h.update(w=dict(h["w"], shape=[1, 1], data_offsets=[4, 8]))),
     "leave a gap"),
    ("offsets overlap", _with_header(lambda h: h.update(v=dict(h["w"]))), "overlap"),
    ("bool bytes", _file_with({"b": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x07"),
     "holds bytes other than 0 and 1"),
    ("format version", _with_header(_set(["__metadata__", "lucid.format"], "2")), "format '2' is not one"),
    ("no structure", _with_header(lambda h: h["__metadata__"].pop("lucid.structure")), "no 'lucid.structure'"),
    ("structure not json", _with_structure("{oops"), "the lucid structure is not valid JSON"),
    ("structure infinity", _with_structure('{"float": Infinity}'), "not valid JSON"),
    ("structure a number", _with_structure("3.5e"), "not valid JSON"),
    ("structure unknown tag", _with_structure('{"pickle": "os.system"}'), "unknown entry \\['pickle'\\]"),
    ("structure two tags", _with_structure('{"int": "1", "float": "nan"}'), "unknown entry"),
    ("structure bad int", _with_structure('{"int": "12a"}'), "an int must be written as up to 4300 digits"),
    ("structure int not str", _with_structure('{"int": 12}'), "an int must be written as up to 4300 digits"),
    ("structure int --5", _with_structure('{"int": "--5"}'), "an int must be written as up to 4300 digits"),
    ("structure int of 5000 digits", _with_structure(json.dumps({"int": "9" * 5000})),
     r"an int must be written as up to 4300 digits, got '9999.*9999'"),
    ("structure bad float", _with_structure('{"float": "1.5"}'), "a tagged float must be"),
    ("structure bad dtype", _with_structure('{"dtype": "complex"}'), "unknown dtype 'complex'"),
    ("structure tuple of dict", _with_structure('{"tuple": {"a": 1}}'), "a tuple must hold a JSON list"),
    ("structure dict not pairs", _with_structure('{"dict": [[1, 2, 3]]}'), "list of \\[key, value\\] pairs"),
    ("structure dict object", _with_structure('{"dict": {"a": 1}}'), "list of \\[key, value\\] pairs"),
    ("structure duplicate key", _with_structure('{"dict": [["a", 1], ["a", 2]]}'), "the key 'a' appears twice"),
    ("structure list key", _with_structure('{"dict": [[[1], 2]]}'), "a dict key must be"),
    ("structure raw object", _with_structure('{"dict": [["a", {}]]}'), "unknown entry \\[\\]"),
    ("structure too deep", _with_structure("[" * 300 + "]" * 300), "nested deeper than 200 levels"),
    ("tensor missing", _with_structure(lambda s: s["dict"][0][1].update(tensor="ghost")),
     "names a tensor 'ghost' that the file does not hold"),
    ("tensor name not str", _with_structure(lambda s: s["dict"][0][1].update(tensor=3)), "names a tensor 3"),
    ("tensor other shape", _with_structure(lambda s: s["dict"][0][1].update(shape=[2, 1])),
     "has shape \\[2, 1\\] in the structure and \\[1, 2\\] in the file"),
    ("tensor other dtype", _with_structure(lambda s: s["dict"][0][1].update(dtype="float64")),
     "is 'float64' in the structure and 'float32' in the file"),
    ("tensor bad device", _with_structure(lambda s: s["dict"][0][1].update(device="cuda")), "unknown device 'cuda'"),
    ("tensor missing field", _with_structure(lambda s: s["dict"][0][1].pop("device")), "exactly the fields"),
    ("tensor grad not bool", _with_structure(lambda s: s["dict"][0][1].update(requires_grad=1)), "must be bools"),
    ("npscalar not 0-d", _with_structure('{"npscalar": "w"}'), "must be stored as a 0-d tensor"),
    ("ndarray missing", _with_structure('{"ndarray": "nope"}'), "names a tensor 'nope'"),
]


@pytest.mark.parametrize("name, data, message", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_load_refuses_a_bad_file_naming_it_and_the_problem(tmp_path, name, data, message):
    path = tmp_path / "bad.ckpt"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=message) as error:
        lucid.load(path)
    assert str(path) in str(error.value)
    assert path.read_bytes() == data


def test_an_integer_tensor_that_requires_grad_is_refused():
    data = _with_structure(lambda s: s["dict"][0][1].update(dtype="int32"))
    header, body = _parts(data)
    header["w"]["dtype"] = "I32"
    with pytest.raises(ValueError, match="cannot require grad"):
        structure = json.loads(header["__metadata__"]["lucid.structure"])
        structure["dict"][0][1]["requires_grad"] = True
        header["__metadata__"]["lucid.structure"] = json.dumps(structure)
        lucid.load(io.BytesIO(_file_with(header, body)))


def test_a_real_torch_checkpoint_is_refused_with_advice(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "model.pt"
    torch.save({"w": torch.ones(2)}, path)
    with pytest.raises(ValueError, match="zip archive, as torch.save writes: open it with torch.load"):
        lucid.load(path)


def test_a_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        lucid.load(tmp_path / "nothing-here")

