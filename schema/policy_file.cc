#include "schema/policy_file.h"

#include <sstream>

#include "schema/atomic_file.h"
#include "schema/bounded_file.h"
#include "schema/checksum.h"
#include "schema/protobuf_log.h"

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

std::uint64_t library_checksum(schema::PolicyLibrary l) {
  l.set_checksum(0);
  return fnv1a64(serialize_deterministic(l));
}

std::string read_bytes(const std::string& path) {
  try {
    return read_bounded_file(path, FileKind::kPolicy);
  } catch (const std::exception& e) {
    throw PolicyFileError(e.what());
  }
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
      if (static_cast<int>(m) >= set.models_size())
        fail(at + ".action_model names model " + std::to_string(m) + " which the set lacks");
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
  const std::string bytes = read_bytes(path);
  schema::PolicySet set;
  const ProtobufLogCapture protobuf_says;
  if (bytes.empty() || !set.ParseFromString(bytes))
    throw PolicyFileError(path + ": not a policy set (corrupt or truncated protobuf" +
                          (protobuf_says.text().empty() ? "" : ": " + protobuf_says.text()) + ")");
  if (set.policies_size() == 0) {
    // A library (sets, field 16) or a fleet policy (classes, field 17) parses
    // as a set with no policies: name what the file is instead.
    const ProtobufLogCapture quiet;
    schema::PolicyLibrary lib;
    if (lib.ParseFromString(bytes) && lib.sets_size() > 0)
      throw PolicyFileError(path + ": a policy library (" + std::to_string(lib.sets_size()) +
                            " sets), not a policy set");
    schema::FleetPolicy fleet;
    if (fleet.ParseFromString(bytes) && fleet.classes_size() > 0)
      throw PolicyFileError(path + ": a fleet policy (" + std::to_string(fleet.classes_size()) +
                            " SLO classes), not a policy set");
  }
  verify_policy_set(set, path);
  return set;
}

void seal_policy_library(schema::PolicyLibrary& lib) {
  lib.set_format_version(kPolicyFormatVersion);
  for (auto& set : *lib.mutable_sets()) seal_policy_set(set);
  lib.set_checksum(library_checksum(lib));
}

void verify_policy_library(const schema::PolicyLibrary& lib, const std::string& where) {
  auto fail = [&](const std::string& why) { throw PolicyFileError(where + ": " + why); };
  if (lib.format_version() != kPolicyFormatVersion)
    fail("format_version " + std::to_string(lib.format_version()) + " is not the supported version " +
         std::to_string(kPolicyFormatVersion));
  if (lib.checksum() != library_checksum(lib)) fail("checksum mismatch: the policy library is corrupt");
  if (lib.sets_size() == 0) fail("the policy library holds no policy sets");
  for (int i = 0; i < lib.sets_size(); ++i) {
    const auto& set = lib.sets(i);
    const std::string at = "sets[" + std::to_string(i) + "]";
    verify_policy_set(set, where + ": " + at);
    if (set.task() != lib.sets(0).task() || set.slo_ms() != lib.sets(0).slo_ms())
      fail(at + ": task/SLO differ from sets[0]'s");
    // Ascending workers; sets for one worker count differ in their arrival process.
    if (i > 0 && set.workers() < lib.sets(i - 1).workers())
      fail(at + ".workers " + std::to_string(set.workers()) + " is below the previous set's " +
           std::to_string(lib.sets(i - 1).workers()));
    for (int j = i - 1; j >= 0 && lib.sets(j).workers() == set.workers(); --j)
      if (lib.sets(j).arrivals() == set.arrivals())
        fail(at + ": a second set for " + std::to_string(set.workers()) + " workers and arrivals '" +
             (set.arrivals().empty() ? "poisson" : set.arrivals()) + "'");
  }
}

std::string policy_library_bytes(const schema::PolicyLibrary& lib) {
  schema::PolicyLibrary sealed = lib;
  seal_policy_library(sealed);
  return serialize_deterministic(sealed);
}

void write_policy_library(const schema::PolicyLibrary& lib, const std::string& path) {
  write_file_atomically(path, policy_library_bytes(lib));
}

schema::PolicyLibrary read_policy_library(const std::string& path) {
  const std::string bytes = read_bytes(path);
  schema::PolicyLibrary lib;
  bool parsed = false;
  {
    const ProtobufLogCapture dropped;  // not a library: the set reader below says why
    parsed = !bytes.empty() && lib.ParseFromString(bytes);
  }
  if (parsed && lib.sets_size() > 0) {
    verify_policy_library(lib, path);
    return lib;
  }
  schema::PolicyLibrary one;
  *one.add_sets() = read_policy_set(path);  // throws with the set reader's reason
  one.set_format_version(kPolicyFormatVersion);
  one.set_checksum(library_checksum(one));
  return one;
}

}  // namespace lull
