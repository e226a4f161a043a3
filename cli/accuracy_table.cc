#include "cli/accuracy_table.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "cli/commands.h"
#include "schema/bounded_file.h"

namespace lull::cli {

std::map<std::string, double> read_accuracy_fractions(const std::string& path) {
  google::protobuf::Struct s;
  std::string text;
  try {
    text = read_bounded_file(path, FileKind::kSettings);
  } catch (const FileReadError& e) {
    throw UsageError(e.what());
  }
  if (!google::protobuf::util::JsonStringToMessage(text, &s).ok())
    throw UsageError(path + ": not a JSON object of model -> accuracy");
  std::map<std::string, double> out;
  for (const auto& [name, v] : s.fields()) {
    if (!name.empty() && name[0] == '_') continue;
    if (v.kind_case() != google::protobuf::Value::kNumberValue || v.number_value() < 0 || v.number_value() > 1)
      throw UsageError(
          path + ": " + name +
          ": accuracy must be a fraction in [0, 1] (a percent table is --accuracy-percent, for the compile commands)");
    out[name] = v.number_value();
  }
  return out;
}

}  // namespace lull::cli
