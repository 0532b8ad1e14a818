"""``torch.save``/``torch.load`` across leafkit and PyTorch: the same file layout, round trips both ways with equal
values, storages shared as PyTorch shares them, and PyTorch's ``weights_only`` refusals (nothing is run)."""

from __future__ import annotations

import collections
import io
import os
import pathlib
import pickle
import pickletools
import warnings
import zipfile

import numpy as np
import pytest

import leafkit

torch = pytest.importorskip("torch")

LIBS = (leafkit, torch)
PAIRS = [(leafkit, torch), (torch, leafkit), (leafkit, leafkit)]
PAIR_IDS = ["leafkit-to-torch", "torch-to-leafkit", "leafkit-to-leafkit"]


def objects(lib):
    """Objects to round-trip, built the same way on either library."""
    x = lib.arange(12.0).reshape(3, 4)
    return {
        "tensors of every dtype": [
            lib.tensor([1, 0, 2], dtype=d)
            for d in (lib.float16, lib.float32, lib.float64, lib.int8, lib.int16, lib.int32, lib.int64, lib.uint8)
        ]
        + [lib.tensor([True, False])],
        "views of one storage": {
            "x": x,
            "cols": x[:, 1:3],
            "t": x.t(),
            "row": x[2],
            "el": x[1, 2],
            "exp": x[0].expand(2, 4),
        },
        "scalars and empties": [lib.tensor(5), lib.tensor(2.5), lib.zeros(0, 3), lib.ones(1, 1, 1)],
        "requires_grad": [lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True) * 3, lib.zeros(2)],
        "parameters": [lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.zeros(3), requires_grad=False)],
        "nested containers": [
            {"a": (lib.ones(2), [lib.zeros(1), {"b": lib.tensor(3)}])},
            None,
            True,
            1.5,
            "text",
            collections.OrderedDict(k=lib.ones(1)),
        ],
        "dtypes, devices, sizes": (lib.float64, lib.int64, lib.device("cpu"), lib.Size([2, 3]), (1, None)),
        "python values": {"set": {1, 2}, "complex": 1 + 2j, "bytes": b"xy", "bytearray": bytearray(b"z")},
        "one tensor twice": (lambda t: [t, t])(lib.ones(2)),
    }


def norm(v, lib):
    """A comparable description of a loaded object (types by role, tensors by dtype, shape, values, flags)."""
    if isinstance(v, lib.nn.Parameter):
        return ("Parameter", norm(v.detach(), lib), v.requires_grad, v.is_leaf)
    if isinstance(v, lib.Tensor):
        return ("Tensor", str(v.dtype), tuple(v.shape), v.detach().tolist(), v.requires_grad, v.is_leaf, v.grad_fn)
    if isinstance(v, collections.OrderedDict):
        return ("OrderedDict", [(k, norm(x, lib)) for k, x in v.items()])
    if isinstance(v, dict):
        return ("dict", [(k, norm(x, lib)) for k, x in v.items()])
    if isinstance(v, (list, tuple)) and not hasattr(v, "numel"):
        return (type(v).__name__, [norm(x, lib) for x in v])
    if isinstance(v, lib.Size):
        return ("Size", tuple(v))
    if isinstance(v, (lib.dtype, lib.device)):
        return (type(v).__name__, str(v))
    return v


