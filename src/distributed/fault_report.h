#pragma once
// Collective fault reports and the DETAIL desync check (Note [Collective fault reports] in
// fault_report.cpp).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ember/distributed.h"

namespace gloo {
class Context;
}

namespace ember::distributed::detail {

/// What every rank must agree on before a collective (DETAIL mode): fixed size, so it is
/// exchanged with one all-gather of bytes.
struct Fingerprint {
  char op[24] = {};
  uint64_t seq = 0;
  int32_t reduce_op = -1;  // ReduceOp, or -1 when the op has none
  int32_t root = -1;       // root rank, or -1
  int32_t dtype = -1;      // ScalarType of the tensors, or -1
  int32_t ndim = -1;       // -1: shapes are allowed to differ between ranks
  int64_t dims[6] = {};
  uint64_t shape_hash = 0;  // every tensor's shape (the dims above show the first)

  /// "all_reduce #3 (float32, [4, 2], SUM)".
  std::string describe() const;
  bool operator==(const Fingerprint& o) const;
};

/// A fingerprint of collective `op` number `seq` over `tensors`; `same_shapes` says whether
/// the shapes must match on every rank.
Fingerprint make_fingerprint(const char* op, uint64_t seq, const std::vector<Tensor>& tensors,
                             bool same_shapes, int reduce_op = -1, int root = -1);

/// All-gathers `fp` over `ctx` and raises DistBackendError naming the first rank whose
/// fingerprint differs from rank 0's.
void check_desync(const std::shared_ptr<gloo::Context>& ctx, const Fingerprint& fp,
                  Milliseconds timeout, const std::string& group_desc);

/// Publishes "the last collective this rank entered" to the group's store from a background
/// thread, and writes the report of a failed collective from the other ranks' entries.
class FaultReporter {
 public:
  FaultReporter(std::shared_ptr<Store> store, int rank, int size, std::string group_desc);
  ~FaultReporter();
  /// Called as collective `seq` starts (cheap: the thread publishes it soon after).
  void entered(uint64_t seq);
  /// The message of collective `op` #seq that failed after `elapsed_s` seconds with `cause`.
  std::string report(const std::string& op, uint64_t seq, double elapsed_s,
                     const std::string& cause);
  const std::string& group_desc() const { return group_desc_; }

 private:
  void publish_loop();
  void publish(uint64_t seq);
  std::string key(int rank) const;

  std::shared_ptr<Store> store_;
  int rank_;
  int size_;
  std::string group_desc_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  int64_t latest_ = -1;     // the last collective entered
  int64_t published_ = -1;  // the last one written to the store
  std::thread thread_;
};

}  // namespace ember::distributed::detail
