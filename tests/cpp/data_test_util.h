#pragma once
// Scratch files for the data tests: a per-test temporary directory and IDX byte helpers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace ember::test {

/// A fresh directory named after the running test (suite and name), removed at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path =
        std::filesystem::temp_directory_path() / ("ember_data_" + std::to_string(::getpid()) + "_" +
                                                  info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

/// Writes `s` to `p` as raw bytes.
inline void write_bytes(const std::string& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}

/// `v` as 4 big-endian bytes (the IDX header's integers).
inline std::string be32(uint32_t v) {
  return {char(v >> 24), char((v >> 16) & 255), char((v >> 8) & 255), char(v & 255)};
}

}  // namespace ember::test
