// `lull serve --autoscale` stops promptly on SIGTERM in every phase, and
// its model servers never outlive it: SIGTERM while the first worker starts,
// while a later worker starts, while a worker drains, while serving (idle or
// with a query in flight) ends lull (exit 0, after its "stopping" line) with
// every child process gone and every query answered; `kill -9` of lull
// takes its model servers with it; a second SIGTERM during a slow stop ends
// lull at once. Before, each of these waited for a start timeout, a batch,
// a drain or the stop grace, and a killed lull left its servers behind.
//
// The verdicts are states and their order, not durations: each case sets
// what lull must not wait for (start timeout, the model server's delay, the
// drain timeout, the stop grace) to 600 s, far past kHangGuardMs, so waiting
// for it is caught by the guard whatever the machine's load.
//
// The test process makes itself a child subreaper, so lull's orphans become
// its children: a model server left behind is seen (and reaped) by pid.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test/support/model_server_process.h"
#include "runtime/net/http_client.h"
#include "runtime/pools/kubernetes_api.h"
#include "test/support/fake_kube_support.h"
#include "test/support/cli_runner.h"

extern char** environ;

using namespace lull::net;
using namespace lull::serve::testing;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// A hang guard, not a performance claim: a stop that waits for any of the
// 600 s things above is cut off here; a prompt stop takes well under 1 s.
constexpr int kHangGuardMs = 30000;
constexpr int kNotWaitedForS = 600;  // start timeouts, delays, drains, graces lull must not wait for
const std::string kNotWaitedFor = std::to_string(kNotWaitedForS);

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Polls `done` every 20 ms, at most `timeout_ms`.
bool wait_until(const std::function<bool()>& done, int timeout_ms) {
  const auto end = Clock::now() + milliseconds(timeout_ms);
  while (Clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return done();
}

// The processes whose parent is `pid` (from /proc).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_file(e.path().string() + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid && state != 'Z') out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

// The parent of `pid` (0: unknown or gone), from /proc/PID/stat.
pid_t parent_of(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos || stat.size() < close + 4) return 0;
  return static_cast<pid_t>(std::atol(stat.c_str() + close + 4));
}

// Gone: no such process, a zombie (dead; this subreaper reaps it here), or
// a process that is neither this test's child nor its grandchild: the pid
// was reused by another process after ours was reaped, which must never be
// signalled (a test once killed an unrelated shell that way).
bool gone(pid_t pid) {
  waitpid(pid, nullptr, WNOHANG);
  if (::kill(pid, 0) != 0) return true;
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z') return true;
  const pid_t parent = parent_of(pid);
  return parent != ::getpid() && parent_of(parent) != ::getpid();
}

// A library of policies for 1-3 workers from the replay profile, once per process.
const std::string& library() {
  static const std::string lib = [] {
    const std::string path = lull::test::temp_dir() + "/shutdown-lib.pb";
    const auto r = lull::test::run_cli(std::string(LULL_BINARY) + " compile --profiles " +
                                       source_path("test/data/replay_profile.json") +
                                       " --slo-ms 100 --workers 1:3:1 --load-qps 10:40:10 --out " + path);
    if (r.code != 0) throw std::runtime_error("compile failed: " + r.output);
    return path;
  }();
  return lib;
}

std::string stand_in(const std::string& extra = "") {
  return python3() + " " + source_path("test/modelserver/lull_modelserver.py") + " --replay-profile " +
         source_path("test/data/replay_profile.json") + " --port {port}" + extra;
}

