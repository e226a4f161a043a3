#include "cli/compile_options.h"

#include "cli/commands.h"
#include "cli/number_lists.h"
#include "compiler/profile/profile_reduction.h"
#include "compiler/profile/profile_source.h"

namespace po = boost::program_options;

namespace lull::cli {

void add_compile_options(po::options_description& desc, CompileArgs& a) {
  desc.add_options()
      ("profiles", po::value(&a.profiles)->required(), "profile set: lull JSON file, or a RAMSIS artifact folder")
      ("accuracy", po::value(&a.accuracy), "accuracy table (percent) for an artifact folder")
      ("task", po::value(&a.task), "task name (overrides the profile's)")
      ("slo-ms", po::value(&a.slo_ms)->required(), "latency SLO in milliseconds")
      ("workers", po::value(&a.workers)->required(), "worker count K (a list for bench: 60,70,80)")
      ("load-qps", po::value(&a.loads)->required(), "central load(s) in QPS: 2000 | 2000,2200 | 200:4000:200")
      ("intervals", po::value(&a.intervals)->default_value(100), "FLD slack intervals D")
      ("md", po::bool_switch(&a.md), "model-based slack discretization instead of FLD")
      ("batching", po::value(&a.batching)->default_value("max"), "max | variable")
      ("max-queue", po::value(&a.max_queue)->default_value(32), "largest queue length tracked exactly (N)")
      ("percentile", po::value(&a.percentile)->default_value(95), "latency percentile taken from samples")
      ("models", po::value(&a.models), "comma-separated models to use (default: the Pareto front)")
      ("all-models", po::bool_switch(&a.all_models), "keep every model (no Pareto pruning)")
      ("horizon", po::value(&a.horizon)->default_value(100), "value-iteration horizon")
      ("device", po::value(&a.device)->default_value("auto"), "solver: cpu | cuda | auto");
}

std::vector<compiler::SweepRequest> make_sweep_requests(const CompileArgs& a) {
  const auto worker_counts = parse_number_list(a.workers, "--workers");
  for (double k : worker_counts)
    if (k < 1 || k != static_cast<int>(k))
      throw UsageError("--workers: must be a whole number >= 1 (got " + std::to_string(k) + ")");
  const auto loads = parse_number_list(a.loads, "--load-qps");
  for (double l : loads)
    if (!(l > 0)) throw UsageError("--load-qps: loads must be > 0 QPS (got " + std::to_string(l) + ")");
  if (a.intervals < 1) throw UsageError("--intervals: must be >= 1 (got " + std::to_string(a.intervals) + ")");
  if (a.max_queue < 1 || a.max_queue > 1000) throw UsageError("--max-queue: must be in 1..1000");
  if (!(a.percentile > 0 && a.percentile <= 100)) throw UsageError("--percentile: must be in (0, 100]");
  if (!(a.slo_ms > 0)) throw UsageError("--slo-ms: must be > 0");
  if (a.horizon < 1) throw UsageError("--horizon: must be >= 1");
  if (a.batching != "max" && a.batching != "variable")
    throw UsageError("--batching: expected 'max' or 'variable', got '" + a.batching + "'");

  compiler::ReductionOptions ro;
  ro.percentile = a.percentile;
  ro.max_queue = a.max_queue;
  ro.models = split_commas(a.models);
  ro.keep_all_models = a.all_models;
  const auto raw = compiler::load_profile_source(a.profiles, a.accuracy, a.task);
  const auto reduced = compiler::reduce_profiles(raw, ro, a.profiles);
  try {
    compiler::check_slo_feasible(reduced, a.slo_ms * 1000);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  std::vector<compiler::SweepRequest> out;
  for (double k : worker_counts) {
    compiler::SweepRequest r;
    r.profiles = reduced;
    r.base.slo_us = a.slo_ms * 1000;
    r.base.workers = static_cast<int>(k);
    r.base.max_queue = a.max_queue;
    r.base.discretization = a.md ? compiler::Discretization::kMd : compiler::Discretization::kFld;
    r.base.intervals = a.intervals;
    r.base.batching = a.batching == "max" ? compiler::Batching::kMaximal : compiler::Batching::kVariable;
    r.base.horizon = a.horizon;
    r.loads_qps = loads;
    r.context.task = reduced.task;
    r.context.percentile = a.percentile;
    r.solve.horizon = a.horizon;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace lull::cli
