#pragma once
// Every policy the runtime holds, by (worker count, arrival pattern, load):
// the tables of a policy library and those compiled online since. It answers
// which policy serves `workers_up` workers at an estimated load under a
// pattern, and which policy is missing for that situation. Policies are stored one per allocation and
// never freed or moved while the catalog lives, so a pointer to one stays
// valid across later additions and replacements (readers never need a lock
// to use it; a replaced policy is retired, not freed).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/policy_inbox.h"
#include "runtime/core/policy_provider.h"
#include "runtime/core/policy_table.h"

namespace lull::core {

struct PolicyChoice {
  const CompiledPolicy* policy = nullptr;
  int workers = 0;          // the worker count the policy was compiled for
  int id = -1;              // stable index (0, 1, ... in order of addition)
  ArrivalProcess arrivals;  // the process the policy was compiled for
};

class PolicyCatalog {
 public:
  // The library's tables: distinct (worker count, arrival process) pairs,
  // one task, SLO and model list (std::invalid_argument otherwise). Ids
  // follow the tables' order.
  explicit PolicyCatalog(std::vector<PolicyTable> library);

  // Adds a table compiled later; a policy at a load the catalog already
  // holds for that worker count is ignored. Throws std::invalid_argument
  // when task, SLO or models differ from the library's.
  void add(const PolicyTable& table);

  // Replaces every policy held for (table.workers, table.arrivals) with the table's (a set
  // recompiled from observed latencies, --recompile-on-drift), and the
  // models' latencies with the table's, so that header() (the Dispatcher's
  // expected batch ends) agrees with the policies now chosen. New ids are
  // given; the old ones keep naming the retired policies, which stay alive
  // (a reader holding one is unaffected). Other worker counts keep their
  // policies. Throws std::invalid_argument like add(), and when the table
  // orders the models differently.
  void replace(const PolicyTable& table);
  // add() or replace(), as the mail says.
  void apply(const PolicyMail& mail) { mail.replaces ? replace(mail.table) : add(mail.table); }
  // Replacements so far.
  int generation() const { return generation_; }

  // The policy for `workers_up` workers at `load_qps` under `pattern`: each
  // worker count's sets for the pattern, or else for the covering pattern
  // it holds (runtime/core/pattern_switcher.h, covering_pattern); then by load:
  // - a table for exactly workers_up covering the load: its lowest load >= it;
  // - else the table for the nearest worker count below workers_up (each of
  //   its workers expects more load: conservative), lowest load >= the load,
  //   or its highest;
  // - else (only larger worker counts): with `conservative`, the smallest
  //   such table at the load each of its workers would see,
  //   load * its workers / workers_up; without, at the load itself (what a
  //   runtime without online compilation did: the stale policy).
  // With `conservative`, when the set chosen first does not reach the load
  // (a set compiled online for a few loads), a larger set whose policy
  // expects more load per worker is taken instead. Above every compiled
  // load: the highest.
  PolicyChoice choose(int workers_up, double load_qps, bool conservative,
                      const ArrivalProcess& pattern = ArrivalProcess::poisson()) const;

  // The policy to compile so that `workers_up` at `load_qps` under `pattern`
  // has its own: the library's grid load covering the estimate (above the
  // grid, the estimate rounded up to the grid's step). workers == 0: nothing
  // missing.
  PolicyRequest wanted(int workers_up, double load_qps,
                       const ArrivalProcess& pattern = ArrivalProcess::poisson()) const;

  int size() const { return static_cast<int>(by_id_.size()); }
  const PolicyChoice& entry(int id) const { return by_id_.at(static_cast<std::size_t>(id)); }
  // Task, SLO, percentile and models; `workers` and `policies` are not set.
  const PolicyTable& header() const { return header_; }
  std::vector<int> worker_counts() const;
  // Every arrival pattern held, for any worker count (in order of addition).
  const std::vector<ArrivalProcess>& patterns() const { return patterns_; }

 private:
  struct Slot {
    double load_qps;
    std::unique_ptr<const CompiledPolicy> policy;
    int id;
  };
  struct PatternSlots {
    ArrivalProcess arrivals;
    std::vector<Slot> slots;  // ascending by load
  };
  using WorkerSets = std::vector<PatternSlots>;
  static PolicyChoice at_or_top(const PatternSlots& sets, int workers, double load_qps);
  static const PatternSlots& for_pattern(const WorkerSets& sets, const ArrivalProcess& pattern);
  void check_compatible(const PolicyTable& table, const std::string& what) const;
  std::vector<Slot>& slots_for(const PolicyTable& t);

  PolicyTable header_;
  std::map<int, WorkerSets> by_workers_;
  std::vector<ArrivalProcess> patterns_;
  std::vector<PolicyChoice> by_id_;
  std::vector<std::unique_ptr<const CompiledPolicy>> retired_;  // replaced, kept alive
  int generation_ = 0;
  std::vector<double> grid_qps_;  // the first library table's loads
  double step_qps_ = 0;           // spacing of its two highest loads
};

}  // namespace lull::core
