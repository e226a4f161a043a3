#pragma once
// One entry point for "--profiles P": lull's JSON profile file, or a RAMSIS
// artifact folder (which needs an accuracy table).
#include <string>

#include "schema/profile.pb.h"

namespace lull::compiler {

schema::ProfileSet load_profile_source(const std::string& path, const std::string& accuracy_json,
                                       const std::string& task);

}  // namespace lull::compiler