// A new empty folder for one lull serve's files.
std::string fresh_dir() {
  static int count = 0;
  const std::string dir = lull::test::temp_dir() + "/shutdown-" + std::to_string(++count);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// `lull serve --autoscale` as a child, its files (stderr log, port file,
// worker logs) in `dir`. Whatever it leaves behind is killed when the object
// goes (by pid: its children seen).
class AutoscaledLull {
 public:
  AutoscaledLull(std::string dir, std::vector<std::string> flags) : dir_(std::move(dir)) {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    std::vector<std::string> args = {LULL_BINARY,   "serve",       "--policies",   library(),     "--listen",
                                     "127.0.0.1:0", "--port-file", dir_ + "/port", "--autoscale", "--worker-log-dir",
                                     dir_};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, LULL_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start lull serve");
  }
  ~AutoscaledLull() {
    if (pid_ > 0 && parent_of(pid_) == ::getpid()) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    for (pid_t c : seen_)
      if (!gone(c)) {
        ::kill(c, SIGKILL);
        waitpid(c, nullptr, 0);
      }
  }
  const std::string& dir() const { return dir_; }
  std::string log() const { return dir_ + "/serve.log"; }
  bool logged(const std::string& text) const { return read_file(log()).find(text) != std::string::npos; }
  std::string base_url() const {
    std::string port;
    std::ifstream(dir_ + "/port") >> port;
    return port.empty() ? "" : "http://127.0.0.1:" + port;
  }
  // Its child processes now (remembered for the checks and the clean-up).
  std::vector<pid_t> children() {
    auto now = children_of(pid_);
    for (pid_t c : now)
      if (std::find(seen_.begin(), seen_.end(), c) == seen_.end()) seen_.push_back(c);
    return now;
  }
  const std::vector<pid_t>& seen() const { return seen_; }
  // Sends `sig` and returns at once.
  void signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // Whether it has not exited (reaped here if it has).
  bool running() {
    if (pid_ <= 0 || waitpid(pid_, nullptr, WNOHANG) == 0) return pid_ > 0;
    pid_ = -1;
    return false;
  }
  // Sends `sig`; returns the milliseconds until it exited (-1: not within `limit_ms`) and its wait status.
  std::int64_t signal_and_time(int sig, int* status, int limit_ms = 30000) {
    if (pid_ <= 0) return -1;
    const auto t0 = Clock::now();
    ::kill(pid_, sig);
    pid_t r = 0;
    while ((r = waitpid(pid_, status, WNOHANG)) == 0 && Clock::now() - t0 < milliseconds(limit_ms))
      std::this_thread::sleep_for(milliseconds(1));
    if (r != pid_) return -1;
    pid_ = -1;
    return std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
  }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  std::vector<pid_t> seen_;
};

// SIGTERM now: lull logs its stop (`stopping_line`), exits 0 (within the
// hang guard), and every child it had is gone by then. Returns the
// milliseconds it took (for a check against a bound the code sets).
std::int64_t check_prompt_stop(AutoscaledLull& lull, const std::string& stopping_line = "stopping (signal 15)") {
  const auto kids = lull.children();
  int status = 0;
  const std::int64_t ms = lull.signal_and_time(SIGTERM, &status, kHangGuardMs);
  INFO(read_file(lull.log()));
  INFO("stopped after " << ms << " ms (-1: still running at the " << kHangGuardMs << " ms hang guard)");
  REQUIRE(ms >= 0);
  CHECK(lull.logged(stopping_line));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  for (pid_t c : kids) {
    INFO("child " << c);
    CHECK(gone(c));  // reaped by lull itself: no wait here
  }
  return ms;
}

// POSTs one query, answered on another thread.
std::future<HttpResponse> post_async(const std::string& base) {
  return std::async(std::launch::async, [base] {
    HttpClient client;
    HttpRequest r;
    r.method = "POST";
    r.url = base + "/predictions/image-classification";
    r.body = "query";
    r.timeout_ms = 2 * kHangGuardMs;  // lull's 503 comes first, or the guard fails the case
    return client.fetch(r);
  });
}

}  // namespace

TEST_CASE("lull serve --autoscale: SIGTERM while the first worker starts stops at once",
          "[serve][autoscale][shutdown]") {
  // A worker that never answers /ping: before, lull waited its whole start timeout.
  AutoscaledLull lull(fresh_dir(),
                      {"--worker-command", "sleep 3600 # {port}", "--worker-start-timeout-s", kNotWaitedFor});
  REQUIRE(wait_until([&] { return lull.logged("starting 1 initial workers") && lull.children().size() == 1; }, 20000));
  check_prompt_stop(lull, "stopping during start-up (signal 15)");
}

