#pragma once
/// Device: a device type plus an index (`cpu`, `cuda:0`), with a registry for out-of-tree
/// device types.

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace ember {

/// Built-in device types; out-of-tree types get ids from `register_device_type`.
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2, kFirstCustom = 8 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kMeta = DeviceType::Meta;
constexpr int kMaxDeviceTypes = 16;

/// Registers an out-of-tree device type under `name` ("npu", ...) and returns its id. The name
/// then parses in `Device("npu:1")`. Registering the same name twice returns the same id.
DeviceType register_device_type(const std::string& name);
/// The name of a device type ("cpu", "cuda", or a registered name).
std::string device_type_name(DeviceType t);

/// A device: type and index (-1 means "the current one").
struct Device {
  DeviceType type_ = DeviceType::CPU;
  int8_t index_ = -1;

  Device(DeviceType t = DeviceType::CPU, int index = -1);  // NOLINT
  /// Parses "cpu", "cuda", "cuda:1", "<registered>:N"; throws ValueError otherwise.
  Device(const std::string& s);  // NOLINT
  Device(const char* s) : Device(std::string(s)) {}  // NOLINT

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  std::string str() const;
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

std::ostream& operator<<(std::ostream& os, const Device& d);
std::ostream& operator<<(std::ostream& os, DeviceType t);

}  // namespace ember
