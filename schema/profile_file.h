#pragma once
// Reading and writing lull's profile format: a ProfileSet in protobuf's JSON
// mapping, the format people edit by hand. Reading goes through simdjson (a
// 44 MB profile in tens of milliseconds; protobuf's parser took seconds) and
// accepts what protobuf's parser accepts: original and lowerCamelCase field
// names, quoted numbers, "NaN"/"Infinity", null for a default; unknown fields
// are refused. Writing uses protobuf's printer. Errors name the file and field.
#include <stdexcept>
#include <string>

#include "schema/profile.pb.h"

namespace lull {

struct ProfileFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

schema::ProfileSet read_profile_set_json(const std::string& path);
// The text write_profile_set_json writes; `where` names the output in errors.
std::string profile_set_json_text(const schema::ProfileSet& set, const std::string& where);
void write_profile_set_json(const schema::ProfileSet& set, const std::string& path);  // atomic

}  // namespace lull
