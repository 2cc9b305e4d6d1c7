// The stores of ember::distributed (HashStore, PrefixStore, FileStore, TCPStore): every method
// with c10d's semantics (compare_set on a missing key, add on a missing key, num_keys), waits
// and timeouts, threads and forked processes sharing one store, and bad input.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "ember/distributed.h"

using namespace ember;
using namespace ember::distributed;
using namespace std::chrono_literals;

namespace {

std::vector<uint8_t> B(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// A port free at the time of the call (bound to 127.0.0.1:0, then released).
uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

std::string temp_path(const std::string& tag) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/ember_store_" + tag + "_" + std::to_string(getpid()) +
         "_" + std::to_string(rand());
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

template <class Err>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Err& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG EXCEPTION TYPE: ") + e.what();
  }
  return "NO EXCEPTION";
}

// Runs `child` in a forked process; it reports through its exit code (0 = success).
pid_t spawn(const std::function<int()>& child) {
  pid_t pid = fork();
  if (pid == 0) {
    int rc = 99;
    try {
      rc = child();
    } catch (const std::exception& e) {
      fprintf(stderr, "child %d: %s\n", getpid(), e.what());
      rc = 98;
    }
    _exit(rc);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ---- the same checks on every kind of store ---------------------------------------------------

struct StoreKind {
  std::string name;   // the name in error messages ("TCPStore")
  std::string label;  // the test's suffix
  std::function<std::shared_ptr<Store>()> make;
  std::string key_prefix;  // what error messages put before a key
};

class StoreTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    switch (GetParam()) {
      case 0:
        kind_ = {"HashStore", "Hash", [] { return std::make_shared<HashStore>(); }, ""};
        break;
      case 1:
        kind_ = {"TCPStore", "TCP",
                 [] {
                   TCPStoreOptions o;
                   o.is_server = true;
                   o.timeout = 10s;
                   return std::make_shared<TCPStore>("127.0.0.1", o);
                 },
                 ""};
        break;
      case 2:
        kind_ = {"FileStore", "File",
                 [this] {
                   path_ = temp_path("param");
                   return std::make_shared<FileStore>(path_, 1);
                 },
                 ""};
        break;
      case 3:
        kind_ = {"HashStore", "PrefixOverHash",
                 [] { return std::make_shared<PrefixStore>("job", std::make_shared<HashStore>()); },
                 "job/"};
        break;
    }
    store_ = kind_.make();
  }
  void TearDown() override {
    store_.reset();
    if (!path_.empty()) {
      EXPECT_FALSE(exists(path_)) << "the last user removes the file";
    }
  }
  StoreKind kind_;
  std::shared_ptr<Store> store_;
  std::string path_;
};

TEST_P(StoreTest, SetGetOverwrite) {
  Store& s = *store_;
  std::vector<uint8_t> binary = {0, 1, 255, 0, 7};
  s.set("bin", binary);
  EXPECT_EQ(s.get("bin"), binary);
  s.set("empty", std::vector<uint8_t>{});
  EXPECT_TRUE(s.get("empty").empty());
  s.set("k", "first");
  s.set("k", std::string("second"));
  EXPECT_EQ(s.get_string("k"), "second");
  std::vector<uint8_t> big(1 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 31 + 7);
  s.set("big", big);
  EXPECT_EQ(s.get("big"), big);
}

TEST_P(StoreTest, CompareSetAsC10d) {
  Store& s = *store_;
  // Missing key, non-empty expected: nothing is set and `expected` comes back.
  EXPECT_EQ(s.compare_set("cas", B("x"), B("y")), B("x"));
  EXPECT_FALSE(s.check({"cas"}));
  // Missing key, empty expected: the key is created.
  EXPECT_EQ(s.compare_set("cas", {}, B("y")), B("y"));
  EXPECT_EQ(s.get("cas"), B("y"));
  // Matching value: swapped.
  EXPECT_EQ(s.compare_set("cas", B("y"), B("z")), B("z"));
  EXPECT_EQ(s.get("cas"), B("z"));
  // Not matching: unchanged, the current value comes back.
  EXPECT_EQ(s.compare_set("cas", B("y"), B("w")), B("z"));
  EXPECT_EQ(s.get("cas"), B("z"));
  // The c10d spelling.
  EXPECT_EQ(s.compareSet("cas", B("z"), B("v")), B("v"));
}

