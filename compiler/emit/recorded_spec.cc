// A policy set's recorded compile settings (why: see recorded_spec.h).
#include "compiler/emit/recorded_spec.h"

#include <stdexcept>

#include "schema/arrival_process.h"

namespace lull::compiler {

CompileSpec recorded_compile_spec(const schema::PolicySet& set, ProfileInputs inputs, const std::string& device) {
  if (set.policies_size() == 0) throw std::invalid_argument("policy set holds no policy to take compile settings from");
  const schema::PolicyInputs& in = set.policies(0).inputs();
  const auto not_recorded = [](const std::string& field) {
    return std::invalid_argument("policies[0].inputs." + field + ": not recorded; cannot compile a matching policy");
  };
  CompileSpec spec;
  spec.inputs = std::move(inputs);
  spec.inputs.task = set.task();
  for (const auto& m : set.models()) spec.reduction.models.push_back(m.name());
  spec.mdp.slo_us = set.slo_ms() * 1000;
  spec.mdp.workers = static_cast<int>(set.workers());
  spec.mdp.max_queue = static_cast<int>(in.max_queue());
  switch (in.discretization()) {
    case schema::FLD:
      spec.mdp.discretization = Discretization::kFld;
      break;
    case schema::MD:
      spec.mdp.discretization = Discretization::kMd;
      break;
    default:
      throw not_recorded("discretization");
  }
  if (in.intervals() > 0) spec.mdp.intervals = static_cast<int>(in.intervals());
  switch (in.batching()) {
    case schema::MAXIMAL:
      spec.mdp.batching = Batching::kMaximal;
      break;
    case schema::VARIABLE:
      spec.mdp.batching = Batching::kVariable;
      break;
    default:
      throw not_recorded("batching");
  }
  if (!(in.percentile() > 0)) throw not_recorded("percentile");
  spec.reduction.percentile = in.percentile();
  if (in.horizon() > 0) spec.solve.horizon = static_cast<int>(in.horizon());
  spec.mdp.phase_cap = static_cast<int>(in.phase_cap());  // an online policy at any count is modelled alike
  for (const auto& p : set.policies()) spec.loads_qps.push_back(p.inputs().load_qps());
  // The process the set was compiled for (empty in sets written before it was recorded: Poisson).
  if (!set.arrivals().empty()) spec.mdp.arrivals = parse_arrival_process(set.arrivals(), "arrivals");
  spec.device = device;
  return spec;
}

}  // namespace lull::compiler
