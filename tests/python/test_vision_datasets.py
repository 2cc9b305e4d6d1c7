"""ember.vision.datasets: FakeData, ImageFolder / DatasetFolder on a temporary tree of PNG and
JPEG files (against torchvision's ImageFolder on the same tree), CIFAR-10/100 from batch files
written here with pickle, and hostile pickles refused."""

import os
import pickle

import numpy as np
import pytest
import torchvision

import ember
from ember.vision import datasets, io, transforms
from ember.vision.datasets import folder


def test_fakedata():
    ds = datasets.FakeData(size=5, image_size=(3, 6, 7), num_classes=4, random_offset=3)
    assert len(ds) == 5
    img, target = ds[2]
    assert tuple(img.shape) == (3, 6, 7) and img.dtype == ember.float32
    assert isinstance(target, int) and 0 <= target < 4
    again, t2 = ds[2]
    np.testing.assert_array_equal(img.numpy(), again.numpy())  # deterministic per index
    assert t2 == target
    assert not np.array_equal(ds[1][0].numpy(), img.numpy())
    np.testing.assert_array_equal(ds[-1][0].numpy(), ds[4][0].numpy())
    # The global generator is untouched.
    ember.manual_seed(5)
    a = ember.rand(3)
    ember.manual_seed(5)
    ds[0]
    np.testing.assert_array_equal(ember.rand(3).numpy(), a.numpy())
    with pytest.raises(IndexError):
        ds[5]
    tds = datasets.FakeData(size=2, image_size=(1, 2, 2), transform=lambda x: x * 0,
                            target_transform=lambda t: -1)
    img, t = tds[0]
    assert float(img.abs().sum()) == 0.0 and t == -1
    assert "Number of datapoints: 2" in repr(tds)


def _tree(root):
    """root/cat/{a.png,b.jpg,sub/c.png}, root/dog/{d.jpeg, notes.txt}, root/empty_not_dir.txt."""
    rs = np.random.RandomState(0)
    files = {"cat/a.png": (5, 6), "cat/b.jpg": (8, 8), "cat/sub/c.PNG": (4, 3),
             "dog/d.jpeg": (6, 10)}
    for rel, (h, w) in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        img = ember.from_numpy(rs.randint(0, 256, (3, h, w), dtype=np.uint8))
        if rel.lower().endswith(".png"):
            io.write_png(img, p)
        else:
            io.write_jpeg(img, p, quality=90)
    (root / "dog" / "notes.txt").write_text("not an image")
    (root / "stray.txt").write_text("not a class")
    return files


def test_image_folder_matches_torchvision(tmp_path):
    _tree(tmp_path)
    ds = datasets.ImageFolder(tmp_path)
    ref = torchvision.datasets.ImageFolder(str(tmp_path))
    assert ds.classes == ref.classes == ["cat", "dog"]
    assert ds.class_to_idx == ref.class_to_idx
    assert ds.samples == ref.samples and ds.imgs == ds.samples
    assert ds.targets == ref.targets == [0, 0, 0, 1]
    assert len(ds) == 4
    for i in range(4):
        img, target = ds[i]
        rimg, rtarget = ref[i]
        assert target == rtarget
        np.testing.assert_array_equal(np.asarray(img), np.asarray(rimg))  # both PIL RGB images
    # ember's own decoder as the loader: uint8 3×H×W tensors with the same pixels.
    eds = datasets.ImageFolder(tmp_path, loader=folder.ember_loader,
                               transform=transforms.ConvertImageDtype(ember.float32),
                               target_transform=lambda t: t + 10)
    img, target = eds[1]
    assert target == 10 and img.dtype == ember.float32 and tuple(img.shape) == (3, 8, 8)
    np.testing.assert_allclose(img.numpy(), np.asarray(ref[1][0]).transpose(2, 0, 1) / 255.0,
                               rtol=1e-6)


def test_dataset_folder_rules(tmp_path):
    _tree(tmp_path)
    ds = datasets.DatasetFolder(tmp_path, loader=os.path.getsize, extensions=(".png", ".jpeg"))
    assert [os.path.relpath(p, tmp_path) for p, _ in ds.samples] == \
        ["cat/a.png", "cat/sub/c.PNG", "dog/d.jpeg"]
    assert ds[0] == (os.path.getsize(tmp_path / "cat" / "a.png"), 0)
    with pytest.raises(FileNotFoundError, match="cat"):  # cat has no .txt file
        datasets.DatasetFolder(tmp_path, loader=os.path.getsize, extensions=".txt")
    with pytest.raises(FileNotFoundError, match="cat"):
        folder.make_dataset(str(tmp_path), {"cat": 0, "dog": 1}, extensions=".txt")
    got = folder.make_dataset(str(tmp_path), {"dog": 0}, extensions=".txt")
    assert got == [(os.path.join(str(tmp_path), "dog", "notes.txt"), 0)]
    ref = torchvision.datasets.folder.make_dataset(str(tmp_path), {"dog": 0}, extensions=".txt")
    assert got == ref
    with pytest.raises(FileNotFoundError, match="dog"):
        folder.make_dataset(str(tmp_path), None, is_valid_file=lambda p: p.endswith("c.PNG"))
    got = folder.make_dataset(str(tmp_path), {"cat": 0}, is_valid_file=lambda p: "sub" in p)
    assert got == [(os.path.join(str(tmp_path), "cat", "sub", "c.PNG"), 0)]
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        folder.make_dataset(str(tmp_path), {"dog": 0})
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        folder.make_dataset(str(tmp_path), {"dog": 0}, ".txt", lambda p: True)
    with pytest.raises(ValueError):
        folder.make_dataset(str(tmp_path), {}, extensions=".txt")
    assert folder.find_classes(str(tmp_path)) == \
        torchvision.datasets.folder.find_classes(str(tmp_path))
    (tmp_path / "nothing").mkdir()
    with pytest.raises(FileNotFoundError, match="class folder"):
        folder.find_classes(str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="transforms or transform"):
        datasets.VisionDataset(tmp_path, transforms=lambda a, b: (a, b), transform=lambda a: a)


