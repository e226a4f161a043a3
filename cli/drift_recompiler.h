#pragma once
// `lull serve --recompile-on-drift OUT.pb`: when the serve session reports
// latency drift (runtime/serve/latency_drift.h), compile a new policy set
// from the latencies observed (the profile corrected by them) with every
// other setting the served set was compiled with, and write it atomically
// to OUT.pb. The compilation runs on a thread of its own (runtime::LatestWins,
// as online compilation's), so the backend's completion thread that reports
// the drift never waits for it; drift reported while a compilation runs
// starts one more afterwards, with the latest latencies. The new set is then handed to whoever is connected
// (the serve session, which swaps it in at its next arrival:
// PolicyCatalog::replace); OUT.pb serves it again after a restart.
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/latest_wins.h"
#include "runtime/serve/latency_drift.h"
#include "schema/policy.pb.h"

namespace lull::cli {

class DriftRecompiler {
 public:
  // `log` receives one line per compilation (done or failed).
  DriftRecompiler(schema::PolicySet served, std::string out_path, std::function<void(const std::string&)> log);
  ~DriftRecompiler() = default;  // waits for a compilation under way
  // Non-blocking: notes the latest corrected latencies and wakes the compiler thread.
  void on_drift(const serve::DriftEvent& event);
  // Blocks until no compilation is pending or running; returns how many finished (tests).
  int wait_idle();
  // Where each recompiled set goes after it is written (nullptr: nowhere).
  // Returns once no call to the previous target is running, so a target
  // may disconnect itself before it dies.
  void connect(std::function<void(const schema::PolicySet&)> target);

 private:
  void recompile(const std::vector<std::vector<double>>& latency_us);  // on the worker's thread
  schema::PolicySet served_;
  std::string out_path_;
  std::function<void(const std::string&)> log_;
  std::mutex target_mu_;  // held while the target runs
  std::function<void(const schema::PolicySet&)> target_;
  runtime::LatestWins<std::vector<std::vector<double>>> worker_;  // last: its thread reads everything above
};

}  // namespace lull::cli
