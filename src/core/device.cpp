#include "ember/device.h"

#include <array>
#include <cstdlib>
#include <mutex>

#include "core/kernel_stub.h"
#include "core/memory_check.h"
#include "ember/error.h"

namespace ember {

namespace {
struct DeviceRegistry {
  std::mutex mu;
  std::array<std::string, kMaxDeviceTypes> names{"cpu", "cuda", "meta"};
  int next = static_cast<int>(DeviceType::kFirstCustom);
};
DeviceRegistry& registry() {
  static DeviceRegistry r;
  return r;
}
}  // namespace

DeviceType register_device_type(const std::string& name) {
  auto& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  EMBER_CHECK_VALUE(!name.empty() && name.find(':') == std::string::npos,
                    "[register_device_type] invalid device type name '", name, "'");
  for (int i = 0; i < kMaxDeviceTypes; ++i)
    if (r.names[i] == name) return static_cast<DeviceType>(i);
  EMBER_CHECK(r.next < kMaxDeviceTypes, "[register_device_type] too many device types (max ",
              kMaxDeviceTypes - static_cast<int>(DeviceType::kFirstCustom), ")");
  r.names[r.next] = name;
  return static_cast<DeviceType>(r.next++);
}

std::string device_type_name(DeviceType t) {
  auto& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  int i = static_cast<int>(t);
  if (i >= 0 && i < kMaxDeviceTypes && !r.names[i].empty()) return r.names[i];
  return "unknown";
}

Device::Device(DeviceType t, int index) : type_(t), index_(static_cast<int8_t>(index)) {
  EMBER_CHECK_VALUE(index >= -1 && index < 127,
                    "[Device] device index must be -1 or in [0, 127), got ", index);
  EMBER_CHECK_VALUE(t != DeviceType::CPU || index <= 0,
                    "[Device] CPU device index must be -1 or zero, got ", index);
}

Device::Device(const std::string& s) {
  std::string type = s;
  int index = -1;
  auto colon = s.find(':');
  if (colon != std::string::npos) {
    type = s.substr(0, colon);
    std::string idx = s.substr(colon + 1);
    bool digits =
        !idx.empty() && idx.size() < 4 && idx.find_first_not_of("0123456789") == std::string::npos;
    EMBER_CHECK_VALUE(digits, "[Device] invalid device string: '", s, "'");
    index = std::stoi(idx);
  }
  auto& r = registry();
  int found = -1;
  {
    std::lock_guard<std::mutex> g(r.mu);
    for (int i = 0; i < kMaxDeviceTypes; ++i)
      if (!r.names[i].empty() && r.names[i] == type) found = i;
  }
  EMBER_CHECK_VALUE(found >= 0,
                    "[Device] expected one of cpu, cuda, meta or a registered device "
                    "type at start of device string: '",
                    s, "'");
  *this = Device(static_cast<DeviceType>(found), index);
}

std::string Device::str() const {
  std::string s = device_type_name(type_);
  if (index_ >= 0) s += ":" + std::to_string(index_);
  return s;
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }
std::ostream& operator<<(std::ostream& os, DeviceType t) { return os << device_type_name(t); }

void check_has_memory(const Tensor& t, const char* op) {
  if (!t.defined() || t.numel() == 0) return;
  const TensorImpl* impl = t.unsafeGetTensorImpl();
  EMBER_CHECK(impl->storage().defined() && impl->storage().data() != nullptr, "[", op,
              "] this tensor has no memory of its own: it is a batched tensor inside vmap, whose "
              "values cannot be read (or printed) inside the transform, and that no kernel may "
              "see. Return it from the vmapped function, or compute this op outside vmap.");
}

void check_kernel_tensor(const char* name, const Tensor& t) { check_has_memory(t, name); }

void kernel_not_implemented(const char* name, DeviceType t) {
  EMBER_CHECK_T(NotImplementedError, false, "[", name, "] not implemented for ",
                device_type_name(t));
  std::abort();
}

}  // namespace ember
