// The collectives of the Gloo process group (Note [Gloo process group]): each checks its
// arguments on the calling thread, stages the tensors, and queues a body of Gloo calls.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/context.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/scatter.h>

#include <cstring>
#include <numeric>

#include "core/tensor_util.h"
#include "distributed/process_group_gloo.h"
#include "distributed/reduce_ops.h"

namespace ember::distributed::detail {
namespace {

using ::ember::detail::str_cat;

// Gloo's typed setters only need the element size: an opaque element of N bytes.
template <size_t N>
struct Elem {
  uint8_t b[N];
};
template <class F>
void by_elem(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1:
      return f(Elem<1>{});
    case 2:
      return f(Elem<2>{});
    case 4:
      return f(Elem<4>{});
    case 8:
      return f(Elem<8>{});
    case 16:
      return f(Elem<16>{});
    default:
      EMBER_INTERNAL_ASSERT(false, "element size ", itemsize);
  }
}

uint8_t* bytes(const Staged& s) { return static_cast<uint8_t*>(s.data()); }
// Gloo wants a pointer even for zero bytes.
uint8_t g_empty[16];
uint8_t* ptr_or_dummy(void* p, size_t n) { return n > 0 ? static_cast<uint8_t*>(p) : g_empty; }

void check_tensor(const char* op, const Tensor& t, const char* what = "tensor") {
  EMBER_CHECK(t.defined(), "[", op, "] the ", what, " is undefined");
  EMBER_CHECK(t.is_cpu(), "[", op, "] the gloo backend takes CPU tensors, got a ", what, " on ",
              t.device());
  EMBER_CHECK_TYPE(t.scalar_type() != ScalarType::ComplexHalf, "[", op,
                   "] complex32 tensors are not supported by the gloo backend");
}

const Tensor& single(const char* op, const std::vector<Tensor>& ts, const char* what = "tensor") {
  EMBER_CHECK(ts.size() == 1, "[", op, "] expects a list of exactly one ", what,
              " (one per process on the CPU), got ", ts.size());
  check_tensor(op, ts[0], what);
  return ts[0];
}

void check_root(const char* op, int root, int size) {
  EMBER_CHECK(root >= 0 && root < size, "[", op, "] invalid root rank ", root, " for a group of ",
              size, " ranks");
}

void check_like(const char* op, const Tensor& t, const Tensor& ref, const char* what,
                const char* ref_what) {
  check_tensor(op, t, what);
  EMBER_CHECK_TYPE(t.scalar_type() == ref.scalar_type(), "[", op, "] the ", what, " has dtype ",
                   dtype_name(t.scalar_type()), " but the ", ref_what, " has ",
                   dtype_name(ref.scalar_type()), "; they must match");
  EMBER_CHECK(t.numel() == ref.numel(), "[", op, "] the ", what, " has shape ",
              shape_str(t.sizes()), " (", t.numel(), " elements) but the ", ref_what, " has shape ",
              shape_str(ref.sizes()), " (", ref.numel(), " elements); they must match");
}

// The root's per-rank tensors of gather (outputs) and scatter (inputs): one list of a tensor
// like `ref` per rank on the root, nothing on the other ranks.
std::vector<Staged> stage_root_list(const char* op, const std::vector<std::vector<Tensor>>& lists,
                                    const Tensor& ref, bool outputs, int root, int rank, int size) {
  const char* kind = outputs ? "output" : "input";
  std::vector<Staged> staged;
  if (rank != root) {
    EMBER_CHECK(lists.empty() || (lists.size() == 1 && lists[0].empty()), "[", op,
                "] only the root (rank ", root, ") takes ", kind, " tensors; this is rank ", rank);
    return staged;
  }
  EMBER_CHECK(lists.size() == 1, "[", op, "] the root expects one list of ", kind, " tensors, got ",
              lists.size());
  EMBER_CHECK(int(lists[0].size()) == size, "[", op, "] the ", op, " list has ", lists[0].size(),
              " tensors but the group has ", size, " ranks");
  std::string what = std::string(op) + " list tensor";
  std::string ref_what = std::string(outputs ? "input" : "output") + " tensor";
  for (const auto& t : lists[0]) {
    check_like(op, t, ref, what.c_str(), ref_what.c_str());
    staged.push_back(stage(t, outputs));
  }
  return staged;
}

// Runs an all-reduce of `n` elements in place at `data`.
void gloo_allreduce(const std::shared_ptr<gloo::Context>& ctx, void* data, size_t n,
                    size_t itemsize, ReduceFn fn, uint32_t tag, Milliseconds timeout) {
  if (n == 0) return;
  gloo::AllreduceOptions o(ctx);
  by_elem(itemsize, [&](auto e) {
    using E = decltype(e);
    o.template setOutput<E>(static_cast<E*>(data), n);
  });
  o.setReduceFunction(fn);
  o.setTag(tag);
  o.setTimeout(timeout);
  gloo::allreduce(o);
}

// Ring reduce-scatter over `n` chunks of `nb` bytes at `flat`: at step k rank r sends its partial
// reduction of chunk (r - k - 1) mod n to rank r + 1 and folds in the partial reduction of chunk
// (r - k - 2) mod n from rank r - 1; after n - 1 steps chunk r holds the full reduction. Each
// rank sends (n - 1)/n of the data: half of what an all-reduce of the whole buffer sends.
void ring_reduce_scatter(const std::shared_ptr<gloo::Context>& ctx, uint8_t* flat, size_t nb,
                         size_t itemsize, ReduceFn fn, uint32_t tag, Milliseconds timeout) {
  const int n = ctx->size, r = ctx->rank;
  if (n == 1 || nb == 0) return;
  std::vector<uint8_t> tmp(nb);
  auto out = ctx->createUnboundBuffer(flat, nb * size_t(n));
  auto in = ctx->createUnboundBuffer(tmp.data(), nb);
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  // A slot prefix of its own (Gloo's collectives use 0x01-0x08, sends and receives set bit 63).
  const uint64_t base = (uint64_t(0x3e) << 56) | (uint64_t(tag) << 16);
  for (int k = 0; k < n - 1; ++k) {
    const int send_chunk = ((r - k - 1) % n + n) % n;
    const int recv_chunk = ((r - k - 2) % n + n) % n;
    out->send(right, base | uint64_t(k), size_t(send_chunk) * nb, nb);
    in->recv(left, base | uint64_t(k), 0, nb);
    in->waitRecv(timeout);
    out->waitSend(timeout);
    uint8_t* acc = flat + size_t(recv_chunk) * nb;
    fn(acc, acc, tmp.data(), nb / itemsize);
  }
}

void gloo_allgather(const std::shared_ptr<gloo::Context>& ctx, void* in, size_t nbytes, void* out,
                    uint32_t tag, Milliseconds timeout) {
  if (nbytes == 0) return;
  gloo::AllgatherOptions o(ctx);
  o.setInput(static_cast<uint8_t*>(in), nbytes);
  o.setOutput(static_cast<uint8_t*>(out), nbytes * size_t(ctx->size));
  o.setTag(tag);
  o.setTimeout(timeout);
  gloo::allgather(o);
}

void gloo_alltoallv(const std::shared_ptr<gloo::Context>& ctx, void* in,
                    std::vector<int64_t> in_bytes, void* out, std::vector<int64_t> out_bytes,
                    uint32_t tag, Milliseconds timeout) {
  int64_t tin = std::accumulate(in_bytes.begin(), in_bytes.end(), int64_t(0));
  int64_t tout = std::accumulate(out_bytes.begin(), out_bytes.end(), int64_t(0));
  gloo::AlltoallvOptions o(ctx);
  o.setInput(ptr_or_dummy(in, size_t(tin)), std::move(in_bytes));
  o.setOutput(ptr_or_dummy(out, size_t(tout)), std::move(out_bytes));
  o.setTag(tag);
  o.setTimeout(timeout);
  gloo::alltoallv(o);
}

// Each rank tells every other what it will send it and what it expects from it, so that split
// sizes that disagree raise on both ends of the pair instead of reaching Gloo (which aborts the
// process on a message longer than the buffer posted for it).
void check_alltoall_counts(const char* op, const std::shared_ptr<gloo::Context>& ctx,
                           const std::vector<int64_t>& send_bytes,
                           const std::vector<int64_t>& recv_bytes, size_t itemsize, uint32_t tag,
                           Milliseconds timeout) {
  const int n = ctx->size;
  if (n == 1) return;
  std::vector<int64_t> mine(size_t(2 * n)), theirs(size_t(2 * n));
  for (int r = 0; r < n; ++r) {
    mine[size_t(2 * r)] = send_bytes[size_t(r)];
    mine[size_t(2 * r + 1)] = recv_bytes[size_t(r)];
  }
  gloo::AlltoallOptions o(ctx);
  o.setInput(mine.data(), mine.size());
  o.setOutput(theirs.data(), theirs.size());
  o.setTag(tag ^ 0x4000u);
  o.setTimeout(timeout);
  gloo::alltoall(o);
  auto elems = [&](int64_t b) { return b / int64_t(itemsize); };
  for (int r = 0; r < n; ++r) {
    int64_t r_sends = theirs[size_t(2 * r)], r_expects = theirs[size_t(2 * r + 1)];
    if (r_sends != recv_bytes[size_t(r)]) {
      throw DistBackendError(str_cat("[", op, "] the ranks' split sizes disagree: rank ", r,
                                     " sends ", elems(r_sends), " elements to rank ", ctx->rank,
                                     ", which expects ", elems(recv_bytes[size_t(r)])));
    }
    if (r_expects != send_bytes[size_t(r)]) {
      throw DistBackendError(str_cat("[", op, "] the ranks' split sizes disagree: rank ", ctx->rank,
                                     " sends ", elems(send_bytes[size_t(r)]), " elements to rank ",
                                     r, ", which expects ", elems(r_expects)));
    }
  }
}

using Bytes = std::shared_ptr<std::vector<uint8_t>>;
Bytes make_bytes(size_t n) { return std::make_shared<std::vector<uint8_t>>(n); }

}  // namespace

