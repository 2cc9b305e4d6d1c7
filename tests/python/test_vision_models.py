"""ember.vision.models against torchvision 0.14: the same module names and state-dict entries
(names, shapes), and the same eval-mode forward once torchvision's weights (with randomised
batch-norm statistics) are loaded strictly."""

import numpy as np
import pytest
import torch
import torchvision

import ember
from ember.vision import models

# (builder name, input size); small inputs keep the run short.
CASES = [("resnet18", 64), ("resnet34", 64), ("resnet50", 64), ("mobilenet_v2", 64),
         ("vgg11", 32), ("vgg11_bn", 32)]


def _randomise_norms(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)


def _to_ember_state(sd):
    return {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in sd.items()}


@pytest.mark.parametrize("name,size", CASES)
def test_same_architecture_and_forward(name, size):
    torch.manual_seed(0)
    ref = getattr(torchvision.models, name)(num_classes=10).eval()
    _randomise_norms(ref, 1)
    ember.manual_seed(0)
    got = getattr(models, name)(num_classes=10).eval()
    assert [n for n, _ in got.named_modules()] == [n for n, _ in ref.named_modules()]
    ref_sd, got_sd = ref.state_dict(), got.state_dict()
    assert list(got_sd.keys()) == list(ref_sd.keys())
    for k in ref_sd:
        assert tuple(got_sd[k].shape) == tuple(ref_sd[k].shape), k
    got.load_state_dict(_to_ember_state(ref_sd))
    x = np.random.RandomState(2).randn(2, 3, size, size).astype(np.float32)
    with torch.no_grad():
        want = ref(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        out = got(ember.from_numpy(x)).numpy()
    assert out.shape == (2, 10)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_resnet_variants_match_state_dicts():
    # Bottleneck widths of the grouped and wide variants (shapes only: they are large).
    for name in ("resnext50_32x4d", "wide_resnet50_2"):
        ref = getattr(torchvision.models, name)().state_dict()
        got = getattr(models, name)().state_dict()
        assert {k: tuple(v.shape) for k, v in got.items()} == \
            {k: tuple(v.shape) for k, v in ref.items()}


def test_init_statistics():
    # Kaiming-normal (fan_out) convolutions and N(0, 0.01) classifiers, as torchvision.
    ember.manual_seed(0)
    m = models.mobilenet_v2()
    w = m.features[18][0].weight  # 1280×320×1×1
    std = float(w.std())
    assert abs(std - (2.0 / 1280) ** 0.5) < 0.05 * (2.0 / 1280) ** 0.5
    fc = m.classifier[1].weight
    assert abs(float(fc.std()) - 0.01) < 0.0005 and float(fc.mean()) < 1e-3
    r = models.resnet18(zero_init_residual=True)
    assert float(r.layer1[0].bn2.weight.abs().sum()) == 0.0


def test_weights_from_local_file(tmp_path):
    ember.manual_seed(1)
    src = models.resnet18(num_classes=5)
    p = tmp_path / "r18.safetensors"
    ember.save(src.state_dict(), p)
    m = models.resnet18(weights=str(p), num_classes=5)
    for (k, a), (_, b) in zip(src.state_dict().items(), m.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    m2 = models.resnet18(weights=src.state_dict(), num_classes=5)
    np.testing.assert_array_equal(m2.fc.weight.detach().numpy(), src.fc.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="downloads nothing"):
        models.resnet18(pretrained=True)
    with pytest.raises(RuntimeError, match="downloads nothing"):
        models.mobilenet_v2(weights="IMAGENET1K_V1")
    with pytest.raises(RuntimeError):  # strict: 5 classes do not load into 1000
        models.resnet18(weights=str(p))
    with pytest.raises(RuntimeError, match="cannot read"):
        (tmp_path / "junk.pt").write_bytes(b"not a state dict")
        models.vgg11(weights=tmp_path / "junk.pt")


def test_bad_arguments():
    with pytest.raises(ValueError):
        models.MobileNetV2(inverted_residual_setting=[[1, 16, 1]])
    with pytest.raises(ValueError):
        models.ResNet(models.BasicBlock, [2, 2, 2, 2], replace_stride_with_dilation=[True])
    with pytest.raises(NotImplementedError):
        models.resnet18(replace_stride_with_dilation=[False, False, True])
