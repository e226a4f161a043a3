// Seeded provisioning delays (why: see provisioning_delay.h).
#include "runtime/manager/provisioning_delay.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace lull::manager {

ProvisioningDelay::ProvisioningDelay(Kind kind, std::int64_t a_us, std::int64_t b_us, std::uint64_t seed)
    : kind_(kind), a_us_(a_us), b_us_(b_us), state_(seed) {
  if (a_us < 0 || b_us < 0) throw std::invalid_argument("provisioning delay: negative duration");
  if (kind == Kind::kUniform && b_us < a_us)
    throw std::invalid_argument("provisioning delay: uniform maximum below its minimum");
}

ProvisioningDelay ProvisioningDelay::fixed(std::int64_t delay_us) { return {Kind::kFixed, delay_us, 0, 0}; }
ProvisioningDelay ProvisioningDelay::uniform(std::int64_t min_us, std::int64_t max_us, std::uint64_t seed) {
  return {Kind::kUniform, min_us, max_us, seed};
}
ProvisioningDelay ProvisioningDelay::exponential(std::int64_t min_us, std::int64_t mean_extra_us, std::uint64_t seed) {
  return {Kind::kExponential, min_us, mean_extra_us, seed};
}

ProvisioningDelay ProvisioningDelay::parse(const std::string& spec, std::uint64_t seed) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("provisioning delay '" + spec + "': " + why +
                                 " (fixed:S, uniform:MIN_S:MAX_S or exp:MIN_S:MEAN_EXTRA_S)");
  };
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    auto colon = spec.find(':', start);
    parts.push_back(spec.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  std::vector<std::int64_t> us;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    char* end = nullptr;
    const double s = std::strtod(parts[i].c_str(), &end);
    if (parts[i].empty() || *end != '\0' || !std::isfinite(s) || s < 0 || s > 86400)
      throw bad("'" + parts[i] + "' is not a number of seconds in [0, 86400]");
    us.push_back(static_cast<std::int64_t>(std::llround(s * 1e6)));
  }
  if (parts[0] == "fixed" && us.size() == 1) return fixed(us[0]);
  if (parts[0] == "uniform" && us.size() == 2) {
    if (us[1] < us[0]) throw bad("maximum below minimum");
    return uniform(us[0], us[1], seed);
  }
  if (parts[0] == "exp" && us.size() == 2) return exponential(us[0], us[1], seed);
  throw bad("unknown form");
}

double ProvisioningDelay::next_unit() {
  // splitmix64: one 64-bit step, top 53 bits as a double in [0, 1).
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

std::int64_t ProvisioningDelay::next_us() {
  switch (kind_) {
    case Kind::kFixed:
      return a_us_;
    case Kind::kUniform:
      return a_us_ + static_cast<std::int64_t>(std::floor(next_unit() * static_cast<double>(b_us_ - a_us_ + 1)));
    case Kind::kExponential:
      return a_us_ + static_cast<std::int64_t>(std::llround(-static_cast<double>(b_us_) * std::log1p(-next_unit())));
  }
  return a_us_;
}

}  // namespace lull::manager
