#include "cli/compile_options.h"

#include <cmath>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/number_lists.h"
#include "schema/input_limits.h"

namespace po = boost::program_options;

namespace lull::cli {

std::vector<RenamedFlag> renamed_compile_flags() {
  return {{"--accuracy", "--accuracy is now --accuracy-percent FILE (the artifact's table in percent); "
                         "--accuracy in lull profile/loadgen is a table of fractions"}};
}

void add_compile_options(po::options_description& desc, CompileFlags& f) {
  auto& s = f.spec;
  desc.add_options()
      ("profiles", po::value(&s.inputs.path)->required(), "profile set: lull JSON file, or a RAMSIS artifact folder")
      ("accuracy-percent", po::value(&s.inputs.accuracy_json), "the artifact's accuracy table, in percent, for an artifact folder")
      ("task", po::value(&s.inputs.task), "task name (overrides the profile's)")
      ("slo-ms", po::value(&f.slo_ms)->required(), "latency SLO in milliseconds")
      ("workers", po::value(&f.workers)->required(), "worker count K (a list for bench: 60,70,80)")
      ("load-qps", po::value(&f.loads)->required(), "central load(s) in QPS: 2000 | 2000,2200 | 200:4000:200")
      ("intervals", po::value(&s.mdp.intervals)->default_value(100), "FLD slack intervals D")
      ("md", po::bool_switch(&f.md), "model-based slack discretization instead of FLD")
      ("batching", po::value(&f.batching)->default_value("max"), "max | variable")
      ("max-queue", po::value(&s.mdp.max_queue)->default_value(32), "largest queue length tracked exactly (N)")
      ("percentile", po::value(&s.reduction.percentile)->default_value(95), "latency percentile taken from samples")
      ("models", po::value(&f.models), "comma-separated models to use (default: the Pareto front)")
      ("all-models", po::bool_switch(&s.reduction.keep_all_models), "keep every model (no Pareto pruning)")
      ("horizon", po::value(&s.solve.horizon)->default_value(100), "value-iteration horizon")
      ("device", po::value(&s.device)->default_value("auto"), "solver: cpu | cuda | auto");
}

std::vector<compiler::CompileSpec> compile_specs(const CompileFlags& f) {
  compiler::CompileSpec spec = f.spec;
  spec.mdp.slo_us = f.slo_ms * 1000;
  spec.mdp.discretization = f.md ? compiler::Discretization::kMd : compiler::Discretization::kFld;
  if (f.batching != "max" && f.batching != "variable")
    throw UsageError("--batching: expected 'max' or 'variable', got '" + f.batching + "'");
  spec.mdp.batching = f.batching == "max" ? compiler::Batching::kMaximal : compiler::Batching::kVariable;
  spec.reduction.models = split_commas(f.models);
  spec.loads_qps = parse_number_list(f.loads, "--load-qps");
  std::vector<compiler::CompileSpec> out;
  for (double k : parse_number_list(f.workers, "--workers")) {
    if (!(k >= 1 && k <= limits::kMaxWorkers) || k != std::floor(k))
      throw UsageError("--workers: must be a whole number in 1.." + std::to_string(limits::kMaxWorkers) + " (got " +
                       std::to_string(k) + ")");
    spec.mdp.workers = static_cast<int>(k);
    try {
      compiler::validate_compile_spec(spec);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    out.push_back(spec);
  }
  return out;
}

}  // namespace lull::cli
