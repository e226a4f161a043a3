#pragma once
// The serve stack of `lull serve --autoscale` below the command line, for the
// serving autoscaler's tests over any worker pool (model-server processes, a
// Kubernetes Deployment on the fake API server): a real TorchServe backend
// and ServeSession, the ServingAutoscaler on a virtual clock (arrivals and
// ticks are fed by the test, so every decision is known), the pool's
// processes, health checks and HTTP for real, each wait for them bounded.
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "test/support/autoscale_test_support.h"
#include "test/pools/pool_test_support.h"
#include "runtime/pools/serving_autoscaler.h"
#include "runtime/pools/session_slots.h"
#include "runtime/net/http_client.h"
#include "test/support/session_test_support.h"

namespace lull::manager::testing {

// Worker counts 2 and 4; each worker carries 100 QPS at a 1% target.
inline std::vector<core::PolicyTable> two_counts_library() {
  std::vector<core::PolicyTable> lib;
  for (int k : {2, 4}) {
    core::PolicyTable t = serve::testing::tiny_session_table(k);
    const auto proto = t.policies.front();
    t.policies.clear();
    for (int load = 100; load <= 800; load += 100) {
      auto p = proto;
      p.load_qps = load;
      p.expected_violation_rate = load <= 100 * k ? 0.002 : 0.03;
      t.policies.push_back(p);
    }
    lib.push_back(t);
  }
  return lib;
}

struct ServingRig {
  // Makes the pool, given the rig's HTTP client, wall clock and a scratch
  // directory (removed at the end), and may adjust the autoscaler's options
  // (a Kubernetes pool's refresh and metrics).
  using PoolFactory = std::function<std::unique_ptr<manager::WorkerPool>(
      net::HttpClient&, const core::Clock&, const std::string& scratch_dir, pools::ServingAutoscalerOptions&)>;

  explicit ServingRig(const PoolFactory& make_pool, torchserve::OutlierOptions outlier = {})
      : library(two_counts_library()) {
    char tmpl[] = "/tmp/lull-serving-autoscaler-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    scratch_dir = tmpl;
    pools::ServingAutoscalerOptions o =
        lull::test::quick_autoscaler_options([this](const std::string& line) { say(line); });
    pool = make_pool(client, wall, scratch_dir, o);
    scaler = std::make_unique<pools::ServingAutoscaler>(library, o, *pool, vclock);
    backend = std::make_unique<torchserve::TorchServeBackend>(
        std::vector<torchserve::WorkerEndpoint>(static_cast<std::size_t>(scaler->slots())),
        std::vector<std::string>{"small", "big"}, fast_health(outlier));
    session::ServeOptions so;
    so.pool_managed = true;
    so.library = library;
    so.worker_names.assign(static_cast<std::size_t>(scaler->slots()), "");
    so.extra_metrics = [this] { return scaler->metrics_text(); };
    session = std::make_unique<session::ServeSession>(library.front(), *backend, *backend, wall, so);
    backend->start();
    slots = std::make_unique<pools::SessionSlots>(*backend, *session);
    scaler->attach(*slots);
  }
  ~ServingRig() {
    scaler->stop();
    pool.reset();
    session->shutdown();
    backend->stop();
    session.reset();
    std::system(("rm -rf " + scratch_dir).c_str());
  }
  // The stand-in server (models small and big, batch_ms per batch) on {port}.
  static std::string server_command(int batch_ms) {
    const std::string ms = std::to_string(batch_ms);
    return testing::server_command("--fake small:" + ms + ":0 --fake big:" + ms + ":0");
  }
  static torchserve::TorchServeOptions fast_health(torchserve::OutlierOptions outlier) {
    torchserve::TorchServeOptions o;
    o.outlier = outlier;
    o.health_interval_ms = 100;
    o.health_timeout_ms = 1000;
    o.batch_timeout_ms = 10000;
    return o;
  }
  // `n` arrivals spread over (from_s, to_s] of the autoscaler's time, then a tick at to_s.
  manager::ScaleDecision load(int n, double from_s, double to_s) {
    const auto us = [](double s) { return static_cast<std::int64_t>(s * 1e6); };
    for (int i = 1; i <= n; ++i) scaler->record_arrival(us(from_s) + (us(to_s) - us(from_s)) * i / n);
    vclock.advance_to_us(us(to_s));
    return scaler->decide(us(to_s));
  }
  int count(manager::WorkerState s) { return manager::count_workers(pool->list_workers(), s); }
  std::vector<std::future<frontend::Answer>> submit(int n) {
    std::vector<std::future<frontend::Answer>> out;
    for (int i = 0; i < n; ++i) out.push_back(session->submit("q"));
    return out;
  }
  // Waits until the workers hold session slots (the pool's handler ran).
  bool joined_in_session(const std::vector<std::string>& ids) {
    return wait_until([&] {
      for (const auto& id : ids)
        if (scaler->slot_of(id) < 0) return false;
      return true;
    });
  }
  bool logged(const std::string& text) {
    return wait_until([&] { return joined_log().find(text) != std::string::npos; });
  }
  void say(const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mu);
    log.push_back(line);
  }
  std::string joined_log() {
    std::lock_guard<std::mutex> lock(log_mu);
    std::string s;
    for (const auto& l : log) s += l + "\n";
    return s;
  }

  std::vector<core::PolicyTable> library;
  std::string scratch_dir;
  net::HttpClient client;
  core::WallClock wall;
  core::VirtualClock vclock;
  std::unique_ptr<manager::WorkerPool> pool;
  std::unique_ptr<pools::ServingAutoscaler> scaler;
  std::unique_ptr<torchserve::TorchServeBackend> backend;
  std::unique_ptr<session::ServeSession> session;
  std::unique_ptr<pools::SessionSlots> slots;  // the autoscaler's; it is stopped before the rest goes
  std::mutex log_mu;
  std::vector<std::string> log;
};

// Every answer 200; returns the slots that answered.
inline std::multiset<int> answered_by(std::vector<std::future<frontend::Answer>>& answers) {
  std::multiset<int> slots;
  for (auto& f : answers) {
    REQUIRE(f.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    const frontend::Answer a = f.get();
    INFO(a.body);
    CHECK(a.http_status == 200);
    slots.insert(a.worker);
  }
  return slots;
}

inline std::string metric(const std::string& text, const std::string& name) {
  return serve::testing::metric_line(text, name);
}

}  // namespace lull::manager::testing
