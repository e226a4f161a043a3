#pragma once
// Switching model variants while serving: when the load crosses a
// variant's boundary (model_variants.h), the new set's models are loaded on
// every worker (change_model_set, all or nothing: a model that fails to load
// keeps the old set in use), then the new set's policies are swapped in, and
// only after the swap, and after the batches in flight on the models that go
// have finished, are those unloaded. So no batch is ever sent to a model
// being unloaded. No threads or clocks of its own: the caller calls step()
// with the load and the time (VariantController, a Controller of lull
// serve's ControlLoop; tests: by hand). Which variant, and when: VariantRule
// (variant_choice.h), the rule lull simulate follows too.
//
// Under an autoscaler the workers change (docs/operators-guide.md, "Variants and
// autoscaling"): each step asks for the workers in rotation now. A worker it
// has not seen before joined holding the full set (variants[0]: its pool's
// model check makes sure of that), a superset of every variant, so it was
// safe to route to at once, whichever variant is in use; the step first
// trims it to what the workers it knows all hold (the models no policy in
// use picks and none has a batch in flight on: the switch that dropped them
// waited for those), then decides. Trimming and switching run on the one
// thread that calls step(), so a switch never meets a half-trimmed worker,
// and a worker that joins during a switch holds the full set until the next
// step. A variant is a policy library: one table per worker count, all
// swapped in at once.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/manager/model_set_change.h"
#include "runtime/manager/variant_choice.h"
#include "runtime/core/policy_table.h"

namespace lull::manager {

// The serving side of a switch (ServeSession::swap_policies_and_wait).
class PolicySwap {
 public:
  virtual ~PolicySwap() = default;
  // Puts `tables` (one per worker count) in use at once; returns when no
  // batch is in flight (or waiting for a retry) on the models with the ids
  // in `dropped`. Throws std::exception when they do not finish in time
  // (nothing is unloaded then).
  virtual void swap(const std::vector<core::PolicyTable>& tables, const std::vector<int>& dropped) = 0;
};

struct ModelVariant {
  std::string name;     // for the log and /metrics (its file)
  double from_qps = 0;  // serves loads from here up
  // One per worker count, ascending (a policy library; one table without
  // autoscaling), each over the full set's models (widen_policy_table).
  std::vector<core::PolicyTable> tables;
  std::vector<std::string> models;  // the models its policies use
};

struct VariantSwitchOptions {
  double hysteresis = 0.1;            // choose_variant's
  std::int64_t dwell_us = 5'000'000;  // at least this long between switches (and after a failed one)
};

// The management URLs of the workers in rotation now.
using WorkerList = std::function<std::vector<std::string>()>;

class VariantSwitcher {
 public:
  // variants[0]: the full set, in use and loaded on every worker at start,
  // from 0 qps; the others ascending by from_qps. `workers`: the management
  // URLs (a fixed list, or asked for at each step). `control`, `swap` must
  // outlive this.
  VariantSwitcher(std::vector<ModelVariant> variants, WorkerList workers, ModelControl& control, PolicySwap& swap,
                  std::function<void(const std::string&)> log, VariantSwitchOptions options = {});
  VariantSwitcher(std::vector<ModelVariant> variants, std::vector<std::string> workers, ModelControl& control,
                  PolicySwap& swap, std::function<void(const std::string&)> log, VariantSwitchOptions options = {});

  // Trims workers that joined since the last step (see above), then
  // switches if the load calls for another variant and the dwell time has
  // passed; one log line per switch or failed switch, and per trimmed
  // worker. True when it switched.
  bool step(double load_qps, std::int64_t now_us);

  int current() const;
  const ModelVariant& variant(int i) const { return variants_.at(static_cast<std::size_t>(i)); }
  // Prometheus families: the variant in use, switches and failed switches,
  // the last failure's reason, the models each worker holds. Thread-safe.
  std::string metrics_text() const;

 private:
  class Recording;  // ModelControl that keeps loaded_ current
  // Forgets workers gone; trims the new ones. Returns the workers now.
  std::vector<std::string> sync_workers(ModelControl& recording);

  std::vector<ModelVariant> variants_;
  WorkerList workers_;
  ModelControl& control_;
  PolicySwap& swap_;
  std::function<void(const std::string&)> log_;
  VariantRule rule_;

  mutable std::mutex mu_;  // guards what metrics_text reads
  int current_ = 0;
  std::uint64_t switches_ = 0, failures_ = 0;
  std::string last_failure_;
  std::map<std::string, std::set<std::string>> loaded_;  // by worker
};

}  // namespace lull::manager