def save_to_bytes(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf.getvalue()


@pytest.mark.parametrize("src,dst", PAIRS, ids=PAIR_IDS)
@pytest.mark.parametrize("name", sorted(objects(leafkit)))
def test_round_trip_gives_equal_values(src, dst, name):
    loaded = dst.load(io.BytesIO(save_to_bytes(src, objects(src)[name])))
    want = dst.load(io.BytesIO(save_to_bytes(dst, objects(dst)[name])))
    assert norm(loaded, dst) == norm(want, dst)


@pytest.mark.parametrize("src,dst", PAIRS, ids=PAIR_IDS)
def test_views_share_one_storage_after_loading(src, dst):
    out = dst.load(io.BytesIO(save_to_bytes(src, objects(src)["views of one storage"])))
    ptr = out["x"].untyped_storage().data_ptr()
    assert all(out[k].untyped_storage().data_ptr() == ptr for k in out)
    assert [out[k].storage_offset() for k in ("x", "cols", "t", "row", "el")] == [0, 1, 0, 8, 6]
    assert [out[k].stride() for k in ("x", "cols", "t", "row", "exp")] == [(4, 1), (4, 1), (1, 4), (1,), (0, 1)]
    with dst.no_grad():
        out["x"][1, 2] = 100.0
    assert out["cols"][1, 1].item() == out["t"][2, 1].item() == out["el"].item() == 100.0
    loaded_twice = dst.load(io.BytesIO(save_to_bytes(src, objects(src)["one tensor twice"])))
    assert loaded_twice[0] is loaded_twice[1]


def _records(data):
    zf = zipfile.ZipFile(io.BytesIO(data))
    return zf, zf.infolist()


def _pickle_ops(zf, prefix):
    ops = []
    for op, arg, _ in pickletools.genops(zf.read(prefix + "data.pkl")):
        if op.name in ("GLOBAL", "BINPERSID", "REDUCE", "BUILD", "SETITEMS", "TUPLE", "EMPTY_DICT", "EMPTY_LIST"):
            ops.append((op.name, arg))
    return ops


@pytest.mark.parametrize("name", sorted(objects(leafkit)))
def test_file_layout_as_pytorch(name):
    """The same records in the same order, the same small records, data aligned to 64 bytes, the same globals."""
    files = {lib: save_to_bytes(lib, objects(lib)[name]) for lib in LIBS}
    layout = {}
    for lib, data in files.items():
        zf, infos = _records(data)
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)
        for i in infos:
            if "/data/" in i.filename:
                start = (
                    i.header_offset
                    + 30
                    + len(i.filename)
                    + int.from_bytes(data[i.header_offset + 28 : i.header_offset + 30], "little")
                )
                assert start % 64 == 0, i.filename
        small = {
            i.filename: zf.read(i.filename)
            for i in infos
            if i.filename.rsplit("/", 1)[-1] in ("byteorder", "version", ".format_version", ".storage_alignment")
        }
        sizes = [zf.getinfo(n).file_size for n in zf.namelist() if "/data/" in n]
        layout[lib] = ([i.filename for i in infos], small, sizes, _pickle_ops(zf, "archive/"))
    assert layout[leafkit][:3] == layout[torch][:3]
    assert sorted(layout[leafkit][3]) == sorted(layout[torch][3])
    serial = zipfile.ZipFile(io.BytesIO(files[leafkit])).read("archive/.data/serialization_id")
    assert len(serial) == 40 and serial.isdigit()


def test_archive_name_is_the_file_name(tmp_path):
    for lib in LIBS:
        path = tmp_path / f"{lib.__name__}.weights.pth"
        lib.save({"w": lib.ones(2)}, path)
        assert zipfile.ZipFile(path).namelist()[0] == f"{lib.__name__}.weights/data.pkl"
    for src, dst in PAIRS:
        assert dst.load(str(tmp_path / f"{src.__name__}.weights.pth"))["w"].tolist() == [1.0, 1.0]
        assert dst.load(pathlib.Path(tmp_path / f"{src.__name__}.weights.pth"))["w"].tolist() == [1.0, 1.0]


def _train(lib, name, steps, model=None, opt=None):
    x = lib.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))
    for _ in range(steps):
        opt.zero_grad()
        ((model(x) - 0.5) ** 2).mean().backward()
        opt.step()


def _model(lib):
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
    with lib.no_grad():
        for k, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(np.linspace(-0.5, 0.5, p.numel(), dtype=np.float32).reshape(p.shape) * (k + 1)))
    return m


