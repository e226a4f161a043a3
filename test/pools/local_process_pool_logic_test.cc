// The local-process pool's rules in process: its workers are fake processes
// (test/support/fake_process_launcher.h) answering over the fake transport
// (fake_http_transport.h), time is a clock the test steps and the test
// ticks the pool's supervisor itself (a Controller whose loop it never
// starts), so every limit (start-up, drain, SIGTERM grace) is crossed
// exactly, not waited for.
// Up only after the health and model checks pass; a removed worker drains,
// then gets SIGTERM, SIGKILL past the grace period; a command that exits at
// start, one that never answers, a model that never loads, a worker killed
// while up or draining. local_process_pool_test.cc keeps the cases that need
// real processes (fork/exec, signals, ports).
#include <signal.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "test/pools/pool_test_support.h"
#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/pools/local_process_pool.h"
#include "test/support/fake_http_transport.h"
#include "test/support/fake_process_launcher.h"

using namespace lull::manager;
using namespace lull::pools;
using lull::manager::testing::find_worker;
using lull::manager::testing::wait_until;
using lull::net::HttpRequest;
using lull::test::FakeHttpTransport;
using lull::test::FakeProcessLauncher;

namespace {

// A clock the test steps, read from the pool's threads.
class SteppedClock final : public lull::core::Clock {
 public:
  std::int64_t now_us() const override { return t_us_.load(); }
  void advance_ms(std::int64_t ms) { t_us_ += ms * 1000; }

 private:
  std::atomic<std::int64_t> t_us_{1'000'000};
};

std::string url_of(int port) { return "http://127.0.0.1:" + std::to_string(port); }

struct Rig {
  FakeHttpTransport http;
  FakeProcessLauncher launcher;
  SteppedClock clock;
  // The pools' loop, never started: the test is the loop, ticking each
  // pool's supervisor at the clock's time (tick()) while it polls.
  lull::core::ControlLoop loop{clock};
  void tick(LocalProcessPool& pool) { pool.supervisor().tick(clock.now_us()); }
  // Ticks the supervisor while polling `done` (bounded, 10 s of real time).
  template <typename F>
  bool tick_until(LocalProcessPool& pool, F done) {
    return wait_until(
        [&] {
          tick(pool);
          return done();
        },
        10000);
  }
  LocalProcessPoolOptions options() const {
    LocalProcessPoolOptions o;
    o.command = "model-server --port {port}";
    o.log_dir = "/fake-logs";  // the fake launcher writes nothing
    o.check_interval_ms = 2;
    o.tick_ms = 2;
    return o;
  }
  // The worker on `port` answers /ping, and has `models` loaded.
  void serve(int port, const std::vector<std::string>& models = {}) {
    http.route("GET", url_of(port) + "/ping", [](const HttpRequest&) { return FakeHttpTransport::reply(200); });
    std::string listed;
    for (const auto& m : models) {
      http.route("GET", url_of(port) + "/models/" + m, [](const HttpRequest&) {
        return FakeHttpTransport::reply(200, R"([{"modelVersion":"1.0","workers":[{"id":"9000"}]}])");
      });
      listed += std::string(listed.empty() ? "" : ",") + R"({"modelName":")" + m + "\"}";
    }
    http.route("GET", url_of(port) + "/models",
               [listed](const HttpRequest&) { return FakeHttpTransport::reply(200, "{\"models\":[" + listed + "]}"); });
  }
  bool asked(const std::string& url_suffix) {
    for (const auto& r : http.requests())
      if (r.url.size() >= url_suffix.size() &&
          r.url.compare(r.url.size() - url_suffix.size(), url_suffix.size(), url_suffix) == 0)
        return true;
    return false;
  }
};

bool settled(LocalProcessPool& pool, const std::string& id) {
  const auto s = find_worker(pool, id).state;
  return s != WorkerState::kStarting && s != WorkerState::kDraining;
}

}  // namespace

