#pragma once
// Turns the RAMSIS artifact's profiles (read by schema/artifact_reader, the
// project's one reader of that layout) into lull's ProfileSet:
//   DIR/<model>/<model>_bsize-<b>_profile.json   (a JSON list of seconds)
// plus an accuracy table {"accuracy": {"<model>": <percent>, ...}, "task": ...}.
#include <string>

#include "schema/profile.pb.h"

namespace lull::compiler {

// Throws std::runtime_error("FILE: why") on malformed input.
schema::ProfileSet import_artifact_profiles(const std::string& dir, const std::string& accuracy_json,
                                            const std::string& task);

}  // namespace lull::compiler
