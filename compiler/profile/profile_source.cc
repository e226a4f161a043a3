#include "compiler/profile/profile_source.h"

#include <filesystem>
#include <stdexcept>

#include "compiler/profile/artifact_import.h"
#include "schema/profile_file.h"

namespace lull::compiler {

schema::ProfileSet load_profile_source(const std::string& path, const std::string& accuracy_json,
                                       const std::string& task, const std::vector<std::string>& models) {
  if (std::filesystem::is_directory(path)) {
    if (accuracy_json.empty())
      throw std::runtime_error(path + ": an artifact profile folder needs --accuracy-percent ACC.json");
    return import_artifact_profiles(path, accuracy_json, task, models);
  }
  auto set = read_profile_set_json(path);
  if (!task.empty()) set.set_task(task);
  return set;
}

}  // namespace lull::compiler