TEST_CASE("lull serve --autoscale: SIGTERM while a later worker starts stops at once", "[serve][autoscale][shutdown]") {
  // The first worker comes up; the autoscaler's floor asks for a second one, which hangs in start-up.
  const std::string dir = fresh_dir();
  {
    std::ofstream script(dir + "/second_hangs.sh");
    std::string server = stand_in();
    server.replace(server.find("{port}"), 6, "\"$1\"");
    script << "if mkdir \"$2/first\" 2>/dev/null; then exec " << server << "; fi\nexec sleep 3600\n";
  }
  AutoscaledLull serving(dir, {"--initial-workers", "1", "--min-workers", "2", "--worker-start-timeout-s",
                               kNotWaitedFor, "--worker-command", "sh " + dir + "/second_hangs.sh {port} " + dir});
  REQUIRE(wait_until([&] { return serving.logged("scale_out +1") && serving.children().size() == 2; }, 60000));
  check_prompt_stop(serving);
}

TEST_CASE("lull serve --autoscale: SIGTERM while serving a query stops at once and answers it",
          "[serve][autoscale][shutdown]") {
  const std::string dir = fresh_dir();
  AutoscaledLull lull(dir,
                      {"--initial-workers", "1", "--batch-timeout-ms", "60000", "--worker-command",
                       stand_in(" --delay-ms " + kNotWaitedFor + "000 --log-requests " + dir + "/{port}.requests")});
  REQUIRE(wait_until([&] { return !lull.base_url().empty(); }, 60000));
  auto answer = post_async(lull.base_url());
  // In flight at the model server (which takes 600 s for it).
  REQUIRE(wait_until(
      [&] {
        for (const auto& e : std::filesystem::directory_iterator(dir))
          if (e.path().extension() == ".requests" && std::filesystem::file_size(e.path()) > 0) return true;
        return false;
      },
      20000));
  check_prompt_stop(lull);
  // Answered (written before lull exited); the wait only bounds the client's read.
  REQUIRE(answer.wait_for(milliseconds(kHangGuardMs)) == std::future_status::ready);
  const auto r = answer.get();
  INFO(r.describe());
  CHECK(r.status == 503);  // answered, not dropped
}

TEST_CASE("lull serve --autoscale: SIGTERM while a worker drains stops at once", "[serve][autoscale][shutdown]") {
  // Two slow workers, a query in flight on each; scale-in drains one, whose batch takes 600 s.
  AutoscaledLull lull(fresh_dir(),
                      {"--initial-workers", "2", "--min-workers", "1", "--autoscale-holdoff-s", "0",
                       "--autoscale-step-interval-s", "0", "--batch-timeout-ms", "60000", "--drain-timeout-s",
                       kNotWaitedFor, "--worker-command", stand_in(" --delay-ms " + kNotWaitedFor + "000")});
  REQUIRE(wait_until([&] { return !lull.base_url().empty(); }, 60000));
  auto a = post_async(lull.base_url());
  auto b = post_async(lull.base_url());
  REQUIRE(wait_until([&] { return lull.logged("batch in flight finishes"); }, 30000));
  check_prompt_stop(lull);
  for (auto* f : {&a, &b}) {
    REQUIRE(f->wait_for(milliseconds(kHangGuardMs)) == std::future_status::ready);
    const auto r = f->get();
    INFO(r.describe());
    CHECK(r.status == 503);
  }
}

TEST_CASE("lull serve --autoscale: 3 workers stop on SIGTERM without waiting for the grace, all gone",
          "[serve][autoscale][shutdown]") {
  AutoscaledLull lull(
      fresh_dir(), {"--initial-workers", "3", "--worker-stop-grace-s", kNotWaitedFor, "--worker-command", stand_in()});
  REQUIRE(wait_until([&] { return !lull.base_url().empty(); }, 60000));
  REQUIRE(lull.children().size() == 3);
  check_prompt_stop(lull);
}

