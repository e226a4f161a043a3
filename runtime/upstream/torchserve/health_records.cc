// Each worker's health and its transitions (why and how: see health_records.h).
#include "runtime/upstream/torchserve/health_records.h"

#include <algorithm>

#include "runtime/core/control_loop.h"

namespace lull::torchserve {

HealthRecords::HealthRecords(int workers, OutlierOptions outlier, const core::Clock& clock)
    : outlier_(outlier), clock_(clock), records_(static_cast<std::size_t>(std::max(workers, 0))) {
  for (auto& r : records_) r.detector = OutlierDetector(outlier_);
}

core::WorkerEjection HealthRecords::ejection(int worker) const {
  const HealthRecord& r = at(worker);
  return core::WorkerEjection{r.ejections, r.detector.ejected()};
}

void HealthRecords::assign(int worker) {
  HealthRecord& r = rec(worker);
  r.up = true;
  r.epoch++;
  r.detector = OutlierDetector(outlier_);
  r.last_error.clear();
  r.checking_models = false;
  r.models_missing.clear();
}

void HealthRecords::take_down(int worker, const std::string& why) {
  HealthRecord& r = rec(worker);
  r.up = false;
  r.epoch++;
  r.down_why = why;
  r.checking_models = false;
  r.models_missing.clear();
}

HealthRecords::Rejoin HealthRecords::rejoin_at_ping(int worker, std::uint64_t epoch_at_send) {
  HealthRecord& r = rec(worker);
  r.ping_refusals = 0;
  // An ejected worker rejoins through its probe batch only.
  if (r.up || r.epoch != epoch_at_send || r.detector.ejected()) return Rejoin::kNone;
  // One that went down (not one never up yet: the start-up check covered it)
  // may be a restarted server whose /ping passes before its models load.
  if (check_models_ && !r.down_why.empty()) {
    if (r.checking_models) return Rejoin::kNone;
    r.checking_models = true;
    return Rejoin::kCheckModels;
  }
  r.up = true;
  r.detector.returned(clock_.now_us());
  return Rejoin::kBack;
}

bool HealthRecords::models_checked(int worker, std::uint64_t epoch_at_send, const std::string& missing,
                                   std::string* note) {
  HealthRecord& r = rec(worker);
  if (r.epoch != epoch_at_send || !r.checking_models) return false;  // taken down again or assigned meanwhile
  r.checking_models = false;
  if (r.up || r.detector.ejected()) return false;
  if (!missing.empty()) {
    if (r.models_missing.empty())
      *note = "answers its ping but stays out of rotation until its models load: " + missing;
    r.models_missing = missing;
    return false;
  }
  r.models_missing.clear();
  r.up = true;
  r.detector.returned(clock_.now_us());
  return true;
}

bool HealthRecords::ping_failed(int worker, const std::string& what, std::string* why, bool refused_key) {
  HealthRecord& r = rec(worker);
  if (!r.up) return false;
  if (refused_key && ++r.ping_refusals < 2) return false;  // the first: wait for the next ping
  r.ping_refusals = 0;
  r.last_error = "ping: " + what;
  *why = "went down: " + r.last_error;
  return true;
}

void HealthRecords::batch_ok(int worker) { rec(worker).detector.record_success(); }

BatchFault HealthRecords::batch_failed(int worker, const std::string& why, bool worker_fault,
                                       OutlierDetector::Failure kind, bool refused_key,
                                       std::optional<std::uint64_t> key_reloads) {
  HealthRecord& r = rec(worker);
  r.last_error = why;
  BatchFault out;
  // A server that cannot be reached is gone: out at once, back at its next
  // passing ping. One that is stuck or broken while its /ping may still pass
  // is ejected after consecutive failures, for growing times.
  bool gone = worker_fault && kind == OutlierDetector::Failure::kTransport;
  std::string how = "went down: ";
  if (worker_fault && r.detector.record_failure(kind)) {
    out.ejected = true;
    out.ejected_ms = r.detector.eject(clock_.now_us());
    r.ejections++;
    r.refused_key = refused_key;
    if (refused_key && key_reloads) r.refused_at_reload = *key_reloads;
    how = "ejected for " + std::to_string(out.ejected_ms) + " ms after " +
          std::to_string(outlier_.eject_after_failures) + " consecutive failed batches: ";
    gone = true;
  }
  if (gone && r.up) {
    out.take_down = true;
    out.down_why = how + r.last_error;
  }
  return out;
}

std::int64_t HealthRecords::probe_due_us(int worker, std::optional<std::uint64_t> key_reloads) const {
  const HealthRecord& r = at(worker);
  if (r.up || r.probing || !r.detector.ejected()) return core::Controller::kNever;
  const bool new_keys = r.refused_key && key_reloads && *key_reloads != r.refused_at_reload;
  return new_keys ? 0 : r.detector.ejected_until_us();
}

HealthRecords::Probe HealthRecords::start_probe(int worker, std::int64_t now_us,
                                                std::optional<std::uint64_t> key_reloads, bool have_input) {
  HealthRecord& r = rec(worker);
  const bool new_keys = r.refused_key && key_reloads && *key_reloads != r.refused_at_reload;
  if (r.up || r.probing || !r.detector.ejected() || (!r.detector.may_return(now_us) && !new_keys)) return Probe::kNone;
  if (!have_input) {
    r.detector.returned(now_us);
    return Probe::kReturnedUnprobed;
  }
  r.probing = true;
  return Probe::kSend;
}

bool HealthRecords::stale_probe(const HealthRecord& r, std::uint64_t epoch_at_send) const {
  return r.epoch != epoch_at_send || r.up || !r.detector.ejected();
}

bool HealthRecords::probe_passed(int worker, std::uint64_t epoch_at_send) {
  HealthRecord& r = rec(worker);
  r.probing = false;
  if (stale_probe(r, epoch_at_send)) return false;
  r.up = true;
  r.refused_key = false;
  r.detector.returned(clock_.now_us());
  return true;
}

bool HealthRecords::probe_failed(int worker, std::uint64_t epoch_at_send, const std::string& why,
                                 std::optional<std::uint64_t> key_reloads) {
  HealthRecord& r = rec(worker);
  r.probing = false;
  if (stale_probe(r, epoch_at_send)) return false;
  if (r.refused_key && key_reloads) r.refused_at_reload = *key_reloads;  // these keys fail too
  const std::int64_t ms = r.detector.eject(clock_.now_us());             // doubled: it never returned in between
  r.ejections++;
  r.last_error = "probe batch: " + why + "; ejected again for " + std::to_string(ms) + " ms";
  return true;
}

}  // namespace lull::torchserve
