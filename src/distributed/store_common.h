#pragma once
// What the stores share: timeout handling, integer values and the wording of their errors.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/distributed.h"

namespace ember::distributed::store_detail {

using Clock = std::chrono::steady_clock;

// Note [Store timeouts]
// A timeout of kUnsetTimeout means the store's own; zero means "no timeout" (c10d's
// kNoTimeout); other negative values are rejected. The deadline of "no timeout" is
// Clock::time_point::max().
inline Milliseconds resolve_timeout(const char* op, Milliseconds t, Milliseconds store_default) {
  if (t == kUnsetTimeout) t = store_default;
  EMBER_CHECK_VALUE(t.count() >= 0, "[", op, "] the timeout must be >= 0 ms (0: no timeout), got ",
                    t.count(), " ms");
  return t;
}
inline Clock::time_point deadline_after(Milliseconds t) {
  return t.count() == 0 ? Clock::time_point::max() : Clock::now() + t;
}

inline std::string quote_keys(const std::vector<std::string>& keys) {
  std::string s = "[";
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", '" : "'") + keys[i] + "'";
  return s + "]";
}

/// The message of a get/wait that timed out: names the keys still missing.
inline std::string timeout_message(const char* op, Milliseconds t,
                                   const std::vector<std::string>& keys,
                                   const std::vector<std::string>& missing) {
  std::string m =
      std::string("[") + op + "] timed out after " + std::to_string(t.count()) + " ms waiting for ";
  if (keys.size() == 1) return m + "key '" + keys[0] + "'";
  m += "keys " + quote_keys(keys);
  if (missing.size() != keys.size()) m += " (missing: " + quote_keys(missing) + ")";
  return m;
}

inline std::vector<uint8_t> to_bytes(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

/// The integer a counter key holds (its decimal text, as c10d stores it); 0 when missing.
inline int64_t parse_counter(const char* op, const std::string& key,
                             const std::vector<uint8_t>* value) {
  if (value == nullptr) return 0;
  std::string s(value->begin(), value->end());
  size_t pos = 0;
  int64_t v = 0;
  bool ok = !s.empty();
  try {
    v = std::stoll(s, &pos);
  } catch (const std::exception&) {
    ok = false;
  }
  if (!ok || pos != s.size()) {
    throw DistStoreError(std::string("[") + op + "] the value of key '" + key +
                         "' is not an integer: '" + s + "'");
  }
  return v;
}

}  // namespace ember::distributed::store_detail
