#include "runtime/sim/raw_profiles.h"

#include <filesystem>
#include <stdexcept>

#include "schema/artifact_reader.h"
#include "schema/profile_file.h"

namespace lull::sim {
namespace {

namespace fs = std::filesystem;

bool wanted(const std::vector<std::string>& models, const std::string& name) {
  if (models.empty()) return true;
  for (const auto& m : models)
    if (m == name) return true;
  return false;
}

RawProfiles load_artifact_dir(const std::string& dir, const std::vector<std::string>& models) {
  RawProfiles out;
  for (auto& model : lull::read_artifact_profiles(dir, models))
    for (auto& [batch, samples] : model.samples_s) {
      for (double& s : samples) s *= 1e6;
      out[model.name][batch] = std::move(samples);
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
