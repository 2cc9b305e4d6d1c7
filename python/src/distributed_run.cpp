// The launcher for Python (`python -m ember.distributed.run`, ember.distributed.run.main).
#include "ember/distributed_run.h"
#include "pyember.h"

namespace ember::python {

void init_distributed_run(py::module_& dm) {
  dm.def(
      "_run_main",
      [](const std::vector<std::string>& args, const std::string& python_executable) {
        // The launcher blocks until the job ends and takes SIGINT/SIGTERM itself (forwarding
        // them to the workers), so the interpreter is released for the whole run.
        py::gil_scoped_release nogil;
        return ember::distributed::run_main(args, python_executable);
      },
      py::arg("args"), py::arg("python_executable") = "",
      "Runs ember-run with `args` (without the program name); returns its exit code. Python "
      "scripts run under `python_executable`.");
}

}  // namespace ember::python