@pytest.mark.parametrize("src,dst", PAIRS[:2], ids=PAIR_IDS[:2])
@pytest.mark.parametrize(
    "name,kw",
    [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.05}), ("AdamW", {"lr": 0.05, "amsgrad": True}),
     ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}), ("Adagrad", {"lr": 0.1})],
)  # fmt: skip
def test_checkpoint_resumes_training_in_the_other_library(src, dst, name, kw, tmp_path):
    """Train 3 steps, save model and optimizer state, load them in the other library and train 3 more: the same
    weights as 6 steps in one library."""
    m, opt = _model(src), getattr(src.optim, name)
    m_opt = opt(m.parameters(), **kw)
    _train(src, name, 3, m, m_opt)
    src.save({"model": m.state_dict(), "optimizer": m_opt.state_dict(), "epoch": 3}, tmp_path / "ck.pt")
    ck = dst.load(tmp_path / "ck.pt")
    m2 = _model(dst)
    m2.load_state_dict(ck["model"])
    o2 = getattr(dst.optim, name)(m2.parameters(), lr=1.0)
    o2.load_state_dict(ck["optimizer"])
    assert ck["epoch"] == 3 and o2.param_groups[0]["lr"] == kw["lr"]
    _train(dst, name, 3, m2, o2)
    ref, ref_opt = _model(dst), None
    ref_opt = getattr(dst.optim, name)(ref.parameters(), **kw)
    _train(dst, name, 6, ref, ref_opt)
    for a, b in zip(m2.parameters(), ref.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


# -- weights_only --------------------------------------------------------------------------------------------------
class Custom:
    pass


def outcome(fn):
    try:
        return ("ok", norm_plain(fn()))
    except Exception as e:  # noqa: BLE001 - the class and message are the observation
        return ("error", type(e).__name__, str(e))


def norm_plain(v):
    if hasattr(v, "tolist"):
        return ("tensor", v.tolist())
    if isinstance(v, dict):
        return {k: norm_plain(x) for k, x in v.items()}
    return repr(v) if not isinstance(v, (int, float, str, type(None))) else v


def wo_cases(lib):
    def saved(obj):
        return io.BytesIO(save_to_bytes(lib, obj))

    def allowlisted():
        lib.serialization.add_safe_globals([Custom])
        try:
            return type(lib.load(saved({"a": Custom()}))["a"]).__name__, "Custom" in [
                getattr(g, "__name__", "") for g in lib.serialization.get_safe_globals()
            ]
        finally:
            lib.serialization.clear_safe_globals()

    def context():
        with lib.serialization.safe_globals([Custom]):
            inside = type(lib.load(saved({"a": Custom()}))["a"]).__name__
        return inside, outcome(lambda: lib.load(saved({"a": Custom()})))[1]

    return {
        "a class": lambda: lib.load(saved({"a": Custom()})),
        "os.system": lambda: lib.load(saved({"f": os.system})),
        "print": lambda: lib.load(saved({"f": print})),
        "a class, weights_only=False": lambda: type(lib.load(saved({"a": Custom()}), weights_only=False)["a"]).__name__,
        "add_safe_globals": allowlisted,
        "safe_globals": context,
        "get_unsafe_globals_in_checkpoint": lambda: lib.serialization.get_unsafe_globals_in_checkpoint(
            saved({"a": Custom(), "t": lib.ones(1)})
        ),
        "pickle_module with weights_only": lambda: lib.load(saved(1), pickle_module=pickle, weights_only=True),
        "pickle_module": lambda: lib.load(saved({"t": lib.ones(1)}), pickle_module=pickle),
        "not a zip": lambda: lib.load(io.BytesIO(b"not a zip")),
        "not a zip, weights_only=False": lambda: lib.load(io.BytesIO(b"not a zip"), weights_only=False),
        "mmap of a file object": lambda: lib.load(saved(1), mmap=True),
        "map_location dict": lambda: lib.load(saved({"t": lib.ones(1)}), map_location={"cpu": "cpu"}),
        "map_location callable": lambda: lib.load(saved({"t": lib.ones(1)}), map_location=lambda s, loc: s),
        "map_location callable None": lambda: lib.load(saved({"t": lib.ones(1)}), map_location=lambda s, loc: None),
        "map_location device": lambda: lib.load(saved({"t": lib.ones(1)}), map_location=lib.device("cpu")),
        "map_location str": lambda: lib.load(saved({"t": lib.ones(1)}), map_location="cpu"),
    }


@pytest.mark.parametrize("name", sorted(wo_cases(leafkit)))
def test_weights_only_as_pytorch(name):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = outcome(wo_cases(leafkit)[name])
        n = len(caught)
        want = outcome(wo_cases(torch)[name])
    assert [str(w.message) for w in caught[:n]] == [str(w.message) for w in caught[n:]]
    assert got == want


def test_a_whole_module_is_refused_by_default_and_loads_with_weights_only_false():
    """leafkit pickles a whole model under leafkit's names: refused by default as PyTorch refuses its own (the
    message names the class), loaded back with weights_only=False."""
    for lib in LIBS:
        with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL \S+Linear was not an allowed global by default"):
            lib.load(io.BytesIO(save_to_bytes(lib, lib.nn.Linear(2, 1))))
    m = leafkit.nn.Sequential(leafkit.nn.Linear(2, 3), leafkit.nn.ReLU())
    back = leafkit.load(io.BytesIO(save_to_bytes(leafkit, m)), weights_only=False)
    assert repr(back) == repr(m) and back[0].weight.tolist() == m[0].weight.tolist() and back[0].weight.is_leaf


class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + os.environ.get("LEAFKIT_EVIL_MARKER", "/nonexistent/x"),))


