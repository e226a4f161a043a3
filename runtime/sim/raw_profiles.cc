#include "runtime/sim/raw_profiles.h"

#include <filesystem>
#include <stdexcept>

#include "schema/artifact_reader.h"
#include "schema/latency_limit.h"
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

void check_latency(double seconds, double slo_ms, const std::string& at) {
  const std::string why = latency_problem(seconds, slo_ms);
  if (!why.empty()) throw std::runtime_error(at + ": " + why);
}

RawProfiles load_artifact_dir(const std::string& dir, const std::vector<std::string>& models, double slo_ms) {
  RawProfiles out;
  for (auto& model : lull::read_artifact_profiles(dir, models))
    for (auto& [batch, samples] : model.samples_s) {
      for (std::size_t i = 0; i < samples.size(); ++i)
        check_latency(
            samples[i], slo_ms,
            dir + ": model " + model.name + " batch " + std::to_string(batch) + " sample " + std::to_string(i));
      for (double& s : samples) s *= 1e6;
      out[model.name][batch] = std::move(samples);
    }
  return out;
}

RawProfiles load_profile_json(const std::string& path, const std::vector<std::string>& models, double slo_ms) {
  const auto set = lull::read_profile_set_json(path);
  RawProfiles out;
  for (int i = 0; i < set.models_size(); ++i) {
    const auto& m = set.models(i);
    if (!wanted(models, m.name())) continue;
    for (int k = 0; k < m.latencies_size(); ++k) {
      const auto& bl = m.latencies(k);
      const std::string at =
          path + ": models[" + std::to_string(i) + "] (" + m.name() + ").latencies[" + std::to_string(k) + "]";
      std::vector<double> us;
      for (int s = 0; s < bl.samples_s_size(); ++s) {
        check_latency(bl.samples_s(s), slo_ms, at + ".samples_s[" + std::to_string(s) + "]");
        us.push_back(bl.samples_s(s) * 1e6);
      }
      if (us.empty() && bl.latency_s() != 0) {
        check_latency(bl.latency_s(), slo_ms, at + ".latency_s");
        us.push_back(bl.latency_s() * 1e6);
      }
      if (us.empty())
        throw std::runtime_error(path + ": model " + m.name() + " batch " + std::to_string(bl.batch()) +
                                 " has no latency");
      out[m.name()][static_cast<int>(bl.batch())] = std::move(us);
    }
  }
  return out;
}

}  // namespace

RawProfiles load_raw_profiles(const std::string& path, const std::vector<std::string>& models, double slo_ms) {
  if (!fs::exists(path)) throw std::runtime_error(path + ": profiles not found");
  RawProfiles out =
      fs::is_directory(path) ? load_artifact_dir(path, models, slo_ms) : load_profile_json(path, models, slo_ms);
  for (const auto& m : models)
    if (out.find(m) == out.end() || out[m].empty())
      throw std::runtime_error(path + ": no latency samples for model " + m);
  return out;
}

}  // namespace lull::sim
