// _C._call_path: the op list and the test hooks of the call path (Note [Call path]): run a
// callable with the Coverage layer and the profiler on, and a device type with no kernels.
#include <sys/mman.h>

#include <mutex>

#include "core/op_table.h"
#include "ember/allocator.h"
#include "ember/profiler.h"
#include "ops/call_path.h"
#include "pyember.h"

namespace ember::python {

namespace {

// Hands out inaccessible pages: any host read or write of a tensor on the no-kernel device
// faults, so a test run that finishes proves no op touched its memory.
class NoAccessAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    size_t n = std::max<size_t>(nbytes, 1);
    void* p = mmap(nullptr, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    EMBER_CHECK(p != MAP_FAILED, "[nokernel_test] mmap of ", n, " bytes failed");
    return DataPtr(p, reinterpret_cast<void*>(n), &release, Device(type));
  }
  void copy_data(void*, const void*, size_t) const override {
    EMBER_THROW(Error, "[nokernel_test] the device has no copy kernel");
  }
  static void release(void* ctx, void* p) { munmap(p, reinterpret_cast<size_t>(ctx)); }
  static inline DeviceType type = kCPU;
};

py::tuple trace(const py::function& fn) {
  bool was = dispatch::set_thread_layer(dispatch::kCoverage, true);
  dispatch::thread_state().uncovered = 0;
  py::object result = py::none(), error = py::none();
  std::vector<std::string> names;
  {
    profiler::Profile prof;
    try {
      result = fn();
    } catch (py::error_already_set& e) {
      error = e.value();
    }
    prof.stop();
    for (const profiler::Event& e : prof.events())
      if (!e.user_range) names.push_back(e.name);
  }
  int64_t uncovered = dispatch::thread_state().uncovered;
  dispatch::set_thread_layer(dispatch::kCoverage, was);
  return py::make_tuple(names, uncovered, result, error);
}

}  // namespace

void init_call_path(py::module_& m) {
  py::module_ c = m.def_submodule("_call_path", "the op list and call-path test hooks");
  c.def(
      "op_list",
      [] {
        py::list out;
        for (int i = 0; i < kNumOps; ++i) {
          const OpInfo& info = op_info(OpId(i));
          const FunctionSchema& s = op_schema(OpId(i));
          py::list args;
          for (const SchemaArgument& a : s.arguments)
            args.append(py::make_tuple(
                a.type, a.name,
                a.has_default ? py::object(py::str(a.default_value)) : py::object(py::none())));
          out.append(py::make_tuple(info.id, s.name, s.overload, args, s.returns, info.traits,
                                    op_qualified_name(OpId(i))));
        }
        return out;
      },
      "[(id, name, overload, [(type, name, default)], returns, traits, qualified name)]");
  py::dict traits;
  using namespace op_trait;
  for (auto [name, bit] : std::initializer_list<std::pair<const char*, uint32_t>>{
           {"view", kView},
           {"inplace", kInplace},
           {"out", kOut},
           {"random", kRandom},
           {"dynamic_shape", kDynamicShape},
           {"nondeterministic", kNondeterministic},
           {"composite", kComposite},
           {"vjp", kVjp},
           {"jvp", kJvp},
           {"factory", kFactory},
           {"elementwise", kElementwise},
           {"autocast_lower", kAutocastLower},
           {"autocast_fp32", kAutocastFp32},
           {"autocast_promote", kAutocastPromote},
           {"alloc_only", kAllocOnly},
           {"autocast_cpu_lower", kAutocastCpuLower},
           {"autocast_cpu_fp32", kAutocastCpuFp32},
           {"autocast_cpu_promote", kAutocastCpuPromote}})
    traits[name] = bit;
  c.attr("TRAITS") = traits;
  c.def("trace", &trace,
        "fn() run with the profiler and the Coverage layer on: (op event names, tensors created "
        "outside any op, fn's result, the exception it raised or None)");
  c.def(
      "register_nokernel_device",
      [] {
        static std::once_flag once;
        std::call_once(once, [] {
          DeviceType t = register_device_type("nokernel_test");
          NoAccessAllocator::type = t;
          static NoAccessAllocator alloc;
          set_allocator(t, &alloc);
        });
        return std::string("nokernel_test");
      },
      "registers the test device type 'nokernel_test': no kernels, inaccessible memory");
}

}  // namespace ember::python
