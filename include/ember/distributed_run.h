#pragma once
/// ember-run: the launcher of distributed jobs (torchrun's twin). It starts
/// `--nproc-per-node` workers on each of `--nnodes` nodes, gives each its RANK, LOCAL_RANK,
/// WORLD_SIZE, MASTER_ADDR, MASTER_PORT and restart count, prefixes their output with
/// "[rank N]: ", and restarts the whole group (up to `--max-restarts`) when a worker fails.
/// Agents on different nodes meet through a TCPStore (Note [ember-run rendezvous] in
/// src/distributed/launcher.cpp).

#include <string>
#include <vector>

namespace ember::distributed {

/// Runs the launcher with command-line arguments `args` (without the program name), as
/// `ember-run args...`; returns the exit code: 0 when every worker succeeded, the failing
/// worker's exit code (128 + signal for a worker killed by a signal) after the last restart,
/// 2 on bad usage. Python scripts (a program ending in ".py", or `-m module`) run under
/// `python_executable` (else $EMBER_PYTHON, else /usr/bin/python3).
int run_main(const std::vector<std::string>& args, const std::string& python_executable = "");

}  // namespace ember::distributed
