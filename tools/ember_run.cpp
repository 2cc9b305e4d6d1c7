// ember-run: launches a distributed job (torchrun's twin).
#include "ember/distributed_run.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return ember::distributed::run_main(args);
}
