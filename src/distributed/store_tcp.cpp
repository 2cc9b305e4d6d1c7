// TCPStore: one process runs a server thread holding the map; every TCPStore object (the
// server's own included) talks to it over one blocking socket.
//
// Note [TCPStore protocol]
// A request is an opcode byte followed by its arguments; a string is a u32 length and its bytes,
// an integer is an i64, both in host byte order (every peer runs on this machine or one like
// it). A reply is a status byte (kOk, kTimeout, kError) and a payload. `get` and `wait` carry
// their timeout: the server parks the request and answers when the keys exist or at the
// deadline, so clients never poll. Each connection has at most one request in flight (the client
// holds its mutex for the whole exchange), so a parked request blocks nothing else.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "store_common.h"

namespace ember::distributed {

using namespace store_detail;

namespace {

enum Op : uint8_t { kSet = 1, kGet, kCompareSet, kAdd, kDelete, kCheck, kNumKeys, kWait };
enum Status : uint8_t { kOk = 0, kTimeout = 1, kError = 2 };
constexpr uint32_t kMaxLen = 1u << 30;  // larger lengths mean a garbled stream
const char* kInitKey = "init/";         // c10d's key counting the workers that joined

std::string errno_text(int e) { return std::strerror(e); }

// ---- encoding -------------------------------------------------------------------------------

struct Writer {
  std::string buf;
  void u8(uint8_t v) { buf.push_back(static_cast<char>(v)); }
  void i64(int64_t v) { buf.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void u32(uint32_t v) { buf.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const void* p, size_t n) {
    u32(static_cast<uint32_t>(n));
    buf.append(static_cast<const char*>(p), n);
  }
  void str(const std::string& s) { str(s.data(), s.size()); }
  void bytes(const std::vector<uint8_t>& v) { str(v.data(), v.size()); }
  void strs(const std::vector<std::string>& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (const auto& s : v) str(s);
  }
};

struct NeedMore {};
struct Garbled {};

// Reads from a buffer that may hold only part of a message (throws NeedMore).
struct Reader {
  const char* p;
  size_t n;
  size_t pos = 0;
  void need(size_t k) {
    if (n - pos < k) throw NeedMore{};
  }
  uint8_t u8() {
    need(1);
    return static_cast<uint8_t>(p[pos++]);
  }
  int64_t i64() {
    need(8);
    int64_t v;
    std::memcpy(&v, p + pos, 8);
    pos += 8;
    return v;
  }
  uint32_t u32() {
    need(4);
    uint32_t v;
    std::memcpy(&v, p + pos, 4);
    pos += 4;
    return v;
  }
  std::string str() {
    uint32_t len = u32();
    if (len > kMaxLen) throw Garbled{};
    need(len);
    std::string s(p + pos, len);
    pos += len;
    return s;
  }
  std::vector<std::string> strs() {
    uint32_t k = u32();
    if (k > kMaxLen / 4) throw Garbled{};
    std::vector<std::string> v;
    for (uint32_t i = 0; i < k; ++i) v.push_back(str());
    return v;
  }
};

// ---- addresses --------------------------------------------------------------------------------

struct AddrInfo {
  addrinfo* head = nullptr;
  ~AddrInfo() {
    if (head) freeaddrinfo(head);
  }
};

// Resolves host:port to stream addresses, or throws DistNetworkError.
void resolve(const std::string& host, uint16_t port, bool passive, AddrInfo& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &out.head);
  if (rc != 0 || out.head == nullptr) {
    throw DistNetworkError("[TCPStore] cannot resolve host '" + host + ":" + service +
                           "': " + gai_strerror(rc));
  }
}

void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

uint16_t local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

// ---- the server -------------------------------------------------------------------------------

class Server {
 public:
  Server(const std::string& host, uint16_t port) {
    AddrInfo ai;
    resolve(host, port, true, ai);
    int last_errno = 0;
    for (addrinfo* a = ai.head; a; a = a->ai_next) {
      int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        last_errno = errno;
        continue;
      }
      int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1024) == 0) {
        listen_fd_ = fd;
        break;
      }
      last_errno = errno;
      ::close(fd);
    }
    if (listen_fd_ < 0) {
      throw DistNetworkError(
          "[TCPStore] cannot listen on " + host + ":" + std::to_string(port) + ": " +
          errno_text(last_errno) +
          (last_errno == EADDRINUSE
               ? " (another process holds the port; pass port 0 to pick a free one)"
               : ""));
    }
    fcntl(listen_fd_, F_SETFL, fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
    port_ = local_port(listen_fd_);
    if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
      ::close(listen_fd_);
      throw DistNetworkError("[TCPStore] pipe: " + errno_text(errno));
    }
    thread_ = std::thread([this] { loop(); });
  }

  ~Server() {
    stop_ = true;
    char c = 1;
    (void)!::write(wake_[1], &c, 1);
    thread_.join();
    for (auto& [fd, conn] : conns_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  uint16_t port() const { return port_; }

 private:
  struct Conn {
    std::string in, out;
  };
  // A get or wait parked until its keys exist or its deadline passes.
  struct Waiter {
    Op op;
    std::vector<std::string> keys;
    Clock::time_point deadline;
  };

  void loop() {
    std::vector<pollfd> fds;
    while (!stop_) {
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      for (auto& [fd, c] : conns_) {
        fds.push_back({fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
      }
      int timeout_ms = -1;
      auto now = Clock::now();
      for (auto& [fd, w] : waiters_) {
        if (w.deadline == Clock::time_point::max()) continue;
        auto ms = std::chrono::ceil<std::chrono::milliseconds>(w.deadline - now).count();
        int t = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(ms, 1 << 30)));
        timeout_ms = timeout_ms < 0 ? t : std::min(timeout_ms, t);
      }
      int rc = ::poll(fds.data(), fds.size(), timeout_ms);
      if (rc < 0 && errno != EINTR) break;
      if (stop_) break;
      if (rc > 0) {
        if (fds[0].revents) {
          char buf[64];
          while (::read(wake_[0], buf, sizeof buf) > 0) {
          }
        }
        if (fds[1].revents & POLLIN) accept_all();
        for (size_t i = 2; i < fds.size(); ++i) {
          if (!fds[i].revents) continue;
          int fd = fds[i].fd;
          bool ok = true;
          if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) ok = on_readable(fd);
          if (ok && (fds[i].revents & POLLOUT)) ok = flush(fd);
          if (!ok) drop(fd);
        }
      }
      expire();
      for (int fd : pending_drop_) {
        if (conns_.count(fd)) drop(fd);
      }
      pending_drop_.clear();
    }
  }

  void accept_all() {
    while (true) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      set_nodelay(fd);
      conns_[fd];
    }
  }

  void drop(int fd) {
    waiters_.erase(fd);
    conns_.erase(fd);
    ::close(fd);
  }

  // Reads what arrived and serves every complete request; false when the peer is gone.
  bool on_readable(int fd) {
    Conn& c = conns_[fd];
    char buf[65536];
    while (true) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) {
        c.in.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return false;
    }
    return process(fd);
  }

  // Serves the complete requests buffered on `fd`, stopping behind a parked one.
  bool process(int fd) {
    size_t consumed = 0;
    bool ok = true;
    while (consumed < conns_[fd].in.size() && !waiters_.count(fd)) {
      const std::string& in = conns_[fd].in;
      Reader r{in.data() + consumed, in.size() - consumed};
      try {
        handle(fd, r);
      } catch (const NeedMore&) {
        break;
      } catch (const Garbled&) {
        ok = false;
        break;
      }
      consumed += r.pos;
    }
    conns_[fd].in.erase(0, consumed);
    return ok && flush(fd);
  }

  bool flush(int fd) {
    Conn& c = conns_[fd];
    while (!c.out.empty()) {
      ssize_t n = ::send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      return false;
    }
    return true;
  }

  void reply(int fd, Status s, const std::string& payload = {}) {
    Conn& c = conns_[fd];
    c.out.push_back(static_cast<char>(s));
    c.out += payload;
  }

  bool has_all(const std::vector<std::string>& keys) const {
    for (const auto& k : keys)
      if (!map_.count(k)) return false;
    return true;
  }

  // Answers a parked get/wait whose keys all exist.
  void answer(int fd, const Waiter& w) {
    Writer out;
    if (w.op == kGet) out.bytes(map_.at(w.keys[0]));
    reply(fd, kOk, out.buf);
  }

  // Parses one request (throws NeedMore before touching any state) and serves it.
  void handle(int fd, Reader& r) {
    Op op = static_cast<Op>(r.u8());
    Writer out;
    switch (op) {
      case kSet: {
        std::string k = r.str(), v = r.str();
        map_[k] = std::vector<uint8_t>(v.begin(), v.end());
        reply(fd, kOk);
        wake_waiters();
        return;
      }
      case kGet:
      case kWait: {
        std::vector<std::string> keys;
        if (op == kGet) {
          keys.push_back(r.str());
        } else {
          keys = r.strs();
        }
        int64_t ms = r.i64();
        Waiter w{op, std::move(keys),
                 ms == 0 ? Clock::time_point::max() : Clock::now() + Milliseconds(ms)};
        if (has_all(w.keys)) {
          answer(fd, w);
        } else {
          waiters_[fd] = std::move(w);
        }
        return;
      }
      case kCompareSet: {
        std::string k = r.str(), e = r.str(), d = r.str();
        std::vector<uint8_t> expected(e.begin(), e.end()), desired(d.begin(), d.end());
        auto it = map_.find(k);
        if (it == map_.end()) {
          if (!expected.empty()) {
            out.bytes(expected);
            reply(fd, kOk, out.buf);
            return;
          }
          map_[k] = desired;
        } else if (it->second == expected) {
          it->second = desired;
        } else {
          out.bytes(it->second);
          reply(fd, kOk, out.buf);
          return;
        }
        out.bytes(desired);
        reply(fd, kOk, out.buf);
        wake_waiters();
        return;
      }
      case kAdd: {
        std::string k = r.str();
        int64_t v = r.i64();
        auto it = map_.find(k);
        int64_t cur;
        try {
          cur = parse_counter("TCPStore.add", k, it == map_.end() ? nullptr : &it->second);
        } catch (const DistStoreError& e) {
          Writer err;
          err.str(e.what());
          reply(fd, kError, err.buf);
          return;
        }
        int64_t sum = static_cast<int64_t>(static_cast<uint64_t>(cur) + static_cast<uint64_t>(v));
        map_[k] = to_bytes(std::to_string(sum));
        out.i64(sum);
        reply(fd, kOk, out.buf);
        wake_waiters();
        return;
      }
      case kDelete: {
        std::string k = r.str();
        out.u8(map_.erase(k) > 0 ? 1 : 0);
        reply(fd, kOk, out.buf);
        return;
      }
      case kCheck: {
        auto keys = r.strs();
        out.u8(has_all(keys) ? 1 : 0);
        reply(fd, kOk, out.buf);
        return;
      }
      case kNumKeys:
        out.i64(static_cast<int64_t>(map_.size()));
        reply(fd, kOk, out.buf);
        return;
    }
    throw Garbled{};
  }

  void wake_waiters() {
    std::vector<int> answered;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (has_all(it->second.keys)) {
        answer(it->first, it->second);
        answered.push_back(it->first);
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
    resume(answered);
  }

  // Connections whose parked request was answered: send the reply, serve what queued behind.
  void resume(const std::vector<int>& fds) {
    for (int fd : fds) {
      if (!process(fd)) pending_drop_.push_back(fd);
    }
  }

  void expire() {
    auto now = Clock::now();
    std::vector<int> answered;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->second.deadline <= now) {
        Writer out;
        std::vector<std::string> missing;
        for (const auto& k : it->second.keys)
          if (!map_.count(k)) missing.push_back(k);
        out.strs(missing);
        reply(it->first, kTimeout, out.buf);
        answered.push_back(it->first);
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
    resume(answered);
  }

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::unordered_map<int, Conn> conns_;
  std::map<int, Waiter> waiters_;
  std::map<std::string, std::vector<uint8_t>> map_;
  std::vector<int> pending_drop_;  // connections found dead while serving another
};

}  // namespace

