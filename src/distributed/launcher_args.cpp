// ember-run's command line: torchrun's options, spelled with dashes or underscores
// (--nproc-per-node / --nproc_per_node), as "--opt value" or "--opt=value"; the first
// argument that is not an option starts the program and its own arguments.
#include <thread>

#include "launcher_internal.h"

namespace ember::distributed::launcher {

namespace {

int parse_int(const std::string& opt, const std::string& v) {
  size_t pos = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &pos);
  } catch (const std::exception&) {
    pos = std::string::npos;
  }
  if (pos != v.size() || x < -(1LL << 31) || x >= (1LL << 31)) {
    throw UsageError("argument --" + opt + ": invalid int value: '" + v + "'");
  }
  return static_cast<int>(x);
}

double parse_seconds(const std::string& opt, const std::string& v) {
  size_t pos = 0;
  double x = 0;
  try {
    x = std::stod(v, &pos);
  } catch (const std::exception&) {
    pos = std::string::npos;
  }
  if (pos != v.size() || !(x >= 0)) {
    throw UsageError("argument --" + opt + ": invalid value: '" + v +
                     "' (expected a number of seconds >= 0)");
  }
  return x;
}

// "--nproc-per-node" -> "nproc_per_node"
std::string normalise(const std::string& a) {
  std::string s = a.substr(a.rfind("--", 0) == 0 ? 2 : 1);
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

bool takes_value(const std::string& o) {
  static const char* const names[] = {"nnodes",
                                      "nproc_per_node",
                                      "rdzv_backend",
                                      "rdzv_endpoint",
                                      "rdzv_id",
                                      "rdzv_conf",
                                      "max_restarts",
                                      "monitor_interval",
                                      "start_method",
                                      "role",
                                      "log_dir",
                                      "redirects",
                                      "r",
                                      "tee",
                                      "t",
                                      "node_rank",
                                      "master_addr",
                                      "master_port",
                                      "local_addr"};
  for (const char* n : names)
    if (o == n) return true;
  return false;
}

void apply_rdzv_conf(LaunchConfig& c, const std::string& conf) {
  size_t start = 0;
  while (start <= conf.size()) {
    size_t end = conf.find(',', start);
    if (end == std::string::npos) end = conf.size();
    std::string item = conf.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw UsageError("argument --rdzv-conf: expected key=value pairs, got '" + item + "'");
    }
    std::string k = item.substr(0, eq), v = item.substr(eq + 1);
    if (k == "join_timeout") {
      c.join_timeout_s = parse_seconds("rdzv-conf " + k, v);
    } else if (k == "last_call_timeout") {
      c.last_call_timeout_s = parse_seconds("rdzv-conf " + k, v);
    } else if (k == "close_timeout") {
      c.close_timeout_s = parse_seconds("rdzv-conf " + k, v);
    } else if (k == "kill_grace") {
      c.kill_grace_s = parse_seconds("rdzv-conf " + k, v);
    }
    // Other keys belong to torch's other rendezvous backends: accepted, not used.
  }
}

}  // namespace

std::string usage_text(bool full) {
  std::string u =
      "usage: ember-run [-h] [--nnodes NNODES] [--nproc-per-node NPROC_PER_NODE]\n"
      "                 [--rdzv-backend RDZV_BACKEND] [--rdzv-endpoint RDZV_ENDPOINT]\n"
      "                 [--rdzv-id RDZV_ID] [--rdzv-conf RDZV_CONF] [--standalone]\n"
      "                 [--max-restarts MAX_RESTARTS] [--monitor-interval MONITOR_INTERVAL]\n"
      "                 [--role ROLE] [-m] [--no-python] [--node-rank NODE_RANK]\n"
      "                 [--master-addr MASTER_ADDR] [--master-port MASTER_PORT]\n"
      "                 training_script ...\n";
  if (!full) return u;
  return u +
         "\nStarts the workers of a distributed job on this node (torchrun's twin).\n\n"
         "positional arguments:\n"
         "  training_script       the program to run (a .py file runs under Python)\n"
         "  training_script_args  its arguments\n\n"
         "options (dashes and underscores are interchangeable):\n"
         "  -h, --help            show this help and exit\n"
         "  --nnodes NNODES       number of nodes, or MIN:MAX for an elastic range (1)\n"
         "  --nproc-per-node N    workers on this node: an integer, 'cpu' or 'auto' (1)\n"
         "  --rdzv-backend NAME   accepted for compatibility; rendezvous uses a TCPStore\n"
         "  --rdzv-endpoint H:P   the rendezvous store (default: MASTER_ADDR:MASTER_PORT)\n"
         "  --rdzv-id ID          the job's id, shared by its agents ('none')\n"
         "  --rdzv-conf K=V,...   join_timeout, last_call_timeout, close_timeout, kill_grace\n"
         "                        (seconds)\n"
         "  --standalone          one node: rendezvous on 127.0.0.1 at a free port\n"
         "  --max-restarts N      restarts of the whole group after a failure (0)\n"
         "  --monitor-interval S  how often peers' failures are checked (0.1 s)\n"
         "  --role ROLE           the workers' role name ('default')\n"
         "  -m, --module          run training_script as a Python module (python -m)\n"
         "  --no-python           run training_script directly, not under Python\n"
         "  --node-rank N         this node's rank (default: the order agents join)\n"
         "  --master-addr ADDR    the address rank 0 serves on (127.0.0.1)\n"
         "  --master-port PORT    the port rank 0 serves on (default: a free port chosen\n"
         "                        at every start)\n"
         "\nEach worker gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,\n"
         "ROLE_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RESTART_COUNT (EMBER_RESTART_COUNT),\n"
         "TORCHELASTIC_MAX_RESTARTS and TORCHELASTIC_RUN_ID; its output lines start with\n"
         "\"[rank N]: \".\n";
}

