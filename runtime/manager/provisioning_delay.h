#pragma once
// How long a simulated worker takes from "start" to "up": a fixed value, or
// drawn from a distribution with a seed. The draws are written out here
// (splitmix64 and inverse transforms) rather than taken from <random>, whose
// distributions differ between standard libraries, so a seed gives the same
// delays on every build.
#include <cstdint>
#include <string>

namespace lull::manager {

class ProvisioningDelay {
 public:
  enum class Kind { kFixed, kUniform, kExponential };
  static ProvisioningDelay fixed(std::int64_t delay_us);
  // Uniform on [min_us, max_us].
  static ProvisioningDelay uniform(std::int64_t min_us, std::int64_t max_us, std::uint64_t seed);
  // min_us plus an exponential with mean mean_extra_us (a long right tail, as cold starts have).
  static ProvisioningDelay exponential(std::int64_t min_us, std::int64_t mean_extra_us, std::uint64_t seed);
  // "fixed:DELAY_S", "uniform:MIN_S:MAX_S" or "exp:MIN_S:MEAN_EXTRA_S" (seconds,
  // decimals allowed). Throws std::invalid_argument naming the text.
  static ProvisioningDelay parse(const std::string& spec, std::uint64_t seed);

  // The next delay (advances the generator; fixed delays never change).
  std::int64_t next_us();
  Kind kind() const { return kind_; }
  // The delay to plan ahead for (the autoscaler's default lead time): the
  // fixed value, the uniform maximum, or the minimum plus the mean extra.
  std::int64_t planning_us() const {
    return kind_ == Kind::kFixed ? a_us_ : kind_ == Kind::kUniform ? b_us_ : a_us_ + b_us_;
  }

 private:
  ProvisioningDelay(Kind kind, std::int64_t a_us, std::int64_t b_us, std::uint64_t seed);
  double next_unit();  // uniform on [0, 1)
  Kind kind_;
  std::int64_t a_us_, b_us_;
  std::uint64_t state_;
};

}  // namespace lull::manager