TEST_P(StoreTest, Add) {
  Store& s = *store_;
  EXPECT_EQ(s.add("n", 5), 5);  // a missing key counts as 0
  EXPECT_EQ(s.add("n", -7), -2);
  EXPECT_EQ(s.add("n", 0), -2);
  EXPECT_EQ(s.get_string("n"), "-2");  // stored as decimal text, as c10d
  s.set("m", "40");
  EXPECT_EQ(s.add("m", 2), 42);
  s.set("text", "abc");
  auto msg = message_of<DistStoreError>([&] { s.add("text", 1); });
  EXPECT_NE(msg.find("is not an integer"), std::string::npos) << msg;
  EXPECT_NE(msg.find(kind_.key_prefix + "text"), std::string::npos) << msg;
  EXPECT_EQ(s.get_string("text"), "abc");
  // The store still serves after the error.
  EXPECT_EQ(s.add("n", 2), 0);
}

TEST_P(StoreTest, DeleteCheckNumKeys) {
  Store& s = *store_;
  int64_t base = s.num_keys();
  EXPECT_TRUE(s.check({}));
  s.set("a", "1");
  s.set("b", "2");
  EXPECT_EQ(s.num_keys(), base + 2);
  EXPECT_EQ(s.getNumKeys(), base + 2);
  EXPECT_TRUE(s.check({"a", "b"}));
  EXPECT_FALSE(s.check({"a", "c"}));
  EXPECT_TRUE(s.delete_key("a"));
  EXPECT_FALSE(s.delete_key("a"));
  EXPECT_FALSE(s.deleteKey("never"));
  EXPECT_FALSE(s.check({"a"}));
  EXPECT_EQ(s.num_keys(), base + 1);
  s.set("a", "again");
  EXPECT_EQ(s.get_string("a"), "again");
}

TEST_P(StoreTest, WaitAndGetTimeOut) {
  Store& s = *store_;
  s.set("here", "1");
  s.wait({"here"}, 1000ms);
  s.wait({});
  auto msg = message_of<DistStoreError>([&] { s.wait({"here", "gone"}, 50ms); });
  std::string want = "[" + kind_.name + ".wait] timed out after 50 ms waiting for keys ['" +
                     kind_.key_prefix + "here', '" + kind_.key_prefix + "gone'] (missing: ['" +
                     kind_.key_prefix + "gone'])";
  EXPECT_EQ(msg, want);
  msg = message_of<DistStoreError>([&] { s.wait({"gone"}, 30ms); });
  EXPECT_EQ(msg, "[" + kind_.name + ".wait] timed out after 30 ms waiting for key '" +
                     kind_.key_prefix + "gone'");
  s.set_timeout(40ms);
  EXPECT_EQ(s.timeout(), 40ms);
  msg = message_of<DistStoreError>([&] { s.get("x"); });
  EXPECT_EQ(msg, "[" + kind_.name + ".get] timed out after 40 ms waiting for key '" +
                     kind_.key_prefix + "x'");
  // The default timeout of wait is the store's.
  msg = message_of<DistStoreError>([&] { s.wait({"x"}); });
  EXPECT_NE(msg.find("timed out after 40 ms"), std::string::npos) << msg;
  // Still usable afterwards.
  s.set("x", "ok");
  EXPECT_EQ(s.get_string("x"), "ok");
}

