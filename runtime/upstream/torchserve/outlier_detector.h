#pragma once
// Outlier ejection for one model server, as Envoy does it: consecutive
// failed batches eject the worker for a time that doubles on every repeat
// ejection (capped), and it may return only after that time AND a passing
// health check. Why: a server whose /ping answers while its predictions hang
// was taken out and put back 26 times in 30 s when a ping alone decided; one
// that answered 200 with undecodable bodies was never taken out.
//
// Pure policy: no threads, no clock of its own (every call takes `now_us`),
// no lock (the backend holds its per-worker lock around it), so it is tested
// with a virtual clock.
#include <cstdint>

namespace lull::torchserve {

struct OutlierOptions {
  int eject_after_failures = 3;         // consecutive batch failures that eject
  std::int64_t base_ms = 1000;          // first ejection; doubles per consecutive ejection
  std::int64_t max_ms = 30000;          // cap of one ejection
  std::int64_t good_period_ms = 60000;  // back this long without ejection: next one is base_ms again
};

class OutlierDetector {
 public:
  // What went wrong with a batch; all count the same, the kind is for logs
  // and tests. A per-input rejection inside a 200 answer is not a failure
  // (the input is bad, not the worker): it is a success.
  enum class Failure { kServerError, kTimeout, kTransport, kMalformed };

  // Throws std::invalid_argument on eject_after_failures < 1, base_ms < 1 or max_ms < base_ms.
  explicit OutlierDetector(OutlierOptions options = {});

  // A batch answered (per-input rejections included): the count starts over.
  void record_success();
  // Counts one more consecutive failure; true when the count reaches
  // eject_after_failures (the caller then calls eject()).
  bool record_failure(Failure kind);
  bool should_eject() const;

  // Starts an ejection at now_us; returns its length in ms (base * 2^k for
  // the k-th consecutive ejection, capped at max_ms; k starts over once the
  // worker was back good_period_ms). The failure count starts over.
  std::int64_t eject(std::int64_t now_us);
  bool ejected() const { return ejected_; }
  // True when not ejected, or its ejection time has passed (the caller still
  // needs a passing health check before it returns the worker).
  bool may_return(std::int64_t now_us) const;
  // The worker is back in rotation (after a passing health check).
  void returned(std::int64_t now_us);

  int consecutive_failures() const { return failures_; }
  int consecutive_ejections() const { return ejections_; }
  std::int64_t ejected_until_us() const { return until_us_; }

 private:
  OutlierOptions options_;
  int failures_ = 0;
  int ejections_ = 0;  // consecutive: reset after good_period_ms back in rotation
  bool ejected_ = false;
  std::int64_t until_us_ = 0;
  std::int64_t returned_us_ = 0;
  bool ever_returned_ = false;
};

}  // namespace lull::torchserve
