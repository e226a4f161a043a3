#include "compiler/profile/artifact_import.h"

#include <filesystem>
#include <stdexcept>

#include "schema/artifact_reader.h"

namespace lull::compiler {

std::string artifact_task_name(const std::string& accuracy_json) {
  const std::string field = read_artifact_task(accuracy_json);
  if (!field.empty()) return field;
  const std::string file = std::filesystem::path(accuracy_json).filename().string();
  const std::string tail = "_accuracy.json";
  if (file.size() > tail.size() && file.compare(file.size() - tail.size(), tail.size(), tail) == 0)
    return file.substr(0, file.size() - tail.size());
  return "image";
}

namespace {

// The set's task, provenance and models with their accuracies, in the order
// of `names`; the caller fills each model's latencies.
schema::ProfileSet artifact_set(const std::vector<std::string>& names, const std::string& dir,
                                const std::string& accuracy_json, const std::string& task) {
  if (names.empty()) throw std::runtime_error(dir + ": no <model>/<model>_bsize-<b>_profile.json files found");
  const auto accuracy = read_artifact_accuracy_percent(accuracy_json);
  schema::ProfileSet set;
  set.set_task(task.empty() ? artifact_task_name(accuracy_json) : task);
  set.set_provenance("imported from RAMSIS artifact profiles at " + dir);
  for (const auto& name : names) {
    const auto acc = accuracy.find(name);
    if (acc == accuracy.end())
      throw std::runtime_error(accuracy_json + ": no accuracy for model '" + name + "' found in " + dir);
    auto* model = set.add_models();
    model->set_name(name);
    model->set_accuracy(acc->second / 100.0);
  }
  return set;
}

template <class Model>
std::vector<std::string> names_of(const std::vector<Model>& models) {
  std::vector<std::string> out;
  for (const auto& m : models) out.push_back(m.name);
  return out;
}

}  // namespace

schema::ProfileSet import_artifact_profiles(const std::string& dir, const std::string& accuracy_json,
                                            const std::string& task, const std::vector<std::string>& only) {
  const auto models = read_artifact_profiles(dir, only);
  schema::ProfileSet set = artifact_set(names_of(models), dir, accuracy_json, task);
  for (std::size_t i = 0; i < models.size(); ++i)
    for (const auto& [b, samples] : models[i].samples_s) {
      auto* lat = set.mutable_models(static_cast<int>(i))->add_latencies();
      lat->set_batch(static_cast<unsigned>(b));
      lat->mutable_samples_s()->Add(samples.begin(), samples.end());
    }
  return set;
}

schema::ProfileSet import_reduced_artifact(const std::vector<ReducedArtifactModel>& models, const std::string& dir,
                                           const std::string& accuracy_json, const std::string& task) {
  schema::ProfileSet set = artifact_set(names_of(models), dir, accuracy_json, task);
  for (std::size_t i = 0; i < models.size(); ++i)
    for (const auto& [b, reduced] : models[i].by_batch) {
      auto* lat = set.mutable_models(static_cast<int>(i))->add_latencies();
      lat->set_batch(static_cast<unsigned>(b));
      lat->set_latency_s(reduced.at_percentile_s);
    }
  return set;
}

}  // namespace lull::compiler