TEST_P(StoreTest, WaitWakesWhenAnotherThreadSets) {
  Store& s = *store_;
  std::thread setter([&] {
    std::this_thread::sleep_for(30ms);
    s.set("late1", "a");
    std::this_thread::sleep_for(10ms);
    EXPECT_EQ(s.add("late2", 3), 3);
  });
  s.wait({"late1", "late2"}, 20000ms);
  EXPECT_EQ(s.get_string("late2"), "3");
  setter.join();
  // get blocks too.
  std::thread setter2([&] {
    std::this_thread::sleep_for(20ms);
    s.compare_set("late3", {}, B("v"));
  });
  s.set_timeout(20000ms);
  EXPECT_EQ(s.get_string("late3"), "v");
  setter2.join();
}

TEST_P(StoreTest, ConcurrentAddsFromThreads) {
  Store& s = *store_;
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) s.add("counter", t + 1);
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(s.get_string("counter"), std::to_string(50 * (1 + 2 + 3 + 4)));
}

TEST_P(StoreTest, BadTimeout) {
  Store& s = *store_;
  EXPECT_THROW(s.wait({"a"}, Milliseconds(-5)), ValueError);
  s.set_timeout(Milliseconds(-3));
  EXPECT_THROW(s.get("a"), ValueError);
}

std::string store_name(const ::testing::TestParamInfo<int>& i) {
  static const char* const names[] = {"Hash", "TCP", "File", "PrefixOverHash"};
  return names[i.param];
}
INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, ::testing::Values(0, 1, 2, 3), store_name);

// ---- PrefixStore ------------------------------------------------------------------------------

TEST(PrefixStore, KeysLandUnderThePrefix) {
  auto base = std::make_shared<HashStore>();
  PrefixStore p("grp", base);
  PrefixStore nested("inner", std::make_shared<PrefixStore>("outer", base));
  p.set("k", "v");
  EXPECT_EQ(base->get_string("grp/k"), "v");
  EXPECT_FALSE(base->check({"k"}));
  nested.set("k", "w");
  EXPECT_EQ(base->get_string("outer/inner/k"), "w");
  EXPECT_EQ(p.add("c", 2), 2);
  EXPECT_EQ(base->get_string("grp/c"), "2");
  EXPECT_TRUE(p.check({"k", "c"}));
  EXPECT_EQ(p.num_keys(), base->num_keys());  // as c10d: the underlying store's count
  EXPECT_TRUE(p.delete_key("k"));
  EXPECT_FALSE(base->check({"grp/k"}));
  EXPECT_EQ(p.underlying_store(), base);
  EXPECT_THROW(PrefixStore("x", nullptr), ValueError);
}

TEST(PrefixStore, OwnTimeoutApplies) {
  auto base = std::make_shared<HashStore>();
  base->set_timeout(60000ms);
  PrefixStore p("grp", base);
  EXPECT_EQ(p.timeout(), 60000ms);  // starts with the underlying store's
  p.set_timeout(30ms);
  auto msg = message_of<DistStoreError>([&] { p.get("missing"); });
  EXPECT_NE(msg.find("timed out after 30 ms waiting for key 'grp/missing'"), std::string::npos)
      << msg;
}

// ---- TCPStore ---------------------------------------------------------------------------------

TCPStoreOptions server_opts(Milliseconds t = 10s) {
  TCPStoreOptions o;
  o.is_server = true;
  o.timeout = t;
  return o;
}
TCPStoreOptions client_opts(uint16_t port, Milliseconds t = 10s) {
  TCPStoreOptions o;
  o.port = port;
  o.timeout = t;
  return o;
}

TEST(TCPStore, ClientsShareTheServersMap) {
  TCPStore server("127.0.0.1", server_opts());
  ASSERT_NE(server.port(), 0);
  EXPECT_EQ(server.host(), "127.0.0.1");
  TCPStore a("127.0.0.1", client_opts(server.port()));
  TCPStore b("localhost", client_opts(server.port()));
  EXPECT_EQ(a.port(), server.port());
  a.set("from_a", "1");
  EXPECT_EQ(b.get_string("from_a"), "1");
  EXPECT_EQ(server.add("n", 1), 1);
  EXPECT_EQ(b.add("n", 1), 2);
  EXPECT_EQ(a.compare_set("n", B("2"), B("10")), B("10"));
  EXPECT_EQ(server.num_keys(), 2);
  // One client waits (server side) while another sets.
  std::thread t([&] {
    std::this_thread::sleep_for(30ms);
    b.set("later", "x");
  });
  a.wait({"later"}, 20000ms);
  t.join();
  EXPECT_TRUE(server.check({"later"}));
}

