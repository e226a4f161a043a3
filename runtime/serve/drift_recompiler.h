#pragma once
// `lull serve --recompile-on-drift OUT.pb`: when the serve session reports
// latency drift (runtime/serve/latency_drift.h), compile a new policy set
// from the latencies observed (the profile corrected by them) with every
// other setting the served set was compiled with, and write it atomically
// to OUT.pb. A Controller of the ControlLoop (runtime/control_loop.h): a
// drift event only notes the latest latencies and wakes the loop, so the
// backend's completion thread that reports it never waits; the compilation
// runs on the loop's thread for this controller, and drift reported while
// one runs starts one more afterwards, with the latest latencies (only the
// latest situation matters). The new set is then handed to whoever is
// connected (the serve session, which swaps it in at its next arrival:
// PolicyCatalog::replace); OUT.pb serves it again after a restart. The
// compilation itself is the compiler's (compiler/online/drift_recompile.h),
// passed in by the composition root: the runtime never includes compiler/.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/control_loop.h"
#include "runtime/serve/latency_drift.h"
#include "schema/policy.pb.h"

namespace lull::serve {

class DriftRecompiler final : public runtime::Controller {
 public:
  // The served set with its latencies replaced by the observed ones, compiled again.
  using Recompile = std::function<schema::PolicySet(const schema::PolicySet& served,
                                                    const std::vector<std::vector<double>>& latency_us)>;
  // Writes the new set's bytes to the output (atomically).
  using Write = std::function<void(const std::string& bytes)>;
  // `log` receives one line per compilation (done or failed).
  DriftRecompiler(schema::PolicySet served, std::string out_path, Recompile recompile, Write write,
                  std::function<void(const std::string&)> log);
  // Non-blocking, any thread: notes the latest corrected latencies and wakes the loop.
  void on_drift(const DriftEvent& event);
  // Blocks until no compilation is pending or running; returns how many finished (tests).
  int wait_idle();
  // Where each recompiled set goes after it is written (nullptr: nowhere).
  // Returns once no call to the previous target is running, so a target
  // may disconnect itself before it dies.
  void connect(std::function<void(const schema::PolicySet&)> target);

  std::string controller_name() const override { return "recompile-on-drift"; }
  // Now when drift is waiting; else never (until the next drift event).
  std::int64_t next_tick_us() const override;
  // Compiles with the latest latencies waiting, if any.
  void tick(std::int64_t now_us) override;

 private:
  void recompile(const std::vector<std::vector<double>>& latency_us);
  schema::PolicySet served_;
  std::string out_path_;
  Recompile recompile_;
  Write write_;
  std::function<void(const std::string&)> log_;
  std::mutex target_mu_;  // held while the target runs
  std::function<void(const schema::PolicySet&)> target_;
  mutable std::mutex mu_;
  std::condition_variable idle_;
  std::optional<std::vector<std::vector<double>>> waiting_;
  bool running_ = false;
  int finished_ = 0;
};

}  // namespace lull::serve
