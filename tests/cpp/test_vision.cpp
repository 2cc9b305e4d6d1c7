// ember::vision codecs: PNG decoded from hand-built files (stored deflate blocks, so the pixel
// values are known), PNG and JPEG round trips, read modes, and typed errors on corrupt,
// truncated and unsupported input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/vision.h"

using namespace ember;
using vision::ImageReadMode;
namespace fs = std::filesystem;

namespace {

uint32_t crc32(const std::string& s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char ch : s) {
    c ^= ch;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

uint32_t adler32(const std::string& s) {
  uint32_t a = 1, b = 0;
  for (unsigned char ch : s) {
    a = (a + ch) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

std::string be32(uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

std::string chunk(const std::string& type, const std::string& body) {
  return be32(uint32_t(body.size())) + type + body + be32(crc32(type + body));
}

// A PNG of the given rows (each row already has its filter byte 0) in one stored deflate block.
std::string make_png(uint32_t w, uint32_t h, int bit_depth, int color_type,
                     const std::string& raw) {
  std::string ihdr = be32(w) + be32(h) + std::string{char(bit_depth), char(color_type), 0, 0, 0};
  uint16_t len = uint16_t(raw.size());
  std::string z = {char(0x78),
                   char(0x01),
                   char(0x01),
                   char(len & 0xff),
                   char(len >> 8),
                   char(~len & 0xff),
                   char((~len >> 8) & 0xff)};
  z += raw + be32(adler32(raw));
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", z) +
         chunk("IEND", "");
}

Tensor bytes(const std::string& s) {
  Tensor t = empty({int64_t(s.size())}, TensorOptions().dtype(kByte));
  std::memcpy(t.data_ptr(), s.data(), s.size());
  return t;
}

std::vector<int64_t> flat(const Tensor& t) {
  Tensor c = t.to(kLong).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

// A 2×3 RGB image: pixel (y, x) = (10y + x, 100 + 10y + x, 200 + 10y + x).
std::string rgb_2x3() {
  std::string raw;
  for (int y = 0; y < 2; ++y) {
    raw += char(0);
    for (int x = 0; x < 3; ++x)
      raw += {char(10 * y + x), char(100 + 10 * y + x), char(200 + 10 * y + x)};
  }
  return make_png(3, 2, 8, 2, raw);
}

}  // namespace

TEST(VisionPng, DecodesHandBuiltRgb) {
  Tensor img = vision::decode_png(bytes(rgb_2x3()));
  EXPECT_EQ(img.scalar_type(), kByte);
  EXPECT_EQ(img.sizes().vec(), (std::vector<int64_t>{3, 2, 3}));
  EXPECT_EQ(flat(img), (std::vector<int64_t>{0, 1, 2, 10, 11, 12, 100, 101, 102, 110, 111, 112, 200,
                                             201, 202, 210, 211, 212}));
  // RGB_ALPHA adds an opaque alpha plane; RGB of RGB is unchanged.
  Tensor rgba = vision::decode_png(bytes(rgb_2x3()), ImageReadMode::RGB_ALPHA);
  EXPECT_EQ(rgba.size(0), 4);
  EXPECT_EQ(flat(rgba.select(0, 3)), std::vector<int64_t>(6, 255));
  EXPECT_EQ(flat(vision::decode_png(bytes(rgb_2x3()), ImageReadMode::RGB)), flat(img));
}

TEST(VisionPng, GrayModesAndLowBitDepth) {
  // 1-bit gray, 4×1: bits 1010 → 255, 0, 255, 0.
  std::string raw = {char(0), char(0xA0)};
  Tensor g = vision::decode_png(bytes(make_png(4, 1, 1, 0, raw)));
  EXPECT_EQ(flat(g), (std::vector<int64_t>{255, 0, 255, 0}));
  Tensor rgb = vision::decode_png(bytes(make_png(4, 1, 1, 0, raw)), ImageReadMode::RGB);
  EXPECT_EQ(rgb.sizes().vec(), (std::vector<int64_t>{3, 1, 4}));
  EXPECT_EQ(flat(rgb.select(0, 2)), (std::vector<int64_t>{255, 0, 255, 0}));
  Tensor ga = vision::decode_png(bytes(make_png(4, 1, 1, 0, raw)), ImageReadMode::GRAY_ALPHA);
  EXPECT_EQ(flat(ga), (std::vector<int64_t>{255, 0, 255, 0, 255, 255, 255, 255}));
  // Gray+alpha 8-bit, 2×1; GRAY drops the alpha.
  std::string la = {char(0), char(7), char(8), char(9), char(10)};
  EXPECT_EQ(flat(vision::decode_png(bytes(make_png(2, 1, 8, 4, la)))),
            (std::vector<int64_t>{7, 9, 8, 10}));
  EXPECT_EQ(flat(vision::decode_png(bytes(make_png(2, 1, 8, 4, la)), ImageReadMode::GRAY)),
            (std::vector<int64_t>{7, 9}));
}

TEST(VisionPng, SixteenBit) {
  std::string raw = {char(0), char(0x12), char(0x34), char(0xff), char(0xfe)};
  std::string png = make_png(2, 1, 16, 0, raw);
  EXPECT_THROW(vision::decode_png(bytes(png)), vision::ImageError);
  Tensor t = vision::decode_png(bytes(png), ImageReadMode::UNCHANGED, /*allow_16_bits=*/true);
  EXPECT_EQ(t.scalar_type(), kInt);
  EXPECT_EQ(flat(t), (std::vector<int64_t>{0x1234, 0xfffe}));
}

TEST(VisionPng, RoundTripEveryChannelCount) {
  for (int64_t c = 1; c <= 4; ++c) {
    Tensor img = arange(c * 5 * 7, TensorOptions().dtype(kLong)).remainder(256).to(kByte);
    img = img.reshape({c, 5, 7});
    for (int64_t level : {0, 6, 9}) {
      Tensor png = vision::encode_png(img, level);
      EXPECT_EQ(png.dim(), 1);
      EXPECT_EQ(flat(vision::decode_png(png)), flat(img)) << "channels " << c;
    }
    // A non-contiguous (transposed) image encodes its logical values.
    Tensor t = img.transpose(1, 2);
    EXPECT_EQ(flat(vision::decode_png(vision::encode_png(t))), flat(t));
  }
}

TEST(VisionPng, Errors) {
  std::string png = rgb_2x3();
  EXPECT_THROW(vision::decode_png(bytes("not a png at all")), vision::ImageError);
  EXPECT_THROW(vision::decode_png(bytes(png.substr(0, png.size() / 2))), vision::ImageError);
  std::string bad_crc = png;
  bad_crc[20] ^= 1;  // inside IHDR
  EXPECT_THROW(vision::decode_png(bytes(bad_crc)), vision::ImageError);
  EXPECT_THROW(vision::decode_png(bytes(png).to(kFloat)), Error);
  EXPECT_THROW(vision::decode_png(bytes(png).reshape({1, -1})), Error);
  EXPECT_THROW(vision::decode_png(empty({0}, TensorOptions().dtype(kByte))), Error);
  Tensor img = zeros({3, 2, 2}, TensorOptions().dtype(kByte));
  EXPECT_THROW(vision::encode_png(img, 10), Error);
  EXPECT_THROW(vision::encode_png(zeros({5, 2, 2}, TensorOptions().dtype(kByte))), Error);
  EXPECT_THROW(vision::encode_png(zeros({3, 0, 2}, TensorOptions().dtype(kByte))), Error);
  EXPECT_THROW(vision::encode_png(zeros({2, 2}, TensorOptions().dtype(kByte))), Error);
  EXPECT_THROW(vision::encode_png(img.to(kFloat)), Error);
}

TEST(VisionJpeg, RoundTripAndModes) {
  // A smooth gradient survives JPEG at quality 95 within a few levels.
  Tensor ramp = arange(16 * 16, TensorOptions().dtype(kFloat)).reshape({1, 16, 16}).div(2.0);
  Tensor rgb = cat({ramp, ramp.flip({2}), full({1, 16, 16}, 90.0)}, 0).to(kByte);
  Tensor jpg = vision::encode_jpeg(rgb, 95);
  EXPECT_EQ(flat(jpg.slice(0, 0, 3)), (std::vector<int64_t>{0xFF, 0xD8, 0xFF}));
  Tensor back = vision::decode_jpeg(jpg);
  EXPECT_EQ(back.sizes().vec(), (std::vector<int64_t>{3, 16, 16}));
  double err = (back.to(kFloat) - rgb.to(kFloat)).abs().max().item<double>();
  EXPECT_LE(err, 8.0);
  EXPECT_EQ(vision::decode_jpeg(jpg, ImageReadMode::GRAY).size(0), 1);
  EXPECT_EQ(flat(vision::decode_image(jpg, ImageReadMode::RGB)), flat(back));
  // Gray in, gray out; RGB mode replicates the plane.
  Tensor gray = vision::decode_jpeg(vision::encode_jpeg(ramp.to(kByte), 95));
  EXPECT_EQ(gray.size(0), 1);
  Tensor gray3 = vision::decode_jpeg(vision::encode_jpeg(ramp.to(kByte), 95), ImageReadMode::RGB);
  EXPECT_EQ(flat(gray3.select(0, 1)), flat(gray.select(0, 0)));
  // Lower quality gives a smaller file for a busy image.
  Tensor noise = randint(0, 256, {3, 32, 32}, TensorOptions().dtype(kLong)).to(kByte);
  EXPECT_LT(vision::encode_jpeg(noise, 10).numel(), vision::encode_jpeg(noise, 95).numel());
}

TEST(VisionJpeg, Errors) {
  Tensor rgb = full({3, 8, 8}, 128.0).to(kByte);
  Tensor jpg = vision::encode_jpeg(rgb);
  EXPECT_THROW(vision::decode_jpeg(jpg, ImageReadMode::RGB_ALPHA), vision::ImageError);
  EXPECT_THROW(vision::decode_jpeg(jpg, ImageReadMode::GRAY_ALPHA), vision::ImageError);
  EXPECT_THROW(vision::decode_jpeg(jpg.slice(0, 0, jpg.numel() / 2)), vision::ImageError);
  EXPECT_THROW(vision::decode_jpeg(jpg.slice(0, 0, 2)), vision::ImageError);
  EXPECT_THROW(vision::decode_jpeg(bytes("\x01\x02\x03")), vision::ImageError);
  EXPECT_THROW(vision::decode_image(bytes("GIF89a....")), vision::ImageError);
  EXPECT_THROW(vision::encode_jpeg(rgb, 0), ValueError);
  EXPECT_THROW(vision::encode_jpeg(rgb, 101), ValueError);
  EXPECT_THROW(vision::encode_jpeg(zeros({4, 8, 8}, TensorOptions().dtype(kByte))), Error);
  EXPECT_THROW(vision::encode_jpeg(zeros({3, 0, 8}, TensorOptions().dtype(kByte))), Error);
}

TEST(VisionIo, FilesAndReadImage) {
  fs::path dir = fs::temp_directory_path() / ("ember_vision_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string png = (dir / "a.png").string(), jpg = (dir / "b.jpg").string();
  Tensor img = arange(3 * 4 * 5, TensorOptions().dtype(kLong)).reshape({3, 4, 5}).to(kByte);
  vision::write_png(img, png);
  EXPECT_EQ(flat(vision::read_image(png)), flat(img));
  EXPECT_EQ(vision::read_image(png, ImageReadMode::GRAY).size(0), 1);
  vision::write_jpeg(img, jpg, 90);
  EXPECT_EQ(vision::read_image(jpg).sizes().vec(), (std::vector<int64_t>{3, 4, 5}));
  Tensor raw = vision::read_file(png);
  EXPECT_EQ(raw.numel(), int64_t(fs::file_size(png)));
  EXPECT_THROW(vision::read_file((dir / "missing.png").string()), Error);
  EXPECT_THROW(vision::read_file(dir.string()), Error);
  EXPECT_THROW(vision::write_file((dir / "no" / "such" / "dir.bin").string(), raw), Error);
  EXPECT_THROW(vision::write_file((dir / "x.bin").string(), raw.to(kFloat)), Error);
  // Nothing but the two images is left behind (no temporary files).
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  EXPECT_EQ(n, 2u);
  fs::remove_all(dir);
}
