// A model server's process starts clean whatever the state of the thread
// that starts it: `lull serve` blocks SIGINT and SIGTERM in every thread, and
// a blocked mask (and an ignored signal) survives exec, so its children used
// to ignore SIGTERM and every stop waited the whole grace for SIGKILL. Also:
// no descriptor of lull's leaks into it, and a log file that cannot be opened
// is named as such.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <thread>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/pools/child_process.h"

using lull::pools::ChildProcess;

namespace {

// The hex mask on line `field` ("SigBlk", "SigIgn") of /proc/PID/status.
std::string status_mask(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return line.substr(line.find_first_not_of(" \t", field.size() + 1));
  return "?";
}

// As lull serve's threads are: SIGINT and SIGTERM blocked; SIGPIPE ignored too.
struct LullLikeThread {
  sigset_t old;
  struct sigaction old_pipe {};
  LullLikeThread() {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, &old);
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);
  }
  ~LullLikeThread() {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    sigaction(SIGPIPE, &old_pipe, nullptr);
  }
};

std::string temp_log(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("lull-child-" + std::to_string(getpid()) + "-" + name)).string();
}

}  // namespace

TEST_CASE("child process: clean signal mask and dispositions, so SIGTERM stops it at once", "[manager][child]") {
  LullLikeThread lull_like;
  const std::string log = temp_log("mask.log");
  ChildProcess child("sleep 60", log);
  // exec'd: the command is running as the child itself (sh exec'd it)
  REQUIRE(child.pid() > 0);
  CHECK(status_mask(child.pid(), "SigBlk") == "0000000000000000");
  CHECK(status_mask(child.pid(), "SigIgn") == "0000000000000000");
  const auto t0 = std::chrono::steady_clock::now();
  child.signal(SIGTERM);
  REQUIRE(child.wait_exited(30000));  // a hang guard: a blocked or ignored SIGTERM never ends `sleep 60` early
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  INFO("exited " << ms << " ms after SIGTERM");
  CHECK(child.killed_by_signal(SIGTERM));  // by the SIGTERM itself: nothing blocked or ignored it
  std::filesystem::remove(log);
}

TEST_CASE("child process: none of lull's descriptors leak into it", "[manager][child]") {
  const std::string log = temp_log("fds.log");
  const int leaky = open("/dev/null", O_RDONLY);  // no O_CLOEXEC, as a library might open one
  REQUIRE(leaky >= 3);
  ChildProcess child("sleep 60", log);
  close(leaky);
  // The child closes what it inherited just before exec: look once it runs
  // `sleep` (before that, a busy machine can show the fork's copy).
  const std::string proc = "/proc/" + std::to_string(child.pid());
  const auto runs_sleep = [&] {
    std::ifstream cmdline(proc + "/cmdline");
    std::string argv0;
    std::getline(cmdline, argv0, '\0');
    return argv0 == "sleep";
  };
  for (int i = 0; i < 500 && !runs_sleep(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(runs_sleep());
  std::vector<std::string> fds;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(child.pid()) + "/fd"))
    fds.push_back(e.path().filename().string());
  std::sort(fds.begin(), fds.end());
  CHECK(fds == std::vector<std::string>{"0", "1", "2"});
  child.signal(SIGKILL);
  CHECK(child.wait_exited(5000));
  std::filesystem::remove(log);
}

TEST_CASE("child process: a log that cannot be opened is named, not the command", "[manager][child]") {
  try {
    ChildProcess child("sleep 60", "/nonexistent-lull-dir/w.log");
    FAIL("started without its log");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("cannot open the worker log /nonexistent-lull-dir/w.log") == 0);
    CHECK(what.find("sleep") == std::string::npos);
  }
}

// The worker command runs through /bin/sh as written: a simple command is
// exec'd (the server is the child itself), and neither a command that starts
// with exec nor a compound one is prefixed again (`sleep 1; exec CMD` ran
// only `sleep`, `exec CMD` failed with "exec: exec: not found").
TEST_CASE("child process: CMD, exec CMD, and sleep 1 then exec CMD all end up running CMD", "[manager][child]") {
  for (const std::string prefix : {"", "exec ", "sleep 1; exec ", "true && exec "}) {
    INFO("command: " << prefix << "sleep 60");
    const std::string log = temp_log("forms.log");
    ChildProcess child(prefix + "sleep 60", log);
    // The child itself becomes `sleep 60` (exec'd), whichever form: wait for
    // it (not `sleep 1`, which an exec put before the whole line would run).
    const auto runs_sleep = [&] {
      std::ifstream cmdline("/proc/" + std::to_string(child.pid()) + "/cmdline", std::ios::binary);
      std::stringstream argv;
      argv << cmdline.rdbuf();
      return argv.str() == std::string(
                               "sleep\0"
                               "60\0",
                               9);
    };
    bool ran = false;
    for (int i = 0; i < 1000 && !(ran = runs_sleep()); ++i) {
      REQUIRE_FALSE(child.poll_exited());  // it did not stop after a first part
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(ran);
    child.signal(SIGTERM);
    REQUIRE(child.wait_exited(5000));
    CHECK(child.killed_by_signal(SIGTERM));
    std::filesystem::remove(log);
  }
}
