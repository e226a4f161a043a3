#include "cli/accuracy_table.h"

#include <cmath>

#include "cli/commands.h"
#include "schema/json_reader.h"
#include "schema/one_line.h"

namespace lull::cli {

std::map<std::string, double> read_accuracy_fractions(const std::string& path) {
  json::JsonFileReader reader(FileKind::kSettings);
  const simdjson::dom::element root = json::parse_file_or_throw<UsageError>(reader, path, "accuracy table");
  simdjson::dom::object table;
  if (root.get_object().get(table) != simdjson::SUCCESS)
    throw UsageError(path + ": not a JSON object of model -> accuracy (got " + json::describe(root) + ")");
  std::map<std::string, double> out;
  for (const auto field : table) {
    const std::string name(field.key);
    if (!name.empty() && name[0] == '_') continue;
    double accuracy = -1;
    const bool number = field.value.is_double() || field.value.is_int64() || field.value.is_uint64();
    if (!number || !json::to_double(field.value, &accuracy) || !std::isfinite(accuracy) || accuracy < 0 || accuracy > 1)
      throw UsageError(
          path + ": " + one_line(name) +
          ": accuracy must be a fraction in [0, 1] (a percent table is --accuracy-percent, for the compile commands)");
    out[name] = accuracy;
  }
  return out;
}

}  // namespace lull::cli
