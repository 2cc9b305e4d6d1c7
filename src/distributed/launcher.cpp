// ember-run's agent: rendezvous with the other nodes' agents, start this node's workers, relay
// their output, watch them, and restart the whole group when one fails.
//
// Note [ember-run rendezvous]
// Agents meet in a TCPStore (hosted in-process by the agent that binds the endpoint first, or
// by --node-rank 0; with --standalone on 127.0.0.1 at a free port), under the prefix
// "ember-run/<rdzv-id>/". Every start of the group is a round r with keys "r<r>/...":
//   joined   each agent adds 1; the result - 1 is its join index;
//   node<i>  the agent with join index i writes "<requested node rank>,<nproc-per-node>";
//   closed   the number of agents in the round. The agent completing --nnodes MAX closes it at
//            once; the one completing MIN closes it after the last call (last_call_timeout) with
//            whoever joined by then. compare_set makes the first close win; an agent whose index
//            is not below it arrived too late and stops.
//   master   "addr:port" for the workers, chosen by the agent of group rank 0 (a fresh free port
//            every round, so a restarted group never meets a dying one's sockets);
//   failed   "<exit code>|<restartable>|<what happened>", set by the first agent that saw a
//            worker fail (or got SIGINT/SIGTERM: not restartable); every agent polls it each
//            --monitor-interval, stops its workers and moves to round r+1 (or exits);
//   done     agents whose workers all succeeded; the round succeeded when it reaches `closed`.
// Group ranks order agents by their --node-rank (when given), then by join index; a worker's
// global rank is the sum of nproc-per-node over the lower group ranks plus its local rank.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "ember/distributed.h"
#include "ember/distributed_run.h"
#include "launcher_internal.h"

extern char** environ;

namespace ember::distributed {

namespace launcher {
namespace {

using Clock = std::chrono::steady_clock;

Milliseconds ms_of(double seconds) {
  return Milliseconds(static_cast<int64_t>(seconds * 1000.0 + 0.5));
}

// ---- output -------------------------------------------------------------------------------

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader went away: drop the output, keep running
    done += static_cast<size_t>(n);
  }
}

void say(const std::string& msg) { write_all(2, "ember-run: " + msg + "\n"); }

// ---- signals --------------------------------------------------------------------------------

// Handlers only write the signal number to a pipe that the monitor loop polls.
int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  if (g_signal_pipe[1] >= 0) (void)!::write(g_signal_pipe[1], &b, 1);
  errno = saved;
}

// Installs the handlers for one run and restores the previous ones after (the Python twin runs
// inside an interpreter that has its own).
class SignalScope {
 public:
  SignalScope() {
    if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
      throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    }
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int s : kHandled) sigaction(s, &sa, &old_[s]);
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old_[SIGPIPE]);
    // The signals must reach this thread's handlers: the Python twin may run with some blocked.
    sigset_t set;
    sigemptyset(&set);
    for (int s : kHandled) sigaddset(&set, s);
    pthread_sigmask(SIG_UNBLOCK, &set, &old_mask_);
  }
  ~SignalScope() {
    for (int s : kHandled) sigaction(s, &old_[s], nullptr);
    sigaction(SIGPIPE, &old_[SIGPIPE], nullptr);
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    ::close(g_signal_pipe[0]);
    ::close(g_signal_pipe[1]);
    g_signal_pipe[0] = g_signal_pipe[1] = -1;
  }
  /// Signals received since the last call (SIGCHLD included).
  static std::vector<int> drain() {
    std::vector<int> out;
    unsigned char buf[64];
    ssize_t n;
    while ((n = ::read(g_signal_pipe[0], buf, sizeof buf)) > 0) out.insert(out.end(), buf, buf + n);
    return out;
  }

 private:
  static constexpr int kHandled[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD};
  struct sigaction old_[NSIG] {};
  sigset_t old_mask_{};
};

std::mutex g_run_mutex;  // one launcher per process at a time (the signal pipe is global)

// ---- workers --------------------------------------------------------------------------------

struct Worker {
  int local_rank = 0;
  int global_rank = 0;
  pid_t pid = -1;
  int fds[2] = {-1, -1};  // the read ends of its stdout and stderr pipes
  std::string partial[2];
  bool running = false;
  int status = 0;
};

/// What ended a round on this node.
struct Failure {
  int exit_code = 1;
  bool restartable = true;
  std::string what;
  bool remote = false;  // seen by another node's agent
};

