"""ember.vision.io and ember.vision.utils against torchvision 0.14 and PIL (same libpng and
libjpeg on this system): decoding in every read mode, encoding round trips, the bytes written by
save_image (read back without NumPy), make_grid, and errors on bad input."""

import io as pyio
import os
import struct
import zlib

import numpy as np
import pytest
import torch
import torchvision
import torchvision.io as tvio
from PIL import Image

import ember
from ember.vision import io, utils
from ember.vision.io import ImageReadMode as M

MODES = [M.UNCHANGED, M.GRAY, M.GRAY_ALPHA, M.RGB, M.RGB_ALPHA]


def _e(data):
    return ember.from_numpy(np.frombuffer(data, np.uint8).copy())


def _t(data):
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


def _pil_bytes(img, fmt, **kw):
    b = pyio.BytesIO()
    img.save(b, fmt, **kw)
    return b.getvalue()


def _rng_rgb(h=9, w=13, seed=0):
    return np.random.RandomState(seed).randint(0, 256, (h, w, 3), dtype=np.uint8)


def _images():
    rgb = Image.fromarray(_rng_rgb())
    rgba = Image.fromarray(np.dstack([_rng_rgb(), _rng_rgb(seed=1)[..., :1]]), "RGBA")
    return {
        "rgb": rgb, "rgba": rgba, "gray": rgb.convert("L"), "gray_alpha": rgba.convert("LA"),
        "bilevel": rgb.convert("1"),
    }


