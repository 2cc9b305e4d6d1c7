"""ember.utils.data against torch.utils.data (1.13) where torch's algorithm does not depend on
its random generator (ember's generator is Philox, torch's a Mersenne twister, so seeded
permutations differ; those cases are checked for determinism and coverage instead), plus
ember.vision's IDX datasets and transforms."""

import collections
import gzip
import os
import struct
import threading
import time

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import ember
import ember.utils.data as eud
from ember.vision import datasets, transforms

FASHION = "/usr/share/datasets/fashion-mnist"


def to_py(x):
    """Nested batches -> plain Python (tensors as (dtype name, nested lists))."""
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return (str(x.dtype).split(".")[-1], x.tolist())
    if isinstance(x, dict):
        return {k: to_py(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, tuple(to_py(v) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(to_py(v) for v in x)
    return x


def both(n=10):
    xs = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    ys = np.arange(n, dtype=np.int64) % 4
    return (eud.TensorDataset(ember.tensor(xs), ember.tensor(ys)),
            tud.TensorDataset(torch.tensor(xs), torch.tensor(ys)))


def test_sequential_and_batch_samplers_match_torch():
    for n in (0, 1, 7, 10):
        data = list(range(n))
        assert list(eud.SequentialSampler(data)) == list(tud.SequentialSampler(data))
        for bs in (1, 3, 10):
            for dl in (False, True):
                e = eud.BatchSampler(eud.SequentialSampler(data), bs, dl)
                t = tud.BatchSampler(tud.SequentialSampler(data), bs, dl)
                assert list(e) == list(t) and len(e) == len(t)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            eud.BatchSampler(range(3), bad, False)
    with pytest.raises(ValueError):
        eud.BatchSampler(range(3), 2, 1)


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 5, False),
                                                  (12, 4, True), (7, 7, False)])
def test_distributed_sampler_matches_torch(n, replicas, drop_last):
    data = list(range(n))
    seen = []
    for rank in range(replicas):
        e = eud.DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        t = tud.DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(e) == list(t) and len(e) == len(t)
        s = eud.DistributedSampler(data, replicas, rank, shuffle=True, seed=3,
                                   drop_last=drop_last)
        s.set_epoch(2)
        a = list(s)
        assert a == list(s) and len(a) == len(t)  # deterministic for (seed, epoch)
        seen += a
    if not drop_last:
        assert set(seen) == set(data)
    s0 = eud.DistributedSampler(list(range(50)), 1, 0, seed=1)
    first = list(s0)
    s0.set_epoch(1)
    assert list(s0) != first and sorted(list(s0)) == list(range(50))
    with pytest.raises(ValueError):
        eud.DistributedSampler(data, replicas, replicas)


def test_random_samplers_are_seeded_permutations():
    data = list(range(20))
    orders = [list(eud.RandomSampler(data, generator=ember.Generator().manual_seed(5)))
              for _ in range(2)]
    assert orders[0] == orders[1] and sorted(orders[0]) == data
    # The same algorithm as torch: one randperm(n) of the generator.
    assert orders[0] == ember.randperm(20, generator=ember.Generator().manual_seed(5)).tolist()
    s = eud.RandomSampler(data, num_samples=45, generator=ember.Generator().manual_seed(1))
    a = list(s)
    assert len(a) == len(s) == 45 and sorted(a[:20]) == data and sorted(a[20:40]) == data
    r = list(eud.RandomSampler(range(3), replacement=True, num_samples=70))
    assert len(r) == 70 and set(r) <= {0, 1, 2}
    with pytest.raises(ValueError):
        eud.RandomSampler(data, num_samples=0)
    with pytest.raises(TypeError):
        eud.RandomSampler(data, replacement=1)
    sub = list(eud.SubsetRandomSampler([5, 9, 11], generator=ember.Generator().manual_seed(0)))
    assert sorted(sub) == [5, 9, 11]
    w = list(eud.WeightedRandomSampler([0.0, 2.0, 0.0, 1.0], 50))
    assert set(w) <= {1, 3} and len(w) == 50
    wn = list(eud.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False))
    assert sorted(wn) == [0, 1, 2]
    with pytest.raises(ValueError):
        eud.WeightedRandomSampler([1.0], 0)
    with pytest.raises(RuntimeError):
        list(eud.WeightedRandomSampler([1.0], 2, replacement=False))