std::string describe_status(const Worker& w) {
  std::string who =
      "worker " + std::to_string(w.global_rank) + " (pid " + std::to_string(w.pid) + ")";
  if (WIFSIGNALED(w.status)) {
    int sig = WTERMSIG(w.status);
    const char* name = sigabbrev_np(sig);
    return who + " was killed by signal " + std::to_string(sig) +
           (name ? std::string(" (SIG") + name + ")" : "");
  }
  return who + " exited with code " + std::to_string(WEXITSTATUS(w.status));
}

int exit_code_of(int status) {
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// A port free on `addr` at the time of the call.
int free_port(const std::string& addr) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  if (getaddrinfo(addr.c_str(), "0", &hints, &res) != 0 || !res) {
    throw DistNetworkError("[ember-run] cannot resolve the master address '" + addr + "'");
  }
  int port = -1;
  for (addrinfo* a = res; a && port < 0; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0) {
      sockaddr_storage ss{};
      socklen_t len = sizeof ss;
      getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
      port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    }
    ::close(fd);
  }
  freeaddrinfo(res);
  if (port < 0) throw DistNetworkError("[ember-run] cannot bind a port on '" + addr + "'");
  return port;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- the agent ------------------------------------------------------------------------------

/// The outcome of one round's rendezvous.
struct Assignment {
  int round = 0;
  int num_nodes = 1;
  int group_rank = 0;
  int rank_base = 0;
  int world_size = 1;
  std::string master_addr;
  int master_port = 0;
};

class Agent {
 public:
  Agent(LaunchConfig cfg, std::string python) : cfg_(std::move(cfg)), python_(std::move(python)) {}
  // An error escaped the agent: no worker outlives it.
  ~Agent() {
    for (auto& w : workers_) {
      if (w.running) {
        killpg(w.pid, SIGKILL);
        waitpid(w.pid, nullptr, 0);
      }
      for (int fd : w.fds)
        if (fd >= 0) ::close(fd);
    }
  }

  int run() {
    connect_store();
    int code = 0;
    int round = 0;
    while (true) {
      Assignment a = rendezvous(round);
      last_num_nodes_ = a.num_nodes;
      previous_group_rank_ = a.group_rank;
      auto failure = run_round(a);
      if (!failure) {
        code = 0;
        break;
      }
      if (failure->restartable && round < cfg_.max_restarts) {
        ++round;
        say("restarting the workers (restart " + std::to_string(round) + " of " +
            std::to_string(cfg_.max_restarts) + ") after: " + failure->what);
        continue;
      }
      if (failure->restartable) {
        say("the job failed" +
            (cfg_.max_restarts ? " after " + std::to_string(cfg_.max_restarts) + " restart" +
                                     (cfg_.max_restarts > 1 ? "s" : "")
                               : std::string()) +
            ": " + failure->what);
      }
      if (!failure->restartable && failure->remote) say("stopped: " + failure->what);
      code = failure->exit_code;
      break;
    }
    leave();
    return code;
  }

 private:
  std::string key(int round, const std::string& k) const {
    return "r" + std::to_string(round) + "/" + k;
  }

  // Hosts or joins the rendezvous store (Note [ember-run rendezvous]).
  void connect_store() {
    std::string host = "127.0.0.1";
    int port = 0;
    bool standalone = cfg_.standalone || (cfg_.max_nodes == 1 && cfg_.rdzv_endpoint.empty());
    if (!standalone) {
      std::string ep = cfg_.rdzv_endpoint.empty()
                           ? cfg_.master_addr + ":" + std::to_string(cfg_.master_port)
                           : cfg_.rdzv_endpoint;
      size_t colon = ep.rfind(':');
      if (colon == std::string::npos) {
        host = ep;
        port = 29400;  // torchrun's default rendezvous port
      } else {
        host = ep.substr(0, colon);
        try {
          port = std::stoi(ep.substr(colon + 1));
        } catch (const std::exception&) {
          port = -1;
        }
        if (port < 0 || port > 65535) {
          throw UsageError("argument --rdzv-endpoint: bad port in '" + ep + "'");
        }
      }
      if (host.empty()) throw UsageError("argument --rdzv-endpoint: no host in '" + ep + "'");
      if (port == 0) throw UsageError("argument --rdzv-endpoint: the port must not be 0");
    }
    rdzv_host_ = host;
    TCPStoreOptions o;
    o.port = static_cast<uint16_t>(port);
    o.timeout = ms_of(cfg_.join_timeout_s);
    std::shared_ptr<TCPStore> store;
    bool may_host = standalone || cfg_.node_rank <= 0;
    bool must_host = standalone || cfg_.node_rank == 0;
    if (may_host) {
      o.is_server = true;
      try {
        store = std::make_shared<TCPStore>(host, o);
        hosting_ = true;
      } catch (const DistNetworkError&) {
        if (must_host) throw;  // --node-rank 0 hosts; otherwise another agent got there first
      }
    }
    if (!store) {
      o.is_server = false;
      store = std::make_shared<TCPStore>(host, o);
    }
    store_ = std::make_shared<PrefixStore>("ember-run/" + cfg_.rdzv_id, store);
  }

