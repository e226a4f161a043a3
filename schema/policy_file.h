#pragma once
// Reading and writing policy-set files (binary protobuf). Writing seals every
// policy and the set with a checksum and the format version; reading verifies
// both, so a corrupt or truncated file is refused with a one-line reason.
#include <stdexcept>
#include <string>

#include "schema/policy.pb.h"

namespace lull {

inline constexpr unsigned kPolicyFormatVersion = 1;

struct PolicyFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Fills format_version and checksum of each policy and of the set.
void seal_policy_set(schema::PolicySet& set);

// Checks version and checksums; throws PolicyFileError("WHERE: why").
void verify_policy_set(const schema::PolicySet& set, const std::string& where);

// The bytes write_policy_set writes (a sealed copy), for callers that send
// them elsewhere (lull's `--out -`).
std::string policy_set_bytes(const schema::PolicySet& set);
void write_policy_set(const schema::PolicySet& set, const std::string& path);  // seals a copy, atomic
schema::PolicySet read_policy_set(const std::string& path);                    // verified

}  // namespace lull