TEST(TCPStore, ParkedGetDoesNotBlockOtherClientsOrThreads) {
  TCPStore server("127.0.0.1", server_opts());
  TCPStore waiter("127.0.0.1", client_opts(server.port()));
  std::atomic<bool> got{false};
  std::thread t([&] {
    EXPECT_EQ(waiter.get_string("k"), "v");
    got = true;
  });
  std::this_thread::sleep_for(20ms);
  // The server keeps serving others while `waiter`'s get is parked.
  for (int i = 0; i < 20; ++i) server.add("other", 1);
  EXPECT_FALSE(got.load());
  server.set("k", "v");
  t.join();
  EXPECT_TRUE(got.load());
}

TEST(TCPStore, NumWorkersWaitsForClientsAndCountsInitKey) {
  uint16_t port = free_port();
  std::unique_ptr<TCPStore> server;
  std::thread t([&] {
    auto o = server_opts();
    o.port = port;
    o.num_workers = 3;
    server = std::make_unique<TCPStore>("127.0.0.1", o);
  });
  auto c1 = client_opts(port);
  c1.num_workers = 3;
  TCPStore a("127.0.0.1", c1);
  TCPStore b("127.0.0.1", c1);
  t.join();
  ASSERT_TRUE(server);
  EXPECT_EQ(server->get_string("init/"), "3");
  EXPECT_EQ(server->num_keys(), 1);  // c10d counts its "init/" key
  // wait_workers=false: no counting.
  auto c2 = client_opts(port);
  c2.num_workers = 3;
  c2.wait_workers = false;
  TCPStore c("127.0.0.1", c2);
  EXPECT_EQ(c.get_string("init/"), "3");
}

TEST(TCPStore, NumWorkersTimesOut) {
  auto o = server_opts(80ms);
  o.num_workers = 2;
  auto msg = message_of<DistStoreError>([&] { TCPStore s("127.0.0.1", o); });
  EXPECT_NE(msg.find("timed out after 80 ms waiting for 2 workers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(1 joined)"), std::string::npos) << msg;
}

TEST(TCPStore, ClientRetriesUntilTheServerComesUp) {
  uint16_t port = free_port();
  std::unique_ptr<TCPStore> server;
  std::thread t([&] {
    std::this_thread::sleep_for(100ms);
    auto o = server_opts();
    o.port = port;
    server = std::make_unique<TCPStore>("127.0.0.1", o);
    server->set("up", "yes");
  });
  TCPStore client("127.0.0.1", client_opts(port, 20000ms));
  EXPECT_EQ(client.get_string("up"), "yes");
  t.join();
}

TEST(TCPStore, ConnectionErrors) {
  uint16_t port = free_port();
  auto msg =
      message_of<DistNetworkError>([&] { TCPStore c("127.0.0.1", client_opts(port, 100ms)); });
  EXPECT_NE(msg.find("cannot connect to 127.0.0.1:" + std::to_string(port) + " within 100 ms"),
            std::string::npos)
      << msg;
  // A port already taken by a server.
  TCPStore server("127.0.0.1", server_opts());
  auto o = server_opts();
  o.port = server.port();
  msg = message_of<DistNetworkError>([&] { TCPStore s("127.0.0.1", o); });
  EXPECT_NE(msg.find("cannot listen on 127.0.0.1:" + std::to_string(server.port())),
            std::string::npos)
      << msg;
}

