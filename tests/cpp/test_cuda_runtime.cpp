// The CUDA runtime API (ember/cuda.h): devices, streams, events, pinned memory and CUDA Graphs.
// The CudaRuntime tests without a GPU run everywhere: CUDA is reported absent, every function
// that needs a GPU raises "no CUDA GPU", libember never links the CUDA runtime, and the load
// errors are clear (checked in child processes, since loading happens once per process). The
// CudaRuntimeGpu tests skip without a GPU.
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ember/cuda.h"
#include "ember/ember.h"

using namespace ember;

namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device"
#define SKIP_WITH_CUDA() \
  if (cuda_is_available()) GTEST_SKIP() << "a CUDA device is present"

// Runs `f` and expects ember::Error whose message contains `needle`.
template <class F>
void expect_error_with(F&& f, const std::string& needle, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << what << ": message was: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw a non-ember exception: " << e.what();
  }
}

void expect_no_gpu(const std::function<void()>& f, const std::string& what) {
  expect_error_with(f, "no CUDA GPU", what);
}

// The directory of libember.so, from the address of one of its functions.
std::string libember_path() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&cuda_is_available), &info) || !info.dli_fname) return "";
  return info.dli_fname;
}

// The DT_NEEDED entries of a 64-bit ELF shared object (its .dynamic section); empty when the
// file cannot be read.
std::vector<std::string> elf_needed(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0 ||
      bytes[EI_CLASS] != ELFCLASS64)
    return out;
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  auto section = [&](size_t i) {
    Elf64_Shdr sh{};
    const size_t off = eh.e_shoff + i * eh.e_shentsize;
    if (off + sizeof sh <= bytes.size()) std::memcpy(&sh, bytes.data() + off, sizeof sh);
    return sh;
  };
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr dyn = section(i);
    if (dyn.sh_type != SHT_DYNAMIC) continue;
    const Elf64_Shdr strtab = section(dyn.sh_link);
    for (size_t off = dyn.sh_offset; off + sizeof(Elf64_Dyn) <= dyn.sh_offset + dyn.sh_size &&
                                     off + sizeof(Elf64_Dyn) <= bytes.size();
         off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, bytes.data() + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag != DT_NEEDED) continue;
      const size_t name = strtab.sh_offset + d.d_un.d_val;
      if (name < bytes.size()) out.emplace_back(bytes.c_str() + name);
    }
  }
  return out;
}