LaunchConfig parse_args(const std::vector<std::string>& args, bool& help) {
  LaunchConfig c;
  help = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;  // the program starts here
    std::string opt = normalise(a), value;
    bool has_value = false;
    size_t eq = opt.find('=');
    if (eq != std::string::npos) {
      value = a.substr(a.find('=') + 1);  // the value keeps its own spelling
      opt = opt.substr(0, eq);
      has_value = true;
    }
    if (takes_value(opt) && !has_value) {
      if (i + 1 >= args.size()) throw UsageError("argument " + a + ": expected one argument");
      value = args[++i];
      has_value = true;
    } else if (!takes_value(opt) && has_value) {
      throw UsageError("argument --" + opt + ": ignored explicit argument '" + value + "'");
    }
    if (opt == "h" || opt == "help") {
      help = true;
      return c;
    } else if (opt == "nproc_per_node") {
      if (value == "cpu" || value == "auto") {
        c.nproc_per_node = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      } else {
        c.nproc_per_node = parse_int(opt, value);
        if (c.nproc_per_node < 1) {
          throw UsageError("argument --nproc-per-node: must be >= 1, got " + value);
        }
      }
    } else if (opt == "nnodes") {
      size_t colon = value.find(':');
      if (colon == std::string::npos) {
        c.min_nodes = c.max_nodes = parse_int(opt, value);
      } else {
        c.min_nodes = parse_int(opt, value.substr(0, colon));
        c.max_nodes = parse_int(opt, value.substr(colon + 1));
      }
      if (c.min_nodes < 1 || c.max_nodes < c.min_nodes) {
        throw UsageError("argument --nnodes: expected N or MIN:MAX with 1 <= MIN <= MAX, got '" +
                         value + "'");
      }
    } else if (opt == "node_rank") {
      c.node_rank = parse_int(opt, value);
      if (c.node_rank < 0) throw UsageError("argument --node-rank: must be >= 0, got " + value);
    } else if (opt == "rdzv_backend") {
      c.rdzv_backend = value;
    } else if (opt == "rdzv_endpoint") {
      c.rdzv_endpoint = value;
    } else if (opt == "rdzv_id") {
      c.rdzv_id = value;
    } else if (opt == "rdzv_conf") {
      apply_rdzv_conf(c, value);
    } else if (opt == "max_restarts") {
      c.max_restarts = parse_int(opt, value);
      if (c.max_restarts < 0) {
        throw UsageError("argument --max-restarts: must be >= 0, got " + value);
      }
    } else if (opt == "monitor_interval") {
      c.monitor_interval_s = parse_seconds(opt, value);
      if (c.monitor_interval_s <= 0) {
        throw UsageError("argument --monitor-interval: must be > 0, got " + value);
      }
    } else if (opt == "role") {
      c.role = value;
    } else if (opt == "master_addr") {
      c.master_addr = value;
      c.master_addr_set = true;
    } else if (opt == "master_port") {
      c.master_port = parse_int(opt, value);
      if (c.master_port < 0 || c.master_port > 65535) {
        throw UsageError("argument --master-port: must be in [0, 65535], got " + value);
      }
      c.master_port_set = true;
    } else if (opt == "standalone") {
      c.standalone = true;
    } else if (opt == "m" || opt == "module") {
      c.module = true;
    } else if (opt == "no_python") {
      c.no_python = true;
    } else if (opt == "start_method" || opt == "log_dir" || opt == "redirects" || opt == "r" ||
               opt == "tee" || opt == "t" || opt == "local_addr" || opt == "use_env") {
      // Accepted for torchrun (and torch.distributed.launch --use-env) compatibility: workers
      // always run as subprocesses that read their ranks from the environment, their output
      // prefixed with their rank.
    } else if (opt == "run_path") {
      throw UsageError("argument --run-path: not supported (run the script as a program)");
    } else {
      throw UsageError("unrecognized arguments: " + a);
    }
  }
  c.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (c.program.empty()) {
    throw UsageError(
        "the following arguments are required: training_script, "
        "training_script_args");
  }
  if (c.no_python && c.module) {
    throw UsageError(
        "don't use both the '--no-python' flag and the '--module' flag at the "
        "same time");
  }
  if (c.standalone && c.max_nodes != 1) {
    throw UsageError("--standalone runs a single node, but --nnodes is " +
                     std::to_string(c.min_nodes) + ":" + std::to_string(c.max_nodes));
  }
  if (c.node_rank >= c.max_nodes) {
    throw UsageError("argument --node-rank: " + std::to_string(c.node_rank) +
                     " is not below --nnodes " + std::to_string(c.max_nodes));
  }
  return c;
}

}  // namespace ember::distributed::launcher