TEST(TCPStore, ServerGoneIsANetworkError) {
  auto server = std::make_unique<TCPStore>("127.0.0.1", server_opts());
  TCPStore client("127.0.0.1", client_opts(server->port()));
  client.set("a", "1");
  uint16_t port = server->port();
  server.reset();
  auto msg = message_of<DistNetworkError>([&] { client.get("a"); });
  EXPECT_NE(msg.find("[TCPStore.get] lost the connection to the store at 127.0.0.1:" +
                     std::to_string(port)),
            std::string::npos)
      << msg;
  EXPECT_THROW(client.set("b", "2"), DistNetworkError);
}

TEST(TCPStore, ServerSurvivesAClientKilledDuringAParkedGet) {
  TCPStore server("127.0.0.1", server_opts(20000ms));
  uint16_t port = server.port();
  pid_t pid = spawn([port]() -> int {
    TCPStore c("127.0.0.1", client_opts(port, 20000ms));
    c.set("child_ready", "1");
    c.get("never");  // parked on the server until the parent kills this process
    return 0;
  });
  server.wait({"child_ready"});
  std::this_thread::sleep_for(20ms);
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
  server.set("never", "now");
  EXPECT_EQ(server.get_string("never"), "now");
  TCPStore late("127.0.0.1", client_opts(port));
  EXPECT_EQ(late.get_string("child_ready"), "1");
}

TEST(TCPStore, ServerDropsAGarbledConnectionAndServesOthers) {
  TCPStore server("127.0.0.1", server_opts());
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(server.port());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const unsigned char junk[] = {0xFF, 1, 2, 3};
  ASSERT_EQ(write(fd, junk, sizeof junk), static_cast<ssize_t>(sizeof junk));
  char c;
  EXPECT_EQ(read(fd, &c, 1), 0);  // the server closed it
  close(fd);
  server.set("still", "here");
  EXPECT_EQ(server.get_string("still"), "here");
}

TEST(TCPStore, BadInput) {
  EXPECT_THROW(TCPStore("", server_opts()), ValueError);
  auto o = server_opts();
  o.num_workers = 0;
  EXPECT_THROW(TCPStore("127.0.0.1", o), ValueError);
  o = server_opts(Milliseconds(-2));
  EXPECT_THROW(TCPStore("127.0.0.1", o), ValueError);
}

TEST(TCPStore, ForkedClientsOfAServerInThisProcess) {
  constexpr int kChildren = 3;
  int pipes[kChildren][2];
  std::vector<pid_t> pids;
  for (int i = 0; i < kChildren; ++i) {
    ASSERT_EQ(pipe(pipes[i]), 0);
    pids.push_back(spawn([&, i]() -> int {
      for (int j = 0; j < kChildren; ++j) close(pipes[j][1]);
      uint16_t port = 0;
      if (read(pipes[i][0], &port, sizeof port) != sizeof port) return 10;
      TCPStore s("127.0.0.1", client_opts(port, 20000ms));
      s.add("arrived", 1);
      s.set("rank" + std::to_string(i), std::to_string(i * i));
      s.wait({"go"});
      for (int j = 0; j < kChildren; ++j) {
        if (s.get_string("rank" + std::to_string(j)) != std::to_string(j * j)) return 11;
      }
      auto winner = s.compare_set("leader", {}, B(std::to_string(i)));
      if (s.get("leader") != winner) return 12;
      s.add("done", 1);
      return 0;
    }));
  }
  TCPStore server("127.0.0.1", server_opts(20000ms));
  uint16_t port = server.port();
  for (int i = 0; i < kChildren; ++i) {
    ASSERT_EQ(write(pipes[i][1], &port, sizeof port), static_cast<ssize_t>(sizeof port));
    close(pipes[i][1]);
    close(pipes[i][0]);
  }
  server.wait({"rank0", "rank1", "rank2"});
  EXPECT_EQ(server.add("arrived", 0), kChildren);
  server.set("go", "1");
  for (pid_t p : pids) EXPECT_EQ(wait_exit(p), 0);
  EXPECT_EQ(server.get_string("done"), std::to_string(kChildren));
  auto leader = server.get_string("leader");
  EXPECT_TRUE(leader == "0" || leader == "1" || leader == "2") << leader;
}