// ---- the client -------------------------------------------------------------------------------

// One socket to the server with blocking request/reply helpers.
struct Connection {
  int fd = -1;
  const std::string* where = nullptr;
  std::atomic<bool>* broken = nullptr;  // set when the server is lost: later calls fail at once

  [[noreturn]] void lost(const char* op, const std::string& why) {
    ::close(fd);
    fd = -1;
    *broken = true;
    throw DistNetworkError(std::string("[") + op + "] lost the connection to the store at " +
                           *where + ": " + why);
  }

  void send_all(const char* op, const std::string& buf) {
    size_t done = 0;
    while (done < buf.size()) {
      ssize_t n = ::send(fd, buf.data() + done, buf.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) lost(op, errno_text(errno));
      done += static_cast<size_t>(n);
    }
  }

  // Reads exactly n bytes; `deadline` bounds the wait for a server that stopped answering.
  void recv_all(const char* op, void* p, size_t n, Clock::time_point deadline) {
    char* c = static_cast<char*>(p);
    size_t done = 0;
    while (done < n) {
      int ms = -1;
      if (deadline != Clock::time_point::max()) {
        auto left = std::chrono::ceil<Milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) lost(op, "the server did not answer in time");
        ms = static_cast<int>(std::min<int64_t>(left, 1 << 30));
      }
      pollfd pfd{fd, POLLIN, 0};
      int rc = ::poll(&pfd, 1, ms);
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0) lost(op, errno_text(errno));
      if (rc == 0) continue;
      ssize_t k = ::recv(fd, c + done, n - done, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k == 0) lost(op, "the server closed it");
      if (k < 0) lost(op, errno_text(errno));
      done += static_cast<size_t>(k);
    }
  }
  uint8_t u8(const char* op, Clock::time_point d) {
    uint8_t v;
    recv_all(op, &v, 1, d);
    return v;
  }
  int64_t i64(const char* op, Clock::time_point d) {
    int64_t v;
    recv_all(op, &v, 8, d);
    return v;
  }
  std::string str(const char* op, Clock::time_point d) {
    uint32_t len;
    recv_all(op, &len, 4, d);
    if (len > kMaxLen) lost(op, "garbled reply");
    std::string s(len, '\0');
    if (len) recv_all(op, s.data(), len, d);
    return s;
  }
  std::vector<std::string> strs(const char* op, Clock::time_point d) {
    uint32_t k;
    recv_all(op, &k, 4, d);
    if (k > kMaxLen / 4) lost(op, "garbled reply");
    std::vector<std::string> v;
    for (uint32_t i = 0; i < k; ++i) v.push_back(str(op, d));
    return v;
  }
};

