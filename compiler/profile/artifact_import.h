#pragma once
// Turns the RAMSIS artifact's profiles (read by schema/artifact_reader, the
// project's one reader of that layout) into lull's ProfileSet:
//   DIR/<model>/<model>_bsize-<b>_profile.json   (a JSON list of seconds)
// plus an accuracy table {"accuracy": {"<model>": <percent>, ...}, "task": ...}.
#include <string>
#include <vector>

#include "compiler/profile/reduced_artifact_cache.h"
#include "schema/profile.pb.h"

namespace lull::compiler {

// The task an artifact's accuracy table is for: its "task" field when it has
// one, else the file name's part before "_accuracy.json" (the artifact's
// text_accuracy.json -> "text"), else "image" (the artifact's first task).
std::string artifact_task_name(const std::string& accuracy_json);

// Throws std::runtime_error("FILE: why") on malformed input. An empty `task`
// is artifact_task_name(accuracy_json). `only` not empty: only those models'
// folders are read (the others' files are never opened).
schema::ProfileSet import_artifact_profiles(const std::string& dir, const std::string& accuracy_json,
                                            const std::string& task, const std::vector<std::string>& only = {});

// The same set from an artifact folder's reduced latencies (the profile
// cache's, compiler/profile/reduced_artifact_cache.h): one latency_s per
// batch size, the samples' percentile, in place of the samples.
schema::ProfileSet import_reduced_artifact(const std::vector<ReducedArtifactModel>& models, const std::string& dir,
                                           const std::string& accuracy_json, const std::string& task);

}  // namespace lull::compiler
