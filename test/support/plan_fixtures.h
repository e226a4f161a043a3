#pragma once
// Shared by the planner and library tests: a small profile JSON that compiles
// fast (three models, N = 8 via the flags below) and carries memory_mb, and
// the few JSON look-ups the tests make on lull's outputs.
#include <cstdlib>
#include <regex>
#include <string>

#include "test/support/cli_runner.h"

namespace lull::test {

// Flags that keep the MDP small (and compiles well under a second).
inline const char* kSmallMdpFlags = "--max-queue 8 --intervals 20 --device cpu";

// Three models: lat(b) = (base + 2 ms (b - 1)) x latency_scale; 100 / 300 / 900 MiB.
inline std::string small_profile_json(double latency_scale = 1.0) {
  std::string models;
  const struct {
    const char* name;
    double acc, base_s, mem;
  } ms[] = {{"fast", 0.60, 0.010, 100}, {"mid", 0.72, 0.020, 300}, {"slow", 0.80, 0.035, 900}};
  for (const auto& m : ms) {
    std::string lats;
    for (int b = 1; b <= 4; ++b)
      lats += std::string(b > 1 ? "," : "") + "{\"batch\":" + std::to_string(b) +
              ",\"latency_s\":" + std::to_string((m.base_s + 0.002 * (b - 1)) * latency_scale) + "}";
    models += std::string(models.empty() ? "" : ",") + "{\"name\":\"" + m.name +
              "\",\"accuracy\":" + std::to_string(m.acc) + ",\"memory_mb\":" + std::to_string(m.mem) +
              ",\"latencies\":[" + lats + "]}";
  }
  return "{\"task\":\"toy\",\"provenance\":\"synthetic: plan tests\",\"synthetic\":true,\"models\":[" + models + "]}";
}

inline std::string small_profile_path() {
  static const std::string path = write_temp("plan_profiles.json", small_profile_json());
  return path;
}

// `lull COMMAND` on the small profile at SLO 60 ms with the small MDP, then `extra`.
inline std::string small_profile_args(const std::string& command, const std::string& extra) {
  return command + " --profiles " + small_profile_path() + " --slo-ms 60 " + kSmallMdpFlags + " " + extra;
}

// The number after "key": in a JSON text (the first occurrence); NaN when absent.
inline double json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\":\\s*(-?[0-9.eE+-]+)"))) return 0.0 / 0.0;
  return std::atof(m[1].str().c_str());
}

}  // namespace lull::test