// ---- FileStore --------------------------------------------------------------------------------

TEST(FileStore, TwoHandlesOnOneFile) {
  auto path = temp_path("two");
  {
    FileStore a(path, 2);
    FileStore b(path, 2);
    EXPECT_EQ(a.path(), path);
    a.set("k", "v");
    EXPECT_EQ(b.get_string("k"), "v");
    EXPECT_EQ(b.add("n", 2), 2);
    EXPECT_EQ(a.add("n", 3), 5);
    EXPECT_TRUE(b.delete_key("k"));
    EXPECT_FALSE(a.check({"k"}));
    EXPECT_EQ(a.num_keys(), 1);  // the user's keys only
    std::thread t([&] {
      std::this_thread::sleep_for(30ms);
      b.set("late", "1");
    });
    a.wait({"late"}, 20000ms);
    t.join();
    EXPECT_TRUE(exists(path));
  }
  EXPECT_FALSE(exists(path)) << "the second of world_size 2 removes the file";
}

TEST(FileStore, UnknownWorldSizeKeepsTheFile) {
  auto path = temp_path("keep");
  { FileStore a(path); }
  EXPECT_TRUE(exists(path));
  {
    FileStore b(path);  // a later user replays what the earlier one wrote
    b.set("x", "1");
  }
  { EXPECT_EQ(FileStore(path).get_string("x"), "1"); }
  ::unlink(path.c_str());
}

TEST(FileStore, ForkedProcesses) {
  auto path = temp_path("fork");
  constexpr int kWorld = 4;
  std::vector<pid_t> pids;
  for (int i = 1; i < kWorld; ++i) {
    pids.push_back(spawn([&, i]() -> int {
      FileStore s(path, kWorld);
      s.set_timeout(20000ms);
      s.set("rank" + std::to_string(i), std::to_string(10 * i));
      for (int k = 0; k < 20; ++k) s.add("counter", 1);
      s.wait({"go"});
      auto winner = s.compare_set("leader", {}, B(std::to_string(i)));
      if (s.get("leader") != winner) return 12;
      return 0;
    }));
  }
  {
    FileStore s(path, kWorld);
    s.set_timeout(20000ms);
    s.wait({"rank1", "rank2", "rank3"});
    EXPECT_EQ(s.get_string("rank3"), "30");
    s.set("go", "1");
    for (pid_t p : pids) EXPECT_EQ(wait_exit(p), 0);
    EXPECT_EQ(s.get_string("counter"), std::to_string(20 * (kWorld - 1)));
    EXPECT_TRUE(s.check({"leader"}));
    EXPECT_TRUE(exists(path));
  }
  EXPECT_FALSE(exists(path));
}

TEST(FileStore, BadInput) {
  auto msg = message_of<DistStoreError>([] { FileStore s("/nonexistent_dir_ember/x/store", 1); });
  EXPECT_NE(msg.find("[FileStore] cannot open '/nonexistent_dir_ember/x/store'"), std::string::npos)
      << msg;
  EXPECT_THROW(FileStore("", 1), ValueError);
  EXPECT_THROW(FileStore(temp_path("bad"), 0), ValueError);
  // More users than world_size: a file left by an earlier job.
  auto path = temp_path("over");
  {
    FileStore a(path, 1);
    msg = message_of<DistStoreError>([&] { FileStore b(path, 1); });
    EXPECT_NE(msg.find("more users (2) than world_size 1"), std::string::npos) << msg;
  }
  ::unlink(path.c_str());
  // A file that is not a store.
  path = temp_path("junk");
  FILE* f = fopen(path.c_str(), "w");
  fputs("Zjunk", f);
  fclose(f);
  msg = message_of<DistStoreError>([&] { FileStore b(path); });
  EXPECT_NE(msg.find("is not a store file"), std::string::npos) << msg;
  ::unlink(path.c_str());
}

}  // namespace
