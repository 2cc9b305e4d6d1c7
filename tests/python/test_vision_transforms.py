"""ember.vision.transforms against torchvision 0.14. Random transforms: the parameters are drawn
by the ember transform's get_params under a fixed seed, then torchvision's functional API applies
the same parameters, and the ember transform run under the same seed must agree. Tensors are
single images and batches, uint8 and float32, contiguous and not; PIL images where torchvision
takes them."""

import numpy as np
import pytest
import torch
import torchvision.transforms as TT
import torchvision.transforms.functional as TF
from PIL import Image

import ember
from ember.vision import transforms as T
from ember.vision.transforms import functional as F

IM = T.InterpolationMode


def _img(shape, dtype, seed=0):
    rs = np.random.RandomState(seed)
    if dtype == "uint8":
        return rs.randint(0, 256, shape, dtype=np.uint8)
    return rs.rand(*shape).astype(np.float32)


def _pair(arr, transpose=False):
    e, t = ember.from_numpy(arr.copy()), torch.from_numpy(arr.copy())
    if transpose:  # a non-contiguous view with the same values
        e, t = e.transpose(-1, -2), t.transpose(-1, -2)
    return e, t


def _close(got, want, dtype, atol_float=1e-5, atol_int=0):
    g, w = got.numpy(), want.numpy()
    assert g.shape == w.shape and str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if dtype == "uint8":
        np.testing.assert_allclose(g.astype(np.int64), w.astype(np.int64), atol=atol_int, rtol=0)
    else:
        np.testing.assert_allclose(g, w, atol=atol_float, rtol=1e-5)


SHAPES = [(3, 10, 12), (2, 3, 9, 7)]
DTYPES = ["uint8", "float32"]


