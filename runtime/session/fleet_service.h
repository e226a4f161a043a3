#pragma once
// A mixed fleet behind one front end (docs/operators-guide.md "Serving"). Each
// (class, kind) group is its own QueryService: under `lull serve` a
// ServeSession with its own central queue, Dispatcher and backend over the
// kind's servers, built by the Server as for one system. A query goes to
// its class (the X-Lull-Class header; none: the fleet's first class; an
// unknown one: 400 naming it), then to one of the class's kinds drawn at
// random with the class's split weights at the class's measured load
// (runtime/core/split_chooser.h: a stable choice, not the 500 ms count's
// noise): random thinning keeps each kind's arrivals
// the process its policies were compiled for, at its share of the load.
// When a kind's workers up change (the autoscaler, health checks), the
// class's splits are re-searched for the counts up (runtime/core/fleet_split.h),
// checked at most every 100 ms; a count change is the one event that moves
// the weights of a split.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/core/fleet_tables.h"
#include "runtime/frontend/frontend.h"
#include "runtime/core/split_chooser.h"

namespace lull::session {

class FleetService final : public frontend::QueryService {
 public:
  // groups[c][k] serves fleet.classes[c].kinds[k]; the fleet, the groups and
  // the clock must outlive the service. `seed` seeds the kind draws.
  FleetService(const core::FleetTables& fleet, std::vector<std::vector<frontend::QueryService*>> groups,
               core::Clock& clock, std::uint64_t seed);

  frontend::Answer serve(std::string input) override;  // the first class
  void serve_async(std::string input, std::int64_t waited_us, std::function<void(frontend::Answer)> done) override;
  void serve_class_async(const std::string& query_class, std::string input, std::int64_t waited_us,
                         std::function<void(frontend::Answer)> done) override;
  // Every group's series labelled class and kind, the fleet's own (class
  // load, the split in use, unknown classes), process-wide ones once.
  std::string metrics_text() override;
  // Every class can serve: some kind of each is healthy.
  bool healthy() override;

  // SIGHUP: a fleet file with the same classes and kinds (checked by the
  // caller: fleet_reload_refusal) replaces each class's splits and libraries
  // here, class by class under its lock, so a query is routed by the old
  // splits or the new, never lost. The split chooser starts afresh on the new
  // split loads; the counts up are read again at the next arrival.
  void replace_tables(const core::FleetTables& next);

  // The kind a draw u in [0, 1) picks under `weights` (cumulative; a kind of
  // weight 0 is never picked).
  static int pick_kind(const std::vector<double>& weights, double u);

 private:
  struct ClassState {
    explicit ClassState(std::vector<double> split_loads) : split(std::move(split_loads)) {}
    std::mutex mu;
    core::SplitChooser split;
    std::shared_ptr<const core::FleetClassTables> tables;  // the file's (SIGHUP replaces it)
    std::vector<core::FleetSplitPoint> splits;             // the file's, or re-searched for `counts`
    std::vector<int> counts;                               // the workers up per kind they were searched for
    std::int64_t counts_checked_us = -1;
    bool fallback_logged = false;
    std::mt19937_64 rng;
    std::vector<std::uint64_t> routed;  // queries sent to each kind
  };
  // The class's kind for a query arriving now (under its ClassState's lock).
  int route(std::size_t c);
  // Re-searches the class's splits when its kinds' workers up changed (under its lock).
  void follow_counts(std::size_t c, std::int64_t now_us);

  const core::FleetTables& fleet_;
  std::vector<std::vector<frontend::QueryService*>> groups_;
  core::Clock& clock_;
  std::vector<std::unique_ptr<ClassState>> classes_;
  std::mutex unknown_mu_;
  std::uint64_t unknown_class_ = 0;
};

}  // namespace lull::session
