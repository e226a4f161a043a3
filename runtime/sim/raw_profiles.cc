#include "runtime/sim/raw_profiles.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include "schema/atomic_file.h"
#include "schema/profile_file.h"

namespace lull::sim {
namespace {

namespace fs = std::filesystem;

// A JSON list of numbers, e.g. "[0.041, 0.020]": small enough to parse by hand.
std::vector<double> parse_json_number_list(const std::string& text, const std::string& path) {
  const auto open = text.find('[');
  const auto close = text.rfind(']');
  if (open == std::string::npos || close == std::string::npos || close < open)
    throw std::runtime_error(path + ": expected a JSON list of latencies in seconds");
  std::vector<double> out;
  const char* p = text.c_str() + open + 1;
  const char* end = text.c_str() + close;
  while (p < end) {
    while (p < end && (std::isspace(static_cast<unsigned char>(*p)) || *p == ',')) ++p;
    if (p >= end) break;
    char* next = nullptr;
    const double v = std::strtod(p, &next);
    if (next == p || !std::isfinite(v) || v <= 0)
      throw std::runtime_error(path + ": entry " + std::to_string(out.size()) + " is not a positive number");
    out.push_back(v * 1e6);
    p = next;
  }
  if (out.empty()) throw std::runtime_error(path + ": no samples");
  return out;
}

bool wanted(const std::vector<std::string>& models, const std::string& name) {
  if (models.empty()) return true;
  for (const auto& m : models)
    if (m == name) return true;
  return false;
}

RawProfiles load_artifact_dir(const std::string& dir, const std::vector<std::string>& models) {
  RawProfiles out;
  const std::regex file_re(R"((.+)_bsize-(\d+)_profile\.json)");
  for (const auto& model_dir : fs::directory_iterator(dir)) {
    if (!model_dir.is_directory()) continue;
    const std::string name = model_dir.path().filename().string();
    if (!wanted(models, name)) continue;
    for (const auto& f : fs::directory_iterator(model_dir.path())) {
      std::smatch m;
      const std::string fname = f.path().filename().string();
      if (!std::regex_match(fname, m, file_re) || m[1] != name) continue;
      out[name][std::stoi(m[2])] = parse_json_number_list(lull::read_whole_file(f.path().string()), f.path().string());
    }
  }
  return out;
}

RawProfiles load_profile_json(const std::string& path, const std::vector<std::string>& models) {
  const auto set = lull::read_profile_set_json(path);
  RawProfiles out;
  for (const auto& m : set.models()) {
    if (!wanted(models, m.name())) continue;
    for (const auto& bl : m.latencies()) {
      std::vector<double> us;
      for (double s : bl.samples_s()) us.push_back(s * 1e6);
      if (us.empty() && bl.latency_s() > 0) us.push_back(bl.latency_s() * 1e6);
      if (us.empty()) throw std::runtime_error(path + ": model " + m.name() + " batch " + std::to_string(bl.batch()) + " has no latency");
      out[m.name()][static_cast<int>(bl.batch())] = std::move(us);
    }
  }
  return out;
}

}  // namespace

RawProfiles load_raw_profiles(const std::string& path, const std::vector<std::string>& models) {
  if (!fs::exists(path)) throw std::runtime_error(path + ": profiles not found");
  RawProfiles out = fs::is_directory(path) ? load_artifact_dir(path, models) : load_profile_json(path, models);
  for (const auto& m : models)
    if (out.find(m) == out.end() || out[m].empty()) throw std::runtime_error(path + ": no latency samples for model " + m);
  return out;
}

}  // namespace lull::sim
