#include "schema/artifact_reader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "schema/json_reader.h"
#include "schema/one_line.h"

namespace lull {
namespace {

namespace fs = std::filesystem;
namespace dom = simdjson::dom;

// "<model>_bsize-<b>_profile.json" -> b, or 0 when the name does not match.
int batch_of_file_name(const std::string& file, const std::string& model) {
  const std::string head = model + "_bsize-", tail = "_profile.json";
  if (file.size() <= head.size() + tail.size() || file.compare(0, head.size(), head) != 0 ||
      file.compare(file.size() - tail.size(), tail.size(), tail) != 0)
    return 0;
  const std::string digits = file.substr(head.size(), file.size() - head.size() - tail.size());
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoi(digits);
}

std::vector<double> read_sample_list(json::JsonFileReader& reader, const std::string& path) {
  const dom::element root = json::parse_file_or_throw<ArtifactError>(reader, path, "JSON");
  dom::array list;
  if (root.get_array().get(list))
    throw ArtifactError(path + ": expected a JSON list of latencies in seconds, got " + json::describe(root));
  std::vector<double> out;
  out.reserve(list.size());
  for (dom::element x : list) {
    double v = 0;
    if (!json::to_double(x, &v) || x.type() == dom::element_type::STRING || !std::isfinite(v) || v <= 0)
      throw ArtifactError(path + ": entry " + std::to_string(out.size()) +
                          " must be a positive number of seconds, got " + json::describe(x));
    out.push_back(v);
  }
  if (out.empty()) throw ArtifactError(path + ": no samples");
  return out;
}

}  // namespace

std::vector<ArtifactFile> list_artifact_files(const std::string& dir, const std::vector<std::string>& only) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw ArtifactError(dir + ": not a directory of artifact profiles");
  std::vector<fs::path> model_dirs;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && (only.empty() || std::find(only.begin(), only.end(), name) != only.end()))
      model_dirs.push_back(e.path());
  }
  std::sort(model_dirs.begin(), model_dirs.end());
  std::vector<ArtifactFile> out;
  for (const auto& mdir : model_dirs) {
    const std::string model = mdir.filename().string();
    const std::size_t first = out.size();
    for (const auto& f : fs::directory_iterator(mdir)) {
      const int b = batch_of_file_name(f.path().filename().string(), model);
      if (b > 0) out.push_back(ArtifactFile{model, b, f.path().string()});
    }
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
              [](const ArtifactFile& a, const ArtifactFile& b) { return a.batch < b.batch; });
  }
  return out;
}

std::vector<ArtifactModel> read_artifact_profiles(const std::string& dir, const std::vector<std::string>& only) {
  json::JsonFileReader reader;  // one parser for every file
  std::vector<ArtifactModel> out;
  for (const auto& f : list_artifact_files(dir, only)) {
    if (out.empty() || out.back().name != f.model) out.push_back(ArtifactModel{f.model, {}});
    out.back().samples_s[f.batch] = read_sample_list(reader, f.path);
  }
  return out;
}

std::map<std::string, double> read_artifact_accuracy_percent(const std::string& path) {
  json::JsonFileReader reader;
  const dom::element root = json::parse_file_or_throw<ArtifactError>(reader, path, "JSON");
  dom::object table;
  if (root.get_object().get(table)) throw ArtifactError(path + ": expected a JSON object of accuracies in percent");
  dom::element nested;
  if (!table["accuracy"].get(nested)) {
    if (nested.get_object().get(table)) throw ArtifactError(path + ": field 'accuracy' must be an object");
  }
  std::map<std::string, double> out;
  for (const auto field : table) {
    double v = 0;
    if (field.value.type() == dom::element_type::STRING || !json::to_double(field.value, &v))
      throw ArtifactError(path + ": accuracy." + one_line(field.key) + " must be a number (percent)");
    out[std::string(field.key)] = v;
  }
  return out;
}

std::string read_artifact_task(const std::string& path) {
  json::JsonFileReader reader;
  const dom::element root = json::parse_file_or_throw<ArtifactError>(reader, path, "JSON");
  dom::element task;
  if (root["task"].get(task)) return "";
  std::string_view name;
  if (task.get_string().get(name)) throw ArtifactError(path + ": field 'task' must be a string");
  return std::string(name);
}

}  // namespace lull
