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

// Policy libraries (one set per worker count). Sealing seals every set too;
// verifying checks each set and that all share task and SLO with distinct,
// ascending worker counts.
void seal_policy_library(schema::PolicyLibrary& lib);
void verify_policy_library(const schema::PolicyLibrary& lib, const std::string& where);
std::string policy_library_bytes(const schema::PolicyLibrary& lib);
void write_policy_library(const schema::PolicyLibrary& lib, const std::string& path);  // seals a copy, atomic
// Reads a library file, or a policy-set file as a library of one set.
schema::PolicyLibrary read_policy_library(const std::string& path);  // verified

}  // namespace lull
