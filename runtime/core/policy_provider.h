#pragma once
// What the runtime asks of whoever can make policies: "the policy for K
// workers at load L". The runtime declares these interfaces and never sees
// the compiler; cli/ plugs the compiler in (cli/online_compile.*),
// tests plug in fakes. Two roles:
//   PolicyCompiler  makes one policy, synchronously (a compilation: slow);
//   PolicyProvider  is asked for a missing policy and delivers it later
//                   (a background thread for `lull serve`, virtual time in
//                   the simulator), so the selection path never waits.
#include "runtime/core/policy_table.h"
#include "schema/arrival_process.h"

namespace lull::core {

struct PolicyRequest {
  int workers = 0;          // 0: nothing is missing
  double load_qps = 0;      // central load the policy must cover
  ArrivalProcess arrivals;  // the arrival process it is compiled for
};

class PolicyCompiler {
 public:
  virtual ~PolicyCompiler() = default;
  // A table for request.workers holding a policy at load >= request.load_qps
  // compiled for request.arrivals, with the same task, SLO and models as the library it joins. Throws on
  // failure (the message names what is wrong).
  virtual PolicyTable compile(const PolicyRequest& request) = 0;
  // Abandons the compilation under way and every later one: compile()
  // throws soon (a stopping server must not wait for a policy). Default:
  // nothing to abandon (compilations that are quick or simulated).
  virtual void cancel() {}
};

class PolicyProvider {
 public:
  virtual ~PolicyProvider() = default;
  // Starts producing the policy; returns at once. The result reaches the
  // Dispatcher through its inbox (Dispatcher::policy_inbox) or, in the
  // simulator, its add_policies at the modelled completion time.
  virtual void request(const PolicyRequest& request) = 0;
};

}  // namespace lull::core