WorkPtr ProcessGroupGloo::broadcast(std::vector<Tensor>& tensors, const BroadcastOptions& opts) {
  const char* op = "broadcast";
  const Tensor& t = single(op, tensors);
  check_root(op, opts.root_rank, size_);
  Staged s = stage(t, rank_ != opts.root_rank);
  auto fp = make_fingerprint(op, 0, {t}, true, -1, opts.root_rank);
  auto ctx = context_;
  int root = opts.root_rank;
  return enqueue(op, opts.timeout, fp, s.nbytes(), {s},
                 [ctx, s, root](uint32_t tag, Milliseconds to) {
                   if (s.nbytes() == 0) return;
                   gloo::BroadcastOptions o(ctx);
                   o.setOutput(bytes(s), s.nbytes());
                   o.setRoot(root);
                   o.setTag(tag);
                   o.setTimeout(to);
                   gloo::broadcast(o);
                 });
}

WorkPtr ProcessGroupGloo::allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts) {
  const char* op = "all_reduce";
  const Tensor& t = single(op, tensors);
  ReduceFn fn = reduce_function(op, opts.reduce_op, t.scalar_type());
  Staged s = stage(t, true);
  auto fp = make_fingerprint(op, 0, {t}, true, int(opts.reduce_op));
  auto ctx = context_;
  ReduceOp rop = opts.reduce_op;
  int size = size_;
  return enqueue(op, opts.timeout, fp, s.nbytes(), {s},
                 [ctx, s, fn, rop, size](uint32_t tag, Milliseconds to) {
                   size_t n = size_t(s.buf.numel());
                   gloo_allreduce(ctx, s.data(), n, s.buf.itemsize(), fn, tag, to);
                   if (rop == ReduceOp::AVG && n > 0)
                     divide_in_place(s.data(), s.buf.scalar_type(), n, size);
                 });
}

