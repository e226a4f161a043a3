// lull serve with online compilation, on the session's fakes: a worker
// reported down makes the background provider compile the policy for the
// workers still up; it is swapped in at the next arrival, and /metrics
// shows the compilation and the policy in use.
#include <catch2/catch.hpp>

#include "runtime/core/background_policy_provider.h"
#include "test/support/session_fakes.h"

using namespace lull::session;
using namespace lull::serve::testing;

namespace {

class FakeCompiler final : public lull::core::PolicyCompiler {
 public:
  lull::core::PolicyTable compile(const lull::core::PolicyRequest& r) override {
    ++calls;
    requested.push_back(r.workers);
    lull::core::PolicyTable t = tiny_session_table(r.workers);
    t.policies[0].load_qps = r.load_qps;
    return t;
  }
  int calls = 0;
  std::vector<int> requested;  // the worker counts asked for
};

double value(ServeSession& s, const std::string& name) {
  const std::string line = metric_line(s, name + " ");
  REQUIRE_FALSE(line.empty());
  return std::stod(line.substr(line.rfind(' ') + 1));
}

}  // namespace

TEST_CASE("serve: a worker down compiles the K-1 policy in the background and swaps it in", "[serve][online]") {
  FakeCompiler compiler;
  lull::core::BackgroundPolicyProvider provider(compiler);
  ServeOptions options;
  options.online = &provider;
  Rig rig(3, {}, options);
  CHECK(value(*rig.session, "lull_policy_workers") == 3);
  CHECK(value(*rig.session, "lull_online_compilations_total") == 0);
  rig.health.set(2, false);
  provider.wait_idle();
  CHECK(compiler.calls == 1);
  CHECK(value(*rig.session, "lull_online_compilations_total") == 1);
  // Delivered to the inbox; the Dispatcher takes it at the next arrival.
  CHECK(value(*rig.session, "lull_policy_workers") == 3);
  auto answer = rig.session->submit("q");
  CHECK(value(*rig.session, "lull_policy_workers") == 2);
  CHECK(value(*rig.session, "lull_policy_load_queries_per_second") == 100);
  // One compilation: its wall time is the last and the whole sum, and took some.
  CHECK(value(*rig.session, "lull_online_compile_last_seconds") > 0);
  CHECK(value(*rig.session, "lull_online_compile_last_seconds") ==
        value(*rig.session, "lull_online_compile_seconds_total"));
  // The same situation again needs nothing new.
  rig.health.set(2, true);
  rig.health.set(2, false);
  provider.wait_idle();
  CHECK(compiler.calls == 1);
  rig.session->shutdown();
}

TEST_CASE("serve with a worker pool: nothing is compiled for the vacant slots, only for the workers admitted",
          "[serve][online][autoscale]") {
  FakeCompiler compiler;
  lull::core::BackgroundPolicyProvider provider(compiler);
  ServeOptions options;
  options.online = &provider;
  options.pool_managed = true;
  // 11 slots (the pool's maximum), a set for 2 workers; no worker up yet.
  const lull::core::PolicyTable table = tiny_session_table(2);
  FakeHealth health(11);
  FakeBackend backend;
  lull::core::VirtualClock clock;
  lull::core::ControlLoop loop(clock);  // the session's reaper: never ticked here
  options.loop = &loop;
  ServeSession session(table, backend, health, clock, options);
  provider.wait_idle();
  CHECK(compiler.requested.empty());
  CHECK(value(session, "lull_online_compilations_total") == 0);
  session.add_worker(0, "http://w0");
  provider.wait_idle();
  CHECK(compiler.requested == std::vector<int>{1});
  session.add_worker(1, "http://w1");  // the library's count: nothing to compile
  provider.wait_idle();
  CHECK(compiler.requested == std::vector<int>{1});
  session.shutdown();
}