def test_random_split():
    ds = list(range(10))
    parts = eud.random_split(ds, [3, 7], generator=ember.Generator().manual_seed(42))
    perm = ember.randperm(10, generator=ember.Generator().manual_seed(42)).tolist()
    assert parts[0].indices == perm[:3] and parts[1].indices == perm[3:]
    assert [parts[1][i] for i in range(7)] == perm[3:]
    for fr in ([0.3, 0.7], [0.5, 0.25, 0.25], [0.33, 0.33, 0.34]):
        e = eud.random_split(ds, fr, generator=ember.Generator().manual_seed(0))
        t = tud.random_split(ds, fr, generator=torch.Generator().manual_seed(0))
        assert [len(p) for p in e] == [len(p) for p in t]
        assert sorted(sum((p.indices for p in e), [])) == ds
    with pytest.raises(ValueError):
        eud.random_split(ds, [3, 3])


def test_datasets_match_torch():
    e, t = both()
    assert len(e) == len(t) and to_py(e[3]) == to_py(t[3])
    ec, tc = eud.ConcatDataset([e, e]), tud.ConcatDataset([t, t])
    assert len(ec) == len(tc) and ec.cumulative_sizes == tc.cumulative_sizes
    for i in (0, 9, 10, 19, -1, -20):
        assert to_py(ec[i]) == to_py(tc[i])
    with pytest.raises(ValueError):
        ec[-21]
    assert to_py((e + e)[12]) == to_py((t + t)[12])
    es, ts = eud.Subset(e, [4, 0]), tud.Subset(t, [4, 0])
    assert to_py(es[1]) == to_py(ts[1]) and len(es) == 2
    with pytest.raises(AssertionError):
        eud.TensorDataset(ember.ones(3), ember.ones(4))


Point = collections.namedtuple("Point", "x y")


def test_default_collate_matches_torch():
    samples = [
        [ember.ones(2, 3), ember.zeros(2, 3)],
        [1, 2, 3], [1.5, 2.5], [True, False], ["a", "b"],
        [{"x": 1, "y": ember.tensor([1.0])}, {"x": 2, "y": ember.tensor([2.0])}],
        [(1, 2.0), (3, 4.0)], [[1, 2], [3, 4]], [Point(1, 2.0), Point(3, 4.0)],
        [np.arange(3), np.arange(3) + 1], [np.float64(1.5), np.float64(2.5)],
    ]
    for batch in samples:
        tb = [torch.tensor(s.tolist()) if isinstance(s, ember.Tensor) else s for s in batch]
        tb = [({k: (torch.tensor(v.tolist()) if isinstance(v, ember.Tensor) else v)
                for k, v in s.items()} if isinstance(s, dict) else s) for s in tb]
        assert to_py(eud.default_collate(batch)) == to_py(tud.default_collate(tb)), batch
    with pytest.raises(RuntimeError):
        eud.default_collate([[1, 2], [3]])
    with pytest.raises(TypeError):
        eud.default_collate([object(), object()])
    assert to_py(eud.default_convert(np.arange(3))) == ("int64", [0, 1, 2])


@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=4, drop_last=True),
                                dict(batch_size=None), dict(batch_size=1)])
@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_matches_torch(kw, workers):
    e, t = both(10)
    el = eud.DataLoader(e, num_workers=workers, **kw)
    tl = tud.DataLoader(t, **kw)
    assert len(el) == len(tl)
    for _ in range(2):
        assert [to_py(b) for b in el] == [to_py(b) for b in tl]


def test_dataloader_samplers_collate_and_errors():
    e, t = both(10)
    bs = [[1, 2], [9], [0, 3, 4]]
    assert [to_py(b) for b in eud.DataLoader(e, batch_sampler=bs)] == \
        [to_py(b) for b in tud.DataLoader(t, batch_sampler=bs)]
    samp = [5, 1, 7]
    assert [to_py(b) for b in eud.DataLoader(e, sampler=samp, batch_size=2)] == \
        [to_py(b) for b in tud.DataLoader(t, sampler=samp, batch_size=2)]
    coll = lambda b: len(b)  # noqa: E731
    assert list(eud.DataLoader(e, batch_size=4, collate_fn=coll, num_workers=3)) == [4, 4, 2]
    # Same ValueErrors as torch.
    bad = [dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=3),
           dict(persistent_workers=True), dict(sampler=[0], shuffle=True),
           dict(batch_sampler=[[0]], batch_size=2), dict(batch_size=None, drop_last=True)]
    for kw in bad:
        with pytest.raises(ValueError):
            tud.DataLoader(t, **kw)
        with pytest.raises(ValueError):
            eud.DataLoader(e, **kw)


def test_dataloader_shuffle_seeded_and_workers():
    e, _ = both(50)

    def order(workers, seed, epochs=2, **kw):
        g = ember.Generator().manual_seed(seed)
        dl = eud.DataLoader(e, batch_size=7, shuffle=True, generator=g, num_workers=workers,
                            **kw)
        return [sum((b[0][:, 0].tolist() for b in dl), []) for _ in range(epochs)]

    a = order(0, 1)
    assert a == order(3, 1) == order(2, 1, persistent_workers=True, prefetch_factor=1)
    assert a != order(0, 2) and a[0] != a[1]
    assert all(sorted(o) == list(range(0, 150, 3)) for o in a)


