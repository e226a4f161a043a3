#include "schema/policy_file.h"

#include <sstream>

#include "schema/atomic_file.h"
#include "schema/checksum.h"

namespace lull {
namespace {

std::uint64_t policy_checksum(schema::Policy p) {
  p.set_checksum(0);
  return fnv1a64(serialize_deterministic(p));
}

std::uint64_t set_checksum(schema::PolicySet s) {
  s.set_checksum(0);
  return fnv1a64(serialize_deterministic(s));
}

}  // namespace

void seal_policy_set(schema::PolicySet& set) {
  set.set_format_version(kPolicyFormatVersion);
  for (auto& p : *set.mutable_policies()) {
    p.set_format_version(kPolicyFormatVersion);
    p.set_checksum(policy_checksum(p));
  }
  set.set_checksum(set_checksum(set));
}

void verify_policy_set(const schema::PolicySet& set, const std::string& where) {
  auto fail = [&](const std::string& why) { throw PolicyFileError(where + ": " + why); };
  if (set.format_version() != kPolicyFormatVersion)
    fail("format_version " + std::to_string(set.format_version()) + " is not the supported version " +
         std::to_string(kPolicyFormatVersion));
  if (set.checksum() != set_checksum(set)) fail("checksum mismatch: the policy set is corrupt");
  for (int i = 0; i < set.policies_size(); ++i) {
    const auto& p = set.policies(i);
    const std::string at = "policies[" + std::to_string(i) + "]";
    if (p.format_version() != kPolicyFormatVersion) fail(at + ".format_version is unsupported");
    if (p.checksum() != policy_checksum(p)) fail(at + ".checksum mismatch: the policy is corrupt");
    if (p.action_model_size() != p.action_batch_size()) fail(at + ": action_model and action_batch differ in length");
    if (p.inputs().workers() != set.workers() || p.inputs().slo_ms() != set.slo_ms() || p.inputs().task() != set.task())
      fail(at + ".inputs: task/SLO/workers differ from the set's");
    for (unsigned m : p.action_model())
      if (static_cast<int>(m) >= set.models_size()) fail(at + ".action_model names model " + std::to_string(m) + " which the set lacks");
  }
  if (set.policies_size() == 0) fail("the policy set holds no policies");
}

std::string policy_set_bytes(const schema::PolicySet& set) {
  schema::PolicySet sealed = set;
  seal_policy_set(sealed);
  return serialize_deterministic(sealed);
}

void write_policy_set(const schema::PolicySet& set, const std::string& path) {
  write_file_atomically(path, policy_set_bytes(set));
}

schema::PolicySet read_policy_set(const std::string& path) {
  std::string bytes;
  try {
    bytes = read_whole_file(path);
  } catch (const std::exception& e) {
    throw PolicyFileError(e.what());
  }
  schema::PolicySet set;
  if (bytes.empty() || !set.ParseFromString(bytes))
    throw PolicyFileError(path + ": not a policy set (corrupt or truncated protobuf)");
  verify_policy_set(set, path);
  return set;
}

}  // namespace lull
