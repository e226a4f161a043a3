#pragma once
// The TorchServe backend's record of each worker's health, and its
// transitions: in rotation (up) or out, why, outlier ejection (its
// OutlierDetector), a probe in flight, a refused key. The backend owns it
// and holds its lock around every call (taking a worker down and failing the
// batches it holds is one step there); the sender reads it, the two
// controllers (health_checks.h) drive it through the backend's pings and
// probes. No threads, no lock, no I/O: every transition reads the injected
// clock, so it is tested on a virtual one.
//
// A worker down for a failed ping or a lost connection rejoins at a passing
// ping; with check_models_on_rejoin, only once a model check sent after that
// ping passes too (a restarted TorchServe answers /ping before its models
// have loaded). An ejected one rejoins only through a passing probe batch once its
// ejection time is over (or, when it refused the key file's key, once the
// file has new keys); a failed probe ejects it again for twice as long. Each
// time a worker goes down or is assigned its epoch moves, so a ping or probe
// sent before cannot decide for it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/core/worker_health.h"
#include "runtime/upstream/torchserve/outlier_detector.h"

namespace lull::torchserve {

struct HealthRecord {
  bool up = false;
  std::uint64_t epoch = 0;  // moves whenever it goes down or is assigned
  OutlierDetector detector;
  std::uint64_t ejections = 0;  // times it was ejected (probes that failed included)
  std::string last_error;       // why it last failed, "" if never
  std::string down_why;         // why it last went down (down_reason)
  bool probing = false;         // a probe batch is in flight
  // Ejected for refusing the key file's key: probed as soon as the file has
  // new keys (its reload count moved past refused_at_reload).
  bool refused_key = false;
  std::uint64_t refused_at_reload = 0;
  bool checking_models = false;  // its rejoin's model check is in flight
  std::string models_missing;    // why its last model check failed since it went down ("" none)
  int ping_refusals = 0;         // consecutive pings refused for their key
};

// What a failed batch did to its worker (HealthRecords::batch_failed).
struct BatchFault {
  bool ejected = false;
  std::int64_t ejected_ms = 0;
  bool take_down = false;  // out of rotation now (it was up, and is gone or ejected)
  std::string down_why;    // the reason, when take_down
};

class HealthRecords {
 public:
  // Every worker down, not ejected. `clock` outlives it.
  HealthRecords(int workers, OutlierOptions outlier, const core::Clock& clock);

  int size() const { return static_cast<int>(records_.size()); }
  const HealthRecord& at(int worker) const { return records_.at(static_cast<std::size_t>(worker)); }
  bool up(int worker) const { return at(worker).up; }
  std::uint64_t epoch(int worker) const { return at(worker).epoch; }
  core::WorkerEjection ejection(int worker) const;

  // A pool's worker takes the slot: up at once, its ejection history gone.
  void assign(int worker);
  // Out of rotation (the caller fails what it holds); `why` is its down_reason.
  void take_down(int worker, const std::string& why);
  void note_error(int worker, const std::string& why) { rec(worker).last_error = why; }

  // A worker that went down rejoins only after its models are checked too.
  void check_models_on_rejoin(bool on) { check_models_ = on; }

  // A ping sent at `epoch_at_send` passed (whatever the epoch, its key
  // refusals start over). kBack: that brings it back (it was
  // down, not since taken down again or assigned, and not ejected);
  // kCheckModels: it would, but it went down before and models are checked
  // on rejoin, so the caller sends the model check (one at a time) and
  // models_checked() decides; kNone: no change.
  enum class Rejoin { kNone, kBack, kCheckModels };
  Rejoin rejoin_at_ping(int worker, std::uint64_t epoch_at_send);
  bool ping_passed(int worker, std::uint64_t epoch_at_send) {
    return rejoin_at_ping(worker, epoch_at_send) == Rejoin::kBack;
  }
  // The model check sent at `epoch_at_send` answered; `missing` says which
  // models are not loaded and why ("" none): true when it is back in
  // rotation. When it stays out for the first time since it went down,
  // *note says why (the caller logs it: once, not per ping).
  bool models_checked(int worker, std::uint64_t epoch_at_send, const std::string& missing, std::string* note);
  // A ping failed (`what`: the response described): true when it was up,
  // and *why says why it goes down (the caller then takes it down).
  // `refused_key`: refused for its key. TorchServe refuses the old key
  // before its key file holds the new one (the next ping carries the file's
  // key), so one refusal alone does not take it down; a second in a row
  // (no passing ping between) does.
  bool ping_failed(int worker, const std::string& what, std::string* why, bool refused_key = false);

  // A batch answered (per-input rejections included).
  void batch_ok(int worker);
  // A batch failed with `why` (its model and reason). `worker_fault`: counts
  // towards ejection (not a 4xx about the request); `kind`: transport
  // failures take it down at once; `refused_key`: it refused the key file's
  // key, whose reload count is `key_reloads`.
  BatchFault batch_failed(int worker, const std::string& why, bool worker_fault, OutlierDetector::Failure kind,
                          bool refused_key, std::optional<std::uint64_t> key_reloads);

  // When the ejected worker is due its probe batch (Controller::kNever: not
  // ejected, up, or its probe in flight); `key_reloads` is its key file's
  // reload count (none: no key file).
  std::int64_t probe_due_us(int worker, std::optional<std::uint64_t> key_reloads) const;
  enum class Probe { kNone, kSend, kReturnedUnprobed };
  // At `now_us`: kSend when its probe is due (it is then probing), else
  // kNone. With no input to probe with (`have_input` false) its time being
  // over is enough: kReturnedUnprobed, and its next passing ping brings it back.
  Probe start_probe(int worker, std::int64_t now_us, std::optional<std::uint64_t> key_reloads, bool have_input);
  // The probe sent at `epoch_at_send` passed: true when it is back in rotation.
  bool probe_passed(int worker, std::uint64_t epoch_at_send);
  // It failed with `why`: true when that ejected it again (for twice as
  // long; the caller wakes the ejector for the new end).
  bool probe_failed(int worker, std::uint64_t epoch_at_send, const std::string& why,
                    std::optional<std::uint64_t> key_reloads);

 private:
  HealthRecord& rec(int worker) { return records_.at(static_cast<std::size_t>(worker)); }
  // Not for this probe to decide: assigned, vacated or back meanwhile.
  bool stale_probe(const HealthRecord& r, std::uint64_t epoch_at_send) const;

  OutlierOptions outlier_;
  const core::Clock& clock_;
  bool check_models_ = false;
  std::vector<HealthRecord> records_;
};

}  // namespace lull::torchserve
