#include "schema/modulated_rates.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace lull {
namespace {

std::vector<std::string> fields_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t at; (at = text.find(':', from)) != std::string::npos; from = at + 1)
    out.push_back(text.substr(from, at - from));
  out.push_back(text.substr(from));
  return out;
}

double number(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v))
    throw std::invalid_argument(what + ": expected a number, got '" + text + "'");
  return v;
}

}  // namespace

bool names_modulation(const std::string& text) {
  return text.rfind("mmpp:", 0) == 0 || text.rfind("sinusoid:", 0) == 0;
}

Modulation parse_modulation(const std::string& text, const std::string& flag) {
  const auto f = fields_of(text);
  Modulation m;
  if (f.size() != 3 || !names_modulation(text))
    throw std::invalid_argument(flag + " '" + text + "': expected mmpp:RATIO:STATE_S or sinusoid:AMPLITUDE:PERIOD_S");
  if (f[0] == "mmpp") {
    m.kind = Modulation::Kind::kMmpp;
    m.ratio = number(f[1], flag + " mmpp RATIO");
    m.state_s = number(f[2], flag + " mmpp STATE_S");
    if (!(m.ratio >= 1 && m.ratio <= 1000))
      throw std::invalid_argument(flag + " mmpp: RATIO must be within [1, 1000], got " + f[1]);
    if (!(m.state_s >= 0.01 && m.state_s <= 86400))
      throw std::invalid_argument(flag + " mmpp: STATE_S must be within [0.01, 86400] s, got " + f[2]);
  } else {
    m.kind = Modulation::Kind::kSinusoid;
    m.amplitude = number(f[1], flag + " sinusoid AMPLITUDE");
    m.period_s = number(f[2], flag + " sinusoid PERIOD_S");
    if (!(m.amplitude >= 0 && m.amplitude <= 1))
      throw std::invalid_argument(flag + " sinusoid: AMPLITUDE must be within [0, 1], got " + f[1]);
    if (!(m.period_s >= 0.1 && m.period_s <= 86400))
      throw std::invalid_argument(flag + " sinusoid: PERIOD_S must be within [0.1, 86400] s, got " + f[2]);
  }
  return m;
}

std::vector<RateSegment> modulated_rate_segments(const Modulation& m, double mean_qps, double duration_s,
                                                 std::uint64_t seed) {
  if (!(mean_qps > 0) || !(duration_s > 0))
    throw std::invalid_argument("modulated_rate_segments: rate and duration must be positive");
  std::mt19937_64 rng(seed ^ 0x6d6f64756c617465ULL);
  std::vector<RateSegment> out;
  if (m.kind == Modulation::Kind::kMmpp) {
    // Equal mean times in the states: the mean rate is (high + low) / 2.
    const double low = 2 * mean_qps / (m.ratio + 1), high = m.ratio * low;
    std::exponential_distribution<double> stay(1 / m.state_s);
    bool up = std::bernoulli_distribution(0.5)(rng);
    for (double t = 0; t < duration_s; up = !up) {
      const double end = std::min(duration_s, t + stay(rng));
      out.push_back({t, end, up ? high : low});
      t = end;
    }
    return out;
  }
  const double phase = std::uniform_real_distribution<double>(0, 2 * M_PI)(rng);
  const double piece = std::min(1.0, m.period_s / 100), w = 2 * M_PI / m.period_s;
  for (double t = 0; t < duration_s; t += piece) {
    const double end = std::min(duration_s, t + piece);
    // The piece's mean of mean (1 + A sin(w u + phase)) over [t, end).
    const double integral = (end - t) - m.amplitude / w * (std::cos(w * end + phase) - std::cos(w * t + phase));
    out.push_back({t, end, std::max(0.0, mean_qps * integral / (end - t))});
  }
  return out;
}

}  // namespace lull
