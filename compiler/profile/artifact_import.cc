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

schema::ProfileSet import_artifact_profiles(const std::string& dir, const std::string& accuracy_json,
                                            const std::string& task, const std::vector<std::string>& only) {
  const auto models = read_artifact_profiles(dir, only);
  if (models.empty()) throw std::runtime_error(dir + ": no <model>/<model>_bsize-<b>_profile.json files found");
  const auto accuracy = read_artifact_accuracy_percent(accuracy_json);
  schema::ProfileSet set;
  set.set_task(task.empty() ? artifact_task_name(accuracy_json) : task);
  set.set_provenance("imported from RAMSIS artifact profiles at " + dir);
  for (const auto& m : models) {
    const auto acc = accuracy.find(m.name);
    if (acc == accuracy.end())
      throw std::runtime_error(accuracy_json + ": no accuracy for model '" + m.name + "' found in " + dir);
    auto* model = set.add_models();
    model->set_name(m.name);
    model->set_accuracy(acc->second / 100.0);
    for (const auto& [b, samples] : m.samples_s) {
      auto* lat = model->add_latencies();
      lat->set_batch(static_cast<unsigned>(b));
      lat->mutable_samples_s()->Add(samples.begin(), samples.end());
    }
  }
  return set;
}

}  // namespace lull::compiler
