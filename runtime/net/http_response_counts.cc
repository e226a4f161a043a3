#include "runtime/net/http_response_counts.h"

#include "runtime/net/prometheus_text.h"

namespace lull::net {

void HttpResponseCounts::count(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  by_code_[status]++;
}

std::map<int, std::uint64_t> HttpResponseCounts::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_code_;
}

std::string HttpResponseCounts::render() const {
  std::string out;
  prom::family(out, "lull_http_responses_total", "counter", "HTTP responses sent by the front end, by status code.");
  for (const auto& [code, n] : snapshot())
    prom::sample(out, "lull_http_responses_total{code=\"" + std::to_string(code) + "\"}", static_cast<double>(n));
  return out;
}

}  // namespace lull::net