def _write_batch(path, data, labels, key="labels", protocol=2):
    with open(path, "wb") as f:
        pickle.dump({"batch_label": "synthetic", key: labels, "data": data,
                     "filenames": [f"{i}.png" for i in range(len(labels))]}, f, protocol=protocol)


@pytest.mark.parametrize("protocol", [2, 4])
def test_cifar10_from_synthetic_batches(tmp_path, protocol):
    folder_ = tmp_path / "cifar-10-batches-py"
    folder_.mkdir()
    rs = np.random.RandomState(0)
    chunks = []
    for k in range(1, 6):
        data = rs.randint(0, 256, (3, 3072), dtype=np.uint8)
        chunks.append(data)
        _write_batch(folder_ / f"data_batch_{k}", data, [k, k + 1, 0], protocol=protocol)
    test = rs.randint(0, 256, (2, 3072), dtype=np.uint8)
    _write_batch(folder_ / "test_batch", test, [9, 8], protocol=protocol)
    names = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
             "truck"]
    with open(folder_ / "batches.meta", "wb") as f:
        pickle.dump({"label_names": names, "num_vis": 3072}, f, protocol=protocol)

    ds = datasets.CIFAR10(tmp_path, train=True)
    assert len(ds) == 15 and ds.classes == names and ds.class_to_idx["cat"] == 3
    assert ds.data.shape == (15, 32, 32, 3) and ds.data.dtype == np.uint8
    np.testing.assert_array_equal(ds.data[4], chunks[1][1].reshape(3, 32, 32).transpose(1, 2, 0))
    assert ds.targets[:6] == [1, 2, 0, 2, 3, 0]
    img, target = ds[4]
    assert target == 3
    np.testing.assert_array_equal(np.asarray(img), ds.data[4])
    tds = datasets.CIFAR10(tmp_path, train=False, transform=transforms.ToTensor())
    img, target = tds[1]
    assert target == 8 and tuple(img.shape) == (3, 32, 32)
    np.testing.assert_allclose(img.numpy(), test[1].reshape(3, 32, 32) / 255.0, rtol=1e-6)
    assert "Split: Test" in repr(tds)


def test_cifar100_and_missing_files(tmp_path):
    with pytest.raises(RuntimeError, match="nothing is downloaded"):
        datasets.CIFAR100(tmp_path, download=True)
    with pytest.raises(RuntimeError, match="Dataset not found"):
        datasets.CIFAR10(tmp_path)
    folder_ = tmp_path / "cifar-100-python"
    folder_.mkdir()
    data = np.arange(2 * 3072, dtype=np.int64).astype(np.uint8).reshape(2, 3072)
    _write_batch(folder_ / "train", data, [42, 7], key="fine_labels")
    with open(folder_ / "meta", "wb") as f:
        pickle.dump({"fine_label_names": [f"c{i}" for i in range(100)]}, f, protocol=2)
    ds = datasets.CIFAR100(tmp_path)
    assert ds.targets == [42, 7] and len(ds.classes) == 100
    # A batch with the wrong data layout is refused.
    _write_batch(folder_ / "train", data[:, :100], [1, 2], key="fine_labels")
    with pytest.raises(RuntimeError, match="3072"):
        datasets.CIFAR100(tmp_path)


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_hostile_cifar_pickle_is_refused(tmp_path):
    folder_ = tmp_path / "cifar-10-batches-py"
    folder_.mkdir()
    ok = np.zeros((1, 3072), np.uint8)
    for k in range(1, 6):
        _write_batch(folder_ / f"data_batch_{k}", ok, [0])
    with open(folder_ / "batches.meta", "wb") as f:
        pickle.dump({"label_names": ["a"]}, f, protocol=2)
    marker = tmp_path / "ran"
    evil = {"data": ok, "labels": [0], "x": _Evil()}
    with open(folder_ / "data_batch_3", "wb") as f:
        pickle.dump(evil, f, protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system|not allowed"):
        datasets.CIFAR10(tmp_path)
    assert not marker.exists()
    # Other callables that would run code are refused the same way.
    for payload in (pickle.dumps(eval), pickle.dumps(getattr),
                    b"\x80\x02c_codecs\nencode\nq\x00X\x03\x00\x00\x00abcX\x04\x00\x00\x00zlibq"
                    b"\x01\x86q\x02Rq\x03."):
        (folder_ / "data_batch_3").write_bytes(payload)
        with pytest.raises(pickle.UnpicklingError):
            datasets.CIFAR10(tmp_path)
