// The fleet's front service (serve/fleet_service.h) over fake groups: a
// query reaches its class's groups only, kinds in proportion to the split
// at the class's load, an unknown class is refused naming it; and the
// groups' /metrics merged into one exposition (serve/fleet_metrics.h).
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/core/fleet_tables.h"
#include "runtime/session/fleet_metrics.h"
#include "runtime/session/fleet_service.h"
#include "test/support/fleet_split_fixture.h"

using namespace lull;
using namespace lull::frontend;
using namespace lull::session;

namespace {

// Answers at once with its own name as the model; counts what it got.
class NamedGroup final : public QueryService {
 public:
  explicit NamedGroup(std::string name) : name_(std::move(name)) {}
  Answer serve(std::string) override {
    ++served;
    Answer a;
    a.model = name_;
    return a;
  }
  std::string metrics_text() override {
    return "# HELP lull_queries_total Queries.\n# TYPE lull_queries_total counter\nlull_queries_total " +
           std::to_string(served) +
           "\n# HELP lull_worker_up Up.\n# TYPE lull_worker_up gauge\nlull_worker_up{worker=\"0\"} 1\n"
           "# HELP process_open_fds Fds.\n# TYPE process_open_fds gauge\nprocess_open_fds 7\n";
  }
  bool healthy() override { return up; }
  int workers_up() override { return workers; }
  int served = 0;
  bool up = true;
  int workers = -1;  // not known

 private:
  std::string name_;
};

core::FleetTables two_classes() {
  core::FleetTables f;
  core::FleetClassTables gold;
  gold.name = "gold";
  gold.kinds.resize(2);
  gold.kinds[0].kind = "cpu";
  gold.kinds[1].kind = "gpu";
  // Below 100 qps all on cpu; above, 1/4 cpu, 3/4 gpu.
  gold.splits = {{100, {1.0, 0.0}, 0, 0}, {200, {0.25, 0.75}, 0, 0}};
  core::FleetClassTables bulk;
  bulk.name = "bulk";
  bulk.kinds.resize(1);
  bulk.kinds[0].kind = "cpu";
  bulk.splits = {{100, {1.0}, 0, 0}};
  f.classes = {gold, bulk};
  return f;
}

}  // namespace

