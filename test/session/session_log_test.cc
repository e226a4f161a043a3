// A fleet group's session names its class and kind on every log line
// (ServeOptions::group, one prefix for all of them): read from standard
// error, where lull's log goes.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "test/support/session_fakes.h"
#include "test/support/session_test_support.h"

using namespace lull::session;
using namespace lull::serve::testing;

namespace {

// Standard error (where lull's log goes) into a file while it lives.
class StderrToFile {
 public:
  StderrToFile() : path_("/tmp/lull-session-log-" + std::to_string(::getpid()) + ".txt") {
    std::fflush(stderr);
    saved_ = ::dup(2);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StderrToFile() { restore(); }
  std::string text() {
    restore();
    std::ifstream in(path_);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(path_.c_str());
    return all;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::string path_;
  int saved_ = -1;
};

}  // namespace

TEST_CASE("serve session: a fleet group's worker lines name its class and kind", "[serve][fleet]") {
  ServeOptions options;
  options.pool_managed = true;
  options.group = "class 'gold', kind 'gpu'";
  const lull::core::PolicyTable table = tiny_session_table(2);
  FakeHealth health(2);
  FakeBackend backend;
  lull::core::VirtualClock clock;
  lull::core::ControlLoop loop(clock);  // the session's reaper: never ticked here
  options.loop = &loop;
  StderrToFile err;
  {
    ServeSession session(table, backend, health, clock, options);
    session.add_worker(0, "http://w0");
    session.remove_worker(0);
    session.shutdown();
  }
  const std::string log = err.text();
  INFO(log);
  CHECK(log.find("class 'gold', kind 'gpu': worker 0 (http://w0) added") != std::string::npos);
  CHECK(log.find("class 'gold', kind 'gpu': worker 0 (http://w0) removed") != std::string::npos);
}

TEST_CASE("serve session: a worker's first start is not logged as a return to rotation", "[serve]") {
  ServeOptions options;
  options.pool_managed = true;
  const lull::core::PolicyTable table = tiny_session_table(2);
  FakeHealth health(2);
  health.set(0, false);  // its first ping has not passed yet
  FakeBackend backend;
  lull::core::VirtualClock clock;
  lull::core::ControlLoop loop(clock);  // the session's reaper: never ticked here
  options.loop = &loop;
  StderrToFile err;
  {
    ServeSession session(table, backend, health, clock, options);
    session.add_worker(0, "http://w0");
    health.set(0, true);   // first in rotation
    health.set(0, false);  // out
    health.set(0, true);   // back
    session.shutdown();
  }
  const std::string log = err.text();
  INFO(log);
  const auto first = log.find("worker 0 (http://w0) up: in rotation");
  const auto out = log.find("worker 0 (http://w0) down: out of rotation");
  const auto back = log.find("worker 0 (http://w0) up: back in rotation");
  REQUIRE(first != std::string::npos);
  REQUIRE(out != std::string::npos);
  REQUIRE(back != std::string::npos);
  CHECK(first < out);
  CHECK(out < back);
  CHECK(log.find("back in rotation", log.find("back in rotation") + 1) == std::string::npos);  // once
}
