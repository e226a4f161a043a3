#pragma once
// lull_http_responses_total{code}: every response the front end sends,
// counted by status code, including the refusals (400/404/413) that never
// reach the serve session. Thread-safe: HTTP threads count, /metrics renders.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace lull::serve {

class HttpResponseCounts {
 public:
  void count(int status);
  std::map<int, std::uint64_t> snapshot() const;
  // The family in Prometheus text (HELP, TYPE, one sample per code seen).
  std::string render() const;

 private:
  mutable std::mutex mu_;
  std::map<int, std::uint64_t> by_code_;
};

}  // namespace lull::serve