TEST_CASE("fleet service: the class header picks the class, the split at its load picks the kind", "[serve][fleet]") {
  const core::FleetTables fleet = two_classes();
  NamedGroup gold_cpu("gold/cpu"), gold_gpu("gold/gpu"), bulk_cpu("bulk/cpu");
  core::VirtualClock clock;
  FleetService service(fleet, {{&gold_cpu, &gold_gpu}, {&bulk_cpu}}, clock, 7);
  const auto send = [&](const std::string& cls) {
    Answer got;
    service.serve_class_async(cls, "x", 0, [&](Answer a) { got = std::move(a); });
    return got;
  };
  // Low load (one query per 100 ms = 10 qps): gold all on cpu; no header is gold.
  for (int i = 0; i < 50; ++i) {
    clock.advance_to_us(clock.now_us() + 100'000);
    CHECK(send(i % 2 ? "gold" : "").model == "gold/cpu");
    CHECK(send("bulk").model == "bulk/cpu");
  }
  CHECK(gold_gpu.served == 0);
  // High load (one per 4 ms = 250 qps, over the last split): 1/4 cpu, 3/4 gpu.
  gold_cpu.served = 0;
  for (int i = 0; i < 4000; ++i) {
    clock.advance_to_us(clock.now_us() + 4'000);
    send("gold");
  }
  CHECK(gold_gpu.served == Approx(3000).margin(150));  // binomial sd ~27
  CHECK(gold_cpu.served == Approx(1000).margin(150));
  CHECK(bulk_cpu.served == 50);

  const Answer unknown = send("silver");
  CHECK(unknown.http_status == 400);
  CHECK(unknown.body == "unknown class 'silver' (X-Lull-Class); this fleet serves gold, bulk");

  CHECK(service.healthy());
  gold_cpu.up = false;
  CHECK(service.healthy());  // gold's gpu still serves
  bulk_cpu.up = false;
  CHECK_FALSE(service.healthy());  // bulk has no kind up
}

TEST_CASE("fleet service: the split stays put at a low steady load (no flipping with the estimate's noise)",
          "[serve][fleet]") {
  // Splits every 3 qps of class load, as `lull compile --fleet --load-qps 10:160:10` gives a 30% class;
  // only the split at 21 sends the class to cpu. Poisson arrivals at 19.5 qps belong to that split:
  // a 500 ms count (about 10 arrivals, +-32%) would pick it for about one query in eight.
  core::FleetTables fleet;
  core::FleetClassTables bulk;
  bulk.name = "bulk";
  bulk.kinds.resize(2);
  bulk.kinds[0].kind = "cpu";
  bulk.kinds[1].kind = "gpu";
  for (int load = 3; load <= 48; load += 3)
    bulk.splits.push_back(
        {static_cast<double>(load), load == 21 ? std::vector<double>{1.0, 0.0} : std::vector<double>{0.0, 1.0}, 0, 0});
  fleet.classes = {bulk};
  NamedGroup cpu("cpu"), gpu("gpu");
  core::VirtualClock clock;
  FleetService service(fleet, {{&cpu, &gpu}}, clock, 11);
  std::mt19937_64 rng(5);
  std::exponential_distribution<double> gap(19.5);
  double t = 0;
  bool counting = false;  // after a 30 s warm-up
  while (t < 330) {
    if (t >= 30 && !counting) {
      cpu.served = gpu.served = 0;
      counting = true;
    }
    t += gap(rng);
    clock.advance_to_us(static_cast<std::int64_t>(t * 1e6));
    service.serve_class_async("bulk", "x", 0, [](Answer) {});
  }
  const double on_cpu = static_cast<double>(cpu.served) / (cpu.served + gpu.served);
  INFO("cpu " << cpu.served << ", gpu " << gpu.served);
  CHECK(cpu.served + gpu.served > 5000);
  CHECK(on_cpu >= 0.75);  // 0.86 with seed 5; 0.13 with a 500 ms count and no hysteresis
}

TEST_CASE("fleet service: the split follows the workers up (re-searched when a kind scales)", "[serve][fleet]") {
  core::FleetTables fleet;
  fleet.classes = {test::split_fixture_class()};  // a and b, one worker each, 50/50
  NamedGroup a("a"), b("b");
  a.workers = b.workers = 1;
  core::VirtualClock clock;
  FleetService service(fleet, {{&a, &b}}, clock, 3);
  const auto send = [&](int n) {
    a.served = b.served = 0;
    for (int i = 0; i < n; ++i) {
      clock.advance_to_us(clock.now_us() + 10'000);
      service.serve_class_async("", "x", 0, [](Answer) {});
    }
  };
  send(2000);
  CHECK(b.served == Approx(1000).margin(100));  // the file's 50/50
  b.workers = 3;                                // b scaled out: 25/75 is the most accurate split
  send(2000);
  CHECK(b.served == Approx(1500).margin(100));
  CHECK(service.metrics_text().find("lull_fleet_kind_weight{class=\"interactive\",kind=\"b\"} 0.75") !=
        std::string::npos);
  a.workers = 0;  // a's worker ejected: all on b
  send(500);
  CHECK(a.served <= 10);  // at most the arrivals before the count is read again (100 ms)
  b.workers = 5;          // a count the library lacks: the file's weights
  a.workers = 1;
  send(2000);
  CHECK(b.served == Approx(1000).margin(100));
}

TEST_CASE("fleet service: a kind of weight 0 is never drawn", "[serve][fleet]") {
  CHECK(FleetService::pick_kind({0.0, 1.0}, 0.0) == 1);
  CHECK(FleetService::pick_kind({0.5, 0.0, 0.5}, 0.5) == 2);
  CHECK(FleetService::pick_kind({0.5, 0.5, 0.0}, 0.9999999999) == 1);
  CHECK(FleetService::pick_kind({0.3, 0.7}, 0.2999) == 0);
}

TEST_CASE("fleet metrics: each family once, every sample with its group's labels, process-wide ones dropped",
          "[serve][fleet]") {
  const std::string a =
      "# HELP lull_q Q.\n# TYPE lull_q counter\nlull_q 3\n# HELP lull_w W.\n# TYPE lull_w gauge\n"
      "lull_w{worker=\"0\"} 1\nlull_w{} 2\n# HELP lull_build_info B.\n# TYPE lull_build_info gauge\n"
      "lull_build_info{version=\"1\"} 1\n# HELP lull_h H.\n# TYPE lull_h histogram\nlull_h_bucket{le=\"+Inf\"} 3\n"
      "lull_h_sum 0.5\nlull_h_count 3\n";
  const std::string b = "# HELP lull_q Q.\n# TYPE lull_q counter\nlull_q 4\n";
  const std::string merged = merge_group_metrics({{"class=\"x\",kind=\"k\"", a}, {"class=\"y\",kind=\"k\"", b}});
  CHECK(merged ==
        "# HELP lull_q Q.\n# TYPE lull_q counter\nlull_q{class=\"x\",kind=\"k\"} 3\nlull_q{class=\"y\",kind=\"k\"} 4\n"
        "# HELP lull_w W.\n# TYPE lull_w gauge\nlull_w{class=\"x\",kind=\"k\",worker=\"0\"} 1\n"
        "lull_w{class=\"x\",kind=\"k\"} 2\n"
        "# HELP lull_h H.\n# TYPE lull_h histogram\nlull_h_bucket{class=\"x\",kind=\"k\",le=\"+Inf\"} 3\n"
        "lull_h_sum{class=\"x\",kind=\"k\"} 0.5\nlull_h_count{class=\"x\",kind=\"k\"} 3\n");
}
