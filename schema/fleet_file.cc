#include "schema/fleet_file.h"

#include <cmath>
#include <set>

#include "schema/atomic_file.h"
#include "schema/bounded_file.h"
#include "schema/checksum.h"
#include "schema/protobuf_log.h"

namespace lull {
namespace {

std::uint64_t fleet_checksum(schema::FleetPolicy f) {
  f.set_checksum(0);
  return fnv1a64(serialize_deterministic(f));
}

std::set<std::string> model_names(const schema::PolicyLibrary& lib) {
  std::set<std::string> names;
  for (const auto& set : lib.sets())
    for (const auto& m : set.models()) names.insert(m.name());
  return names;
}

bool parse_fleet(const std::string& bytes, schema::FleetPolicy& fleet) {
  const ProtobufLogCapture dropped;  // the caller says what the file is not
  return !bytes.empty() && fleet.ParseFromString(bytes) && fleet.classes_size() > 0;
}

void verify_class(const schema::FleetClassPolicies& c, const std::string& where) {
  auto fail = [&](const std::string& why) { throw PolicyFileError(where + ": " + why); };
  if (!(c.slo_ms() > 0) || !std::isfinite(c.slo_ms())) fail("slo_ms must be a positive number");
  if (c.kinds_size() == 0) fail("the class has no worker kinds");
  std::set<std::string> kinds;
  std::set<std::string> models;
  for (int k = 0; k < c.kinds_size(); ++k) {
    const auto& kind = c.kinds(k);
    const std::string at = "kinds[" + std::to_string(k) + "] '" + kind.kind() + "'";
    if (kind.kind().empty()) fail("kinds[" + std::to_string(k) + "]: the kind has no name");
    if (!kinds.insert(kind.kind()).second) fail(at + ": a second kind of this name");
    if (kind.workers() < 1) fail(at + ".workers must be at least 1");
    if (!(kind.price_per_s() >= 0) || !std::isfinite(kind.price_per_s()))
      fail(at + ".price_per_s must be a finite number >= 0");
    verify_policy_library(kind.library(), where + ": " + at + ".library");
    bool has_count = false;
    for (const auto& set : kind.library().sets()) {
      if (set.slo_ms() != c.slo_ms())
        fail(at + ".library: SLO " + std::to_string(set.slo_ms()) + " ms is not the class's");
      has_count = has_count || set.workers() == kind.workers();
    }
    if (!has_count) fail(at + ".library has no set for its " + std::to_string(kind.workers()) + " workers");
    const auto names = model_names(kind.library());
    if (k == 0) {
      models = names;
    } else if (names != models) {
      for (const auto& m : models)
        if (!names.count(m)) fail(at + " lacks model '" + m + "' that kinds[0] has");
      for (const auto& m : names)
        if (!models.count(m)) fail("kinds[0] lacks model '" + m + "' that " + at + " has");
    }
  }
  if (c.splits_size() == 0) fail("the class has no splits (weights by load)");
  for (int i = 0; i < c.splits_size(); ++i) {
    const auto& s = c.splits(i);
    const std::string at = "splits[" + std::to_string(i) + "]";
    if (!(s.load_qps() > 0) || !std::isfinite(s.load_qps())) fail(at + ".load_qps must be a positive number");
    if (i > 0 && !(s.load_qps() > c.splits(i - 1).load_qps())) fail(at + ".load_qps is not above the previous split's");
    if (s.weights_size() != c.kinds_size())
      fail(at + ".weights has " + std::to_string(s.weights_size()) + " entries for " + std::to_string(c.kinds_size()) +
           " kinds");
    double sum = 0;
    for (double w : s.weights()) {
      if (!(w >= 0 && w <= 1)) fail(at + ".weights: each weight must be in [0, 1]");
      sum += w;
    }
    if (std::abs(sum - 1) > 1e-6) fail(at + ".weights sum to " + std::to_string(sum) + ", not 1");
  }
}

}  // namespace

void seal_fleet_policy(schema::FleetPolicy& fleet) {
  fleet.set_format_version(kPolicyFormatVersion);
  for (auto& c : *fleet.mutable_classes())
    for (auto& k : *c.mutable_kinds()) seal_policy_library(*k.mutable_library());
  fleet.set_checksum(fleet_checksum(fleet));
}

void verify_fleet_policy(const schema::FleetPolicy& fleet, const std::string& where) {
  auto fail = [&](const std::string& why) { throw PolicyFileError(where + ": " + why); };
  if (fleet.format_version() != kPolicyFormatVersion)
    fail("format_version " + std::to_string(fleet.format_version()) + " is not the supported version " +
         std::to_string(kPolicyFormatVersion));
  if (fleet.checksum() != fleet_checksum(fleet)) fail("checksum mismatch: the fleet policy is corrupt");
  if (fleet.classes_size() == 0) fail("the fleet policy holds no SLO classes");
  std::set<std::string> names;
  double shares = 0;
  for (int i = 0; i < fleet.classes_size(); ++i) {
    const auto& c = fleet.classes(i);
    if (c.name().empty()) fail("classes[" + std::to_string(i) + "]: the class has no name");
    const std::string at = "classes[" + std::to_string(i) + "] '" + c.name() + "'";
    if (!names.insert(c.name()).second) fail(at + ": a second class of this name");
    verify_class(c, where + ": " + at);
    if (!(c.share() >= 0 && c.share() <= 1)) fail(at + ".share must be in [0, 1]");
    shares += c.share();
  }
  if (std::abs(shares - 1) > 1e-6) fail("the classes' shares sum to " + std::to_string(shares) + ", not 1");
}

std::string fleet_policy_bytes(const schema::FleetPolicy& fleet) {
  schema::FleetPolicy sealed = fleet;
  seal_fleet_policy(sealed);
  return serialize_deterministic(sealed);
}

void write_fleet_policy(const schema::FleetPolicy& fleet, const std::string& path) {
  write_file_atomically(path, fleet_policy_bytes(fleet));
}

schema::FleetPolicy read_fleet_policy(const std::string& path) {
  std::string bytes;
  try {
    bytes = read_bounded_file(path, FileKind::kPolicy);
  } catch (const std::exception& e) {
    throw PolicyFileError(e.what());
  }
  schema::FleetPolicy fleet;
  if (!parse_fleet(bytes, fleet))
    throw PolicyFileError(path + ": not a fleet policy (no SLO classes: a policy set or library, or corrupt)");
  verify_fleet_policy(fleet, path);
  return fleet;
}

bool is_fleet_policy_file(const std::string& path) {
  try {
    schema::FleetPolicy fleet;
    return parse_fleet(read_bounded_file(path, FileKind::kPolicy), fleet);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace lull
