#pragma once
// Raw latency samples for --latency sampled, read either from lull's profile
// JSON (schema/profile.proto) or from a RAMSIS-artifact folder
// (<dir>/<model>/<model>_bsize-<b>_profile.json, JSON lists of seconds),
// both through the schema library's readers (schema/profile_file.h,
// schema/artifact_reader.h), which the compiler uses too.
#include <map>
#include <string>
#include <vector>

namespace lull::sim {

// model name -> batch size -> samples in microseconds (non-empty).
using RawProfiles = std::map<std::string, std::map<int, std::vector<double>>>;

// Reads only `models` (all when empty). Throws std::runtime_error naming the
// file (and the field or sample) on malformed input, a missing model, or a
// latency outside schema/latency_limit.h's range for `slo_ms` (0: no SLO).
RawProfiles load_raw_profiles(const std::string& path, const std::vector<std::string>& models, double slo_ms = 0);

}  // namespace lull::sim
