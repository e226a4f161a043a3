#pragma once
// What the front end serves while lull is not ready yet (`lull serve
// --wait-for-servers-s`: bound before its model servers answer): a
// QueryService that answers every query 503 with Retry-After and says
// "unhealthy" (/ping 500, /v2/health/ready 503; /v2/health/live stays 200)
// until open() hands it the service to pass everything to from then on.
// No query is held or dropped: each one is answered at once, by the gate or
// by the service. open() may run on any thread while requests arrive.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "runtime/frontend/frontend.h"

namespace lull::frontend {

class ReadinessGate : public QueryService {
 public:
  // `waiting_for`: the end of the 503 message while closed ("the model servers").
  explicit ReadinessGate(std::string waiting_for = "the model servers");
  // From here on every call goes to `service`, which outlives the gate's use.
  void open(QueryService& service);
  bool is_open() const { return service_.load() != nullptr; }

  Answer serve(std::string input) override;
  void serve_async(std::string input, std::int64_t waited_us, std::function<void(Answer)> done) override;
  void serve_class_async(const std::string& query_class, std::string input, std::int64_t waited_us,
                         std::function<void(Answer)> done) override;
  std::string metrics_text() override;
  bool healthy() override;
  int workers_up() override;

 private:
  Answer not_ready() const;
  std::string waiting_for_;
  std::atomic<QueryService*> service_{nullptr};
};

}  // namespace lull::frontend