WorkPtr ProcessGroupGloo::reduce(std::vector<Tensor>& tensors, const ReduceOptions& opts) {
  const char* op = "reduce";
  const Tensor& t = single(op, tensors);
  check_root(op, opts.root_rank, size_);
  ReduceFn fn = reduce_function(op, opts.reduce_op, t.scalar_type());
  bool is_root = rank_ == opts.root_rank;
  Staged s = stage(t, is_root);
  if (!is_root) {
    // Gloo leaves partial sums in the buffers of the other ranks: theirs stay untouched.
    s.buf = s.buf.clone();
    s.copy_back = false;
  }
  auto fp = make_fingerprint(op, 0, {t}, true, int(opts.reduce_op), opts.root_rank);
  auto ctx = context_;
  ReduceOp rop = opts.reduce_op;
  int size = size_, root = opts.root_rank;
  return enqueue(op, opts.timeout, fp, s.nbytes(), {s},
                 [ctx, s, fn, rop, size, root, is_root](uint32_t tag, Milliseconds to) {
                   size_t n = size_t(s.buf.numel());
                   if (n == 0) return;
                   gloo::ReduceOptions o(ctx);
                   by_elem(s.buf.itemsize(), [&](auto e) {
                     using E = decltype(e);
                     o.template setOutput<E>(static_cast<E*>(s.data()), n);
                   });
                   o.setRoot(root);
                   o.setReduceFunction(fn);
                   o.setTag(tag);
                   o.setTimeout(to);
                   gloo::reduce(o);
                   if (rop == ReduceOp::AVG && is_root) {
                     divide_in_place(s.data(), s.buf.scalar_type(), n, size);
                   }
                 });
}