// Note [TCPStore connections]
// A store object keeps a pool of connections: a call takes an idle one (or opens another) for
// its whole exchange. So a thread parked in `get` never stops other threads of the process from
// using the same store (a background thread publishing progress while the main one waits).
struct TCPStore::Impl {
  std::string host;
  uint16_t port = 0;
  std::string where;
  std::unique_ptr<Server> server;
  std::mutex mu;
  std::vector<int> idle;
  std::atomic<bool> broken{false};
  Milliseconds connect_timeout{0};

  ~Impl() {
    for (int fd : idle) ::close(fd);
  }

  // Connects, retrying refused connections until `timeout` passes.
  int connect(Milliseconds timeout) {
    auto deadline = deadline_after(timeout);
    auto pause = Milliseconds(5);
    std::string last = "no address";
    while (true) {
      AddrInfo ai;
      resolve(host, port, false, ai);
      for (addrinfo* a = ai.head; a; a = a->ai_next) {
        int s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (s < 0) {
          last = errno_text(errno);
          continue;
        }
        if (::connect(s, a->ai_addr, a->ai_addrlen) == 0) {
          set_nodelay(s);
          return s;
        }
        last = errno_text(errno);
        ::close(s);
      }
      if (Clock::now() + pause >= deadline) {
        throw DistNetworkError("[TCPStore] cannot connect to " + where + " within " +
                               std::to_string(timeout.count()) + " ms: " + last +
                               " (is the server, rank 0, running there?)");
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, Milliseconds(100));
    }
  }