@pytest.mark.parametrize("name", ["rgb", "rgba", "gray", "gray_alpha", "bilevel"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("interlace", [0, 1])
def test_decode_png_matches_torchvision(name, mode, interlace):
    if name == "bilevel" and mode in (M.GRAY_ALPHA, M.RGB_ALPHA):
        pytest.skip("torchvision 0.14 fills the alpha of 1-bit images with 1, not 255")
    data = _pil_bytes(_images()[name], "PNG", **({"interlace": 1} if interlace else {}))
    got = io.decode_png(_e(data), mode)
    ref = tvio.decode_png(_t(data), tvio.ImageReadMode(mode.value))
    assert got.dtype == ember.uint8
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    np.testing.assert_array_equal(io.decode_image(_e(data), mode).numpy(), ref.numpy())


def test_decode_png_palette_and_bilevel_alpha():
    # Palette images expand to their colours (RGBA with a tRNS chunk), as PIL's convert does.
    rgb = Image.fromarray(_rng_rgb())
    pal = rgb.convert("P", palette=Image.ADAPTIVE, colors=16)
    got = io.decode_png(_e(_pil_bytes(pal, "PNG")))
    np.testing.assert_array_equal(got.numpy(), np.asarray(pal.convert("RGB")).transpose(2, 0, 1))
    data = _pil_bytes(pal, "PNG", transparency=3)
    got = io.decode_png(_e(data))
    ref = np.asarray(Image.open(pyio.BytesIO(data)).convert("RGBA")).transpose(2, 0, 1)
    assert tuple(got.shape) == (4, 9, 13)
    np.testing.assert_array_equal(got.numpy(), ref)
    np.testing.assert_array_equal(io.decode_png(_e(data), M.RGB).numpy(), ref[:3])
    # A 1-bit image in GRAY_ALPHA mode: gray expanded to 0/255 and an opaque alpha.
    bits = _images()["bilevel"]
    ga = io.decode_png(_e(_pil_bytes(bits, "PNG")), M.GRAY_ALPHA).numpy()
    np.testing.assert_array_equal(ga[0], np.asarray(bits).astype(np.uint8) * 255)
    assert (ga[1] == 255).all()
    rgba = io.decode_png(_e(_pil_bytes(bits, "PNG")), M.RGB_ALPHA).numpy()
    np.testing.assert_array_equal(rgba[:3], np.broadcast_to(ga[:1], (3,) + ga.shape[1:]))
    assert (rgba[3] == 255).all()


def test_decode_png_16_bit():
    a = (np.arange(12, dtype=np.int32).reshape(3, 4) * 5000 + 123)
    data = _pil_bytes(Image.fromarray(a).convert("I;16"), "PNG")
    assert data[24] == 16  # the IHDR bit depth
    with pytest.raises(RuntimeError, match="8-bit"):
        io.decode_png(_e(data))
    with pytest.raises(RuntimeError):
        tvio.decode_png(_t(data))
    got = io._decode_png_16(_e(data))
    ref = torch.ops.image.decode_png(_t(data), 0, True)
    assert got.dtype == ember.int32 and tuple(got.shape) == (1, 3, 4)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    np.testing.assert_array_equal(got.numpy()[0], a)
    rgb16 = io._decode_png_16(_e(data), M.RGB_ALPHA)
    assert tuple(rgb16.shape) == (4, 3, 4) and int(rgb16[3].min()) == 65535


@pytest.mark.parametrize("name", ["rgb", "gray"])
@pytest.mark.parametrize("progressive", [False, True])
def test_decode_jpeg_matches_torchvision_and_pil(name, progressive):
    img = _images()[name]
    data = _pil_bytes(img, "JPEG", quality=85, progressive=progressive)
    for mode in (M.UNCHANGED, M.GRAY, M.RGB):
        got = io.decode_jpeg(_e(data), mode)
        ref = tvio.decode_jpeg(_t(data), tvio.ImageReadMode(mode.value))
        np.testing.assert_array_equal(got.numpy(), ref.numpy())
    # PIL decodes with the same libjpeg: identical pixels in the file's own colour space.
    pil = np.asarray(Image.open(pyio.BytesIO(data)))
    pil = pil[None] if pil.ndim == 2 else pil.transpose(2, 0, 1)
    np.testing.assert_array_equal(io.decode_jpeg(_e(data)).numpy(), pil)
    for mode in (M.GRAY_ALPHA, M.RGB_ALPHA):
        with pytest.raises(RuntimeError, match="not supported for JPEG"):
            io.decode_jpeg(_e(data), mode)


def test_decode_jpeg_cmyk_unchanged():
    data = _pil_bytes(_images()["rgb"].convert("CMYK"), "JPEG")
    got = io.decode_jpeg(_e(data))
    np.testing.assert_array_equal(got.numpy(), tvio.decode_jpeg(_t(data)).numpy())
    assert got.shape[0] == 4
    with pytest.raises(RuntimeError):
        io.decode_jpeg(_e(data), M.RGB)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("level", [0, 6, 9])
def test_png_round_trip(channels, level):
    img = ember.from_numpy(np.random.RandomState(channels).randint(
        0, 256, (channels, 7, 11), dtype=np.uint8))
    data = io.encode_png(img, level)
    assert data.dtype == ember.uint8 and data.dim() == 1
    np.testing.assert_array_equal(io.decode_png(data).numpy(), img.numpy())
    # PIL reads the same pixels.
    pil = np.asarray(Image.open(pyio.BytesIO(bytes(data.numpy()))))
    pil = pil[None] if pil.ndim == 2 else pil.transpose(2, 0, 1)
    np.testing.assert_array_equal(pil, img.numpy())
    # A non-contiguous image encodes its logical values.
    t = img.transpose(1, 2)
    np.testing.assert_array_equal(io.decode_png(io.encode_png(t)).numpy(), t.numpy())


def test_encode_png_same_bytes_as_torchvision():
    img = _rng_rgb().transpose(2, 0, 1).copy()
    for level in (1, 6, 9):
        got = io.encode_png(ember.from_numpy(img), level)
        ref = tvio.encode_png(torch.from_numpy(img), level)
        np.testing.assert_array_equal(
            io.decode_png(got).numpy(), tvio.decode_png(ref).numpy())


@pytest.mark.parametrize("channels", [1, 3])
def test_jpeg_round_trip_and_quality(channels):
    y, x = np.mgrid[0:32, 0:48]
    smooth = np.stack([(x * 5) % 256, (y * 7) % 256, (x + y) * 3 % 256]).astype(np.uint8)
    img = ember.from_numpy(smooth[:channels].copy())
    data = io.encode_jpeg(img, quality=95)
    assert bytes(data[:3].numpy()) == b"\xff\xd8\xff"
    back = io.decode_jpeg(data)
    assert tuple(back.shape) == (channels, 32, 48)
    err = np.abs(back.numpy().astype(int) - smooth[:channels].astype(int))
    assert err.mean() < 3.0
    # The same encoder settings as torchvision: identical files.
    ref = tvio.encode_jpeg(torch.from_numpy(smooth[:channels].copy()), quality=95)
    assert bytes(data.numpy()) == bytes(ref.numpy())
    # Quality orders the file size of a busy image.
    noise = ember.from_numpy(np.random.RandomState(3).randint(
        0, 256, (channels, 32, 32), dtype=np.uint8))
    sizes = [io.encode_jpeg(noise, q).numel() for q in (10, 50, 95)]
    assert sizes[0] < sizes[1] < sizes[2]


def test_files_and_read_image(tmp_path):
    img = ember.from_numpy(_rng_rgb().transpose(2, 0, 1).copy())
    p = tmp_path / "a.png"
    io.write_png(img, p)
    np.testing.assert_array_equal(io.read_image(str(p)).numpy(), img.numpy())
    np.testing.assert_array_equal(io.read_image(p, M.GRAY).numpy(),
                                  tvio.read_image(str(p), tvio.ImageReadMode.GRAY).numpy())
    raw = io.read_file(p)
    assert raw.dtype == ember.uint8 and raw.numel() == os.path.getsize(p)
    assert bytes(raw.numpy()) == p.read_bytes()
    q = tmp_path / "b.jpg"
    io.write_jpeg(img, str(q), quality=90)
    np.testing.assert_array_equal(io.read_image(q).numpy(), tvio.read_image(str(q)).numpy())
    io.write_file(tmp_path / "copy.bin", raw)
    assert (tmp_path / "copy.bin").read_bytes() == p.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["a.png", "b.jpg", "copy.bin"]  # no temporaries
    with pytest.raises(RuntimeError, match="cannot open"):
        io.read_file(tmp_path / "missing.png")
    with pytest.raises(RuntimeError):
        io.write_file(tmp_path / "no" / "dir" / "x.bin", raw)
    with pytest.raises(RuntimeError):
        io.write_file(tmp_path / "x.bin", raw.float())


def test_decode_errors():
    png = _pil_bytes(_images()["rgb"], "PNG")
    jpg = _pil_bytes(_images()["rgb"], "JPEG")
    with pytest.raises(RuntimeError, match="uint8"):
        io.decode_png(_e(png).float())
    with pytest.raises(RuntimeError, match="1-dimensional"):
        io.decode_png(_e(png).view(1, -1))
    with pytest.raises(RuntimeError, match="1-dimensional"):
        io.decode_image(ember.empty(0, dtype=ember.uint8))
    with pytest.raises(RuntimeError, match="not PNG"):
        io.decode_png(_e(jpg))
    with pytest.raises(RuntimeError, match="truncated"):
        io.decode_png(_e(png[:len(png) // 2]))
    with pytest.raises(RuntimeError, match="truncated"):
        io.decode_jpeg(_e(jpg[:200]))
    with pytest.raises(RuntimeError, match="not a JPEG"):
        io.decode_jpeg(_e(b"\x01\x02\x03"))
    with pytest.raises(RuntimeError, match="only JPEG and PNG"):
        io.decode_image(_e(b"GIF89a\x00\x00\x00"))
    # A corrupted IHDR (bad CRC) and a corrupted JPEG header.
    bad = bytearray(png)
    bad[20] ^= 0xFF
    with pytest.raises(RuntimeError):
        io.decode_png(_e(bytes(bad)))
    bad = bytearray(jpg)
    bad[3:40] = b"\x00" * 37
    with pytest.raises(RuntimeError):
        io.decode_jpeg(_e(bytes(bad)))
    # Bytes objects are accepted as input too.
    assert tuple(io.decode_png(png).shape) == (3, 9, 13)


def test_encode_errors():
    img = ember.zeros(3, 4, 5, dtype=ember.uint8)
    with pytest.raises(ValueError, match="quality"):
        io.encode_jpeg(img, 0)
    with pytest.raises(ValueError, match="quality"):
        io.encode_jpeg(img, 101)
    with pytest.raises(RuntimeError, match="compression level"):
        io.encode_png(img, 10)
    with pytest.raises(RuntimeError, match="channels"):
        io.encode_png(ember.zeros(5, 4, 5, dtype=ember.uint8))
    with pytest.raises(RuntimeError, match="channels"):
        io.encode_jpeg(ember.zeros(4, 4, 5, dtype=ember.uint8))
    with pytest.raises(RuntimeError, match="uint8"):
        io.encode_png(img.float())
    with pytest.raises(RuntimeError, match="3-dimensional"):
        io.encode_jpeg(img[0])
    with pytest.raises(RuntimeError, match="empty"):
        io.encode_png(ember.zeros(3, 0, 5, dtype=ember.uint8))
    with pytest.raises(RuntimeError, match="empty"):
        io.encode_jpeg(ember.zeros(3, 4, 0, dtype=ember.uint8))


# ---- make_grid / save_image ---------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {}, {"nrow": 3}, {"padding": 0}, {"padding": 5, "pad_value": 0.5},
    {"normalize": True}, {"normalize": True, "value_range": (-1.0, 0.5)},
    {"normalize": True, "scale_each": True}, {"nrow": 1, "padding": 1},
])
@pytest.mark.parametrize("shape", [(7, 3, 5, 6), (4, 1, 5, 6), (1, 3, 4, 4), (5, 2, 3, 3)])
def test_make_grid_matches_torchvision(kwargs, shape):
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    got = utils.make_grid(ember.from_numpy(x), **kwargs)
    ref = torchvision.utils.make_grid(torch.from_numpy(x), **kwargs)
    assert tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-6, atol=1e-7)


def test_make_grid_inputs():
    x = np.random.RandomState(1).rand(3, 5, 6).astype(np.float32)
    ims = [ember.from_numpy(x), ember.from_numpy(x * 0.5)]
    ref = torchvision.utils.make_grid([torch.from_numpy(x), torch.from_numpy(x * 0.5)], nrow=1)
    np.testing.assert_array_equal(utils.make_grid(ims, nrow=1).numpy(), ref.numpy())
    for arr in (x[0], x[:1], x):  # H×W, 1×H×W, C×H×W
        np.testing.assert_array_equal(utils.make_grid(ember.from_numpy(arr.copy())).numpy(),
                                      torchvision.utils.make_grid(torch.from_numpy(arr.copy()))
                                      .numpy())
    u8 = np.random.RandomState(2).randint(0, 256, (3, 3, 4, 4), dtype=np.uint8)
    np.testing.assert_array_equal(utils.make_grid(ember.from_numpy(u8), pad_value=7).numpy(),
                                  torchvision.utils.make_grid(torch.from_numpy(u8), pad_value=7)
                                  .numpy())
    src = ember.from_numpy(x.copy())
    utils.make_grid(src, normalize=True)
    np.testing.assert_array_equal(src.numpy(), x)  # the input is not normalised in place
    with pytest.raises(TypeError):
        utils.make_grid("not a tensor")
    with pytest.raises(TypeError, match="value_range"):
        utils.make_grid(ember.from_numpy(x), normalize=True, value_range=[0, 1])


def _png_chunks(data):
    """(type, body) of each chunk, checking each CRC, without NumPy."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, out = 8, []
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        out.append((kind, body))
        pos += 12 + n
    return out


def test_save_image_png_bytes(tmp_path):
    x = ember.rand(4, 3, 5, 6, generator=ember.Generator().manual_seed(0))
    p = tmp_path / "grid.png"
    utils.save_image(x, p, nrow=2, padding=1)
    data = p.read_bytes()
    chunks = _png_chunks(data)
    kind, ihdr = chunks[0]
    assert kind == b"IHDR"
    w, h, depth, colour = struct.unpack(">IIBB", ihdr[:10])
    assert (w, h, depth, colour) == (2 * 7 + 1, 2 * 6 + 1, 8, 2)
    # Inflate and unfilter by hand (PNG filters 0-4), no NumPy involved.
    raw = zlib.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))
    stride, rows, prev = w * 3, [], bytearray(w * 3)
    for r in range(h):
        f, line = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b, c = prev[i], (prev[i - 3] if i >= 3 else 0)
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    grid = utils.make_grid(x, nrow=2, padding=1)
    vals = grid.mul(255).add(0.5).clamp(0, 255).to(ember.uint8).permute(1, 2, 0).tolist()
    expect = [bytes(v for px in row for v in px) for row in vals]
    assert rows == expect
    # PIL reads the same pixels as torchvision's save_image would write.
    b = pyio.BytesIO()
    torchvision.utils.save_image(torch.from_numpy(x.numpy()), b, format="png", nrow=2, padding=1)
    assert list(Image.open(p).getdata()) == list(Image.open(pyio.BytesIO(b.getvalue())).getdata())


def test_save_image_formats(tmp_path):
    x = ember.rand(3, 8, 8, generator=ember.Generator().manual_seed(1))
    utils.save_image(x, tmp_path / "a.jpg")
    assert (tmp_path / "a.jpg").read_bytes()[:3] == b"\xff\xd8\xff"
    buf = pyio.BytesIO()
    utils.save_image(x, buf, format="png")
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    utils.save_image(x, tmp_path / "a.bmp")  # through PIL
    assert Image.open(tmp_path / "a.bmp").size == (8, 8)
