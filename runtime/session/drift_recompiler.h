#pragma once
// `lull serve --recompile-on-drift OUT.pb`: when the serve session reports
// latency drift (runtime/session/latency_drift.h), compile the served sets
// again from the latencies observed (the profile corrected by them) with
// every other setting each was compiled with, and write them atomically to
// OUT.pb (one set, or a library of them). The sets recompiled: every set
// held (each worker count, each arrival pattern), not only the one served
// now: the latencies are the models', the same under any traffic and worker
// count, and drift is reported once when it starts, so a set left stale
// would be served with the old latencies' policies after the next worker
// change or pattern switch until some other drift (the cost: one
// compilation per set held).
// A Controller of the ControlLoop (runtime/core/control_loop.h): a drift event
// only notes the latest latencies and wakes the loop, so the backend's
// completion thread that reports it never waits; the compilation runs on
// the loop's thread for this controller, and drift reported while one runs
// starts one more afterwards, with the latest latencies (only the latest
// situation matters: core::LatestSlot, the rule online compilation's
// LatestWins thread follows). The new sets are then handed to whoever is
// connected (the serve session, which swaps each in at its next arrival:
// PolicyCatalog::replace, by worker count and pattern); OUT.pb serves them
// again after a restart. The
// compilation itself is the compiler's (compiler/online/drift_recompile.h),
// passed in by the composition root: the runtime never includes compiler/.
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/control_loop.h"
#include "runtime/core/latest_wins.h"
#include "runtime/session/latency_drift.h"
#include "schema/policy.pb.h"

namespace lull::session {

class DriftRecompiler final : public core::Controller {
 public:
  // The served set with its latencies replaced by the observed ones, compiled again.
  using Recompile = std::function<schema::PolicySet(const schema::PolicySet& served,
                                                    const std::vector<std::vector<double>>& latency_us)>;
  // Writes the new set's bytes to the output (atomically).
  using Write = std::function<void(const std::string& bytes)>;
  // `served`: the served library; all its sets are recompiled
  // (served_sets). `log` receives
  // one line per drift handled (done or failed). Throws
  // std::invalid_argument for an empty library.
  DriftRecompiler(const schema::PolicyLibrary& served, std::string out_path, Recompile recompile, Write write,
                  std::function<void(const std::string&)> log);
  // The sets a drift recompiles (see above), in the library's order.
  static std::vector<schema::PolicySet> served_sets(const schema::PolicyLibrary& served);
  // Non-blocking, any thread: notes the latest corrected latencies and wakes the loop.
  void on_drift(const DriftEvent& event);
  // Blocks until no compilation is pending or running; returns how many finished (tests).
  int wait_idle();
  // Where the recompiled sets go after they are written (nullptr: nowhere).
  // Returns once no call to the previous target is running, so a target
  // may disconnect itself before it dies.
  void connect(std::function<void(const std::vector<schema::PolicySet>&)> target);

  std::string controller_name() const override { return "recompile-on-drift"; }
  // Now when drift is waiting; else never (until the next drift event).
  std::int64_t next_tick_us() const override;
  // Compiles with the latest latencies waiting, if any.
  void tick(std::int64_t now_us) override;

 private:
  void recompile(const std::vector<std::vector<double>>& latency_us);
  std::vector<schema::PolicySet> served_;
  std::string out_path_;
  Recompile recompile_;
  Write write_;
  std::function<void(const std::string&)> log_;
  std::mutex target_mu_;  // held while the target runs
  std::function<void(const std::vector<schema::PolicySet>&)> target_;
  // The latest latencies waiting, the rule online compilation's LatestWins
  // follows; the ControlLoop's thread for this controller works it.
  core::LatestSlot<std::vector<std::vector<double>>> latest_;
};

}  // namespace lull::session