  // A connection for one exchange; it returns to the pool unless it was lost.
  struct Lease {
    Impl* impl;
    Connection c;
    Lease(Impl* i, int fd) : impl(i) {
      c.fd = fd;
      c.where = &i->where;
      c.broken = &i->broken;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (c.fd < 0) return;
      std::lock_guard<std::mutex> l(impl->mu);
      impl->idle.push_back(c.fd);
    }
  };

  // Takes an idle connection or opens one (guaranteed elision: the Lease is never copied).
  int take(const char* op) {
    {
      std::lock_guard<std::mutex> l(mu);
      if (broken) {
        throw DistNetworkError(std::string("[") + op + "] lost the connection to the store at " +
                               where + " earlier (the server is gone)");
      }
      if (!idle.empty()) {
        int fd = idle.back();
        idle.pop_back();
        return fd;
      }
    }
    return connect(connect_timeout);
  }
  Lease lease(const char* op) { return Lease(this, take(op)); }

  // Sends a request and reads the status byte; kError replies raise here. `d` becomes the
  // deadline for the reply: the server's own (`t`) plus slack, or none.
  static uint8_t call(Connection& c, const char* op, const std::string& req, Milliseconds t,
                      Clock::time_point& d) {
    d = t.count() == 0 ? Clock::time_point::max() : Clock::now() + t + Milliseconds(10000);
    c.send_all(op, req);
    uint8_t status = c.u8(op, d);
    if (status == kError) throw DistStoreError(c.str(op, d));
    return status;
  }
};

