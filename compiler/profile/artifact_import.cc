#include "compiler/profile/artifact_import.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <filesystem>
#include <map>
#include <regex>
#include <stdexcept>

#include "schema/atomic_file.h"

namespace lull::compiler {
namespace fs = std::filesystem;
namespace {

template <class Msg>
Msg parse_json(const std::string& path) {
  Msg msg;
  const auto status = google::protobuf::util::JsonStringToMessage(read_whole_file(path), &msg);
  if (!status.ok()) throw std::runtime_error(path + ": malformed JSON: " + std::string(status.message()));
  return msg;
}

std::map<std::string, double> read_accuracy_percent(const std::string& path) {
  const auto root = parse_json<google::protobuf::Struct>(path);
  const auto it = root.fields().find("accuracy");
  const google::protobuf::Struct* table = &root;
  if (it != root.fields().end()) {
    if (!it->second.has_struct_value()) throw std::runtime_error(path + ": field 'accuracy' must be an object");
    table = &it->second.struct_value();
  }
  std::map<std::string, double> out;
  for (const auto& [name, v] : table->fields()) {
    if (!v.has_number_value()) throw std::runtime_error(path + ": accuracy." + name + " must be a number (percent)");
    out[name] = v.number_value();
  }
  return out;
}

}  // namespace

schema::ProfileSet import_artifact_profiles(const std::string& dir, const std::string& accuracy_json,
                                            const std::string& task) {
  if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": not a directory of artifact profiles");
  const auto accuracy = read_accuracy_percent(accuracy_json);
  const std::regex file_re(R"((.+)_bsize-(\d+)_profile\.json)");
  schema::ProfileSet set;
  set.set_task(task);
  set.set_provenance("imported from RAMSIS artifact profiles at " + dir);
  std::vector<fs::path> model_dirs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) model_dirs.push_back(e.path());
  std::sort(model_dirs.begin(), model_dirs.end());
  for (const auto& mdir : model_dirs) {
    const std::string name = mdir.filename().string();
    std::map<int, fs::path> files;
    for (const auto& f : fs::directory_iterator(mdir)) {
      std::smatch m;
      const std::string fname = f.path().filename().string();
      if (std::regex_match(fname, m, file_re) && m[1] == name) files[std::stoi(m[2])] = f.path();
    }
    if (files.empty()) continue;
    const auto acc = accuracy.find(name);
    if (acc == accuracy.end())
      throw std::runtime_error(accuracy_json + ": no accuracy for model '" + name + "' found in " + dir);
    auto* model = set.add_models();
    model->set_name(name);
    model->set_accuracy(acc->second / 100.0);
    for (const auto& [b, path] : files) {
      const auto list = parse_json<google::protobuf::ListValue>(path.string());
      auto* lat = model->add_latencies();
      lat->set_batch(static_cast<unsigned>(b));
      for (const auto& v : list.values()) {
        if (!v.has_number_value()) throw std::runtime_error(path.string() + ": every sample must be a number of seconds");
        lat->add_samples_s(v.number_value());
      }
    }
  }
  if (set.models_size() == 0) throw std::runtime_error(dir + ": no <model>/<model>_bsize-<b>_profile.json files found");
  return set;
}

}  // namespace lull::compiler