@pytest.mark.parametrize("protocol", [2, 4])
def test_a_malicious_checkpoint_is_refused_without_running_it(tmp_path, monkeypatch, protocol):
    marker = tmp_path / "ran"
    monkeypatch.setenv("LEAFKIT_EVIL_MARKER", str(marker))
    payload = pickle.dumps({"w": Evil()}, protocol=protocol)
    path = tmp_path / "evil.pt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("evil/data.pkl", payload)
        zf.writestr("evil/byteorder", "little")
        zf.writestr("evil/version", "3\n")
    seen = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
                lib.load(path)
        seen.append([(w.category, str(w.message)) for w in caught])
    assert not marker.exists()
    assert seen[0] == seen[1] and len(seen[0]) == (protocol != 2)  # "Detected pickle protocol 4 ..."


def test_cuda_tensors_saved_by_leafkit(tmp_path):
    """leafkit's cuda (simulated without a GPU) saves the location "cuda:0": PyTorch without CUDA says to map it to
    the CPU, and loads it with map_location; leafkit puts it back on cuda."""
    if leafkit.cuda.backend() is None:
        pytest.skip("leafkit's cuda is off")
    leafkit.save({"w": leafkit.ones(2).cuda()}, tmp_path / "g.pt")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            torch.load(tmp_path / "g.pt")
    assert torch.load(tmp_path / "g.pt", map_location="cpu")["w"].tolist() == [1.0, 1.0]
    back = leafkit.load(tmp_path / "g.pt")["w"]
    assert back.device.type == "cuda" and back.tolist() == [1.0, 1.0]
    assert leafkit.load(tmp_path / "g.pt", map_location={"cuda:0": "cpu"})["w"].device.type == "cpu"
    assert leafkit.load(tmp_path / "g.pt", map_location=lambda s, loc: s.cpu())["w"].device.type == "cpu"
    on_gpu = leafkit.load(tmp_path / "g.pt", map_location=lambda s, loc: s.cuda())["w"]
    assert on_gpu.device.type == "cuda"


@pytest.mark.parametrize("src,dst", PAIRS[:2], ids=PAIR_IDS[:2])
def test_mmap(src, dst, tmp_path):
    src.save({"a": src.arange(100.0), "b": src.arange(5)}, tmp_path / "m.pt")
    out = dst.load(tmp_path / "m.pt", mmap=True)
    assert out["a"][-2:].tolist() == [98.0, 99.0] and out["b"].tolist() == [0, 1, 2, 3, 4]