WorkPtr ProcessGroupGloo::allgather(std::vector<std::vector<Tensor>>& outputs,
                                    std::vector<Tensor>& inputs, const AllgatherOptions& opts) {
  const char* op = "all_gather";
  const Tensor& in = single(op, inputs, "input tensor");
  EMBER_CHECK(outputs.size() == 1, "[", op, "] expects one list of output tensors, got ",
              outputs.size());
  EMBER_CHECK(int(outputs[0].size()) == size_, "[", op, "] the output list has ", outputs[0].size(),
              " tensors but the group has ", size_, " ranks");
  std::vector<Staged> outs;
  for (const auto& o : outputs[0]) {
    check_like(op, o, in, "output tensor", "input tensor");
    outs.push_back(stage(o, true));
  }
  Staged s = stage(in, false);
  auto fp = make_fingerprint(op, 0, {in}, true);
  auto ctx = context_;
  size_t nb = s.nbytes();
  Bytes flat = make_bytes(nb * size_t(size_));
  return enqueue(op, opts.timeout, fp, nb, outs,
                 [ctx, s, outs, flat, nb](uint32_t tag, Milliseconds to) {
                   gloo_allgather(ctx, s.data(), nb, flat->data(), tag, to);
                   for (size_t r = 0; r < outs.size(); ++r)
                     std::memcpy(outs[r].data(), flat->data() + r * nb, nb);
                 });
}

WorkPtr ProcessGroupGloo::allgather_into_tensor(Tensor& output, Tensor& input,
                                                const AllgatherOptions& opts) {
  const char* op = "all_gather_into_tensor";
  check_tensor(op, input, "input tensor");
  check_tensor(op, output, "output tensor");
  EMBER_CHECK_TYPE(output.scalar_type() == input.scalar_type(), "[", op,
                   "] the output tensor has dtype ", dtype_name(output.scalar_type()),
                   " but the input has ", dtype_name(input.scalar_type()));
  EMBER_CHECK(output.numel() == input.numel() * size_, "[", op, "] the output tensor has ",
              output.numel(), " elements; it must have group size (", size_, ") x the input's ",
              input.numel());
  Staged s = stage(input, false);
  Staged o = stage(output, true);
  auto fp = make_fingerprint(op, 0, {input}, true);
  auto ctx = context_;
  return enqueue(op, opts.timeout, fp, s.nbytes(), {o}, [ctx, s, o](uint32_t tag, Milliseconds to) {
    gloo_allgather(ctx, s.data(), s.nbytes(), o.data(), tag, to);
  });
}