TCPStore::TCPStore(std::string host, const TCPStoreOptions& opts)
    : Store(opts.timeout), impl_(std::make_unique<Impl>()) {
  EMBER_CHECK_VALUE(!host.empty(), "[TCPStore] the host name is empty");
  EMBER_CHECK_VALUE(opts.timeout.count() >= 0, "[TCPStore] the timeout must be >= 0 ms, got ",
                    opts.timeout.count(), " ms");
  EMBER_CHECK_VALUE(!opts.num_workers || *opts.num_workers >= 1,
                    "[TCPStore] num_workers must be >= 1, got ", opts.num_workers.value_or(0));
  impl_->host = std::move(host);
  impl_->port = opts.port;
  if (opts.is_server) {
    impl_->server = std::make_unique<Server>(impl_->host, opts.port);
    impl_->port = impl_->server->port();
  }
  impl_->where = impl_->host + ":" + std::to_string(impl_->port);
  impl_->connect_timeout = opts.timeout;
  impl_->idle.push_back(impl_->connect(opts.timeout));
  if (opts.num_workers && opts.wait_workers) {
    // As c10d: every worker counts itself in; the server waits for all so that its thread
    // outlives the others' first requests.
    add(kInitKey, 1);
    if (opts.is_server) {
      auto deadline = deadline_after(opts.timeout);
      auto pause = Milliseconds(1);
      while (true) {
        auto v = get(kInitKey);
        int64_t joined = parse_counter("TCPStore", kInitKey, &v);
        if (joined >= *opts.num_workers) break;
        if (Clock::now() >= deadline) {
          throw DistStoreError("[TCPStore] timed out after " +
                               std::to_string(opts.timeout.count()) + " ms waiting for " +
                               std::to_string(*opts.num_workers) + " workers to join " +
                               impl_->where + " (" + std::to_string(joined) + " joined)");
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, Milliseconds(20));
      }
    }
  }
}

