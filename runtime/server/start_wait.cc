#include "runtime/server/start_wait.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace lull::server {

StartWait::StartWait(std::int64_t limit_us, std::int64_t retry_us) : limit_us_(limit_us), retry_us_(retry_us) { arm(); }

void StartWait::arm() {
  armed_ = std::chrono::steady_clock::now();
  deadline_ = armed_ + std::chrono::microseconds(limit_us_);
}

double StartWait::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - armed_).count();
}

bool StartWait::until(const std::string& what, const std::function<bool(std::string* why)>& attempt) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (interrupted_) return false;
    }
    std::string why;
    try {
      if (attempt(&why)) return true;
    } catch (const std::exception& e) {
      why = e.what();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline_) {
      char waited[32];
      std::snprintf(waited, sizeof waited, "%.3g", static_cast<double>(limit_us_) / 1e6);
      throw std::runtime_error(what + " were not ready within " + waited + " s (--wait-for-servers-s)" +
                               (why.empty() ? "" : ": " + why));
    }
    std::unique_lock<std::mutex> lock(mu_);
    const auto next = std::min(deadline_, now + std::chrono::microseconds(retry_us_));
    if (cv_.wait_until(lock, next, [this] { return interrupted_; })) return false;
  }
}

void StartWait::interrupt() {
  std::lock_guard<std::mutex> lock(mu_);
  interrupted_ = true;
  cv_.notify_all();
}

}  // namespace lull::server
