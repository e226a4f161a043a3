#pragma once
// lull_http_responses_total{code}: every response the front end sends,
// counted by status code, including the refusals (400/404/413) that never
// reach the serve session. Thread-safe: HTTP threads count, /metrics renders.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace lull::net {

class HttpResponseCounts {
 public:
  // The codes lull sends start at 0, so that rate() and increase() see their
  // first response (a series that appears at 1 has no increase before it).
  HttpResponseCounts() : by_code_{{200, 0}, {400, 0}, {404, 0}, {413, 0}, {503, 0}, {504, 0}} {}
  void count(int status);
  std::map<int, std::uint64_t> snapshot() const;
  // The family in Prometheus text (HELP, TYPE, one sample per code seen).
  std::string render() const;

 private:
  mutable std::mutex mu_;
  std::map<int, std::uint64_t> by_code_;
};

}  // namespace lull::net
