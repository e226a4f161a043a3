#pragma once
// Reading and writing lull's profile format: a ProfileSet in protobuf's JSON
// mapping. Errors name the file and, where protobuf says it, the field.
#include <stdexcept>
#include <string>

#include "schema/profile.pb.h"

namespace lull {

struct ProfileFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

schema::ProfileSet read_profile_set_json(const std::string& path);
void write_profile_set_json(const schema::ProfileSet& set, const std::string& path);  // atomic

}  // namespace lull