class _Slow(eud.Dataset):
    def __init__(self, n, fail_at=None, sleep_at=None):
        self.n, self.fail_at, self.sleep_at = n, fail_at, sleep_at
        self.infos = []

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise KeyError(f"bad sample {i}")
        if i == self.sleep_at:
            time.sleep(0.5)
        self.infos.append(eud.get_worker_info())
        return i


def test_dataloader_workers_info_errors_timeout():
    ds = _Slow(12)
    ids = []
    # Thread workers: worker_init_fn and the dataset's records run in this process.
    dl = eud.DataLoader(ds, batch_size=2, num_workers=3, worker_init_fn=ids.append,
                        multiprocessing_context="thread")
    assert [b.tolist() for b in dl] == [[i, i + 1] for i in range(0, 12, 2)]
    assert sorted(ids) == [0, 1, 2]
    assert {i.id for i in ds.infos} <= {0, 1, 2} and all(i.num_workers == 3 for i in ds.infos)
    assert eud.get_worker_info() is None
    for workers in (0, 2):
        got = []
        with pytest.raises(KeyError, match="bad sample 5"):
            for b in eud.DataLoader(_Slow(12, fail_at=5), batch_size=2, num_workers=workers):
                got.append(b.tolist())
        assert got == [[0, 1], [2, 3]]
    with pytest.raises(RuntimeError, match="timed out"):
        list(eud.DataLoader(_Slow(4, sleep_at=0), batch_size=2, num_workers=1, timeout=0.05))
    before = threading.active_count()
    for _ in range(3):
        list(eud.DataLoader(_Slow(4), batch_size=2, num_workers=2))
    assert threading.active_count() <= before + 1


class _Stream(eud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


class _TStream(tud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None)])
def test_iterable_dataset_matches_torch(kw):
    t = [to_py(b) for b in tud.DataLoader(_TStream(10), **kw)]
    for workers in (0, 1):
        el = eud.DataLoader(_Stream(10), num_workers=workers, **kw)
        assert [to_py(b) for b in el] == t
        assert len(el) == len(tud.DataLoader(_TStream(10), **kw))
    with pytest.raises(ValueError):
        eud.DataLoader(_Stream(3), shuffle=True)


def _idx_bytes(arr, code):
    dims = struct.pack(">" + "I" * arr.ndim, *arr.shape)
    return bytes([0, 0, code, arr.ndim]) + dims + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


@pytest.mark.parametrize("dtype,code", [(np.uint8, 8), (np.int8, 9), (np.int16, 11),
                                        (np.int32, 12), (np.float32, 13), (np.float64, 14)])
def test_read_idx_every_type(tmp_path, dtype, code):
    arr = (np.arange(24).reshape(2, 3, 4) * 7 - 40).astype(dtype)
    raw = _idx_bytes(arr, code)
    (tmp_path / "f").write_bytes(raw)
    (tmp_path / "f.gz").write_bytes(gzip.compress(raw))
    for name in ("f", "f.gz"):
        t = datasets.read_idx(tmp_path / name)
        assert t.numpy().dtype == arr.dtype
        np.testing.assert_array_equal(t.numpy(), arr)


def test_read_idx_malformed(tmp_path):
    good = _idx_bytes(np.zeros((2, 3), np.uint8), 8)
    cases = {b"\x00": "too short", b"\x01" + good[1:]: "bad magic",
             good[:2] + b"\x07" + good[3:]: "unknown IDX element type",
             good[:-1]: "need 6 bytes", good + b"x": "need 6 bytes",
             gzip.compress(good)[:-5]: "truncated gzip",
             gzip.compress(good) + b"junk": "after the gzip stream"}
    p = tmp_path / "bad"
    for raw, msg in cases.items():
        p.write_bytes(raw)
        with pytest.raises(RuntimeError, match=msg) as e:
            datasets.read_idx(p)
        assert str(p) in str(e.value)


def test_mnist_layout_and_errors(tmp_path):
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    imgs = np.arange(2 * 4 * 5, dtype=np.uint8).reshape(2, 4, 5)
    (raw / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(_idx_bytes(imgs, 8)))
    (raw / "t10k-labels-idx1-ubyte").write_bytes(_idx_bytes(np.array([3, 1], np.uint8), 8))
    ds = datasets.MNIST(tmp_path, train=False, transform=transforms.ToTensor())
    assert len(ds) == 2
    img, target = ds[1]
    assert target == 1 and tuple(img.shape) == (1, 4, 5) and img.dtype == ember.float32
    np.testing.assert_allclose(img.numpy()[0], imgs[1] / 255.0, rtol=1e-6)
    with pytest.raises(RuntimeError, match="Dataset not found"):
        datasets.MNIST(tmp_path, train=True)
    (raw / "t10k-labels-idx1-ubyte").write_bytes(_idx_bytes(np.array([3, 1, 2], np.uint8), 8))
    with pytest.raises(RuntimeError, match="labels"):
        datasets.MNIST(tmp_path, train=False)