WorkPtr ProcessGroupGloo::gather(std::vector<std::vector<Tensor>>& outputs,
                                 std::vector<Tensor>& inputs, const GatherOptions& opts) {
  const char* op = "gather";
  const Tensor& in = single(op, inputs, "input tensor");
  check_root(op, opts.root_rank, size_);
  bool is_root = rank_ == opts.root_rank;
  std::vector<Staged> outs = stage_root_list(op, outputs, in, true, opts.root_rank, rank_, size_);
  Staged s = stage(in, false);
  auto fp = make_fingerprint(op, 0, {in}, true, -1, opts.root_rank);
  auto ctx = context_;
  size_t nb = s.nbytes();
  int root = opts.root_rank;
  Bytes flat = make_bytes(is_root ? nb * size_t(size_) : 0);
  return enqueue(op, opts.timeout, fp, nb, outs,
                 [ctx, s, outs, flat, nb, root, is_root](uint32_t tag, Milliseconds to) {
                   if (nb == 0) return;
                   gloo::GatherOptions o(ctx);
                   o.setInput(bytes(s), nb);
                   if (is_root) o.setOutput(flat->data(), flat->size());
                   o.setRoot(root);
                   o.setTag(tag);
                   o.setTimeout(to);
                   gloo::gather(o);
                   for (size_t r = 0; r < outs.size(); ++r)
                     std::memcpy(outs[r].data(), flat->data() + r * nb, nb);
                 });
}

WorkPtr ProcessGroupGloo::scatter(std::vector<Tensor>& outputs,
                                  std::vector<std::vector<Tensor>>& inputs,
                                  const ScatterOptions& opts) {
  const char* op = "scatter";
  const Tensor& out = single(op, outputs, "output tensor");
  check_root(op, opts.root_rank, size_);
  bool is_root = rank_ == opts.root_rank;
  std::vector<Staged> ins = stage_root_list(op, inputs, out, false, opts.root_rank, rank_, size_);
  Staged s = stage(out, true);
  auto fp = make_fingerprint(op, 0, {out}, true, -1, opts.root_rank);
  auto ctx = context_;
  int root = opts.root_rank;
  return enqueue(op, opts.timeout, fp, s.nbytes(), {s},
                 [ctx, s, ins, root, is_root](uint32_t tag, Milliseconds to) {
                   size_t nb = s.nbytes();
                   if (nb == 0) return;
                   gloo::ScatterOptions o(ctx);
                   if (is_root) {
                     std::vector<uint8_t*> ptrs;
                     for (const auto& i : ins) ptrs.push_back(bytes(i));
                     o.setInputs(ptrs, nb);
                   }
                   o.setOutput(bytes(s), nb);
                   o.setRoot(root);
                   o.setTag(tag);
                   o.setTimeout(to);
                   gloo::scatter(o);
                 });
}

WorkPtr ProcessGroupGloo::reduce_scatter(std::vector<Tensor>& outputs,
                                         std::vector<std::vector<Tensor>>& inputs,
                                         const ReduceScatterOptions& opts) {
  const char* op = "reduce_scatter";
  const Tensor& out = single(op, outputs, "output tensor");
  ReduceFn fn = reduce_function(op, opts.reduce_op, out.scalar_type());
  EMBER_CHECK(inputs.size() == 1, "[", op, "] expects one list of input tensors, got ",
              inputs.size());
  EMBER_CHECK(int(inputs[0].size()) == size_, "[", op, "] the input list has ", inputs[0].size(),
              " tensors but the group has ", size_, " ranks");
  std::vector<Staged> ins;
  for (const auto& i : inputs[0]) {
    check_like(op, i, out, "input tensor", "output tensor");
    ins.push_back(stage(i, false));
  }
  Staged s = stage(out, true);
  auto fp = make_fingerprint(op, 0, {out}, true, int(opts.reduce_op));
  auto ctx = context_;
  ReduceOp rop = opts.reduce_op;
  int size = size_, rank = rank_;
  size_t nb = s.nbytes();
  Bytes flat = make_bytes(nb * size_t(size_));
  return enqueue(op, opts.timeout, fp, nb, {s},
                 [ctx, s, ins, flat, nb, fn, rop, size, rank](uint32_t tag, Milliseconds to) {
                   if (nb == 0) return;
                   for (size_t r = 0; r < ins.size(); ++r)
                     std::memcpy(flat->data() + r * nb, ins[r].data(), nb);
                   size_t item = s.buf.itemsize();
                   ring_reduce_scatter(ctx, flat->data(), nb, item, fn, tag, to);
                   std::memcpy(s.data(), flat->data() + size_t(rank) * nb, nb);
                   if (rop == ReduceOp::AVG)
                     divide_in_place(s.data(), s.buf.scalar_type(), nb / item, size);
                 });
}