  Assignment rendezvous(int round) {
    Store& s = *store_;
    auto join_timeout = ms_of(cfg_.join_timeout_s);
    int index = static_cast<int>(s.add(key(round, "joined"), 1)) - 1;
    s.set(key(round, "node" + std::to_string(index)),
          std::to_string(cfg_.node_rank) + "," + std::to_string(cfg_.nproc_per_node) + "," +
              std::to_string(previous_group_rank_));
    int closed = -1;
    if (index + 1 == cfg_.max_nodes) {
      closed = close_round(round, cfg_.max_nodes);
    } else if (index + 1 == cfg_.min_nodes) {
      // The last call: wait a little for more agents, up to MAX.
      auto deadline = Clock::now() + ms_of(cfg_.last_call_timeout_s);
      while (Clock::now() < deadline && !s.check({key(round, "closed")})) {
        std::this_thread::sleep_for(std::min(Milliseconds(50), ms_of(cfg_.last_call_timeout_s)));
      }
      closed = close_round(round, static_cast<int>(s.add(key(round, "joined"), 0)));
    }
    if (closed < 0) {
      try {
        s.wait({key(round, "closed")}, join_timeout);
      } catch (const DistStoreError&) {
        throw DistStoreError(
            "[ember-run] rendezvous timed out after " + std::to_string(join_timeout.count()) +
            " ms: " + std::to_string(s.add(key(round, "joined"), 0)) + " of " +
            std::to_string(cfg_.min_nodes) + " nodes joined round " + std::to_string(round) +
            " at " + rdzv_host_ + " (run id '" + cfg_.rdzv_id + "')");
      }
      closed = std::stoi(s.get_string(key(round, "closed")));
    }
    if (index >= closed) {
      throw DistStoreError("[ember-run] this agent joined round " + std::to_string(round) +
                           " of the rendezvous after it closed with " + std::to_string(closed) +
                           " nodes (--nnodes " + std::to_string(cfg_.min_nodes) + ":" +
                           std::to_string(cfg_.max_nodes) + ")");
    }
    // Everyone reads the same table, so everyone computes the same ranks.
    struct Entry {
      int requested, nproc, previous, index;
    };
    std::vector<Entry> nodes;
    for (int i = 0; i < closed; ++i) {
      std::string k = key(round, "node" + std::to_string(i));
      s.wait({k}, join_timeout);
      std::string v = s.get_string(k);
      size_t c1 = v.find(','), c2 = v.find(',', c1 + 1);
      nodes.push_back({std::stoi(v.substr(0, c1)), std::stoi(v.substr(c1 + 1, c2 - c1 - 1)),
                       std::stoi(v.substr(c2 + 1)), i});
    }
    // Requested node ranks first, then the group ranks of the previous round (so a restarted
    // node keeps its ranks), then the join order.
    auto rank_key = [](const Entry& e) {
      constexpr int kLast = 1 << 30;
      return std::make_tuple(e.requested < 0 ? kLast : e.requested,
                             e.previous < 0 ? kLast : e.previous, e.index);
    };
    std::sort(nodes.begin(), nodes.end(),
              [&](const Entry& x, const Entry& y) { return rank_key(x) < rank_key(y); });
    Assignment a;
    a.round = round;
    a.num_nodes = closed;
    for (int g = 0; g < closed; ++g) {
      if (nodes[g].index == index) {
        a.group_rank = g;
        a.rank_base = 0;
        for (int h = 0; h < g; ++h) a.rank_base += nodes[h].nproc;
      }
    }
    a.world_size = 0;
    for (const auto& n : nodes) a.world_size += n.nproc;
    // The workers' master: group rank 0's address and a fresh port each round.
    if (a.group_rank == 0) {
      std::string addr = cfg_.master_addr_set ? cfg_.master_addr : rdzv_host_;
      int port = (cfg_.master_port_set && cfg_.max_nodes == 1 && cfg_.rdzv_endpoint.empty() &&
                  cfg_.master_port != 0)
                     ? cfg_.master_port
                     : free_port(addr);
      s.set(key(round, "master"), addr + ":" + std::to_string(port));
    }
    s.wait({key(round, "master")}, join_timeout);
    std::string m = s.get_string(key(round, "master"));
    size_t colon = m.rfind(':');
    a.master_addr = m.substr(0, colon);
    a.master_port = std::stoi(m.substr(colon + 1));
    return a;
  }

