#pragma once
// The fleet description (docs/user-guide.md): the hand-written JSON `lull compile
// --fleet` and `lull plan --fleet` read: worker kinds (a profile and a price
// each) and SLO classes (SLO, share of the load, target, workers per kind,
// optionally fixed weights). Kept in schema/ beside lull's other JSON readers
// (simdjson is this library's private dependency). What needs the profiles
// themselves (a kind lacking a model) is checked where they are read.
#include <stdexcept>
#include <string>
#include <vector>

namespace lull {

struct FleetDescriptionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct FleetKindDescription {
  std::string name;
  std::string profiles;          // resolved against the file's folder
  std::string accuracy_percent;  // the same; empty unless given (artifact folders)
  double price_per_s = 0;        // per worker-second
};

struct FleetClassWorkers {
  std::string kind;
  int count = 0;      // >= 1; 0 in a class that names the kind without a count (plan only)
  double weight = 0;  // fixed weight when the class has `weights`
};

struct FleetClassDescription {
  std::string name;
  double slo_ms = 0;
  double share = 0;
  double max_violation = 0.01;
  double min_accuracy = 0;                 // 0: no floor
  std::vector<FleetClassWorkers> workers;  // in the file's order; empty: not given (plan chooses)
  bool fixed_weights = false;              // `weights` given: no search
};

struct FleetDescription {
  std::string path;
  std::vector<FleetKindDescription> kinds;
  std::vector<FleetClassDescription> classes;
  int kind_index(const std::string& name) const;  // -1 when none has that name
};

// Throws FleetDescriptionError("PATH: field: why", one line) for a file that
// does not parse, an unknown or mistyped field, no kinds or classes, duplicate
// names, a price that is not a finite number >= 0, an SLO not > 0, shares not
// in (0, 1] or not summing to 1, a target outside (0, 1), a minimum accuracy
// outside [0, 1), workers naming an unknown kind or a count not a whole
// number >= 1, weights not in [0, 1], not one per kind of `workers`, or not
// summing to 1. `workers` may be absent (lull plan chooses them); call
// require_workers where counts are needed.
FleetDescription read_fleet_description(const std::string& path);

// Throws FleetDescriptionError("PATH: classes[i] 'NAME'.workers: ...") for a
// class without workers.
void require_workers(const FleetDescription& fleet);

}  // namespace lull
