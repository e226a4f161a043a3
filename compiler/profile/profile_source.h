#pragma once
// One entry point for "--profiles P": lull's JSON profile file, or a RAMSIS
// artifact folder (which needs an accuracy table).
#include <string>
#include <vector>

#include "schema/profile.pb.h"

namespace lull::compiler {

// `models` not empty: an artifact folder reads only these models' files (a
// JSON profile file is read whole).
schema::ProfileSet load_profile_source(const std::string& path, const std::string& accuracy_json,
                                       const std::string& task, const std::vector<std::string>& models = {});

}  // namespace lull::compiler