TEST_CASE("local pool (fakes): workers are up after their checks, a removed one drains, then gets SIGTERM",
          "[manager][local]") {
  Rig rig;
  rig.serve(20000, {"a", "b"});
  rig.serve(20001, {"a", "b"});
  auto o = rig.options();
  o.models = {"a", "b"};
  LocalProcessPool pool(rig.http, rig.clock, o, rig.launcher, &rig.loop);
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
  REQUIRE(rig.tick_until(pool, [&] { return settled(pool, ids[0]) && settled(pool, ids[1]); }));
  const auto w0 = find_worker(pool, ids[0]), w1 = find_worker(pool, ids[1]);
  INFO(w0.failure << " | " << w1.failure);
  REQUIRE(w0.state == WorkerState::kUp);
  REQUIRE(w1.state == WorkerState::kUp);
  CHECK(w0.inference_url == url_of(20000));  // each its own port, from the launcher
  CHECK(w1.inference_url == url_of(20001));
  CHECK(rig.launcher.process(0)->command == "model-server --port 20000");
  CHECK(rig.launcher.process(0)->log_path == "/fake-logs/" + ids[0] + ".log");
  CHECK(rig.asked(url_of(20000) + "/models/b"));

  pool.stop_worker(ids[0]);
  CHECK(drain_asked == ids[0]);
  CHECK(find_worker(pool, ids[0]).state == WorkerState::kDraining);
  CHECK(rig.launcher.signals(0).empty());  // its batches in flight finish first
  drained();
  REQUIRE(rig.tick_until(pool, [&] { return find_worker(pool, ids[0]).state == WorkerState::kStopped; }));
  CHECK(rig.launcher.signals(0) == std::vector<int>{SIGTERM});
  CHECK(find_worker(pool, ids[0]).failure.empty());
  CHECK(pool.pid_of(ids[0]) == -1);
  CHECK(find_worker(pool, ids[1]).state == WorkerState::kUp);
  CHECK(rig.launcher.signals(1).empty());
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

TEST_CASE("local pool (fakes): a command that exits at start is failed with its exit status and last output",
          "[manager][local][fault]") {
  Rig rig;
  rig.launcher.on_launch = [](FakeProcessLauncher::Process& p) {
    p.exited = true;
    p.how = "exited with status 127";
    p.last_line = "sh: 1: exec: /nonexistent/model-server: not found";
  };
  LocalProcessPool pool(rig.http, rig.clock, rig.options(), rig.launcher, &rig.loop);
  const auto id = pool.start_workers(1).at(0);
  REQUIRE(rig.tick_until(pool, [&] { return settled(pool, id); }));
  CHECK(find_worker(pool, id).state == WorkerState::kFailed);
  CHECK(find_worker(pool, id).failure ==
        "exited with status 127 during start-up (last output: sh: 1: exec: /nonexistent/model-server: not found)");
}

TEST_CASE("local pool (fakes): a worker that never answers is failed at the start timeout and stopped",
          "[manager][local][fault]") {
  Rig rig;  // no route: its /ping is refused
  auto o = rig.options();
  o.start_timeout_ms = 1000;
  LocalProcessPool pool(rig.http, rig.clock, o, rig.launcher, &rig.loop);
  const auto id = pool.start_workers(1).at(0);
  REQUIRE(rig.tick_until(pool, [&] { return rig.asked("/ping"); }));
  rig.clock.advance_ms(999);
  rig.tick(pool);
  CHECK(find_worker(pool, id).state == WorkerState::kStarting);
  rig.clock.advance_ms(1);
  rig.tick(pool);
  REQUIRE(rig.tick_until(pool, [&] { return settled(pool, id); }));
  CHECK(find_worker(pool, id).state == WorkerState::kFailed);
  CHECK(find_worker(pool, id).failure == "not up within 1000 ms (last: health check GET /ping: Connection refused)");
  CHECK(rig.launcher.signals(0) == std::vector<int>{SIGTERM});
  CHECK(rig.tick_until(pool, [&] { return pool.pid_of(id) == -1; }));
}

TEST_CASE("local pool (fakes): a worker whose model check never passes is failed naming the missing model",
          "[manager][local][fault]") {
  Rig rig;
  rig.serve(20000, {"a"});
  rig.http.route("GET", url_of(20000) + "/models/b", [](const HttpRequest&) {
    return FakeHttpTransport::reply(404,
                                    R"({"code":404,"type":"ModelNotFoundException","message":"Model not found: b"})");
  });
  auto o = rig.options();
  o.models = {"a", "b"};
  o.start_timeout_ms = 12000;
  LocalProcessPool pool(rig.http, rig.clock, o, rig.launcher, &rig.loop);
  const auto id = pool.start_workers(1).at(0);
  REQUIRE(rig.tick_until(pool, [&] { return rig.asked("/models"); }));  // a model check has failed once
  rig.clock.advance_ms(12000);
  rig.tick(pool);
  REQUIRE(rig.tick_until(pool, [&] { return settled(pool, id); }));
  CHECK(find_worker(pool, id).state == WorkerState::kFailed);
  CHECK(find_worker(pool, id).failure ==
        "not up within 12000 ms (last: model check: worker " + url_of(20000) + " lacks model b (loaded: a))");
  CHECK(rig.launcher.exited(0));
}

TEST_CASE("local pool (fakes): a worker killed while up, or while draining, is failed saying how",
          "[manager][local][fault]") {
  Rig rig;
  for (int port = 20000; port < 20003; ++port) rig.serve(port, {"a"});
  auto o = rig.options();
  o.models = {"a"};
  LocalProcessPool pool(rig.http, rig.clock, o, rig.launcher, &rig.loop);
  bool drain_called = false;
  pool.set_drain_hook([&](const std::string&, std::function<void()>) { drain_called = true; });  // never drained
  const auto ids = pool.start_workers(3);
  REQUIRE(
      rig.tick_until(pool, [&] { return settled(pool, ids[0]) && settled(pool, ids[1]) && settled(pool, ids[2]); }));
  for (const auto& id : ids) REQUIRE(find_worker(pool, id).state == WorkerState::kUp);

  rig.launcher.crash(0, 9);
  REQUIRE(rig.tick_until(pool, [&] { return find_worker(pool, ids[0]).state == WorkerState::kFailed; }));
  CHECK(find_worker(pool, ids[0]).failure == "killed by signal 9 while up");

  pool.stop_worker(ids[1]);
  CHECK(drain_called);
  REQUIRE(find_worker(pool, ids[1]).state == WorkerState::kDraining);
  rig.launcher.crash(1, 9);
  REQUIRE(rig.tick_until(pool, [&] { return find_worker(pool, ids[1]).state == WorkerState::kFailed; }));
  CHECK(find_worker(pool, ids[1]).failure == "killed by signal 9 while draining");
  CHECK(find_worker(pool, ids[2]).state == WorkerState::kUp);
  CHECK(rig.launcher.signals(2).empty());
}

TEST_CASE("local pool (fakes): a drain that never finishes stops the worker at the drain limit",
          "[manager][local][fault]") {
  Rig rig;
  rig.serve(20000);
  auto o = rig.options();
  o.drain_timeout_ms = 300;
  LocalProcessPool pool(rig.http, rig.clock, o, rig.launcher, &rig.loop);
  pool.set_drain_hook([](const std::string&, std::function<void()>) {});
  const auto id = pool.start_workers(1).at(0);
  REQUIRE(rig.tick_until(pool, [&] { return settled(pool, id); }));
  REQUIRE(find_worker(pool, id).state == WorkerState::kUp);
  pool.stop_worker(id);
  rig.clock.advance_ms(299);
  rig.tick(pool);
  CHECK(find_worker(pool, id).state == WorkerState::kDraining);
  CHECK(rig.launcher.signals(0).empty());
  rig.clock.advance_ms(1);
  rig.tick(pool);
  REQUIRE(rig.tick_until(pool, [&] { return find_worker(pool, id).state == WorkerState::kStopped; }));
  CHECK(find_worker(pool, id).failure == "drain did not finish within 300 ms; stopped anyway");
  CHECK(rig.launcher.signals(0) == std::vector<int>{SIGTERM});
}

TEST_CASE("local pool (fakes): a process that ignores SIGTERM gets SIGKILL once the grace period is over",
          "[manager][local][fault]") {
  Rig rig;
  rig.launcher.on_launch = [](FakeProcessLauncher::Process& p) { p.ignores_term = true; };
  auto o = rig.options();
  o.stop_grace_ms = 300;
  LocalProcessPool pool(rig.http, rig.clock, o, rig.launcher, &rig.loop);
  const auto id = pool.start_workers(1).at(0);
  pool.stop_worker(id);  // still starting: stopped at once, then terminated
  CHECK(find_worker(pool, id).state == WorkerState::kStopped);
  CHECK(rig.launcher.signals(0) == std::vector<int>{SIGTERM});
  rig.clock.advance_ms(299);
  rig.tick(pool);
  CHECK_FALSE(rig.launcher.exited(0));
  rig.clock.advance_ms(1);
  rig.tick(pool);
  REQUIRE(rig.tick_until(pool, [&] { return rig.launcher.exited(0); }));
  CHECK(rig.launcher.signals(0) == std::vector<int>{SIGTERM, SIGKILL});
  CHECK(pool.pid_of(id) == -1);
}

TEST_CASE("local pool (fakes): shards on one host take disjoint ports and names, from one launcher",
          "[manager][local][shard]") {
  Rig rig;  // one launcher: its ports are handed out in order, 20000 on
  std::vector<std::unique_ptr<LocalProcessPool>> pools;
  for (int i = 0; i < 3; ++i) {
    auto o = rig.options();
    o.port_modulus = 3;
    o.port_residue = i;
    o.id_prefix = "local-" + std::to_string(i) + "-";
    pools.push_back(std::make_unique<LocalProcessPool>(rig.http, rig.clock, o, rig.launcher, &rig.loop));
  }
  std::set<std::string> urls, logs;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 3; ++i)
      for (const auto& id : pools[static_cast<std::size_t>(i)]->start_workers(2)) {
        const auto w = find_worker(*pools[static_cast<std::size_t>(i)], id);
        CHECK(id.rfind("local-" + std::to_string(i) + "-", 0) == 0);
        const int port = std::stoi(w.inference_url.substr(w.inference_url.rfind(':') + 1));
        CHECK(port % 3 == i);
        urls.insert(w.inference_url);
      }
  CHECK(urls.size() == 12);
  for (std::size_t p = 0; p < rig.launcher.launched(); ++p) logs.insert(rig.launcher.process(p)->log_path);
  CHECK(logs.size() == 12);  // one log file each in the shared --worker-log-dir
  auto o = rig.options();
  o.port_modulus = 2;
  o.port_residue = 2;
  CHECK_THROWS_WITH(LocalProcessPool(rig.http, rig.clock, o, rig.launcher), Catch::Contains("2 mod 2 is empty"));
}

TEST_CASE(
    "local pool (fakes): the supervisor ticks every tick_ms of its loop's clock, at once when poked or after "
    "a change",
    "[manager][local]") {
  Rig rig;
  rig.serve(20000);
  auto o = rig.options();
  o.tick_ms = 50;
  LocalProcessPool pool(rig.http, rig.clock, o, rig.launcher, &rig.loop);
  lull::core::Controller& supervisor = pool.supervisor();
  const auto id = pool.start_workers(1).at(0);
  REQUIRE(rig.tick_until(pool, [&] { return settled(pool, id); }));
  rig.tick(pool);  // the pass after the change to up changes nothing: the next is one period on
  CHECK(supervisor.next_tick_us() == rig.clock.now_us() + 50'000);
  pool.set_drain_hook([](const std::string&, std::function<void()>) {});
  pool.stop_worker(id);  // a poke: due now, not a period on
  CHECK(supervisor.next_tick_us() <= rig.clock.now_us());
  rig.tick(pool);
  CHECK(supervisor.next_tick_us() == rig.clock.now_us() + 50'000);
  CHECK(find_worker(pool, id).state == WorkerState::kDraining);
}
