#pragma once
// Turns a policy-set file into a PolicyTable. This file pair is the only place
// in the runtime that sees the protobuf schema: it verifies the file (checksum
// and version, through schema/policy_file.h) and then the runtime's own
// invariants, so every later stage can trust the table.
#include <string>
#include <vector>

#include "runtime/core/policy_table.h"

namespace lull::schema {
class PolicySet;
}

namespace lull::core {

// What the caller is about to run; zero/empty fields are not checked.
struct PolicyExpectations {
  std::string task;
  int workers = 0;
  double slo_ms = 0;
};

// Throws std::runtime_error("PATH: what is wrong") on any problem.
PolicyTable load_policy_table(const std::string& path, const PolicyExpectations& expect);

// A policy library (or a set file, a library of one): one table per worker
// count, ascending. `expect.workers` is not checked (the caller picks).
std::vector<PolicyTable> load_policy_library(const std::string& path, const PolicyExpectations& expect);

// The same checks on an in-memory set (tests, tools); `where` prefixes errors.
PolicyTable policy_table_from_proto(const schema::PolicySet& set, const PolicyExpectations& expect,
                                    const std::string& where);

}  // namespace lull::core
