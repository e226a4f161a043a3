#include "compiler/emit/policy_builder.h"

namespace lull::compiler {

schema::Policy make_policy(const MdpProblem& p, const SolverOutput& solved, const CompileSpec& spec,
                           const std::string& task) {
  schema::Policy pol;
  auto* in = pol.mutable_inputs();
  const auto& o = p.options;
  in->set_task(task);
  in->set_slo_ms(o.slo_us / 1000.0);
  in->set_workers(static_cast<unsigned>(o.workers));
  in->set_load_qps(o.load_qps);
  in->set_arrivals(arrival_process_text(o.arrivals));
  in->set_discretization(o.discretization == Discretization::kFld ? schema::FLD : schema::MD);
  in->set_intervals(o.discretization == Discretization::kFld ? static_cast<unsigned>(o.intervals) : 0u);
  in->set_max_queue(static_cast<unsigned>(o.max_queue));
  in->set_percentile(spec.reduction.percentile);
  in->set_batching(o.batching == Batching::kMaximal ? schema::MAXIMAL : schema::VARIABLE);
  in->set_horizon(static_cast<unsigned>(spec.solve.horizon));
  in->set_solver_mode(solver_mode(spec));
  in->set_phase_cap(static_cast<unsigned>(o.phase_cap));
  for (double t : p.grid_us) pol.add_slack_grid_us(t);
  // Queries served per model, weighted as the expectations are (spec section 6).
  const bool have_p = solved.stationary.size() == static_cast<std::size_t>(p.num_states());
  std::vector<double> served(p.accuracy.size(), 0.0);
  double all = 0;
  for (int s = p.state(1, 0); s < p.num_states(); ++s) {
    const auto& a = p.actions[solved.choice[s]];
    pol.add_action_model(static_cast<unsigned>(a.model));
    pol.add_action_batch(static_cast<unsigned>(a.batch));
    if (have_p) {
      served[static_cast<std::size_t>(a.model)] += solved.stationary[s] * a.batch;
      all += solved.stationary[s] * a.batch;
    }
  }
  pol.mutable_expected()->set_accuracy(solved.expected_accuracy);
  pol.mutable_expected()->set_violation_rate(solved.expected_violation_rate);
  if (have_p && all > 0)
    for (double q : served) pol.mutable_expected()->add_model_share(q / all);
  pol.set_num_states(static_cast<unsigned>(p.num_states()));
  pol.set_num_actions(p.actions.size());
  return pol;
}

schema::PolicySet make_policy_set_header(const ReducedProfiles& profiles, const MdpOptions& options) {
  schema::PolicySet set;
  set.set_task(profiles.task);
  set.set_slo_ms(options.slo_us / 1000.0);
  set.set_workers(static_cast<unsigned>(options.workers));
  set.set_provenance(profiles.provenance);
  // Poisson sets leave it empty: byte for byte the sets written before the field.
  if (options.arrivals.kind != ArrivalProcess::Kind::kPoisson) set.set_arrivals(arrival_process_text(options.arrivals));
  for (const auto& m : profiles.models) {
    auto* e = set.add_models();
    e->set_name(m.name);
    e->set_accuracy(m.accuracy);
    for (double l : m.latency_us) e->add_latency_us(l);
  }
  return set;
}

}  // namespace lull::compiler
