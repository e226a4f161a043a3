#pragma once
// `lull serve --recompile-on-drift OUT.pb`: when the serve session reports
// latency drift (runtime/serve/latency_drift.h), compile a new policy set
// from the latencies observed (the profile corrected by them) with every
// other setting the served set was compiled with, and write it atomically
// to OUT.pb. The compilation runs on a thread of its own, so the backend's
// completion thread that reports the drift never waits for it; drift
// reported while a compilation runs starts one more afterwards, with the
// latest latencies. Swapping the new set into the running session is not
// done here: the Dispatcher's policy catalog adds policies but does not
// replace one it holds (docs/serving.md, "Latency drift");
// `lull serve --policies OUT.pb` serves it.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compiler/compile_spec.h"
#include "compiler/profile/model_table.h"
#include "runtime/serve/latency_drift.h"
#include "schema/policy.pb.h"

namespace lull::cli {

// The compile spec a set was compiled with, from its first policy's recorded
// inputs and every policy's load.
compiler::CompileSpec compile_spec_of(const schema::PolicySet& set);

// The set's models with these latencies (per model, lat(m, b) for b = 1..;
// cut to the set's N+1), fastest at batch 1 first, as the compiler orders them.
compiler::ReducedProfiles profiles_with_latencies(const schema::PolicySet& set,
                                                  const std::vector<std::vector<double>>& latency_us);

// Compiles the set again on the CPU solver with these latencies. Throws
// std::invalid_argument when the SLO is no longer feasible.
schema::PolicySet recompile_with_latencies(const schema::PolicySet& set,
                                           const std::vector<std::vector<double>>& latency_us);

class DriftRecompiler {
 public:
  // `log` receives one line per compilation (done or failed).
  DriftRecompiler(schema::PolicySet served, std::string out_path, std::function<void(const std::string&)> log);
  ~DriftRecompiler();  // waits for a compilation under way
  // Non-blocking: notes the latest corrected latencies and wakes the compiler thread.
  void on_drift(const serve::DriftEvent& event);
  // Blocks until no compilation is pending or running; returns how many finished (tests).
  int wait_idle();

 private:
  void loop();
  schema::PolicySet served_;
  std::string out_path_;
  std::function<void(const std::string&)> log_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false, running_ = false, stop_ = false;
  int finished_ = 0;
  std::vector<std::vector<double>> latest_us_;
  std::thread thread_;
};

}  // namespace lull::cli