TEST_CASE("lull serve --autoscale: kill -9 of lull takes its model servers with it", "[serve][autoscale][shutdown]") {
  AutoscaledLull lull(fresh_dir(), {"--initial-workers", "3", "--worker-command", stand_in()});
  REQUIRE(wait_until([&] { return !lull.base_url().empty(); }, 60000));
  const auto kids = lull.children();
  REQUIRE(kids.size() == 3);
  int status = 0;
  REQUIRE(lull.signal_and_time(SIGKILL, &status) >= 0);
  for (pid_t c : kids) {
    INFO("model server " << c << " after lull was killed");
    CHECK(wait_until([&] { return gone(c); }, kHangGuardMs));
  }
}

TEST_CASE("lull serve --autoscale --worker-pool kubernetes: SIGTERM while an API call hangs stops at once",
          "[serve][autoscale][shutdown]") {
  // The fake API server takes every request and never answers; the call
  // budget (60 s) leaves each attempt its whole 10 s timeout. Before, lull
  // waited out the attempt (and then the backoff); now SIGTERM cancels it.
  using lull::manager::testing::secrets;
  auto api = lull::manager::testing::fake_api({"--replicas", "0"});
  HttpClient client;
  REQUIRE(lull::manager::testing::fake_control(client, api, "/_fake/hang?seconds=3600&count=-1"));
  const auto api_requests = [&] {
    HttpRequest r;
    r.url = "https://127.0.0.1:" + std::to_string(api.port()) + "/_fake/log";
    r.ca_file = secrets().cert;
    return client.fetch(r).body;
  };
  AutoscaledLull lull(
      fresh_dir(),
      {"--worker-pool", "kubernetes", "--k8s-api-server", "https://127.0.0.1:" + std::to_string(api.port()),
       "--k8s-token-file", secrets().token, "--k8s-ca-file", secrets().cert, "--k8s-namespace", "lull",
       "--k8s-deployment", "models", "--k8s-service", "models", "--k8s-call-budget-s", "60"});
  REQUIRE(wait_until([&] { return !api_requests().empty(); }, 30000));  // lull's first API call is hanging
  // The attempt's own timeout (not settable from the command line) is under
  // the hang guard: lull must exit before it would have ended the attempt,
  // a bound the code sets, which a prompt stop meets by seconds.
  const std::int64_t ms = check_prompt_stop(lull, "stopping during start-up (signal 15)");
  CHECK(ms < lull::pools::KubernetesApiOptions{}.timeout_ms);
}

TEST_CASE("lull serve --autoscale: a second SIGTERM while stopping exits at once", "[serve][autoscale][shutdown]") {
  // A worker that ignores SIGTERM, with a 60 s grace: the orderly stop waits
  // for it; a second SIGTERM ends lull at once (exit 143) and the worker dies
  // with it. Before, the second signal was never taken.
  const std::string dir = fresh_dir();
  AutoscaledLull lull(dir, {"--initial-workers", "1", "--worker-stop-grace-s", kNotWaitedFor, "--worker-command",
                            "sh -c 'trap \"\" TERM; exec " + stand_in() + "'"});
  REQUIRE(wait_until([&] { return !lull.base_url().empty(); }, 60000));
  const auto kids = lull.children();
  REQUIRE(kids.size() == 1);
  lull.signal(SIGTERM);
  REQUIRE(wait_until([&] { return lull.logged("stopping (signal 15)"); }, 10000));
  INFO(read_file(lull.log()));
  REQUIRE(lull.running());  // stopping: waiting up to the 600 s grace for the worker
  int status = 0;
  const std::int64_t ms = lull.signal_and_time(SIGTERM, &status, kHangGuardMs);
  INFO("exited " << ms << " ms after the second SIGTERM (-1: not within the hang guard)");
  REQUIRE(ms >= 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
  CHECK(lull.logged("signal 15 again while stopping: exiting now"));
  for (pid_t c : kids) {
    INFO("model server " << c);
    CHECK(wait_until([&] { return gone(c); }, kHangGuardMs));
  }
}
