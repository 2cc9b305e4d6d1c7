// CUDA Graphs (at::cuda::CUDAGraph): capture of a side stream's work into a graph with a
// private memory pool, instantiation and replay.
//
// Note [CUDA graph capture]
// capture_begin() refuses the legacy default stream (it cannot be captured, as in PyTorch),
// routes the capturing stream's allocations to the graph's pool (a private one, or a pool
// shared through graph_pool_handle() / another graph's pool()), and starts capturing in global
// mode: any thread's call that could invalidate the capture (a device synchronisation, a
// pageable copy) fails instead of corrupting it. Ops that synchronise with the host check
// check_not_capturing() first and raise a clear error. capture_end() instantiates the graph;
// replay() launches it on the current stream; reset() (or the destructor) frees the executable
// graph and releases the pool, ending an unfinished capture first.
//
// Note [Random ops in CUDA graphs]
// A random kernel takes (seed, offset) from its generator on the host, so a captured kernel
// would replay the numbers of the capture forever. PyTorch makes replays advance by reading the
// offset from device memory; ember's kernels do not, so random ops are refused during capture:
// random kernels call check_random_not_capturing(), and capture_end() also refuses a capture
// during which the device's default generator moved (a random op that skipped the check).
//
// Note [cuBLAS workspaces and graphs]
// cuBLAS workspaces are cached per (handle, stream) (handles.cpp). The cache is emptied when a
// capture begins, so the workspace a graph's GEMMs use is allocated inside the capture, from
// the graph's pool, which keeps it for the replays; and again when it ends, so that eager
// calls afterwards get a workspace of their own instead of sharing the graph's (a replay on
// another stream would race with them). A workspace freed by the first emptying was never used
// by an earlier graph: each capture starts from an empty cache.
#include <atomic>
#include <mutex>
#include <utility>

#include "cuda/cuda_context.h"
#include "cuda/runtime_internal.h"
#include "ember/generator.h"

