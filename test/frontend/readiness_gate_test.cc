#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/frontend/readiness_gate.h"

using namespace lull::frontend;

namespace {

class FakeService final : public QueryService {
 public:
  Answer serve(std::string input) override {
    Answer a;
    a.body = "served " + input;
    return a;
  }
  std::string metrics_text() override { return "fake_metric 1\n"; }
  bool healthy() override { return up; }
  int workers_up() override { return up ? 2 : 0; }
  std::atomic<bool> up{true};
};

Answer ask(QueryService& s, const std::string& input, const std::string& query_class = "") {
  Answer out;
  int calls = 0;
  s.serve_class_async(query_class, input, 0, [&](Answer a) {
    out = std::move(a);
    ++calls;
  });
  REQUIRE(calls == 1);
  return out;
}

}  // namespace

TEST_CASE("a closed readiness gate answers every query 503 with Retry-After and says not ready", "[frontend][gate]") {
  ReadinessGate gate;
  CHECK_FALSE(gate.is_open());
  const Answer a = ask(gate, "x");
  CHECK(a.http_status == 503);
  CHECK(a.retry_after_s == 1);
  CHECK(a.body.find("waiting for the model servers") != std::string::npos);
  CHECK(gate.serve("y").http_status == 503);
  CHECK_FALSE(gate.healthy());
  CHECK(gate.workers_up() == 0);
  CHECK(gate.metrics_text().find("\nlull_ready 0\n") != std::string::npos);
}

TEST_CASE("an open readiness gate passes everything to the service", "[frontend][gate]") {
  ReadinessGate gate;
  FakeService service;
  gate.open(service);
  CHECK(gate.is_open());
  const Answer a = ask(gate, "x", "bulk");
  CHECK(a.http_status == 200);
  CHECK(a.body == "served x");
  CHECK(gate.healthy());
  CHECK(gate.workers_up() == 2);
  service.up = false;  // ready follows the service from here on
  CHECK_FALSE(gate.healthy());
  const std::string metrics = gate.metrics_text();
  CHECK(metrics.rfind("fake_metric 1\n", 0) == 0);
  CHECK(metrics.find("\nlull_ready 1\n") != std::string::npos);
}

TEST_CASE("queries arriving while the gate opens are each answered once, 503 or served", "[frontend][gate]") {
  ReadinessGate gate;
  FakeService service;
  std::atomic<int> refused{0}, served{0}, other{0};
  std::atomic<bool> go{true};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t)
    clients.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        gate.serve_async("q", 0, [&](Answer a) {
          if (a.http_status == 503)
            ++refused;
          else if (a.http_status == 200 && a.body == "served q")
            ++served;
          else
            ++other;
        });
        if (i == 500) go = false;
      }
    });
  while (go) std::this_thread::yield();
  gate.open(service);
  for (auto& c : clients) c.join();
  CHECK(refused + served == 8000);
  CHECK(other == 0);
  CHECK(ask(gate, "q").http_status == 200);  // once open, never 503 again
}
