#pragma once
// `lull serve --wait-for-servers-s`: a start-up step retried until it passes
// or the wait's deadline, one deadline for every step. Without a wait
// (limit 0) a step runs once and its error is the caller's, as it was.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace lull::server {

class StartWait {
 public:
  // limit_us: how long the steps may take in all, from arm(); retry_us:
  // between tries of a step.
  StartWait(std::int64_t limit_us, std::int64_t retry_us);
  bool enabled() const { return limit_us_ > 0; }
  // The deadline is limit_us from now.
  void arm();
  // Runs `attempt` until it returns true; a throw, or false with *why set,
  // is a failed try (its message kept). True once it passed; false once
  // interrupted. Past the deadline: std::runtime_error naming `what` and
  // the last try's message, on one line.
  bool until(const std::string& what, const std::function<bool(std::string* why)>& attempt);
  // Any thread: the wait in progress (and every later one) ends at once.
  void interrupt();
  // Seconds since arm() (for the log).
  double elapsed_s() const;

 private:
  std::int64_t limit_us_, retry_us_;
  std::chrono::steady_clock::time_point armed_, deadline_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool interrupted_ = false;
};

}  // namespace lull::server