bool is_cuda_library(const std::string& name) {
  for (const char* prefix : {"libcudart", "libcuda.", "libcublas", "libcudnn", "libcusolver",
                             "libcufft", "libnvrtc", "libember_cuda"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

// Runs this test binary again as a child with only `test` selected (a DISABLED_ test) and
// `env` added to the environment; returns its standard output.
std::string run_child(const std::string& test, const std::vector<std::string>& env) {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  std::vector<std::string> args = {exe, "--gtest_also_run_disabled_tests",
                                   "--gtest_filter=" + test};
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("EMBER_DISABLE_CUDA=", 0) == 0 || kv.rfind("EMBER_CUDA_LIBRARY=", 0) == 0)
      continue;
    envs.push_back(kv);
  }
  envs.insert(envs.end(), env.begin(), env.end());
  envs.push_back("EMBER_RUNTIME_CHILD=1");
  // Everything the child needs is built before fork: only async-signal-safe calls follow.
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return "";
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execve(exe, argv.data(), envp.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t r; (r = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(r));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

// The value printed by the child as "KEY=<value>\n".
std::string child_value(const std::string& out, const std::string& key) {
  const std::string tag = "\n" + key + "=";
  const size_t at = ("\n" + out).find(tag);
  if (at == std::string::npos) return "<missing " + key + ">";
  const size_t begin = at + tag.size() - 1;
  const size_t end = out.find('\n', begin);
  return out.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

bool cudart_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libcudart") != std::string::npos) return true;
  return false;
}

}  // namespace

// ---- without a GPU ----

TEST(CudaRuntime, ReportsNoDevice) {
  SKIP_WITH_CUDA();
  EXPECT_FALSE(cuda_is_available());
  EXPECT_FALSE(cuda::is_available());
  EXPECT_EQ(cuda_device_count(), 0);
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_EQ(cuda::current_device(), 0);
  EXPECT_FALSE(cuda::is_current_stream_capturing());
  EXPECT_FALSE(cuda::cudnn_is_available());
  // The allocator statistics read as empty, as torch.cuda's without a GPU.
  EXPECT_EQ(cuda::memory_allocated(), 0);
  EXPECT_EQ(cuda::max_memory_reserved(), 0);
  EXPECT_TRUE(cuda::memory_stats().empty());
  EXPECT_NO_THROW(cuda::empty_cache());
  EXPECT_NO_THROW(cuda::reset_peak_memory_stats());
  EXPECT_NE(cuda::memory_summary().find("No CUDA GPU"), std::string::npos);
  // Seeding without a GPU is ignored, as torch.cuda.manual_seed.
  EXPECT_NO_THROW(cuda::manual_seed(1));
  EXPECT_NO_THROW(cuda::manual_seed_all(1));
  EXPECT_FALSE(cuda::is_pinned(ones({3})));
  EXPECT_FALSE(cuda::is_pinned(Tensor()));
}

TEST(CudaRuntime, FunctionsNeedingAGpuRaise) {
  SKIP_WITH_CUDA();
  expect_no_gpu([] { cuda::set_device(0); }, "set_device");
  expect_no_gpu([] { cuda::synchronize(); }, "synchronize");
  expect_no_gpu([] { cuda::get_device_properties(); }, "get_device_properties");
  expect_no_gpu([] { cuda::get_device_name(0); }, "get_device_name");
  expect_no_gpu([] { cuda::get_device_capability(); }, "get_device_capability");
  expect_no_gpu([] { cuda::mem_get_info(); }, "mem_get_info");
  expect_no_gpu([] { cuda::getStreamFromPool(); }, "getStreamFromPool");
  expect_no_gpu([] { cuda::getStreamFromPool(true, 0); }, "getStreamFromPool(high)");
  expect_no_gpu([] { cuda::create_stream(); }, "create_stream");
  expect_no_gpu([] { cuda::getCurrentCUDAStream(); }, "getCurrentCUDAStream");
  expect_no_gpu([] { cuda::getDefaultCUDAStream(); }, "getDefaultCUDAStream");
  expect_no_gpu([] { cuda::setCurrentCUDAStream(cuda::Stream()); }, "setCurrentCUDAStream");
  expect_no_gpu([] { (void)cuda::Stream().query(); }, "Stream.query");
  expect_no_gpu([] { cuda::Stream().synchronize(); }, "Stream.synchronize");
  expect_no_gpu([] { (void)cuda::Stream().priority(); }, "Stream.priority");
  expect_no_gpu([] { cuda::DeviceGuard g(0); }, "DeviceGuard");
  expect_no_gpu([] { cuda::StreamGuard g{cuda::Stream()}; }, "StreamGuard");
  expect_no_gpu(
      [] {
        cuda::Event e(true);
        e.record();
      },
      "Event.record");
  expect_no_gpu([] { cuda::Event().record(cuda::Stream()); }, "Event.record(stream)");
  expect_no_gpu([] { cuda::set_per_process_memory_fraction(0.5); }, "memory fraction");
  expect_no_gpu([] { cuda::pin_memory(ones({2, 3})); }, "pin_memory");
  expect_no_gpu([] { cuda::graph_pool_handle(); }, "graph_pool_handle");
  expect_no_gpu([] { cuda::CUDAGraph g; }, "CUDAGraph");
  // An event never recorded needs no GPU: query is true, wait and synchronize do nothing.
  cuda::Event never;
  EXPECT_FALSE(never.is_created());
  EXPECT_TRUE(never.query());
  EXPECT_NO_THROW(never.synchronize());
  EXPECT_NO_THROW(never.wait());
}

TEST(CudaRuntime, CudaTensorsRaise) {
  SKIP_WITH_CUDA();
  expect_no_gpu([] { zeros({2}, Device("cuda")); }, "zeros on cuda");
  expect_no_gpu([] { empty({0}, TensorOptions().device(Device("cuda:0"))); }, "empty size 0");
  expect_no_gpu([] { empty({}, TensorOptions().device(Device("cuda"))); }, "empty 0-dim");
  expect_no_gpu([] { ones({2, 3}).to(Device("cuda")); }, "to(cuda)");
  expect_no_gpu([] { ones({2, 3}).t().to(Device(kCUDA, 0)); }, "strided to(cuda)");
}

TEST(CudaRuntime, BadArguments) {
  // Argument checks that come before any GPU work hold on every machine.
  EXPECT_THROW(cuda::Event(true, false, true), Error);
  EXPECT_THROW(cuda::set_per_process_memory_fraction(1.5), ValueError);
  EXPECT_THROW(cuda::set_per_process_memory_fraction(-0.1), ValueError);
  EXPECT_THROW(cuda::record_stream(ones({2}), cuda::Stream()), Error);
  EXPECT_THROW(cuda::record_stream(Tensor(), cuda::Stream()), Error);
  EXPECT_THROW(cuda::pin_memory(Tensor()), Error);
  cuda::Event a(false), b(false);
  EXPECT_THROW(a.elapsed_time(b), ValueError);  // not created with enable_timing
  cuda::Event c(true), d(true);
  EXPECT_THROW(c.elapsed_time(d), Error);  // never recorded
}

// libember must load and run without any CUDA library: it only dlopens libember_cuda.so.
TEST(CudaRuntime, LibemberDoesNotLinkCuda) {
  const std::string path = libember_path();
  ASSERT_FALSE(path.empty());
  const std::vector<std::string> needed = elf_needed(path);
  ASSERT_FALSE(needed.empty()) << "no DT_NEEDED entries read from " << path;
  bool has_libc = false;
  for (const std::string& n : needed) {
    EXPECT_FALSE(is_cuda_library(n)) << path << " needs " << n;
    has_libc = has_libc || n.rfind("libc.so", 0) == 0;
  }
  EXPECT_TRUE(has_libc) << "the reader missed libc.so among " << needed.size() << " entries";
  // The backend library next to it is the one that links the runtime.
  const std::string backend = path.substr(0, path.rfind('/') + 1) + "libember_cuda.so";
  if (access(backend.c_str(), R_OK) == 0) {
    bool links_cudart = false;
    for (const std::string& n : elf_needed(backend))
      links_cudart = links_cudart || n.rfind("libcudart", 0) == 0;
    EXPECT_TRUE(links_cudart) << backend << " does not need libcudart";
  }
}

// The child side of the load tests: prints what the process sees (run by run_child only).
TEST(CudaRuntimeChild, DISABLED_Report) {
  if (!std::getenv("EMBER_RUNTIME_CHILD")) GTEST_SKIP() << "runs as a child of CudaRuntime";
  std::cout << "\nCUDART_BEFORE=" << cudart_mapped() << "\n";
  std::cout << "AVAILABLE=" << cuda_is_available() << "\n";
  std::cout << "COUNT=" << cuda_device_count() << "\n";
  std::string tensor_error = "<none>";
  try {
    zeros({2}, Device("cuda"));
  } catch (const Error& e) {
    tensor_error = e.what();
  }
  std::cout << "TENSOR_ERROR=" << tensor_error << "\n";
  std::string sync_error = "<none>";
  try {
    cuda::synchronize();
  } catch (const Error& e) {
    sync_error = e.what();
  }
  std::cout << "SYNC_ERROR=" << sync_error << "\n";
  std::cout << "CUDART_AFTER=" << cudart_mapped() << "\n" << std::flush;
}

TEST(CudaRuntime, DisabledByEnvironment) {
  const std::string out = run_child("CudaRuntimeChild.DISABLED_Report", {"EMBER_DISABLE_CUDA=1"});
  EXPECT_EQ(child_value(out, "AVAILABLE"), "0") << out;
  EXPECT_EQ(child_value(out, "COUNT"), "0") << out;
  for (const char* key : {"TENSOR_ERROR", "SYNC_ERROR"}) {
    const std::string msg = child_value(out, key);
    EXPECT_NE(msg.find("no CUDA GPU"), std::string::npos) << key << ": " << msg;
    EXPECT_NE(msg.find("EMBER_DISABLE_CUDA is set"), std::string::npos) << key << ": " << msg;
  }
  // Nothing maps the CUDA runtime into a process whose backend is never loaded.
  EXPECT_EQ(child_value(out, "CUDART_BEFORE"), "0") << out;
  EXPECT_EQ(child_value(out, "CUDART_AFTER"), "0") << out;
}

TEST(CudaRuntime, MissingLibrary) {
  const std::string out =
      run_child("CudaRuntimeChild.DISABLED_Report", {"EMBER_CUDA_LIBRARY=/nonexistent/libx.so"});
  EXPECT_EQ(child_value(out, "AVAILABLE"), "0") << out;
  for (const char* key : {"TENSOR_ERROR", "SYNC_ERROR"}) {
    const std::string msg = child_value(out, key);
    EXPECT_NE(msg.find("no CUDA GPU is available (could not load /nonexistent/libx.so: "),
              std::string::npos)
        << key << ": " << msg;
  }
  EXPECT_EQ(child_value(out, "CUDART_AFTER"), "0") << out;
}

TEST(CudaRuntime, DefaultLoad) {
  const std::string out = run_child("CudaRuntimeChild.DISABLED_Report", {});
  const bool available = child_value(out, "AVAILABLE") == "1";
  EXPECT_EQ(available, cuda_is_available()) << out;
  EXPECT_EQ(child_value(out, "CUDART_BEFORE"), "0") << out;
  const std::string backend =
      libember_path().substr(0, libember_path().rfind('/') + 1) + "libember_cuda.so";
  if (available) {
    EXPECT_EQ(child_value(out, "TENSOR_ERROR"), "<none>") << out;
    EXPECT_EQ(child_value(out, "SYNC_ERROR"), "<none>") << out;
  } else if (access(backend.c_str(), R_OK) == 0) {
    // The backend loaded (so the runtime is mapped) and said why there is no GPU.
    EXPECT_EQ(child_value(out, "CUDART_AFTER"), "1") << out;
    for (const char* key : {"TENSOR_ERROR", "SYNC_ERROR"}) {
      const std::string msg = child_value(out, key);
      EXPECT_NE(msg.find("no CUDA GPU is available (" + backend + " found no CUDA device: "),
                std::string::npos)
          << key << ": " << msg;
    }
  }
}

// ---- with a GPU ----

TEST(CudaRuntimeGpu, DeviceProperties) {
  SKIP_WITHOUT_CUDA();
  const int n = cuda_device_count();
  for (int d = 0; d < n; ++d) {
    cuda::DeviceProperties p = cuda::get_device_properties(d);
    EXPECT_FALSE(p.name.empty());
    EXPECT_GE(p.major, 5);
    EXPECT_GT(p.total_memory, 0);
    EXPECT_GT(p.multi_processor_count, 0);
    EXPECT_GT(p.max_threads_per_multi_processor, 0);
    EXPECT_EQ(p.warp_size, 32);
    EXPECT_EQ(cuda::get_device_name(d), p.name);
    EXPECT_EQ(cuda::get_device_capability(d), std::make_pair(p.major, p.minor));
    auto [free_b, total_b] = cuda::mem_get_info(d);
    EXPECT_GT(total_b, 0);
    EXPECT_GE(free_b, 0);
    EXPECT_LE(free_b, total_b);
  }
  EXPECT_EQ(cuda::get_device_properties(-1).name,
            cuda::get_device_properties(cuda::current_device()).name);
  EXPECT_THROW(cuda::get_device_properties(n), IndexError);
  EXPECT_THROW(cuda::set_device(n), IndexError);
  EXPECT_THROW(cuda::set_device(-2), IndexError);
  EXPECT_THROW(cuda::mem_get_info(n), IndexError);
  EXPECT_THROW(cuda::getStreamFromPool(false, n), IndexError);
}

TEST(CudaRuntimeGpu, DeviceGuardRestores) {
  SKIP_WITHOUT_CUDA();
  const int n = cuda_device_count();
  const int start = cuda::current_device();
  {
    cuda::DeviceGuard g(n - 1);
    EXPECT_EQ(cuda::current_device(), n - 1);
  }
  EXPECT_EQ(cuda::current_device(), start);
  EXPECT_THROW(cuda::DeviceGuard g(n), Error);
  EXPECT_EQ(cuda::current_device(), start);
}

TEST(CudaRuntimeGpu, StreamPoolRoundRobin) {
  SKIP_WITHOUT_CUDA();
  for (bool high : {false, true}) {
    std::vector<cuda::Stream> got;
    for (int i = 0; i < 33; ++i) got.push_back(cuda::getStreamFromPool(high));
    std::set<int64_t> ids;
    std::set<void*> handles;
    for (int i = 0; i < 32; ++i) {
      EXPECT_NE(got[i].id(), 0);
      EXPECT_NE(got[i].stream(), nullptr);
      EXPECT_EQ(got[i].device_index(), cuda::current_device());
      ids.insert(got[i].id());
      handles.insert(got[i].stream());
    }
    EXPECT_EQ(ids.size(), 32u);
    EXPECT_EQ(handles.size(), 32u);
    EXPECT_EQ(got[32], got[0]);  // the 33rd comes back to the first
    EXPECT_EQ(got[32].stream(), got[0].stream());
  }
  cuda::Stream low = cuda::getStreamFromPool(false), high = cuda::getStreamFromPool(true);
  EXPECT_NE(low, high);
  EXPECT_LE(high.priority(), low.priority());  // lower numbers are higher priorities
  EXPECT_EQ(cuda::getDefaultCUDAStream().id(), 0);
  EXPECT_EQ(cuda::getDefaultCUDAStream().stream(), nullptr);
  EXPECT_EQ(cuda::getDefaultCUDAStream().priority(), 0);
  // Created streams are new and distinct from the pool's.
  cuda::Stream c1 = cuda::create_stream(), c2 = cuda::create_stream(-1, -100);
  EXPECT_NE(c1, c2);
  EXPECT_NE(c1.stream(), c2.stream());
  EXPECT_EQ(c2.priority(), high.priority());  // clamped to the highest the device has
  EXPECT_TRUE(c1.query());
  // A forged stream (an id the runtime never handed out) is refused.
  EXPECT_THROW(cuda::setCurrentCUDAStream(cuda::Stream(0, 1 << 30, nullptr)), Error);
  EXPECT_THROW(cuda::setCurrentCUDAStream(cuda::Stream(0, c1.id(), c2.stream())), Error);
  EXPECT_THROW(cuda::setCurrentCUDAStream(cuda::Stream(-1, 0, nullptr)), IndexError);
  EXPECT_THROW(cuda::setCurrentCUDAStream(cuda::Stream(cuda_device_count(), 0, nullptr)),
               IndexError);
}

TEST(CudaRuntimeGpu, CurrentStreamPerThread) {
  SKIP_WITHOUT_CUDA();
  const cuda::Stream start = cuda::getCurrentCUDAStream();
  cuda::Stream a = cuda::getStreamFromPool();
  cuda::Stream b = cuda::create_stream();
  {
    cuda::StreamGuard g(a);
    EXPECT_EQ(cuda::getCurrentCUDAStream(), a);
    std::thread([&] {
      // Another thread starts on the default stream and keeps its own choice.
      EXPECT_EQ(cuda::getCurrentCUDAStream().id(), 0);
      cuda::setCurrentCUDAStream(b);
      EXPECT_EQ(cuda::getCurrentCUDAStream(), b);
    }).join();
    EXPECT_EQ(cuda::getCurrentCUDAStream(), a);
    {
      cuda::StreamGuard inner(b);
      EXPECT_EQ(cuda::getCurrentCUDAStream(), b);
    }
    EXPECT_EQ(cuda::getCurrentCUDAStream(), a);
  }
  EXPECT_EQ(cuda::getCurrentCUDAStream(), start);
  // Work queued under a guard runs on its stream and finishes after synchronize().
  {
    cuda::StreamGuard g(a);
    Tensor x = full({1000}, 2.0, TensorOptions().device(Device("cuda")));
    Tensor y = x + x;
    a.synchronize();
    EXPECT_TRUE(a.query());
    EXPECT_TRUE(allclose(y.cpu(), full({1000}, 4.0)));
  }
}

TEST(CudaRuntimeGpu, Events) {
  SKIP_WITHOUT_CUDA();
  cuda::Stream s = cuda::getStreamFromPool();
  cuda::StreamGuard g(s);
  cuda::Event start(true), end(true);
  EXPECT_FALSE(start.is_created());
  start.record();
  EXPECT_TRUE(start.is_created());
  Tensor x = ones({1 << 20}, TensorOptions().device(Device("cuda")));
  for (int i = 0; i < 10; ++i) x = x + x;
  end.record(s);
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_TRUE(start.query());
  const float ms = start.elapsed_time(end);
  EXPECT_GE(ms, 0.0f);
  EXPECT_NEAR(end.elapsed_time(start), -ms, 1e-3);  // the same interval, reversed
  cuda::Event untimed;
  untimed.record();
  untimed.synchronize();
  EXPECT_THROW(start.elapsed_time(untimed), ValueError);
  // Moving keeps the one handle.
  void* h = end.event();
  cuda::Event moved(std::move(end));
  EXPECT_EQ(moved.event(), h);
  EXPECT_FALSE(end.is_created());
}

TEST(CudaRuntimeGpu, EventOrdersTwoStreams) {
  SKIP_WITHOUT_CUDA();
  cuda::Stream producer = cuda::getStreamFromPool(), consumer = cuda::create_stream();
  const int64_t n = 1 << 22;
  Tensor x;
  cuda::Event ready;
  {
    cuda::StreamGuard g(producer);
    x = zeros({n}, TensorOptions().device(Device("cuda")));
    // A long chain: without the wait below the consumer would read a partial result.
    for (int i = 0; i < 50; ++i) x.add_(1.0);
    ready.record();
  }
  Tensor y;
  {
    cuda::StreamGuard g(consumer);
    ready.wait();
    y = x + 0.5;
    consumer.synchronize();
  }
  producer.synchronize();
  EXPECT_TRUE(allclose(y.cpu(), full({n}, 50.5)));
}

TEST(CudaRuntimeGpu, PinMemory) {
  SKIP_WITHOUT_CUDA();
  Tensor t = arange(24, TensorOptions().dtype(kFloat)).reshape({4, 6}).t();  // strided
  Tensor p = cuda::pin_memory(t);
  EXPECT_TRUE(p.is_cpu());
  EXPECT_TRUE(cuda::is_pinned(p));
  EXPECT_FALSE(cuda::is_pinned(t));
  EXPECT_EQ(p.sizes(), t.sizes());
  EXPECT_EQ(p.strides(), t.strides());
  EXPECT_EQ(p.dtype(), kFloat);
  EXPECT_TRUE(equal(p, t));
  EXPECT_TRUE(cuda::is_pinned(p.slice(0, 1, 3)));  // views of pinned memory are pinned
  Tensor again = cuda::pin_memory(p);
  EXPECT_TRUE(again.is_alias_of(p));
  // An expanded tensor is pinned with contiguous strides; 0-dim and empty tensors work.
  Tensor e = cuda::pin_memory(ones({3}).expand({2, 3}));
  EXPECT_TRUE(e.is_contiguous());
  EXPECT_TRUE(equal(e, ones({2, 3})));
  Tensor z = cuda::pin_memory(full({}, 7.0, TensorOptions().dtype(kDouble)));
  EXPECT_EQ(z.dim(), 0);
  EXPECT_EQ(z.item<double>(), 7.0);
  EXPECT_EQ(cuda::pin_memory(empty({0, 3})).numel(), 0);
  EXPECT_THROW(cuda::pin_memory(ones({2}, TensorOptions().device(Device("cuda")))), Error);
}

TEST(CudaRuntimeGpu, ManualSeed) {
  SKIP_WITHOUT_CUDA();
  cuda::manual_seed(1234);
  EXPECT_EQ(default_generator(Device(kCUDA, int8_t(cuda::current_device()))).initial_seed(), 1234u);
  cuda::manual_seed_all(99);
  for (int d = 0; d < cuda_device_count(); ++d)
    EXPECT_EQ(default_generator(Device(kCUDA, int8_t(d))).initial_seed(), 99u);
}

TEST(CudaRuntimeGpu, GraphReplayMatchesEager) {
  SKIP_WITHOUT_CUDA();
  const TensorOptions on_gpu = TensorOptions().device(Device("cuda"));
  cuda::Stream side = cuda::getStreamFromPool();
  Tensor x = zeros({3, 5}, on_gpu), w = zeros({5}, on_gpu);
  Tensor out, strided;
  cuda::CUDAGraph graph;
  {
    cuda::StreamGuard g(side);
    // Warm up outside the capture (first-use allocations), as PyTorch advises.
    out = (x * 2.0 + w) * x;
    strided = x.t() + 1.0;
    side.synchronize();
    EXPECT_FALSE(cuda::is_current_stream_capturing());
    graph.capture_begin();
    EXPECT_TRUE(cuda::is_current_stream_capturing());
    out = (x * 2.0 + w) * x;  // broadcast w
    strided = x.t() + 1.0;    // a transposed input
    graph.capture_end();
    EXPECT_FALSE(cuda::is_current_stream_capturing());
  }
  const cuda::MempoolId pool = graph.pool();
  EXPECT_TRUE(pool.a != 0 || pool.b != 0);
  Generator gen;
  gen.manual_seed(7);
  for (int round = 0; round < 3; ++round) {
    Tensor xc = randn({3, 5}, gen), wc = randn({5}, gen);
    // New inputs go into the captured (static) tensors; the graph reads them on replay.
    // Replays may run on any stream: round 1 copies and replays on the side stream.
    if (round == 1) {
      cuda::StreamGuard g(side);
      x.copy_(xc);
      w.copy_(wc);
      graph.replay();
      side.synchronize();
    } else {
      x.copy_(xc);
      w.copy_(wc);
      graph.replay();
    }
    EXPECT_TRUE(allclose(out.cpu(), (xc * 2.0 + wc) * xc, 1e-6, 1e-6)) << "round " << round;
    EXPECT_TRUE(allclose(strided.cpu(), xc.t() + 1.0)) << "round " << round;
  }
  graph.reset();
  EXPECT_THROW(graph.replay(), Error);
  // A reset graph captures again.
  {
    cuda::StreamGuard g(side);
    graph.capture_begin();
    out = x - 1.0;
    graph.capture_end();
  }
  x.fill_(4.0);
  graph.replay();
  EXPECT_TRUE(allclose(out.cpu(), full({3, 5}, 3.0)));
}

TEST(CudaRuntimeGpu, GraphsShareAPool) {
  SKIP_WITHOUT_CUDA();
  const TensorOptions on_gpu = TensorOptions().device(Device("cuda"));
  cuda::Stream side = cuda::getStreamFromPool();
  Tensor x = zeros({64}, on_gpu);
  const cuda::MempoolId handle = cuda::graph_pool_handle();
  cuda::CUDAGraph first, second;
  Tensor a, b;
  {
    cuda::StreamGuard g(side);
    first.capture_begin(handle);
    a = x + 1.0;
    first.capture_end();
    second.capture_begin(first.pool());
    b = a * 3.0;
    second.capture_end();
  }
  EXPECT_EQ(first.pool().a, handle.a);
  EXPECT_EQ(first.pool().b, handle.b);
  EXPECT_EQ(second.pool().b, handle.b);
  x.fill_(2.0);
  first.replay();
  second.replay();
  EXPECT_TRUE(allclose(b.cpu(), full({64}, 9.0)));
}

TEST(CudaRuntimeGpu, GraphRefusesSyncingOps) {
  SKIP_WITHOUT_CUDA();
  const TensorOptions on_gpu = TensorOptions().device(Device("cuda"));
  cuda::Stream side = cuda::getStreamFromPool();
  Tensor x = ones({4}, on_gpu);
  cuda::CUDAGraph graph;
  cuda::StreamGuard g(side);
  Tensor y = x + 1.0;
  side.synchronize();
  graph.capture_begin();
  y = x + 1.0;
  const std::string refused = "cannot run while a CUDA graph is being captured";
  expect_error_with([] { cuda::synchronize(); }, refused, "cuda::synchronize");
  expect_error_with([&] { side.synchronize(); }, refused, "Stream::synchronize");
  expect_error_with([&] { (void)y.cpu(); }, refused, "copy to the host");
  // The refused calls did not invalidate the capture.
  graph.capture_end();
  x.fill_(5.0);
  graph.replay();
  side.synchronize();
  EXPECT_TRUE(allclose(y.cpu(), full({4}, 6.0)));
  // A graph destroyed while capturing ends its capture.
  {
    cuda::CUDAGraph abandoned;
    abandoned.capture_begin();
    Tensor z = x * 2.0;
  }
  EXPECT_FALSE(cuda::is_current_stream_capturing());
}

TEST(CudaRuntimeGpu, GraphRefusesDefaultStreamAndMisuse) {
  SKIP_WITHOUT_CUDA();
  cuda::CUDAGraph graph;
  ASSERT_EQ(cuda::getCurrentCUDAStream().id(), 0);
  expect_error_with([&] { graph.capture_begin(); }, "default stream", "capture on stream 0");
  EXPECT_FALSE(cuda::is_current_stream_capturing());
  EXPECT_THROW(graph.capture_end(), Error);
  EXPECT_THROW(graph.replay(), Error);
  EXPECT_THROW(graph.pool(), Error);
  // Capture must end on the stream it began on.
  cuda::Stream s1 = cuda::getStreamFromPool(), s2 = cuda::create_stream();
  cuda::StreamGuard g(s1);
  graph.capture_begin();
  EXPECT_THROW(graph.capture_begin(), Error);
  {
    cuda::StreamGuard other(s2);
    EXPECT_THROW(graph.capture_end(), Error);
  }
  graph.capture_end();
  EXPECT_THROW(graph.capture_begin(), Error);  // holds a capture until reset()
  graph.reset();
  EXPECT_FALSE(cuda::is_current_stream_capturing());
}

TEST(CudaRuntimeGpu, GraphRefusesRandomOps) {
  SKIP_WITHOUT_CUDA();
  const TensorOptions on_gpu = TensorOptions().device(Device("cuda"));
  cuda::Stream side = cuda::getStreamFromPool();
  cuda::StreamGuard g(side);
  Tensor warm = rand({8}, on_gpu);
  side.synchronize();
  cuda::CUDAGraph graph;
  graph.capture_begin();
  // Either the random op or capture_end refuses: replays would repeat the same numbers.
  expect_error_with(
      [&] {
        Tensor r = rand({8}, on_gpu);
        graph.capture_end();
      },
      "captur", "rand in a capture");
  graph.reset();
  EXPECT_FALSE(cuda::is_current_stream_capturing());
}

TEST(CudaRuntimeGpu, ForkedChildRefusesCuda) {
  SKIP_WITHOUT_CUDA();
  cuda::synchronize();  // CUDA is in use in this process
  const pid_t pid = fork();
  if (pid == 0) {
    // The child must not reach the driver: every CUDA entry raises first.
    int code = 1;
    try {
      zeros({2}, Device("cuda"));
    } catch (const Error& e) {
      code = std::string(e.what()).find("forked subprocess") != std::string::npos ? 0 : 2;
    } catch (...) {
      code = 3;
    }
    _exit(code);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error, 2: another error, 3: not an ember::Error";
}
