#include "compiler/compile_spec.h"

#include <cstdio>
#include <stdexcept>

#include "schema/input_limits.h"
#include "schema/number_text.h"

namespace lull::compiler {
namespace {

std::string str(double v) { return number_text(v); }

}  // namespace

void validate_compile_spec(const CompileSpec& s) {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (s.inputs.path.empty()) fail("--profiles: no profile set given");
  if (!(s.mdp.slo_us > 0 && s.mdp.slo_us <= limits::kMaxSloMs * 1000))
    fail("--slo-ms: must be > 0 and <= " + str(limits::kMaxSloMs) + " (got " + str(s.mdp.slo_us / 1000) + ")");
  if (s.mdp.workers < 1 || s.mdp.workers > limits::kMaxWorkers)
    fail("--workers: must be a whole number in 1.." + std::to_string(limits::kMaxWorkers) + " (got " +
         std::to_string(s.mdp.workers) + ")");
  if (s.loads_qps.empty()) fail("--load-qps: no load given");
  for (double l : s.loads_qps)
    if (!(l > 0 && l <= limits::kMaxLoadQps))
      fail("--load-qps: loads must be > 0 and <= " + str(limits::kMaxLoadQps) + " QPS (got " + str(l) + ")");
  if (s.mdp.intervals < 1 || s.mdp.intervals > limits::kMaxIntervals)
    fail("--intervals: must be in 1.." + std::to_string(limits::kMaxIntervals) + " (got " +
         std::to_string(s.mdp.intervals) + ")");
  if (s.mdp.phase_cap < 0 || s.mdp.phase_cap > limits::kMaxWorkers)
    fail("--phase-cap: must be 0 (exact) or a worker count in 1.." + std::to_string(limits::kMaxWorkers) + " (got " +
         std::to_string(s.mdp.phase_cap) + ")");
  if (s.mdp.max_queue < 1 || s.mdp.max_queue > 1000) fail("--max-queue: must be in 1..1000");
  if (!(s.reduction.percentile > 0 && s.reduction.percentile <= 100)) fail("--percentile: must be in (0, 100]");
  if (s.solve.horizon < 1 || s.solve.horizon > limits::kMaxHorizon)
    fail("--horizon: must be in 1.." + std::to_string(limits::kMaxHorizon));
}

std::string solver_mode(const CompileSpec& s) {
  const CompileSpec reference;
  std::vector<std::string> diffs;
  if (s.mdp.discretization == Discretization::kMd)
    diffs.push_back("md");
  else if (s.mdp.intervals != reference.mdp.intervals)
    diffs.push_back("intervals=" + std::to_string(s.mdp.intervals));
  if (s.mdp.batching == Batching::kVariable) diffs.push_back("variable-batching");
  if (s.mdp.max_queue != reference.mdp.max_queue) diffs.push_back("max-queue=" + std::to_string(s.mdp.max_queue));
  if (s.reduction.percentile != reference.reduction.percentile)
    diffs.push_back("percentile=" + str(s.reduction.percentile));
  if (s.solve.horizon != reference.solve.horizon) diffs.push_back("horizon=" + std::to_string(s.solve.horizon));
  if (s.mdp.phase_cap > 0 && s.mdp.phase_cap < s.mdp.workers)
    diffs.push_back("phase-cap=" + std::to_string(s.mdp.phase_cap));
  if (diffs.empty()) return "reference";
  std::string out = diffs.front();
  for (std::size_t i = 1; i < diffs.size(); ++i) out += "+" + diffs[i];
  return out;
}

}  // namespace lull::compiler