  int close_round(int round, int count) {
    auto v = store_->compare_set(key(round, "closed"), {}, to_bytes(std::to_string(count)));
    return std::stoi(std::string(v.begin(), v.end()));
  }

  static std::vector<uint8_t> to_bytes(const std::string& s) {
    return std::vector<uint8_t>(s.begin(), s.end());
  }

  // The command line of one worker.
  std::vector<std::string> command() const {
    std::vector<std::string> argv;
    bool python = !cfg_.no_python && (cfg_.module || ends_with(cfg_.program[0], ".py"));
    if (python) {
      argv.push_back(python_);
      argv.push_back("-u");
      if (cfg_.module) argv.push_back("-m");
    }
    argv.insert(argv.end(), cfg_.program.begin(), cfg_.program.end());
    return argv;
  }

  std::vector<std::string> environment(const Assignment& a, int local_rank) const {
    std::map<std::string, std::string> env;
    for (char** e = environ; e && *e; ++e) {
      std::string kv = *e;
      size_t eq = kv.find('=');
      if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    int rank = a.rank_base + local_rank;
    env["RANK"] = std::to_string(rank);
    env["LOCAL_RANK"] = std::to_string(local_rank);
    env["WORLD_SIZE"] = std::to_string(a.world_size);
    env["LOCAL_WORLD_SIZE"] = std::to_string(cfg_.nproc_per_node);
    env["GROUP_RANK"] = std::to_string(a.group_rank);
    env["GROUP_WORLD_SIZE"] = std::to_string(a.num_nodes);
    env["ROLE_RANK"] = std::to_string(rank);
    env["ROLE_WORLD_SIZE"] = std::to_string(a.world_size);
    env["ROLE_NAME"] = cfg_.role;
    env["MASTER_ADDR"] = a.master_addr;
    env["MASTER_PORT"] = std::to_string(a.master_port);
    env["TORCHELASTIC_RESTART_COUNT"] = std::to_string(a.round);
    env["EMBER_RESTART_COUNT"] = std::to_string(a.round);
    env["TORCHELASTIC_MAX_RESTARTS"] = std::to_string(cfg_.max_restarts);
    env["TORCHELASTIC_RUN_ID"] = cfg_.rdzv_id;
    env["TORCHELASTIC_USE_AGENT_STORE"] = "False";
    if (!env.count("OMP_NUM_THREADS") && cfg_.nproc_per_node > 1) env["OMP_NUM_THREADS"] = "1";
    std::vector<std::string> out;
    for (auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
  }

  // Starts one worker in its own process group with its output on two pipes.
  void spawn(Worker& w, const Assignment& a) {
    auto argv_s = command();
    auto env_s = environment(a, w.local_rank);
    std::vector<char*> argv, envp;
    for (auto& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    for (auto& s : env_s) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string exec_error = "ember-run: cannot run '" + argv_s[0] + "': ";
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    if (pipe2(err, O_CLOEXEC) != 0) {
      ::close(out[0]);
      ::close(out[1]);
      throw std::runtime_error("pipe failed");
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
      for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
      throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    }
    if (pid == 0) {
      // The child: only async-signal-safe calls until exec.
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // no orphans if the launcher is killed outright
      if (getppid() != parent) _exit(137);
      dup2(out[1], 1);
      dup2(err[1], 2);
      for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGPIPE}) signal(s, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      execvpe(argv[0], argv.data(), envp.data());
      int e = errno;
      (void)!::write(2, exec_error.data(), exec_error.size());
      const char* msg = strerror(e);
      (void)!::write(2, msg, strlen(msg));
      (void)!::write(2, "\n", 1);
      _exit(127);
    }
    setpgid(pid, pid);
    ::close(out[1]);
    ::close(err[1]);
    w.pid = pid;
    w.fds[0] = out[0];
    w.fds[1] = err[0];
    for (int fd : w.fds) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    w.running = true;
  }

  // Relays what a worker wrote, line by line, each line prefixed with its rank.
  void pump(Worker& w, int which, bool at_eof) {
    int& fd = w.fds[which];
    if (fd < 0) return;
    char buf[65536];
    bool eof = false;
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        w.partial[which].append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      eof = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
      break;
    }
    std::string& p = w.partial[which];
    std::string prefix = "[rank " + std::to_string(w.global_rank) + "]: ";
    std::string out;
    size_t start = 0, nl;
    while ((nl = p.find('\n', start)) != std::string::npos) {
      out += prefix;
      out.append(p, start, nl - start + 1);
      start = nl + 1;
    }
    p.erase(0, start);
    if ((eof || at_eof) && !p.empty()) {
      out += prefix + p + "\n";
      p.clear();
    }
    if (!out.empty()) write_all(which == 0 ? 1 : 2, out);
    if (eof || at_eof) {
      ::close(fd);
      fd = -1;
    }
  }

  // Waits up to `timeout` for something to read or a signal; relays output.
  std::vector<int> poll_once(Milliseconds timeout) {
    std::vector<pollfd> fds;
    std::vector<std::pair<Worker*, int>> who;
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    who.push_back({nullptr, 0});
    for (auto& w : workers_) {
      for (int i = 0; i < 2; ++i) {
        if (w.fds[i] >= 0) {
          fds.push_back({w.fds[i], POLLIN, 0});
          who.push_back({&w, i});
        }
      }
    }
    int rc =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(0, timeout.count())));
    if (rc > 0) {
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents) pump(*who[i].first, who[i].second, false);
      }
    }
    return SignalScope::drain();
  }

  // Reaps the workers that exited; returns the first failure among them.
  std::optional<Failure> reap() {
    std::optional<Failure> f;
    for (auto& w : workers_) {
      if (!w.running) continue;
      int status = 0;
      pid_t r = waitpid(w.pid, &status, WNOHANG);
      if (r != w.pid) continue;
      w.running = false;
      w.status = status;
      bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && !f) f = Failure{exit_code_of(status), true, describe_status(w)};
    }
    return f;
  }

  bool any_running() const {
    for (const auto& w : workers_)
      if (w.running) return true;
    return false;
  }

  // Stops every worker: `sig` to each process group, SIGKILL after the grace period; relays
  // their last output.
  void stop_workers(int sig) {
    for (auto& w : workers_)
      if (w.running) killpg(w.pid, sig);
    auto deadline = Clock::now() + ms_of(cfg_.kill_grace_s);
    bool killed = sig == SIGKILL;
    while (any_running()) {
      auto sigs = poll_once(Milliseconds(20));
      for (int s : sigs) {
        if (s != SIGCHLD && !killed) {
          // A second interrupt while stopping: no more grace.
          deadline = Clock::now();
        }
      }
      reap();
      if (!killed && Clock::now() >= deadline) {
        for (auto& w : workers_)
          if (w.running) killpg(w.pid, SIGKILL);
        killed = true;
      }
    }
    // Whatever is left in the pipes (a grandchild may hold them open: wait briefly).
    auto drain_deadline = Clock::now() + Milliseconds(500);
    while (Clock::now() < drain_deadline) {
      bool open = false;
      for (auto& w : workers_)
        if (w.fds[0] >= 0 || w.fds[1] >= 0) open = true;
      if (!open) break;
      poll_once(Milliseconds(20));
    }
    close_pipes();
  }

  void close_pipes() {
    for (auto& w : workers_) {
      for (int i = 0; i < 2; ++i) pump(w, i, true);
    }
  }

  // Publishes a failure for the other agents; the first one published wins.
  void publish(int round, const Failure& f) {
    try {
      store_->compare_set(
          key(round, "failed"), {},
          to_bytes(std::to_string(f.exit_code) + "|" + (f.restartable ? "1" : "0") + "|" + f.what));
    } catch (const DistError& e) {
      say(std::string("could not tell the other agents: ") + e.what());
    }
  }

  std::optional<Failure> remote_failure(int round) {
    if (!store_->check({key(round, "failed")})) return std::nullopt;
    std::string v = store_->get_string(key(round, "failed"));
    Failure f;
    size_t a = v.find('|'), b = v.find('|', a + 1);
    f.exit_code = std::stoi(v.substr(0, a));
    f.restartable = v.substr(a + 1, b - a - 1) == "1";
    f.what = v.substr(b + 1);
    f.remote = true;
    return f;
  }

  // Runs this node's workers for one round; nothing when the whole group succeeded.
  std::optional<Failure> run_round(const Assignment& a) {
    if (a.round == 0 && cfg_.nproc_per_node > 1 && !getenv("OMP_NUM_THREADS")) {
      write_all(2,
                "*****************************************\n"
                "Setting OMP_NUM_THREADS environment variable for each process to be 1 in "
                "default, to avoid your system being overloaded, please further tune the "
                "variable for optimal performance in your application as needed. \n"
                "*****************************************\n");
    }
    workers_.assign(static_cast<size_t>(cfg_.nproc_per_node), Worker{});
    for (int i = 0; i < cfg_.nproc_per_node; ++i) {
      workers_[i].local_rank = i;
      workers_[i].global_rank = a.rank_base + i;
    }
    SignalScope::drain();
    for (auto& w : workers_) spawn(w, a);
    auto interval = ms_of(cfg_.monitor_interval_s);
    auto next_check = Clock::now() + interval;
    bool reported_done = false;
    while (true) {
      auto sigs = poll_once(reported_done ? interval : std::min(interval, Milliseconds(1000)));
      for (int s : sigs) {
        if (s == SIGCHLD) continue;
        // Forward the interrupt, let the workers finish, tell the other agents, stop.
        say(std::string("received ") + "SIG" + (sigabbrev_np(s) ? sigabbrev_np(s) : "?") +
            ": forwarding it to the workers");
        Failure f{128 + s, false,
                  "the agent of node " + std::to_string(a.group_rank) + " received SIG" +
                      (sigabbrev_np(s) ? sigabbrev_np(s) : "?")};
        publish(a.round, f);
        stop_workers(s);
        return f;
      }
      if (auto f = reap()) {
        say(f->what);
        publish(a.round, *f);
        stop_workers(SIGTERM);
        return f;
      }
      if (!any_running() && !reported_done) {
        close_pipes();
        int64_t done = store_->add(key(a.round, "done"), 1);
        reported_done = true;
        if (done >= a.num_nodes) return std::nullopt;
      }
      if (reported_done) {
        if (store_->add(key(a.round, "done"), 0) >= a.num_nodes) return std::nullopt;
      }
      if (Clock::now() >= next_check) {
        next_check = Clock::now() + interval;
        if (auto f = remote_failure(a.round)) {
          stop_workers(SIGTERM);
          return f;
        }
      }
    }
  }

  // Leaves the rendezvous; the store's host waits (bounded) until every agent has left.
  void leave() {
    try {
      store_->add("left", 1);
      if (!hosting_) return;
      auto deadline = Clock::now() + ms_of(cfg_.close_timeout_s);
      while (store_->add("left", 0) < last_num_nodes_ && Clock::now() < deadline) {
        std::this_thread::sleep_for(Milliseconds(20));
      }
    } catch (const DistError&) {
      // The store's host is gone: nothing left to coordinate.
    }
  }

  LaunchConfig cfg_;
  std::string python_;
  std::shared_ptr<Store> store_;
  std::string rdzv_host_;
  bool hosting_ = false;
  int last_num_nodes_ = 1;
  int previous_group_rank_ = -1;
  std::vector<Worker> workers_;
};

}  // namespace
}  // namespace launcher

int run_main(const std::vector<std::string>& args, const std::string& python_executable) {
  using namespace launcher;
  bool help = false;
  LaunchConfig cfg;
  try {
    cfg = parse_args(args, help);
  } catch (const UsageError& e) {
    write_all(2, usage_text(false) + "ember-run: error: " + e.what() + "\n");
    return 2;
  }
  if (help) {
    write_all(1, usage_text(true));
    return 0;
  }
  std::string python = python_executable;
  if (python.empty()) {
    const char* env = getenv("EMBER_PYTHON");
    python = env && *env ? env : "/usr/bin/python3";
  }
  std::lock_guard<std::mutex> one_at_a_time(g_run_mutex);
  try {
    SignalScope signals;
    Agent agent(std::move(cfg), python);
    return agent.run();
  } catch (const UsageError& e) {
    write_all(2, usage_text(false) + "ember-run: error: " + e.what() + "\n");
    return 2;
  } catch (const std::exception& e) {
    std::string m = e.what();
    if (m.rfind("[ember-run] ", 0) == 0) m.erase(0, 12);  // say() names the launcher already
    say(m);
    return 1;
  }
}

}  // namespace ember::distributed
