#pragma once
// ember-run's parts: the parsed command line (launcher_args.cpp) and the agent that runs it
// (launcher.cpp).
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::distributed::launcher {

/// Bad command-line usage: reported with the usage text, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// ember-run's options (torchrun's names and defaults where they apply).
struct LaunchConfig {
  int nproc_per_node = 1;
  int min_nodes = 1;
  int max_nodes = 1;
  int node_rank = -1;  // -1: assigned by the order agents join
  std::string rdzv_backend = "static";
  std::string rdzv_endpoint;  // host[:port]; empty: MASTER_ADDR:MASTER_PORT (or standalone)
  std::string rdzv_id = "none";
  double join_timeout_s = 600;
  double last_call_timeout_s = 30;
  double close_timeout_s = 10;  // how long the store's host waits for the others to leave
  int max_restarts = 0;
  double monitor_interval_s = 0.1;
  double kill_grace_s = 5;  // SIGTERM, then SIGKILL after this long
  std::string master_addr = "127.0.0.1";
  bool master_addr_set = false;
  int master_port = 29500;
  bool master_port_set = false;
  bool standalone = false;
  bool no_python = false;
  bool module = false;
  std::string role = "default";
  std::vector<std::string> program;  // the program (script or module) and its arguments
};

/// The usage line and option list (`ember-run -h`).
std::string usage_text(bool full);
/// Parses `args`; throws UsageError on bad usage. Sets `help` when -h/--help was given.
LaunchConfig parse_args(const std::vector<std::string>& args, bool& help);

}  // namespace ember::distributed::launcher
