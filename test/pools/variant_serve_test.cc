// Model variants for real: the serve stack (TorchServe backend, session)
// over two stand-in model servers, switched from the full set {small, mid,
// big} to the small set {small, mid} and back while client threads keep
// sending queries, through TorchServe's management API. Every query is
// answered 200 with no failed or retried batch (a batch sent to an unloaded
// model gets 404 from the stand-in, fails and is retried: none is seen), no
// query submitted after the switch is answered by big, and the servers' GET
// /models shows big unloaded and loaded again. A server failing to load big
// keeps the small set in use. The switches are triggered by hand (step with a
// given load), so no verdict depends on timing.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/support/model_server_process.h"
#include "runtime/core/clock.h"
#include "runtime/manager/model_variants.h"
#include "runtime/upstream/torchserve/torchserve_model_control.h"
#include "runtime/pools/session_policy_swap.h"
#include "runtime/manager/variant_switcher.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/model_management.h"
#include "runtime/session/serve_session.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "test/support/session_test_support.h"

using namespace lull::manager;
using namespace lull::pools;
using lull::core::PolicyTable;
using lull::serve::testing::ModelServerProcess;
using lull::torchserve::TorchServeModelControl;

namespace {

PolicyTable table_of(std::vector<lull::core::ModelInfo> models, lull::core::Action queue_of_one) {
  PolicyTable t = lull::serve::testing::tiny_session_table(2);
  t.models = std::move(models);
  t.policies[0].actions = {queue_of_one, {0, 1}};
  return t;
}
const lull::core::ModelInfo kSmall{"small", 0.6, {5e3, 6e3, 7e3, 8e3}}, kMid{"mid", 0.65, {10e3, 11e3, 12e3, 13e3}},
    kBig{"big", 0.7, {20e3, 22e3, 24e3, 26e3}};

struct Served {
  int epoch;  // when it was submitted: 0 full set, 1 after the switch to the small set, 2 switching back
  lull::frontend::Answer answer;
};

// Two stand-in servers holding the full set, the session on it, and client
// threads sending queries until the end.
struct VariantStack {
  explicit VariantStack(std::vector<std::string> extra)
      : s0(args({})),
        s1(args(extra)),
        full(table_of({kSmall, kMid, kBig}, {2, 1})),
        backend({{s0.url(), s0.url()}, {s1.url(), s1.url()}}, {"small", "mid", "big"}),
        session(full, backend, backend, clock),
        control(client),
        swap(session, 20000),
        switcher(variants(), {s0.url(), s1.url()}, control, swap, [this](const std::string& l) { log.push_back(l); },
                 {0.1, 0}) {
    REQUIRE(backend.start() == 2);
  }
  ~VariantStack() {
    stop_clients();
    session.shutdown();
    backend.stop();
  }
  static std::vector<std::string> args(std::vector<std::string> extra) {
    std::vector<std::string> a = {"--fake", "small:2:0.2", "--fake", "mid:4:0.2", "--fake", "big:6:0.2"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  void start_clients(int n) {
    for (int i = 0; i < n; ++i)
      clients.emplace_back([this] {
        while (!stop) {
          const int e = epoch.load();
          lull::frontend::Answer a = session.serve("x");
          std::lock_guard<std::mutex> lock(mu);
          served.push_back({e, std::move(a)});
        }
      });
  }
  void wait_served(std::size_t more) {
    std::size_t target;
    {
      std::lock_guard<std::mutex> lock(mu);
      target = served.size() + more;
    }
    for (int i = 0; i < 12000; ++i) {  // 60 s at most
      {
        std::lock_guard<std::mutex> lock(mu);
        if (served.size() >= target) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    FAIL("fewer than " << more << " more queries served in 60 s");
  }
  void stop_clients() {
    stop = true;
    for (auto& c : clients) c.join();
    clients.clear();
  }
  std::vector<std::string> models_on(const ModelServerProcess& s) {
    return lull::torchserve::ModelManagementClient(client, s.url()).list();
  }
  std::vector<ModelVariant> variants() {
    return {{"full", 0, {full}, {"small", "mid", "big"}},
            {"small-set",
             100,
             {widen_policy_table(table_of({kSmall, kMid}, {1, 1}), full, "small set")},
             {"small", "mid"}}};
  }

  ModelServerProcess s0, s1;
  PolicyTable full;
  lull::core::WallClock clock;
  lull::torchserve::TorchServeBackend backend;
  lull::session::ServeSession session;
  lull::net::HttpClient client;
  TorchServeModelControl control;
  SessionPolicySwap swap;
  std::vector<std::string> log;  // the switcher's lines (written by the test's thread only)
  VariantSwitcher switcher;
  std::atomic<int> epoch{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  std::mutex mu;
  std::vector<Served> served;
};

int count_if_model(const std::vector<Served>& v, int epoch, const std::string& model) {
  int n = 0;
  for (const auto& s : v) n += s.epoch == epoch && s.answer.model == model;
  return n;
}

}  // namespace

TEST_CASE("variants for real: full set -> small set -> full set under load, through the management API",
          "[manager][variants][e2e]") {
  VariantStack stack({});
  VariantSwitcher& switcher = stack.switcher;
  const std::vector<std::string>& log = stack.log;
  stack.start_clients(2);
  stack.wait_served(40);
  REQUIRE(switcher.step(150, 1));  // high load: the small set
  stack.epoch = 1;
  CHECK(stack.models_on(stack.s0) == std::vector<std::string>{"mid", "small"});
  CHECK(stack.models_on(stack.s1) == std::vector<std::string>{"mid", "small"});
  stack.wait_served(40);
  stack.epoch = 2;
  REQUIRE(switcher.step(10, 2));  // low load: the full set again
  CHECK(stack.models_on(stack.s0) == std::vector<std::string>{"big", "mid", "small"});
  CHECK(stack.models_on(stack.s1) == std::vector<std::string>{"big", "mid", "small"});
  stack.wait_served(40);
  stack.stop_clients();

  for (const auto& s : stack.served) {
    INFO("epoch " << s.epoch << " model " << s.answer.model << ": " << s.answer.body);
    CHECK(s.answer.http_status == 200);
    CHECK_FALSE(s.answer.retried);
  }
  CHECK(count_if_model(stack.served, 1, "big") == 0);  // none answered by the unloaded model
  CHECK(count_if_model(stack.served, 0, "big") > 0);   // it was in use before
  CHECK(count_if_model(stack.served, 1, "mid") > 0);   // the small set's policy after
  const std::string m = stack.session.metrics_text();
  CHECK(lull::serve::testing::metric_line(m, "lull_retried_total") == "lull_retried_total 0");
  CHECK(lull::serve::testing::metric_line(m, "lull_failed_total") == "lull_failed_total 0");
  CHECK(m.find("result=\"failed\"} 0") != std::string::npos);
  CHECK(m.find("result=\"failed\"} 1") == std::string::npos);
  REQUIRE(log.size() == 2);
  CHECK(log[0].find("unloaded big") != std::string::npos);
  CHECK(log[1].find("loaded big") != std::string::npos);
}

TEST_CASE("variants for real: a model that fails to load on one server keeps the small set in use",
          "[manager][variants][e2e][fault]") {
  VariantStack stack({"--fail-load", "big"});
  VariantSwitcher& switcher = stack.switcher;
  const std::vector<std::string>& log = stack.log;
  stack.start_clients(2);
  REQUIRE(switcher.step(150, 1));
  stack.epoch = 1;
  stack.wait_served(20);
  CHECK_FALSE(switcher.step(10, 2));  // big fails to load on s1: taken back off s0, small set kept
  CHECK(switcher.current() == 1);
  CHECK(stack.models_on(stack.s0) == std::vector<std::string>{"mid", "small"});
  CHECK(stack.models_on(stack.s1) == std::vector<std::string>{"mid", "small"});
  stack.wait_served(20);
  stack.stop_clients();
  for (const auto& s : stack.served) {
    CHECK(s.answer.http_status == 200);
    if (s.epoch == 1) CHECK(s.answer.model != "big");
  }
  CHECK(count_if_model(stack.served, 1, "mid") > 0);
  REQUIRE(log.size() == 2);
  CHECK(log[1].find("failed, keeping small-set") != std::string::npos);
  CHECK(log[1].find("Failed to start workers for model big") != std::string::npos);
  CHECK(switcher.metrics_text().find("lull_variant_switch_failures_total 1") != std::string::npos);
}