WorkPtr ProcessGroupGloo::reduce_scatter_tensor(Tensor& output, Tensor& input,
                                                const ReduceScatterOptions& opts) {
  const char* op = "reduce_scatter_tensor";
  check_tensor(op, output, "output tensor");
  check_tensor(op, input, "input tensor");
  EMBER_CHECK_TYPE(output.scalar_type() == input.scalar_type(), "[", op,
                   "] the output tensor has dtype ", dtype_name(output.scalar_type()),
                   " but the input has ", dtype_name(input.scalar_type()));
  EMBER_CHECK(input.numel() == output.numel() * size_, "[", op, "] the input tensor has ",
              input.numel(), " elements; it must have group size (", size_, ") x the output's ",
              output.numel());
  ReduceFn fn = reduce_function(op, opts.reduce_op, output.scalar_type());
  Staged in = stage(input, false);
  Staged s = stage(output, true);
  auto fp = make_fingerprint(op, 0, {output}, true, int(opts.reduce_op));
  auto ctx = context_;
  ReduceOp rop = opts.reduce_op;
  int size = size_, rank = rank_;
  size_t nb = s.nbytes();
  Bytes flat = make_bytes(nb * size_t(size_));
  return enqueue(op, opts.timeout, fp, nb, {s},
                 [ctx, s, in, flat, nb, fn, rop, size, rank](uint32_t tag, Milliseconds to) {
                   if (nb == 0) return;
                   std::memcpy(flat->data(), in.data(), flat->size());
                   size_t item = s.buf.itemsize();
                   ring_reduce_scatter(ctx, flat->data(), nb, item, fn, tag, to);
                   std::memcpy(s.data(), flat->data() + size_t(rank) * nb, nb);
                   if (rop == ReduceOp::AVG)
                     divide_in_place(s.data(), s.buf.scalar_type(), nb / item, size);
                 });
}

namespace {
// Byte counts per rank of a dim-0 split of `t` (equal when `splits` is empty).
std::vector<int64_t> split_bytes(const char* op, const Tensor& t,
                                 const std::vector<int64_t>& splits, int size, const char* what) {
  EMBER_CHECK(t.dim() >= 1, "[", op, "] the ", what, " tensor must have at least one ",
              "dimension to split, got a 0-d tensor");
  int64_t rows = t.size(0);
  int64_t row_bytes = rows > 0 ? int64_t(t.nbytes()) / rows : 0;
  if (rows == 0) {
    row_bytes = int64_t(t.itemsize());
    for (int64_t d = 1; d < t.dim(); ++d) row_bytes *= t.size(d);
  }
  std::vector<int64_t> out(size_t(size), 0);
  if (splits.empty()) {
    EMBER_CHECK(rows % size == 0, "[", op, "] the ", what, " tensor's first dimension (", rows,
                ") does not divide evenly among ", size, " ranks; pass split sizes");
    for (auto& b : out) b = rows / size * row_bytes;
  } else {
    EMBER_CHECK(int(splits.size()) == size, "[", op, "] ", splits.size(), " ", what,
                " split sizes given for a group of ", size, " ranks");
    int64_t total = 0;
    for (size_t r = 0; r < splits.size(); ++r) {
      EMBER_CHECK(splits[r] >= 0, "[", op, "] ", what, " split size ", splits[r], " is negative");
      total += splits[r];
      out[r] = splits[r] * row_bytes;
    }
    EMBER_CHECK(total == rows, "[", op, "] the ", what, " split sizes add up to ", total,
                " but the ", what, " tensor's first dimension is ", rows);
  }
  return out;
}
}  // namespace

