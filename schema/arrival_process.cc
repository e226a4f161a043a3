#include "schema/arrival_process.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "schema/number_text.h"
#include "schema/rate_file.h"

namespace lull {
namespace {

const char* kExpected = "expected poisson, gamma:CV2 or batch:D";

double parse_parameter(const std::string& text, const std::string& flag, const std::string& name, double min,
                       bool min_allowed) {
  const double v = parse_trace_number(text, flag + " " + name);  // whole and finite, or throws
  if (min_allowed ? !(v >= min) : !(v > min))
    throw std::invalid_argument(flag + ": " + name + " must be " + (min_allowed ? ">= " : "> ") + number_text(min) +
                                ", got " + text);
  if (v > kMaxBurstiness)
    throw std::invalid_argument(flag + ": " + name + " must be at most " + number_text(kMaxBurstiness) + ", got " +
                                text);
  return v;
}

ArrivalProcess family_member(const std::string& family, const std::string& value, const std::string& flag) {
  if (family == "gamma") return ArrivalProcess::gamma(parse_parameter(value, flag, "gamma CV2", 0, false));
  return ArrivalProcess::batch(parse_parameter(value, flag, "batch D", 1, true));
}

}  // namespace

bool operator==(const ArrivalProcess& a, const ArrivalProcess& b) {
  return a.kind == b.kind && a.cv2 == b.cv2 && a.dispersion == b.dispersion;
}

std::vector<ArrivalProcess> parse_arrival_processes(const std::string& text, const std::string& flag) {
  const auto colon = text.find(':');
  const std::string family = text.substr(0, colon);
  if (colon == std::string::npos) return {parse_arrival_process(text, flag)};
  if (family != "gamma" && family != "batch") throw std::invalid_argument(flag + " '" + text + "': " + kExpected);
  std::vector<ArrivalProcess> out;
  std::stringstream values(text.substr(colon + 1));
  std::string v;
  while (std::getline(values, v, ',')) out.push_back(family_member(family, v, flag));
  if (out.empty() || text.back() == ',') throw std::invalid_argument(flag + " '" + text + "': empty value");
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (out[i] == out[j]) throw std::invalid_argument(flag + " '" + text + "': a value is listed twice");
  return out;
}

ArrivalProcess parse_arrival_process(const std::string& text, const std::string& flag, bool allow_uniform) {
  if (text == "poisson") return ArrivalProcess::poisson();
  if (allow_uniform && text == "uniform") return ArrivalProcess::uniform();
  const auto colon = text.find(':');
  const std::string family = text.substr(0, colon);
  if (colon != std::string::npos && (family == "gamma" || family == "batch")) {
    const std::string value = text.substr(colon + 1);
    if (value.find(',') != std::string::npos)
      throw std::invalid_argument(flag + " '" + text + "': one value expected here");
    return family_member(family, value, flag);
  }
  throw std::invalid_argument(flag + " '" + text + "': " + kExpected + (allow_uniform ? " or uniform" : ""));
}

std::vector<ArrivalStep> parse_arrival_schedule(const std::string& text, const std::string& flag, bool allow_uniform) {
  if (text.find('@') == std::string::npos) return {ArrivalStep{0, parse_arrival_process(text, flag, allow_uniform)}};
  std::vector<ArrivalStep> out;
  std::stringstream steps(text);
  std::string step;
  while (std::getline(steps, step, ',')) {
    const auto at = step.rfind('@');
    if (at == std::string::npos)
      throw std::invalid_argument(flag + " '" + text + "': step '" + step + "' has no @START_S");
    const double start = parse_trace_number(step.substr(at + 1), flag + " step start");
    if (out.empty() ? start != 0 : !(start > out.back().start_s))
      throw std::invalid_argument(flag + " '" + text + "': step starts must ascend strictly from 0, got " +
                                  step.substr(at + 1));
    out.push_back(ArrivalStep{start, parse_arrival_process(step.substr(0, at), flag, allow_uniform)});
  }
  if (out.empty() || text.back() == ',') throw std::invalid_argument(flag + " '" + text + "': empty step");
  return out;
}

std::string arrival_process_text(const ArrivalProcess& p) {
  auto num = [](double v) {  // the shortest text that reads back as the same double, without an exponent
    char buf[64];
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, v);
      if (std::strtod(buf, nullptr) == v) break;
    }
    if (std::strchr(buf, 'e') && std::fabs(v) < 1e15)  // 20 read as 2e+01: positional instead
      for (int decimals = 0; decimals <= 20; ++decimals) {
        std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
        if (std::strtod(buf, nullptr) == v) break;
      }
    return std::string(buf);
  };
  switch (p.kind) {
    case ArrivalProcess::Kind::kPoisson:
      return "poisson";
    case ArrivalProcess::Kind::kUniform:
      return "uniform";
    case ArrivalProcess::Kind::kGamma:
      return "gamma:" + num(p.cv2);
    case ArrivalProcess::Kind::kBatch:
      return "batch:" + num(p.dispersion);
  }
  return "poisson";
}

std::string arrival_estimate_text(const ArrivalProcess& p) {
  auto three = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    if (std::strchr(buf, 'e') && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", std::strtod(buf, nullptr));
    return std::strtod(buf, nullptr);
  };
  ArrivalProcess q = p;
  q.cv2 = three(p.cv2);
  q.dispersion = three(p.dispersion);
  return arrival_process_text(q);
}

}  // namespace lull
