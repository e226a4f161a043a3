#pragma once
// Compiles single policies on demand, for online compilation (lull serve /
// simulate --online-compile): the runtime asks for "the policy for K workers
// at load L" and cli/ routes the request here. The profiles are read and
// reduced once, at construction, under the compile settings a policy
// library recorded (recorded_compile_spec, compiler/emit/recorded_spec.h), so an online policy is the policy
// `lull compile` would have written for that (K, L). Policies are cached.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "compiler/compile_spec.h"
#include "compiler/profile/model_table.h"
#include "compiler/solver/solver.h"
#include "schema/policy.pb.h"

namespace lull::compiler {

class OnlineCompiler {
 public:
  // Reads and reduces the profiles (errors name the file and field).
  explicit OnlineCompiler(const CompileSpec& spec, std::ostream* log = nullptr);
  ~OnlineCompiler();

  // A sealed-in-memory policy set holding one policy: `workers` at `load_qps`,
  // for the recorded arrival process or `arrivals` (a pattern the runtime
  // estimated beyond its library). Thread-safe (one compilation at a time);
  // a repeated request is served from the cache.
  schema::PolicySet compile(int workers, double load_qps);
  schema::PolicySet compile(int workers, double load_qps, const ArrivalProcess& arrivals);

  // Later compilations use these profiles instead (lull serve
  // --recompile-on-drift: the latencies observed while serving); the cache
  // is dropped. Waits for a compilation under way.
  void use_profiles(ReducedProfiles profiles);

  // Abandons the compilation under way (it throws SolveCancelled within one
  // solver iteration) and every later one (they throw at once); for a
  // server that stops. Thread-safe; cannot be undone.
  void cancel() { cancelled_ = true; }

  int compilations() const { return compilations_; }  // excluding cache hits
  const ArrivalProcess& recorded_arrivals() const { return spec_.mdp.arrivals; }
  double last_compile_s() const { return last_s_; }

 private:
  CompileSpec spec_;
  ReducedProfiles profiles_;
  std::unique_ptr<Solver> solver_;
  std::mutex mu_;
  std::map<std::tuple<int, double, std::string>, schema::PolicySet> cache_;  // workers, load, arrivals
  int compilations_ = 0;
  double last_s_ = 0;
  std::atomic<bool> cancelled_{false};
};

}  // namespace lull::compiler
