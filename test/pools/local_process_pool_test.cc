// The local-process worker pool with real processes of the stand-in model
// server: what only real processes show (fork/exec of the command template,
// each worker's own port, an exit status and output from a real shell,
// SIGTERM and SIGKILL delivered). The pool's rules (start timeout, model
// check, crashes while up or draining, the drain limit) run in process over
// fakes: local_process_pool_logic_test.cc.
#include <signal.h>
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <thread>

#include "test/support/model_server_process.h"
#include "test/pools/pool_test_support.h"
#include "runtime/pools/local_process_pool.h"
#include "runtime/net/http_client.h"

using namespace lull::manager;
using namespace lull::pools;
using lull::manager::testing::server_command;
using lull::manager::testing::wait_until;
using lull::net::HttpClient;
using lull::net::HttpRequest;

using lull::manager::testing::find_worker;

namespace {

// The client and clock the pools use, and a log folder for the test's workers, removed after the pool.
struct Rig {
  HttpClient client;
  lull::core::WallClock clock;
  std::string log_dir;
  Rig() {
    char tmpl[] = "/tmp/lull-pool-test-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    log_dir = tmpl;
  }
  ~Rig() { std::system(("rm -rf " + log_dir).c_str()); }
  LocalProcessPoolOptions options() const {
    LocalProcessPoolOptions o;
    o.log_dir = log_dir;
    return o;
  }
};

bool settled(LocalProcessPool& pool, const std::string& id) {
  const auto s = find_worker(pool, id).state;
  return s != WorkerState::kStarting && s != WorkerState::kDraining;
}

// Starts one worker and waits until it is up, failed or stopped.
WorkerInfo start_one(LocalProcessPool& pool) {
  const auto id = pool.start_workers(1).at(0);
  REQUIRE(wait_until([&] { return settled(pool, id); }));
  return find_worker(pool, id);
}

bool pings(HttpClient& client, const std::string& url) {
  HttpRequest r;
  r.url = url + "/ping";
  r.timeout_ms = 2000;
  return client.fetch(r).ok();
}

}  // namespace

TEST_CASE("local pool: workers are up after their checks, a removed one drains, then stops", "[manager][local]") {
  Rig rig;
  auto o = rig.options();
  o.command = server_command("--fake a:1:0 --fake b:1:0");
  o.models = {"a", "b"};
  LocalProcessPool pool(rig.client, rig.clock, o);
  std::vector<std::string> events;
  std::mutex events_mu;
  pool.set_state_handler([&](const WorkerInfo& w) {
    std::lock_guard<std::mutex> lock(events_mu);
    events.push_back(w.id + " " + worker_state_name(w.state));
  });
  std::function<void()> drained;
  std::string drain_asked;
  pool.set_drain_hook([&](const std::string& id, std::function<void()> done) {
    drain_asked = id;
    drained = std::move(done);
  });

  const auto ids = pool.start_workers(2);
  REQUIRE(ids.size() == 2);
  REQUIRE(wait_until([&] { return settled(pool, ids[0]) && settled(pool, ids[1]); }));
  const auto w0 = find_worker(pool, ids[0]), w1 = find_worker(pool, ids[1]);
  INFO(w0.failure << " | " << w1.failure);
  REQUIRE(w0.state == WorkerState::kUp);
  REQUIRE(w1.state == WorkerState::kUp);
  CHECK(w0.inference_url != w1.inference_url);  // each its own port
  CHECK(pings(rig.client, w0.inference_url));

  pool.stop_worker(ids[0]);
  CHECK(drain_asked == ids[0]);
  // Draining: still running (its batches in flight finish) until the serving layer says drained
  // (that it stays so for ever without the word is local_process_pool_logic_test.cc's, on its clock).
  CHECK(find_worker(pool, ids[0]).state == WorkerState::kDraining);
  CHECK(pings(rig.client, w0.inference_url));
  drained();
  REQUIRE(wait_until([&] { return find_worker(pool, ids[0]).state == WorkerState::kStopped; }));
  CHECK(find_worker(pool, ids[0]).failure.empty());
  CHECK(pool.pid_of(ids[0]) == -1);
  CHECK_FALSE(pings(rig.client, w0.inference_url));
  CHECK(find_worker(pool, ids[1]).state == WorkerState::kUp);
  // Each worker's changes in order (the two start-ups may finish in either order).
  std::lock_guard<std::mutex> lock(events_mu);
  const auto of = [&](const std::string& id) {
    std::vector<std::string> mine;
    for (const auto& e : events)
      if (e.rfind(id + " ", 0) == 0) mine.push_back(e.substr(id.size() + 1));
    return mine;
  };
  CHECK(of(ids[0]) == std::vector<std::string>{"starting", "up", "draining", "stopped"});
  CHECK(of(ids[1]) == std::vector<std::string>{"starting", "up"});
}

TEST_CASE("local pool: a command that fails to start is failed with its exit status and output",
          "[manager][local][fault]") {
  Rig rig;
  auto o = rig.options();
  o.command = "/nonexistent/model-server --port {port}";
  LocalProcessPool pool(rig.client, rig.clock, o);
  const auto w = start_one(pool);
  INFO(w.failure);
  CHECK(w.state == WorkerState::kFailed);
  CHECK(w.failure.find("exited with status 127 during start-up") == 0);
  CHECK(w.failure.find("/nonexistent/model-server") != std::string::npos);

  // A server that refuses its arguments: exit status 2 and its own message.
  LocalProcessPoolOptions bad = o;
  bad.command = server_command("--fake broken-spec");
  LocalProcessPool pool2(rig.client, rig.clock, bad);
  const auto w2 = start_one(pool2);
  INFO(w2.failure);
  CHECK(w2.failure.find("exited with status 2 during start-up") == 0);
  CHECK(w2.failure.find("name:base_ms:per_item_ms") != std::string::npos);
}

TEST_CASE("local pool: a process that ignores SIGTERM is killed after the grace period", "[manager][local][fault]") {
  Rig rig;
  auto o = rig.options();
  // Ignores SIGTERM (and so does its sleep) once it has said so: only SIGKILL can end it.
  o.command = "sh -c 'trap \"\" TERM; echo ignoring-TERM; sleep 60; :' # {port}";
  o.stop_grace_ms = 300;
  LocalProcessPool pool(rig.client, rig.clock, o);
  const auto id = pool.start_workers(1).at(0);
  REQUIRE(pool.pid_of(id) > 0);
  REQUIRE(wait_until([&] {
    std::ifstream log(pool.log_dir() + "/" + id + ".log");
    std::string line;
    return std::getline(log, line) && line == "ignoring-TERM";
  }));
  pool.stop_worker(id);  // still starting: stopped at once, then terminated
  CHECK(find_worker(pool, id).state == WorkerState::kStopped);
  CHECK(wait_until([&] { return pool.pid_of(id) == -1; }, 20000));
}

TEST_CASE("local pool: the command template", "[manager][local]") {
  CHECK(expand_command("srv --port {port} --mgmt {management_port} --x {port}", 81, 82) ==
        "srv --port 81 --mgmt 82 --x 81");
  Rig rig;
  auto o = rig.options();
  o.command = "srv --port 8080";
  CHECK_THROWS_WITH(LocalProcessPool(rig.client, rig.clock, o), Catch::Contains("no {port}"));
  o.command += " {port}";
  CHECK_THROWS_WITH(LocalProcessPool(rig.client, rig.clock, o).stop_worker("x"), Catch::Contains("no worker 'x'"));
}