namespace ember::cuda {
namespace {

struct Graph {
  int device = -1;
  MempoolId pool{};
  bool pool_held = false;  // allocator_begin_pool ran and release_pool has not
  bool capturing = false;
  cudaStream_t stream = nullptr;  // the capturing stream
  int64_t stream_id = 0;
  cudaGraphExec_t exec = nullptr;
  uint64_t rng_seed = 0, rng_offset = 0;  // the default generator when capture began
};

// Private pools are {n, 0}, handles for sharing {0, n}: the two never collide.
std::atomic<uint64_t> g_next_pool{1};

std::pair<uint64_t, uint64_t> default_rng_state(int device) {
  Generator gen = default_generator(Device(kCUDA, int8_t(device)));
  std::lock_guard<std::mutex> g(gen.impl()->mutex);
  return {gen.impl()->seed, gen.impl()->offset};
}

Graph& as_graph(void* g) {
  EMBER_CHECK(g, "[CUDAGraph] the graph was moved from or destroyed");
  return *static_cast<Graph*>(g);
}

// Ends an unfinished capture without keeping its graph (errors dropped: the capture may have
// been invalidated already).
void abandon_capture(Graph& G) {
  cudaGraph_t partial = nullptr;
  (void)cudaStreamEndCapture(G.stream, &partial);
  if (partial) (void)cudaGraphDestroy(partial);
  (void)cudaGetLastError();
  G.capturing = false;
  allocator_end_pool(G.device, G.pool);
  clear_cublas_workspaces();
}

void release_pool(Graph& G) {
  if (!G.pool_held) return;
  G.pool_held = false;
  allocator_release_pool(G.device, G.pool);
}

}  // namespace

void check_random_not_capturing(const char* op) {
  if (stream_is_capturing(current_raw_stream()))
    EMBER_THROW(Error, "[", op,
                "] cannot be captured in a CUDA graph: every replay would repeat the random "
                "numbers drawn during capture. Draw them outside the graph (e.g. fill a static "
                "tensor before each replay)");
}

MempoolId new_graph_pool_handle() { return MempoolId{0, g_next_pool.fetch_add(1)}; }

void* graph_new() {
  lazy_init();
  return new Graph();
}

void graph_delete(void* g) {
  if (!g) return;
  try {
    graph_clear(g);
  } catch (...) {  // called from a destructor: the graph's resources are leaked instead
  }
  delete static_cast<Graph*>(g);
}

void graph_begin(void* g, MempoolId pool) {
  Graph& G = as_graph(g);
  lazy_init();
  EMBER_CHECK(!G.capturing, "[CUDAGraph.capture_begin] this graph is already capturing");
  EMBER_CHECK(!G.exec,
              "[CUDAGraph.capture_begin] this graph already holds a capture: call reset() "
              "before capturing again");
  const int d = raw_current_device();
  const Stream s = getCurrentCUDAStream(d);
  EMBER_CHECK(s.id() != 0,
              "[CUDAGraph.capture_begin] CUDA graphs must be captured on a stream other than "
              "the default stream: make a side stream current first (StreamGuard with "
              "getStreamFromPool(), torch.cuda.stream(torch.cuda.Stream())); the graph may be "
              "replayed on any stream");
  cudaStream_t stream = stream_handle(s, "CUDAGraph.capture_begin");
  EMBER_CHECK(!stream_is_capturing(stream),
              "[CUDAGraph.capture_begin] the current stream is already capturing a graph");
  const MempoolId id = (pool.a || pool.b) ? pool : MempoolId{g_next_pool.fetch_add(1), 0};
  const auto rng = default_rng_state(d);
  clear_cublas_workspaces();  // Note [cuBLAS workspaces and graphs]
  // Allocations are routed before capture begins, so that no allocation of the capturing
  // stream can slip between the two.
  allocator_begin_pool(d, id, stream);
  cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  if (err != cudaSuccess) {
    allocator_end_pool(d, id);
    allocator_release_pool(d, id);
    check(err, "cudaStreamBeginCapture");
  }
  G.device = d;
  G.pool = id;
  G.pool_held = true;
  G.capturing = true;
  G.stream = stream;
  G.stream_id = s.id();
  G.rng_seed = rng.first;
  G.rng_offset = rng.second;
}

void graph_end(void* g) {
  Graph& G = as_graph(g);
  EMBER_CHECK(G.capturing, "[CUDAGraph.capture_end] called without capture_begin()");
  RawDeviceGuard guard(G.device);
  const Stream cur = getCurrentCUDAStream(G.device);
  EMBER_CHECK(cur.id() == G.stream_id,
              "[CUDAGraph.capture_end] capture must end on the stream it began on (stream ",
              G.stream_id, " of cuda:", G.device, "); the current stream is ", cur.id());
  cudaGraph_t graph = nullptr;
  const cudaError_t err = cudaStreamEndCapture(G.stream, &graph);
  if (err != cudaSuccess) (void)cudaGetLastError();
  G.capturing = false;
  allocator_end_pool(G.device, G.pool);
  clear_cublas_workspaces();  // Note [cuBLAS workspaces and graphs]
  if (err != cudaSuccess || !graph) {
    if (graph) (void)cudaGraphDestroy(graph);
    release_pool(G);
    EMBER_THROW(Error, "[CUDAGraph.capture_end] the capture failed (",
                cudaGetErrorString(err == cudaSuccess ? cudaErrorStreamCaptureInvalidated : err),
                "): an operation that is not allowed during capture ran on this or another "
                "thread (a device synchronisation, a copy to pageable host memory, ...)");
  }
  if (default_rng_state(G.device) != std::make_pair(G.rng_seed, G.rng_offset)) {
    (void)cudaGraphDestroy(graph);
    release_pool(G);
    EMBER_THROW(Error,
                "[CUDAGraph.capture_end] random numbers were drawn from the default "
                "generator of cuda:",
                G.device,
                " during the capture: every replay would "
                "repeat them, which ember's CUDA graphs do not support. Draw them outside the "
                "graph (e.g. fill a static tensor before each replay)");
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t ierr = cudaGraphInstantiate(&exec, graph, 0);
  // The executable graph holds everything it needs.
  (void)cudaGraphDestroy(graph);
  if (ierr != cudaSuccess) {
    release_pool(G);
    check(ierr, "cudaGraphInstantiate");
  }
  G.exec = exec;
}

void graph_launch(void* g) {
  Graph& G = as_graph(g);
  EMBER_CHECK(G.exec, "[CUDAGraph.replay] called before a successful capture_end()");
  lazy_init();
  RawDeviceGuard guard(G.device);
  EMBER_CUDA_CHECK(cudaGraphLaunch(G.exec, current_raw_stream(G.device)));
}

void graph_clear(void* g) {
  Graph& G = as_graph(g);
  if (G.device < 0) return;  // never captured
  check_not_forked();
  RawDeviceGuard guard(G.device);
  if (G.capturing) abandon_capture(G);
  if (G.exec) {
    // An executable graph still running is freed when its launch completes.
    (void)cudaGraphExecDestroy(G.exec);
    G.exec = nullptr;
  }
  release_pool(G);
}

MempoolId graph_pool_of(void* g) {
  Graph& G = as_graph(g);
  EMBER_CHECK(G.exec || G.capturing, "[CUDAGraph.pool] called without a preceding capture_begin()");
  return G.pool;
}

}  // namespace ember::cuda
