#include "runtime/frontend/readiness_gate.h"

#include "runtime/net/prometheus_text.h"

namespace lull::frontend {

ReadinessGate::ReadinessGate(std::string waiting_for) : waiting_for_(std::move(waiting_for)) {}

void ReadinessGate::open(QueryService& service) { service_.store(&service); }

Answer ReadinessGate::not_ready() const {
  Answer a;
  a.http_status = 503;
  a.body = "not ready: lull is waiting for " + waiting_for_ + "; retry";
  a.retry_after_s = 1;
  return a;
}

Answer ReadinessGate::serve(std::string input) {
  if (QueryService* s = service_.load()) return s->serve(std::move(input));
  return not_ready();
}

void ReadinessGate::serve_async(std::string input, std::int64_t waited_us, std::function<void(Answer)> done) {
  if (QueryService* s = service_.load()) return s->serve_async(std::move(input), waited_us, std::move(done));
  done(not_ready());
}

void ReadinessGate::serve_class_async(const std::string& query_class, std::string input, std::int64_t waited_us,
                                      std::function<void(Answer)> done) {
  if (QueryService* s = service_.load())
    return s->serve_class_async(query_class, std::move(input), waited_us, std::move(done));
  done(not_ready());
}

std::string ReadinessGate::metrics_text() {
  QueryService* s = service_.load();
  std::string out = s ? s->metrics_text() : std::string();
  net::prom::family(out, "lull_ready", "gauge", "1 once lull serves queries; 0 while it waits to start.");
  net::prom::sample(out, "lull_ready", s ? 1 : 0);
  return out;
}

bool ReadinessGate::healthy() {
  QueryService* s = service_.load();
  return s && s->healthy();
}

int ReadinessGate::workers_up() {
  QueryService* s = service_.load();
  return s ? s->workers_up() : 0;
}

}  // namespace lull::frontend
