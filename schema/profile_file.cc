#include "schema/profile_file.h"

#include <google/protobuf/util/json_util.h>

#include "schema/atomic_file.h"

namespace lull {

schema::ProfileSet read_profile_set_json(const std::string& path) {
  std::string text;
  try {
    text = read_whole_file(path);
  } catch (const std::exception& e) {
    throw ProfileFileError(e.what());
  }
  schema::ProfileSet set;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(text, &set, opts);
  if (!status.ok())
    throw ProfileFileError(path + ": malformed profile JSON: " + std::string(status.message()));
  return set;
}

void write_profile_set_json(const schema::ProfileSet& set, const std::string& path) {
  std::string text;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  const auto status = google::protobuf::util::MessageToJsonString(set, &text, opts);
  if (!status.ok()) throw ProfileFileError(path + ": cannot encode profile: " + std::string(status.message()));
  write_file_atomically(path, text);
}

}  // namespace lull
