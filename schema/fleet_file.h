#pragma once
// Reading and writing fleet policy files (schema::FleetPolicy, binary
// protobuf; docs/operators-guide.md). Sealing seals every kind's library too;
// verifying checks them and the fleet's own rules, so a file the runtime
// loads is one it can serve: one line naming the class/kind/field otherwise.
#include <string>

#include "schema/policy.pb.h"
#include "schema/policy_file.h"

namespace lull {

void seal_fleet_policy(schema::FleetPolicy& fleet);

// Version and checksums (the fleet's and each library's), and: at least one
// class; class names non-empty and distinct; per class, an SLO > 0 that each
// kind's library shares, at least one kind, kind names non-empty and distinct,
// workers >= 1 with a set for that count, the same model names in every kind
// (a kind lacking a model the others have is refused), and splits at strictly
// ascending loads > 0 whose weights (one per kind, each finite in [0, 1]) sum
// to 1 within 1e-6; class shares in [0, 1] summing to 1. Throws PolicyFileError("WHERE: classes[i] 'name': why").
void verify_fleet_policy(const schema::FleetPolicy& fleet, const std::string& where);

std::string fleet_policy_bytes(const schema::FleetPolicy& fleet);                    // a sealed copy's bytes
void write_fleet_policy(const schema::FleetPolicy& fleet, const std::string& path);  // seals a copy, atomic
schema::FleetPolicy read_fleet_policy(const std::string& path);                      // verified

// Whether the file parses as a fleet policy with at least one class (and so
// is not a policy set or library): lets a command take either kind of file.
bool is_fleet_policy_file(const std::string& path);

}  // namespace lull
