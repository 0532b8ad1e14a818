"""``torch.utils.data`` on leafkit and on PyTorch: the same batches, lengths, collation, errors and warnings.

Random orders differ (leafkit's generator is NumPy's), so the cases with ``shuffle``/random samplers compare
what does not depend on the draw: lengths, the set of indices, the shapes of the batches.
"""

from __future__ import annotations

import collections
import re
import warnings

import numpy as np
import pytest

import leafkit
import leafkit.utils.data

torch = pytest.importorskip("torch")
torch_data = pytest.importorskip("torch.utils.data")

P = collections.namedtuple("P", "x y")


def run(fn):
    """The value (as text, object addresses removed) and the warnings of ``fn()``, or what it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", _text(fn()))
        except Exception as e:  # noqa: BLE001 - the class and message are the observation
            out = ("error", type(e).__name__, _text(str(e)))
    return out, [(w.category.__name__, _text(str(w.message))) for w in caught]


def _text(v):
    return re.sub(r" at 0x[0-9a-f]+", "", re.sub(r"<(abc|__main__|[\w.]+)\.(\w+) object", r"<\2 object", repr(v)))


def cases(torch, data):
    X = torch.arange(10.0).reshape(5, 2)
    y = torch.arange(5)
    ds = data.TensorDataset(X, y)

    class It(data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    class Short(data.IterableDataset):  # reports a length shorter than what it yields
        def __iter__(self):
            return iter(range(4))

        def __len__(self):
            return 2

    class NoGet(data.Dataset):
        pass

    class Dicts(data.Dataset):
        def __getitem__(self, i):
            return {"x": np.float32(i), "label": f"s{i}", "v": [i, i + 1], "t": torch.full((2,), float(i))}

        def __len__(self):
            return 3

    def seeded_shuffle():
        torch.manual_seed(3)
        a = [b[1].tolist() for b in data.DataLoader(ds, batch_size=2, shuffle=True)]
        torch.manual_seed(3)
        b = [b[1].tolist() for b in data.DataLoader(ds, batch_size=2, shuffle=True)]
        return a == b, sorted(sum(a, [])), [len(x) for x in a]

    def generator_shuffle():
        g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
        a = [b[1].tolist() for b in data.DataLoader(ds, batch_size=5, shuffle=True, generator=g1)]
        b = [b[1].tolist() for b in data.DataLoader(ds, batch_size=5, shuffle=True, generator=g2)]
        return a == b, sorted(a[0])

    def split_union():
        parts = data.random_split(range(10), [3, 7], generator=torch.Generator().manual_seed(1))
        again = data.random_split(range(10), [3, 7], generator=torch.Generator().manual_seed(1))
        return sorted(i for s in parts for i in s), [list(p) for p in parts] == [list(p) for p in again]

    return {
        "len": lambda: len(ds),
        "item": lambda: ds[1],
        "slice": lambda: ds[1:3],
        "size mismatch": lambda: data.TensorDataset(X, torch.arange(4)),
        "batches": lambda: list(data.DataLoader(ds, batch_size=2)),
        "drop_last": lambda: list(data.DataLoader(ds, batch_size=2, drop_last=True)),
        "len of loaders": lambda: (
            len(data.DataLoader(ds, batch_size=2)),
            len(data.DataLoader(ds, batch_size=2, drop_last=True)),
            len(data.DataLoader(ds)),
        ),
        "batch_size=None": lambda: list(data.DataLoader(ds, batch_size=None))[:2],
        "shuffle with sampler": lambda: data.DataLoader(ds, shuffle=True, sampler=data.SequentialSampler(ds)),
        "batch_sampler with batch_size": lambda: data.DataLoader(ds, batch_size=2, batch_sampler=[[0, 1]]),
        "batch_sampler with drop_last": lambda: data.DataLoader(ds, batch_sampler=[[0, 1]], drop_last=True),
        "batch_sampler": lambda: list(data.DataLoader(ds, batch_sampler=[[0, 1], [4]])),
        "sampler": lambda: list(data.DataLoader(ds, sampler=[4, 3], batch_size=2)),
        "batch_size=None with drop_last": lambda: data.DataLoader(ds, batch_size=None, drop_last=True),
        "negative num_workers": lambda: data.DataLoader(ds, num_workers=-1),
        "prefetch_factor without workers": lambda: data.DataLoader(ds, prefetch_factor=2),
        "persistent_workers without workers": lambda: data.DataLoader(ds, persistent_workers=True),
        "multiprocessing_context without workers": lambda: data.DataLoader(ds, multiprocessing_context="fork"),
        "negative timeout": lambda: data.DataLoader(ds, timeout=-1),
        "set batch_size later": lambda: setattr(data.DataLoader(ds), "batch_size", 3),
        "set sampler later": lambda: setattr(data.DataLoader(ds), "sampler", None),
        "pin_memory": lambda: len(list(data.DataLoader(ds, pin_memory=True))),
        "batch_size=0": lambda: data.DataLoader(ds, batch_size=0),
        "BatchSampler drop_last=1": lambda: data.BatchSampler(range(3), 2, 1),
        "BatchSampler": lambda: (
            list(data.BatchSampler(range(7), 3, False)),
            list(data.BatchSampler(range(7), 3, True)),
            len(data.BatchSampler(range(7), 3, False)),
            len(data.BatchSampler(range(7), 3, True)),
        ),
        "SequentialSampler": lambda: (list(data.SequentialSampler(range(4))), len(data.SequentialSampler(range(4)))),
        "RandomSampler": lambda: (
            len(data.RandomSampler(range(4))),
            sorted(data.RandomSampler(range(4))),
            len(list(data.RandomSampler(range(4), num_samples=10))),
            sorted(set(data.RandomSampler(range(4), num_samples=10))),
            len(list(data.RandomSampler(range(4), replacement=True, num_samples=70))),
        ),
        "RandomSampler replacement=1": lambda: data.RandomSampler(range(4), replacement=1),
        "RandomSampler num_samples=0": lambda: data.RandomSampler(range(4), num_samples=0),
        "SubsetRandomSampler": lambda: (
            sorted(data.SubsetRandomSampler([5, 7, 9])),
            len(data.SubsetRandomSampler([5])),
        ),
        "WeightedRandomSampler": lambda: (
            list(data.WeightedRandomSampler([0.0, 1.0, 0.0], 5)),
            sorted(data.WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False)),
        ),
        "WeightedRandomSampler 2-d": lambda: data.WeightedRandomSampler([[1.0]], 5),
        "WeightedRandomSampler num_samples=0": lambda: data.WeightedRandomSampler([1.0], 0),
        "seeded shuffle": seeded_shuffle,
        "shuffle with a generator": generator_shuffle,
        "collate tensors": lambda: data.default_collate([torch.ones(2), torch.zeros(2)]),
        "collate tensors of unequal size": lambda: data.default_collate([torch.ones(2), torch.zeros(3)]),
        "collate ints": lambda: data.default_collate([1, 2, 3]),
        "collate floats": lambda: data.default_collate([1.0, 2.5]),
        "collate bools": lambda: data.default_collate([True, False]),
        "collate strings": lambda: data.default_collate(["a", "b"]),
        "collate float32 arrays": lambda: data.default_collate([np.ones(2, np.float32), np.zeros(2, np.float32)]),
        "collate float64 arrays": lambda: data.default_collate([np.ones(2), np.zeros(2)]),
        "collate int32 scalars": lambda: data.default_collate([np.int32(1), np.int32(2)]),
        "collate float64 scalars": lambda: data.default_collate([np.float64(1), np.float64(2)]),
        "collate float32 scalars": lambda: data.default_collate([np.float32(1), np.float32(2)]),
        "collate string arrays": lambda: data.default_collate([np.array(["a"]), np.array(["b"])]),
        "collate tuples": lambda: data.default_collate([(1, 2.0), (3, 4.0)]),
        "collate lists": lambda: data.default_collate([[1, 2], [3, 4]]),
        "collate lists of unequal length": lambda: data.default_collate([[1, 2], [3]]),
        "collate dicts": lambda: data.default_collate([{"a": 1, "b": torch.ones(2)}, {"a": 2, "b": torch.zeros(2)}]),
        "collate namedtuples": lambda: data.default_collate([P(1, 2.0), P(3, 4.0)]),
        "collate objects": lambda: data.default_collate([object(), object()]),
        "collate None": lambda: data.default_collate([None, None]),
        "collate a tensor that requires grad": lambda: data.default_collate(
            [torch.ones(2, requires_grad=True), torch.zeros(2)]
        ),
        "default_convert": lambda: data.default_convert([np.ones(2), (np.float64(3), "s"), {"k": np.int64(2)}]),
        "Subset": lambda: (len(data.Subset(ds, [4, 0])), data.Subset(ds, [4, 0])[1], data.Subset(ds, [4, 0])[[0, 1]]),
        "Subset in a loader": lambda: list(data.DataLoader(data.Subset(ds, [4, 0, 2]), batch_size=2)),
        "ConcatDataset": lambda: (
            len(ds + ds),
            (ds + ds)[7],
            (ds + ds)[-1],
            data.ConcatDataset([ds, ds]).cumulative_sizes,
        ),
        "ConcatDataset index past the start": lambda: (ds + ds)[-11],
        "ConcatDataset of nothing": lambda: data.ConcatDataset([]),
        "ConcatDataset of an IterableDataset": lambda: data.ConcatDataset([It(2)]),
        "random_split lengths": lambda: [len(s) for s in data.random_split(range(10), [3, 7])],
        "random_split fractions": lambda: [len(s) for s in data.random_split(range(10), [0.33, 0.33, 0.34])],
        "random_split empty split": lambda: [len(s) for s in data.random_split(range(2), [0.1, 0.9, 0.0])],
        "random_split wrong sum": lambda: data.random_split(range(10), [3, 6]),
        "random_split bad fraction": lambda: data.random_split(range(10), [1.5, -0.5]),
        "random_split covers the dataset": split_union,
        "IterableDataset batches": lambda: list(data.DataLoader(It(5), batch_size=2)),
        "IterableDataset drop_last": lambda: list(data.DataLoader(It(5), batch_size=2, drop_last=True)),
        "IterableDataset len": lambda: (
            len(data.DataLoader(It(5), batch_size=2)),
            len(data.DataLoader(It(5), batch_size=2, drop_last=True)),
        ),
        "IterableDataset shuffle": lambda: data.DataLoader(It(5), shuffle=True),
        "IterableDataset sampler": lambda: data.DataLoader(It(5), sampler=[0]),
        "IterableDataset batch_size=None": lambda: list(data.DataLoader(It(3), batch_size=None)),
        "IterableDataset longer than its len": lambda: (lambda dl: (len(dl), list(dl)))(
            data.DataLoader(Short(), batch_size=None)
        ),
        "ChainDataset": lambda: (list(It(2) + It(3)), len(It(2) + It(3))),
        "Dataset without __getitem__": lambda: NoGet()[0],
        "StackDataset": lambda: (
            data.StackDataset(X, y)[0],
            data.StackDataset(a=X, b=y)[1],
            len(data.StackDataset(X, y)),
        ),
        "StackDataset size mismatch": lambda: data.StackDataset(X, torch.arange(3)),
        "StackDataset of nothing": lambda: data.StackDataset(),
        "get_worker_info": lambda: data.get_worker_info(),
        "dict samples": lambda: list(data.DataLoader(Dicts(), batch_size=2)),
        "collate_fn": lambda: list(data.DataLoader(ds, batch_size=2, collate_fn=lambda b: len(b))),
        "Dataset[int]": lambda: data.Dataset[int] is not None,
    }


NAMES = sorted(cases(leafkit, leafkit.utils.data))


@pytest.mark.parametrize("name", NAMES)
def test_same_as_pytorch(name):
    got = run(cases(leafkit, leafkit.utils.data)[name])
    want = run(cases(torch, torch_data)[name])
    assert got == want


def test_the_names_of_torch_utils_data():
    assert set(leafkit.utils.data.__all__) <= set(dir(torch_data))
    assert leafkit.utils.data.DataLoader.__name__ == "DataLoader"
    assert hasattr(leafkit, "utils") and leafkit.utils.data is leafkit.utils.data


def test_num_workers_warns_once_and_gives_the_same_batches(monkeypatch):
    """leafkit has no worker processes: num_workers > 0 says so (a UserWarning, once per process) and loads the
    same batches in the main process."""
    from leafkit.utils.data import dataloader

    monkeypatch.setattr(dataloader, "_warned_workers", [False])
    ds = leafkit.utils.data.TensorDataset(leafkit.arange(6.0), leafkit.arange(6))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        two = leafkit.utils.data.DataLoader(ds, batch_size=4, num_workers=2, worker_init_fn=print)
        again = leafkit.utils.data.DataLoader(ds, batch_size=4, num_workers=4)
    assert [(w.category, str(w.message)) for w in caught] == [
        (
            UserWarning,
            "leafkit's DataLoader has no worker processes: num_workers=2 loads the batches in the main process, one "
            "after another, as num_workers=0 does (the same batches in the same order); worker_init_fn is not "
            "called (there is no worker).",
        )
    ]
    assert two.prefetch_factor == 2 and again.num_workers == 4
    zero = leafkit.utils.data.DataLoader(ds, batch_size=4)
    for a, b in zip(two, zero):
        assert [t.tolist() for t in a] == [t.tolist() for t in b]
