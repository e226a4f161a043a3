#pragma once
// Time is injected so the simulator drives the very same dispatcher as the
// real server: a wall clock and a virtual clock implement one interface.
#include <chrono>
#include <cstdint>

namespace lull::core {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::int64_t now_us() const = 0;
};

class WallClock final : public Clock {
 public:
  std::int64_t now_us() const override {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

class VirtualClock final : public Clock {
 public:
  std::int64_t now_us() const override { return now_us_; }
  void advance_to_us(std::int64_t t_us) { now_us_ = t_us; }

 private:
  std::int64_t now_us_ = 0;
};

}  // namespace lull::core