TCPStore::~TCPStore() = default;

uint16_t TCPStore::port() const { return impl_->port; }
const std::string& TCPStore::host() const { return impl_->host; }

void TCPStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  const char* op = "TCPStore.set";
  Writer w;
  w.u8(kSet);
  w.str(key);
  w.bytes(value);
  auto l = impl_->lease(op);
  Clock::time_point d;
  Impl::call(l.c, op, w.buf, timeout_, d);
}

std::vector<uint8_t> TCPStore::get(const std::string& key) {
  const char* op = "TCPStore.get";
  auto t = resolve_timeout(op, kUnsetTimeout, timeout_);
  Writer w;
  w.u8(kGet);
  w.str(key);
  w.i64(t.count());
  auto l = impl_->lease(op);
  Clock::time_point d;
  if (Impl::call(l.c, op, w.buf, t, d) == kTimeout) {
    l.c.strs(op, d);
    throw DistStoreError(timeout_message(op, t, {key}, {key}));
  }
  return to_bytes(l.c.str(op, d));
}

std::vector<uint8_t> TCPStore::compare_set(const std::string& key,
                                           const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) {
  const char* op = "TCPStore.compare_set";
  Writer w;
  w.u8(kCompareSet);
  w.str(key);
  w.bytes(expected);
  w.bytes(desired);
  auto l = impl_->lease(op);
  Clock::time_point d;
  Impl::call(l.c, op, w.buf, timeout_, d);
  return to_bytes(l.c.str(op, d));
}

int64_t TCPStore::add(const std::string& key, int64_t value) {
  const char* op = "TCPStore.add";
  Writer w;
  w.u8(kAdd);
  w.str(key);
  w.i64(value);
  auto l = impl_->lease(op);
  Clock::time_point d;
  Impl::call(l.c, op, w.buf, timeout_, d);
  return l.c.i64(op, d);
}

bool TCPStore::delete_key(const std::string& key) {
  const char* op = "TCPStore.delete_key";
  Writer w;
  w.u8(kDelete);
  w.str(key);
  auto l = impl_->lease(op);
  Clock::time_point d;
  Impl::call(l.c, op, w.buf, timeout_, d);
  return l.c.u8(op, d) != 0;
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  const char* op = "TCPStore.check";
  Writer w;
  w.u8(kCheck);
  w.strs(keys);
  auto l = impl_->lease(op);
  Clock::time_point d;
  Impl::call(l.c, op, w.buf, timeout_, d);
  return l.c.u8(op, d) != 0;
}

int64_t TCPStore::num_keys() {
  const char* op = "TCPStore.num_keys";
  Writer w;
  w.u8(kNumKeys);
  auto l = impl_->lease(op);
  Clock::time_point d;
  Impl::call(l.c, op, w.buf, timeout_, d);
  return l.c.i64(op, d);
}

void TCPStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  const char* op = "TCPStore.wait";
  auto t = resolve_timeout(op, timeout, timeout_);
  Writer w;
  w.u8(kWait);
  w.strs(keys);
  w.i64(t.count());
  auto l = impl_->lease(op);
  Clock::time_point d;
  if (Impl::call(l.c, op, w.buf, t, d) == kTimeout) {
    auto missing = l.c.strs(op, d);
    throw DistStoreError(timeout_message(op, t, keys, missing));
  }
}

}  // namespace ember::distributed