WorkPtr ProcessGroupGloo::alltoall_base(Tensor& output, Tensor& input,
                                        std::vector<int64_t> output_split_sizes,
                                        std::vector<int64_t> input_split_sizes,
                                        const AllToAllOptions& opts) {
  const char* op = "all_to_all_single";
  check_tensor(op, output, "output tensor");
  check_tensor(op, input, "input tensor");
  EMBER_CHECK_TYPE(output.scalar_type() == input.scalar_type(), "[", op,
                   "] the output tensor has dtype ", dtype_name(output.scalar_type()),
                   " but the input has ", dtype_name(input.scalar_type()));
  auto in_bytes = split_bytes(op, input, input_split_sizes, size_, "input");
  auto out_bytes = split_bytes(op, output, output_split_sizes, size_, "output");
  Staged in = stage(input, false);
  Staged s = stage(output, true);
  auto fp = make_fingerprint(op, 0, {input}, false);
  auto ctx = context_;
  return enqueue(op, opts.timeout, fp, 0, {s},
                 [op, ctx, in, s, in_bytes, out_bytes](uint32_t tag, Milliseconds to) {
                   check_alltoall_counts(op, ctx, in_bytes, out_bytes, s.buf.itemsize(), tag, to);
                   gloo_alltoallv(ctx, in.data(), in_bytes, s.data(), out_bytes, tag, to);
                 });
}

WorkPtr ProcessGroupGloo::alltoall(std::vector<Tensor>& outputs, std::vector<Tensor>& inputs,
                                   const AllToAllOptions& opts) {
  const char* op = "all_to_all";
  EMBER_CHECK(int(outputs.size()) == size_ && int(inputs.size()) == size_, "[", op,
              "] expects one input and one output tensor per rank (", size_, "), got ",
              inputs.size(), " inputs and ", outputs.size(), " outputs");
  std::vector<Staged> ins, outs;
  std::vector<int64_t> in_bytes, out_bytes;
  for (int r = 0; r < size_; ++r) {
    check_tensor(op, inputs[size_t(r)], "input tensor");
    check_tensor(op, outputs[size_t(r)], "output tensor");
    EMBER_CHECK_TYPE(inputs[size_t(r)].scalar_type() == inputs[0].scalar_type() &&
                         outputs[size_t(r)].scalar_type() == inputs[0].scalar_type(),
                     "[", op, "] every input and output tensor must have the same dtype; got ",
                     dtype_name(inputs[size_t(r)].scalar_type()), " and ",
                     dtype_name(outputs[size_t(r)].scalar_type()), " beside ",
                     dtype_name(inputs[0].scalar_type()));
    ins.push_back(stage(inputs[size_t(r)], false));
    outs.push_back(stage(outputs[size_t(r)], true));
    in_bytes.push_back(int64_t(ins.back().nbytes()));
    out_bytes.push_back(int64_t(outs.back().nbytes()));
  }
  auto fp = make_fingerprint(op, 0, {inputs[0]}, false);
  size_t item = inputs[0].itemsize();
  auto ctx = context_;
  int64_t tin = std::accumulate(in_bytes.begin(), in_bytes.end(), int64_t(0));
  int64_t tout = std::accumulate(out_bytes.begin(), out_bytes.end(), int64_t(0));
  Bytes fin = make_bytes(size_t(tin)), fout = make_bytes(size_t(tout));
  return enqueue(
      op, opts.timeout, fp, 0, outs,
      [op, ctx, ins, outs, in_bytes, out_bytes, fin, fout, item](uint32_t tag, Milliseconds to) {
        check_alltoall_counts(op, ctx, in_bytes, out_bytes, item, tag, to);
        size_t off = 0;
        for (const auto& i : ins) {
          if (i.nbytes()) std::memcpy(fin->data() + off, i.data(), i.nbytes());
          off += i.nbytes();
        }
        gloo_alltoallv(ctx, fin->data(), in_bytes, fout->data(), out_bytes, tag, to);
        off = 0;
        for (const auto& o : outs) {
          if (o.nbytes()) std::memcpy(o.data(), fout->data() + off, o.nbytes());
          off += o.nbytes();
        }
      });
}

WorkPtr ProcessGroupGloo::barrier(const BarrierOptions& opts) {
  const char* op = "barrier";
  auto fp = make_fingerprint(op, 0, {}, false);
  auto ctx = context_;
  return enqueue(op, opts.timeout, fp, 0, {}, [ctx](uint32_t tag, Milliseconds to) {
    gloo::BarrierOptions o(ctx);
    o.setTag(tag);
    o.setTimeout(to);
    gloo::barrier(o);
  });
}

}  // namespace ember::distributed::detail