@pytest.mark.skipif(not os.path.exists(FASHION), reason="Fashion-MNIST is not installed")
def test_fashion_mnist_from_debian():
    ds = datasets.FashionMNIST(FASHION, train=False)
    with gzip.open(os.path.join(FASHION, "t10k-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read()[8:], np.uint8)
    with gzip.open(os.path.join(FASHION, "t10k-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read()[16:], np.uint8).reshape(-1, 28, 28)
    assert len(ds) == 10000 and ds.data.dtype == ember.uint8
    np.testing.assert_array_equal(ds.targets.numpy(), labels)
    np.testing.assert_array_equal(ds.data.numpy(), images)
    imgs, targets = ember._C._data.read_mnist(FASHION, False)
    assert tuple(imgs.shape) == (10000, 1, 28, 28) and targets.dtype == ember.int64
    np.testing.assert_allclose(imgs.numpy()[:, 0], images / np.float32(255), rtol=1e-6)


def test_transforms():
    x = ember.arange(2 * 3 * 4, dtype=ember.float32).view(2, 3, 4)
    tx = torch.arange(24, dtype=torch.float32).view(2, 3, 4)
    n = transforms.Normalize([1.0, 2.0], [2.0, 4.0])(x)
    ref = (tx - torch.tensor([1.0, 2.0]).view(2, 1, 1)) / torch.tensor([2.0, 4.0]).view(2, 1, 1)
    np.testing.assert_allclose(n.numpy(), ref.numpy())
    with pytest.raises(TypeError):
        transforms.Normalize([0.0], [1.0])(ember.arange(8).view(2, 2, 2))
    with pytest.raises(ValueError):
        transforms.Normalize([0.0], [0.0])(x)
    crop = transforms.RandomCrop(2, padding=1)(x)
    assert tuple(crop.shape) == (2, 2, 2)
    padded = np.pad(x.numpy(), ((0, 0), (1, 1), (1, 1)))
    assert any(np.array_equal(crop.numpy(), padded[:, i:i + 2, j:j + 2])
               for i in range(4) for j in range(5))
    assert transforms.RandomCrop((3, 4))(x) is x
    with pytest.raises(ValueError):
        transforms.RandomCrop(5)(x)
    np.testing.assert_array_equal(transforms.RandomHorizontalFlip(1.0)(x).numpy(),
                                  x.numpy()[..., ::-1])
    assert transforms.RandomHorizontalFlip(0.0)(x) is x
    # 90 degrees counter-clockwise on a square image is np.rot90.
    sq = ember.arange(25, dtype=ember.float32).view(1, 5, 5)
    np.testing.assert_array_equal(transforms.RandomRotation((90, 90))(sq).numpy(),
                                  np.rot90(sq.numpy(), 1, axes=(1, 2)))
    np.testing.assert_array_equal(transforms.RandomRotation(0)(sq).numpy(), sq.numpy())
    u8 = ember.tensor([[[0, 51, 255]]], dtype=ember.uint8)
    np.testing.assert_allclose(transforms.ConvertImageDtype(ember.float32)(u8).numpy(),
                               [[[0.0, 0.2, 1.0]]], rtol=1e-6)
    f = ember.tensor([0.0, 0.5, 1.0])
    assert transforms.ConvertImageDtype(ember.uint8)(f).tolist() == [0, 127, 255]
    pipe = transforms.Compose([transforms.ToTensor(), transforms.Normalize([0.5], [0.5])])
    out = pipe(ember.tensor([[0, 255]], dtype=ember.uint8))
    assert tuple(out.shape) == (1, 1, 2) and out.tolist() == [[[-1.0, 1.0]]]
    batch = ember.rand(16, 1, 6, 6)
    g = ember.Generator().manual_seed(0)
    assert tuple(transforms.random_crop_batch(batch, 4, 1, g).shape) == (16, 1, 4, 4)
    fl = transforms.random_horizontal_flip_batch(batch, 0.5, g)
    flips = [bool(np.array_equal(fl[i].numpy(), batch[i].numpy()[..., ::-1])) for i in range(16)]
    same = [bool(np.array_equal(fl[i].numpy(), batch[i].numpy())) for i in range(16)]
    assert all(a or b for a, b in zip(flips, same)) and 0 < sum(flips) < 16
    r = transforms.random_rotation_batch(batch, 30.0, g)
    assert tuple(r.shape) == tuple(batch.shape)