# ---- resize ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("interp", [IM.NEAREST, IM.BILINEAR, IM.BICUBIC])
@pytest.mark.parametrize("size", [5, [6, 15], (20, 8)])
def test_resize(shape, dtype, interp, size):
    e, t = _pair(_img(shape, dtype))
    got = T.Resize(size, interpolation=interp)(e)
    want = TF.resize(t, size, interpolation=TT.InterpolationMode(interp.value))
    _close(got, want, dtype, atol_float=1e-4, atol_int=1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("interp", [IM.BILINEAR, IM.BICUBIC])
@pytest.mark.parametrize("size", [(4, 5), (7, 3), (20, 25)])
def test_resize_antialias(dtype, interp, size):
    e, t = _pair(_img((2, 3, 17, 13), dtype, seed=1))
    got = F.resize(e, size, interp, antialias=True)
    want = TF.resize(t, size, TT.InterpolationMode(interp.value), antialias=True)
    _close(got, want, dtype, atol_float=1e-4, atol_int=1)


def test_resize_rules():
    e, t = _pair(_img((3, 10, 20), "float32"))
    assert F.resize(e, 10) is e  # already the requested size
    got = F.resize(e, 8, max_size=12)
    assert tuple(got.shape) == tuple(TF.resize(t, 8, max_size=12).shape) == (3, 6, 12)
    et, tt = _pair(_img((3, 10, 20), "float32"), transpose=True)
    _close(F.resize(et, [7, 9]), TF.resize(tt, [7, 9]), "float32")
    five = ember.from_numpy(_img((2, 2, 3, 8, 8), "float32"))
    out = F.resize(five, [4, 4])
    for i in range(2):
        np.testing.assert_allclose(out[i].numpy(), F.resize(five[i], [4, 4]).numpy())
    with pytest.raises(ValueError):
        F.resize(e, [1, 2, 3])
    with pytest.raises(ValueError):
        F.resize(e, [4, 4], max_size=10)
    with pytest.raises(ValueError):
        F.resize(e, 10, max_size=5)
    with pytest.raises(ValueError):
        F.resize(e, [4, 4], IM.NEAREST, antialias=True)
    with pytest.raises(TypeError):
        F.resize(e, [4, 4], "bilinear")
    with pytest.raises(TypeError):
        T.Resize({4})


# ---- crops and padding -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [4, (5, 3), (10, 12), (13, 15), (1, 1), (11, 4)])
def test_center_crop(dtype, size):
    for shape in SHAPES:
        e, t = _pair(_img(shape, dtype))
        _close(T.CenterCrop(size)(e), TF.center_crop(t, size), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
@pytest.mark.parametrize("padding", [2, [1, 3], [0, 1, 2, 3], (4,), [3, 0, -2, 1]])
def test_pad(dtype, mode, padding):
    if mode == "symmetric" and any(p < 0 for p in np.atleast_1d(padding)):
        pytest.skip("torchvision 0.14 cannot crop with symmetric padding")
    for shape in SHAPES:
        e, t = _pair(_img(shape, dtype))
        got = T.Pad(padding, fill=7 if dtype == "uint8" else 0.25, padding_mode=mode)(e)
        want = TF.pad(t, padding, fill=7 if dtype == "uint8" else 0.25, padding_mode=mode)
        _close(got, want, dtype)


def test_pad_and_crop_errors():
    e = ember.zeros(3, 4, 4)
    with pytest.raises(ValueError):
        T.Pad([1, 2, 3])
    with pytest.raises(ValueError):
        F.pad(e, 1, padding_mode="wrap")
    with pytest.raises(TypeError):
        F.pad(e, "1")
    with pytest.raises(ValueError, match="larger than input image"):
        T.RandomCrop(5)(e)
    with pytest.raises(TypeError):
        F.hflip([1, 2])
    # crop outside the image zero-fills, as torchvision's
    e, t = _pair(_img((3, 6, 5), "float32"))
    _close(F.crop(e, -2, 3, 5, 6), TF.crop(t, -2, 3, 5, 6), "float32")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", DTYPES)
def test_random_crop(seed, dtype):
    e, t = _pair(_img((2, 3, 9, 11), dtype, seed))
    cases = [dict(size=(4, 6)), dict(size=5, padding=2, fill=3),
             dict(size=(12, 14), pad_if_needed=True, padding_mode="edge"),
             dict(size=(6, 6), padding=[1, 2], padding_mode="reflect")]
    for kw in cases:
        tr = T.RandomCrop(**kw)
        pt = TF.pad(t, kw["padding"], kw.get("fill", 0), kw.get("padding_mode", "constant")) \
            if "padding" in kw else t
        pe = F.pad(e, kw["padding"], kw.get("fill", 0), kw.get("padding_mode", "constant")) \
            if "padding" in kw else e
        if kw.get("pad_if_needed"):
            pw = max(tr.size[1] - pt.shape[-1], 0)
            ph = max(tr.size[0] - pt.shape[-2], 0)
            pt = TF.pad(TF.pad(pt, [pw, 0], 0, "edge"), [0, ph], 0, "edge")
            pe = F.pad(F.pad(pe, [pw, 0], 0, "edge"), [0, ph], 0, "edge")
        ember.manual_seed(seed)
        i, j, h, w = T.RandomCrop.get_params(pe, tr.size)
        ember.manual_seed(seed)
        got = tr(e)
        _close(got, TF.crop(pt, i, j, h, w), dtype)


def test_random_crop_covers_all_offsets():
    e = ember.arange(30.0).view(1, 5, 6)
    ember.manual_seed(0)
    seen = {T.RandomCrop.get_params(e, (3, 4)) for _ in range(300)}
    assert seen == {(i, j, 3, 4) for i in range(3) for j in range(3)}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("dtype", DTYPES)
def test_random_resized_crop(seed, dtype):
    e, t = _pair(_img((3, 20, 30), dtype, seed))
    for kw in (dict(size=8), dict(size=(6, 10), scale=(0.5, 1.0), ratio=(0.5, 2.0),
                                  interpolation=IM.NEAREST),
               dict(size=7, antialias=True), dict(size=5, scale=(0.99, 1.0), ratio=(5.0, 6.0))):
        tr = T.RandomResizedCrop(**kw)
        ember.manual_seed(seed)
        i, j, h, w = T.RandomResizedCrop.get_params(e, tr.scale, tr.ratio)
        assert 0 <= i and 0 <= j and 0 < h and 0 < w and i + h <= 20 and j + w <= 30
        ember.manual_seed(seed)
        got = tr(e)
        want = TF.resized_crop(t, i, j, h, w, list(tr.size),
                               TT.InterpolationMode(tr.interpolation.value),
                               antialias=kw.get("antialias"))
        _close(got, want, dtype, atol_float=1e-4, atol_int=1)


def test_random_resized_crop_fallback():
    # Aspect ratios no window can have: the central crop clamped to the ratio range.
    for (h, w), scale, ratio, want in [((10, 40), (0.9, 1.0), (0.2, 0.25), (0, 19, 10, 2)),
                                       ((10, 10), (1.0, 1.0), (4.0, 5.0), (4, 0, 2, 10))]:
        got = T.RandomResizedCrop.get_params(ember.zeros(1, h, w), scale, ratio)
        ref = TT.RandomResizedCrop.get_params(torch.zeros(1, h, w), scale, ratio)
        assert tuple(got) == tuple(ref) == want


def test_flips():
    for dtype in DTYPES:
        for shape in SHAPES:
            e, t = _pair(_img(shape, dtype))
            _close(T.RandomHorizontalFlip(1.0)(e), TF.hflip(t), dtype)
            _close(T.RandomVerticalFlip(1.0)(e), TF.vflip(t), dtype)
            assert T.RandomHorizontalFlip(0.0)(e) is e


# ---- colour ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_colour_functions(dtype, shape):
    e, t = _pair(_img(shape, dtype, 3))
    for f in (0.0, 0.3, 1.0, 1.7):
        _close(F.adjust_brightness(e, f), TF.adjust_brightness(t, f), dtype, atol_int=1)
        _close(F.adjust_contrast(e, f), TF.adjust_contrast(t, f), dtype, atol_int=1)
        _close(F.adjust_saturation(e, f), TF.adjust_saturation(t, f), dtype, atol_int=1)
    for h in (-0.5, -0.2, 0.0, 0.13, 0.5):
        _close(F.adjust_hue(e, h), TF.adjust_hue(t, h), dtype, atol_float=1e-5, atol_int=1)
    for n in (1, 3):
        _close(T.Grayscale(n)(e), TF.rgb_to_grayscale(t, n), dtype, atol_int=1)
    g = e[..., :1, :, :]
    assert F.adjust_hue(g, 0.2) is g and F.adjust_saturation(g, 0.5) is g
    _close(F.adjust_contrast(g, 0.5), TF.adjust_contrast(t[..., :1, :, :], 0.5), dtype,
           atol_int=1)


def test_colour_errors():
    e = ember.rand(3, 4, 4)
    with pytest.raises(ValueError):
        F.adjust_brightness(e, -1)
    with pytest.raises(ValueError):
        F.adjust_hue(e, 0.6)
    with pytest.raises(TypeError):
        F.adjust_brightness(ember.rand(2, 4, 4), 0.5)
    with pytest.raises(ValueError):
        T.ColorJitter(brightness=-1)
    with pytest.raises(ValueError):
        T.ColorJitter(hue=(0.2, 0.7))
    with pytest.raises(TypeError):
        T.ColorJitter(contrast=[1, 2, 3])
    assert T.ColorJitter().brightness is None


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", DTYPES)
def test_color_jitter(seed, dtype):
    e, t = _pair(_img((2, 3, 6, 7), dtype, seed))
    tr = T.ColorJitter(brightness=0.4, contrast=(0.5, 1.5), saturation=0.3, hue=0.1)
    ember.manual_seed(seed)
    order, b, c, s, h = T.ColorJitter.get_params(tr.brightness, tr.contrast, tr.saturation,
                                                 tr.hue)
    assert sorted(order.tolist()) == [0, 1, 2, 3] and 0.6 <= b <= 1.4 and -0.1 <= h <= 0.1
    want = t
    for k in order.tolist():
        want = [lambda x: TF.adjust_brightness(x, b), lambda x: TF.adjust_contrast(x, c),
                lambda x: TF.adjust_saturation(x, s), lambda x: TF.adjust_hue(x, h)][k](want)
    ember.manual_seed(seed)
    _close(tr(e), want, dtype, atol_float=1e-5, atol_int=2)


# ---- affine and blur -------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("interp", [IM.NEAREST, IM.BILINEAR])
def test_random_affine(seed, dtype, interp):
    e, t = _pair(_img((2, 3, 12, 15), dtype, seed))
    tr = T.RandomAffine(degrees=40, translate=(0.2, 0.1), scale=(0.7, 1.3), shear=(-10, 10, -5, 5),
                        interpolation=interp, fill=5 if dtype == "uint8" else 0.5)
    ember.manual_seed(seed)
    angle, trans, scale, shear = T.RandomAffine.get_params(tr.degrees, tr.translate, tr.scale,
                                                           tr.shear, [15, 12])
    ember.manual_seed(seed)
    got = tr(e)
    want = TF.affine(t, angle, list(trans), scale, list(shear),
                     TT.InterpolationMode(interp.value), fill=[float(tr.fill)] * 3)
    if interp == IM.NEAREST:
        # A sample exactly half-way between pixels may round either way in float32.
        g, w = got.numpy(), want.numpy()
        assert g.shape == w.shape
        assert np.mean(g != w) < 0.01
    else:
        _close(got, want, dtype, atol_float=1e-4, atol_int=1)


def test_affine_exact_cases():
    e, t = _pair(_img((3, 8, 8), "float32"))
    for angle in (0.0, 90.0, 180.0, -90.0):
        _close(F.affine(e, angle, [1, -2], 1.0, [0.0, 0.0]),
               TF.affine(t, angle, [1, -2], 1.0, [0.0, 0.0]), "float32")
        _close(F.rotate(e, angle), TF.rotate(t, angle), "float32")
    _close(F.affine(e, 30.0, [0, 0], 1.0, 0.0, center=[2, 3], fill=[1.0, 2.0, 3.0],
                    interpolation=IM.BILINEAR),
           TF.affine(t, 30.0, [0, 0], 1.0, 0.0, center=[2, 3], fill=[1.0, 2.0, 3.0],
                     interpolation=TT.InterpolationMode.BILINEAR), "float32", atol_float=1e-4)
    with pytest.raises(ValueError):
        F.affine(e, 0.0, [0, 0], 0.0, [0.0, 0.0])
    with pytest.raises(ValueError):
        T.RandomAffine(degrees=10, translate=(0.2, 1.5))
    with pytest.raises(ValueError):
        T.RandomAffine(degrees=-1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ks", [3, (5, 3), (1, 7)])
def test_gaussian_blur(dtype, ks):
    for seed, shape in enumerate(SHAPES):
        e, t = _pair(_img(shape, dtype, seed))
        tr = T.GaussianBlur(ks, sigma=(0.3, 2.0))
        ember.manual_seed(seed)
        sigma = T.GaussianBlur.get_params(*tr.sigma)
        assert 0.3 <= sigma <= 2.0
        ember.manual_seed(seed)
        got = tr(e)
        want = TF.gaussian_blur(t, list(tr.kernel_size), [sigma, sigma])
        _close(got, want, dtype, atol_float=1e-5, atol_int=1)
    _close(F.gaussian_blur(e, 3), TF.gaussian_blur(t, 3), dtype, atol_int=1)
    with pytest.raises(ValueError):
        T.GaussianBlur(4)
    with pytest.raises(ValueError):
        T.GaussianBlur(3, sigma=(2.0, 1.0))


# ---- conversions -----------------------------------------------------------------------

def test_to_tensor_and_pil_to_tensor():
    arr = _img((5, 6, 3), "uint8")
    for pic in (Image.fromarray(arr), Image.fromarray(arr).convert("L"),
                Image.fromarray(arr).convert("RGBA"), Image.fromarray(arr).convert("1"),
                Image.fromarray(arr[..., 0].astype(np.int32) * 1000, "I"),
                Image.fromarray(arr[..., 0].astype(np.float32) / 7, "F")):
        np.testing.assert_array_equal(T.ToTensor()(pic).numpy(), TT.ToTensor()(pic).numpy())
        np.testing.assert_array_equal(T.PILToTensor()(pic).numpy(),
                                      TT.PILToTensor()(pic).numpy())
    np.testing.assert_array_equal(T.ToTensor()(arr).numpy(), TT.ToTensor()(arr).numpy())
    f = arr.astype(np.float64)
    np.testing.assert_array_equal(T.ToTensor()(f).numpy(), TT.ToTensor()(f).numpy())
    with pytest.raises(TypeError):
        T.ToTensor()([1, 2, 3])
    with pytest.raises(TypeError):
        T.PILToTensor()(ember.zeros(3, 2, 2))
    back = T.ToPILImage()(T.ToTensor()(Image.fromarray(arr)))
    want = TT.ToPILImage()(TT.ToTensor()(Image.fromarray(arr)))
    assert back.mode == want.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(back), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(T.ToPILImage()(ember.from_numpy(arr[..., 0].copy()))),
                                  arr[..., 0])


@pytest.mark.parametrize("src,dst", [("uint8", "float32"), ("float32", "uint8"),
                                     ("float64", "int32"), ("int32", "uint8"),
                                     ("uint8", "int16"), ("float32", "float64"),
                                     ("uint8", "int64"), ("int64", "uint8")])
def test_convert_image_dtype(src, dst):
    rs = np.random.RandomState(0)
    arr = rs.rand(3, 4, 5) if src.startswith("float") else rs.randint(0, 200, (3, 4, 5))
    e, t = _pair(arr.astype(src))
    got = T.ConvertImageDtype(getattr(ember, dst))(e)
    want = TF.convert_image_dtype(t, getattr(torch, dst))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_normalize_compose_lambda():
    e, t = _pair(_img((2, 3, 4, 5), "float32"))
    mean, std = [0.5, 0.4, 0.3], [0.2, 0.25, 0.3]
    pipe = T.Compose([T.Lambda(lambda x: x * 2), T.Normalize(mean, std)])
    want = TT.Compose([TT.Lambda(lambda x: x * 2), TT.Normalize(mean, std)])(t)
    _close(pipe(e), want, "float32")
    n = T.Normalize(mean, std, inplace=True)
    c = e.clone()
    assert n(c) is c
    with pytest.raises(TypeError):
        T.Normalize(mean, std)(ember.zeros(3, 2, 2, dtype=ember.uint8))
    with pytest.raises(TypeError):
        T.Lambda(3)
    assert "Normalize" in repr(pipe)


# ---- PIL images --------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_pil_inputs_match_torchvision(seed):
    pic = Image.fromarray(_img((11, 14, 3), "uint8", seed))
    cases = [
        (T.Resize(7), TT.Resize(7)),
        (T.Resize((5, 9), IM.BICUBIC), TT.Resize((5, 9), TT.InterpolationMode.BICUBIC)),
        (T.CenterCrop(6), TT.CenterCrop(6)),
        (T.CenterCrop((13, 16)), TT.CenterCrop((13, 16))),
        (T.Pad([1, 2, 3, 4], fill=9), TT.Pad([1, 2, 3, 4], fill=9)),
        (T.Pad(2, padding_mode="reflect"), TT.Pad(2, padding_mode="reflect")),
        (T.Pad(2, padding_mode="symmetric"), TT.Pad(2, padding_mode="symmetric")),
        (T.Grayscale(3), TT.Grayscale(3)),
        (T.RandomHorizontalFlip(1.0), TT.RandomHorizontalFlip(1.0)),
    ]
    for ours, theirs in cases:
        np.testing.assert_array_equal(np.asarray(ours(pic)), np.asarray(theirs(pic)))
    for f in (0.5, 1.5):
        for name in ("adjust_brightness", "adjust_contrast", "adjust_saturation"):
            np.testing.assert_array_equal(np.asarray(getattr(F, name)(pic, f)),
                                          np.asarray(getattr(TF, name)(pic, f)))
    np.testing.assert_array_equal(np.asarray(F.adjust_hue(pic, 0.2)),
                                  np.asarray(TF.adjust_hue(pic, 0.2)))
    ember.manual_seed(seed)
    i, j, h, w = T.RandomCrop.get_params(pic, (5, 6))
    ember.manual_seed(seed)
    np.testing.assert_array_equal(np.asarray(T.RandomCrop((5, 6))(pic)),
                                  np.asarray(TF.crop(pic, i, j, h, w)))
    np.testing.assert_array_equal(
        np.asarray(F.affine(pic, 25.0, [2, -1], 1.1, [5.0, 0.0], fill=3)),
        np.asarray(TF.affine(pic, 25.0, [2, -1], 1.1, [5.0, 0.0], fill=3)))
    np.testing.assert_array_equal(np.asarray(F.gaussian_blur(pic, 3, 1.0)),
                                  np.asarray(TF.gaussian_blur(pic, 3, 1.0)))
