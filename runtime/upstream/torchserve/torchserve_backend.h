#pragma once
// The runtime's Backend on model servers over HTTP, one per worker. A batch
// goes to its worker as ONE request of its BatchWire (batch_wire.h): by
// default POST /predictions/{model} under lull's batch contract
// (batch_codec.h), or the Open Inference Protocol's infer request
// (runtime/upstream/v2/v2_wire.h); the answer is split back to the queries in order. A batch whose body would pass
// max_request_bytes goes as several consecutive requests to that worker (request_split.h), joined in order; it succeeds
// when all of them do. Health: the wire's probe (GET /ping for TorchServe) at start and periodically; a worker that
// fails a ping, or whose batch cannot connect (the server is gone), is taken
// out of rotation at once and every batch in flight on it is reported failed
// (ok = false), so the dispatcher can retry those queries on another worker.
// A batch the model refuses as a whole (a 4xx that is not about the server:
// is_model_refusal, batch_codec.h; how KServe, MLServer and Triton answer a
// request with one bad input) is not a worker fault: the refused request is
// split in halves, sent again, until each refused input is alone, and that
// input is answered with the model's status and message (a per-input error,
// BatchResult::input_status) while the rest are served. A query travels at
// most 1 + ceil(log2 B) times in a batch of B; the worker stays in rotation.
// Batches that time out, answer 5xx, answer 200 with an undecodable body or
// are refused for their inference key count as consecutive failures (outlier_detector.h): enough of them eject the
// worker for a time that doubles on repeats. A worker down for a failed ping
// or a lost connection rejoins after a successful ping. An ejected one
// rejoins only after its ejection time has passed AND a probe batch then
// succeeds, whatever /ping says (a server whose /ping passes while every
// batch fails would otherwise rejoin, fail and be ejected again at every
// backoff): the probe is one input of the last batch any worker answered
// (else of the batch that failed), sent to it alone and never reported; a
// failed probe ejects it again for twice as long, without rejoining.
//
// It is both the Backend and the core::WorkerHealth source of `lull serve`: a batch
// fault and a failed ping change the same per-worker record (HealthRecords,
// health_records.h, where the transitions live) under one lock, so that
// taking a worker down and failing what it holds is one step. It reports
// health changes; the Dispatcher keeps the record the scheduler uses.
// It sends; the periodic pings and the probes of ejected workers are two
// Controllers (health_checks.h) on its injected clock (TorchServeOptions::clock),
// run on a ControlLoop of their own unless start() is given one. No other
// thread, and no clock but that one.
//
// Worker slots may change at run time (`lull serve --autoscale`): a slot
// with an empty URL is vacant (never pinged, down); assign() gives a slot the
// endpoint of a worker its pool found up, vacate() empties it again. Every
// read of an endpoint is under the lock, so a batch never goes to a slot's
// old URL.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/upstream/torchserve/health_checks.h"
#include "runtime/net/http_transport.h"
#include "runtime/upstream/torchserve/batch_wire.h"
#include "runtime/upstream/torchserve/health_records.h"
#include "runtime/upstream/torchserve/model_check.h"
#include "runtime/upstream/torchserve/outlier_detector.h"
#include "runtime/upstream/torchserve/request_split.h"
#include "runtime/upstream/torchserve/torchserve_token.h"
#include "runtime/core/worker_health.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"

namespace lull::torchserve {

struct TorchServeOptions {
  std::int64_t batch_timeout_ms = 2000;   // longer: the batch fails and the worker goes down
  std::int64_t health_interval_ms = 500;  // between pings of each worker
  std::int64_t health_timeout_ms = 500;   // a ping slower than this fails
  std::string inference_key;              // TorchServe's inference key (torchserve_token.h); empty: none
  // The key file, when given, instead of inference_key: read again when it
  // changes (polled with the pings) and when a worker refuses the key; a
  // request part refused for a key the file has since replaced is sent again
  // with the new one, once; one refused while the file has no other key yet
  // (TorchServe rewrites it after the new key is in force) waits for the file
  // to change, at most 0.5 s, then goes again. One ping refused for its key
  // does not take a worker down; two in a row do. Refusals of the file's own key count as failed
  // batches (they eject the worker, the refusal its reason) until a probe
  // with a new key passes. Outlives the backend.
  // Per server when its path holds "{port}" (TorchServeKeyFiles).
  TorchServeKeyFiles* key_file = nullptr;
  std::int64_t max_request_bytes = 6553500;  // TorchServe's default max_request_size; larger batches are split
  OutlierOptions outlier;                    // when failing batches eject a worker, and for how long
  const BatchWire* wire = nullptr;  // the protocol spoken (batch_wire.h); nullptr: TorchServe's. Outlives the backend
  // The clock of health checks and ejections; nullptr: the wall clock. Outlives the backend.
  const core::Clock* clock = nullptr;
  // Set: a worker that went down rejoins only when every model is loaded on
  // it (the management keys from here; each request's timeout is
  // health_timeout_ms). Unset: at its passing ping.
  std::optional<ModelCheckOptions> rejoin_model_check;
};

struct WorkerStats {
  bool up = false;
  int batches_in_flight = 0;
  std::uint64_t batches_ok = 0;
  std::uint64_t batches_failed = 0;
  std::uint64_t ejections = 0;  // times consecutive failed batches took it out
  std::string last_error;       // why it last failed, "" if never
};

class TorchServeBackend final : public core::Backend, public core::WorkerHealth {
 public:
  // `models[i]` is the TorchServe model name of the policy set's model i.
  // `transport`: how it talks HTTP, owned (stop() destroys it, so no
  // callback runs after); none: libcurl's HttpClient. Tests hand in the
  // in-memory fake (test/support/fake_http_transport.h).
  // Each batch carries its inputs (BatchRequest::inputs).
  TorchServeBackend(std::vector<WorkerEndpoint> workers, std::vector<std::string> models,
                    TorchServeOptions options = {}, std::unique_ptr<net::HttpTransport> transport = nullptr);
  ~TorchServeBackend() override;  // stop()

  // Stops the health checks and the HTTP client; batches still in flight are
  // not reported, and no handler is called after it returns; no batch may be
  // started after it. Whoever plugs handlers in calls it before they go away.
  void stop();

  // Pings every worker once (blocking, bounded by health_timeout_ms) and starts
  // the periodic health checks: its two controllers join `loop` (not started
  // yet; its owner starts it and stops it before the backend goes), or, with
  // none, a real-time ControlLoop of the backend's own. Returns how many workers are up.
  int start(core::ControlLoop* loop = nullptr);

  // The controllers' decisions (health_checks.h); any thread, each a no-op after stop().
  // Rereads a changed key file and pings every worker.
  void check_health();
  // When the next ejected worker is due its probe batch (Controller::kNever: none).
  std::int64_t next_probe_us() const;
  // Sends a probe batch to every ejected worker whose ejection time is over at `now_us`.
  void probe_ejected(std::int64_t now_us);
  HealthChecker& health_checker() { return health_checker_; }
  OutlierEjector& outlier_ejector() { return ejector_; }

  // Thread-safe; completion is reported from the HTTP client's thread.
  void start_batch(const core::BatchRequest& batch) override;

  int num_workers() const override { return static_cast<int>(workers_.size()); }
  bool worker_up(int worker) const override;
  WorkerStats stats(int worker) const;
  core::WorkerEjection ejection(int worker) const override;
  std::string down_reason(int worker) const override;
  WorkerEndpoint endpoint(int worker) const;
  // A worker pool's worker takes the slot: the pool checked its health and
  // models, so it counts as up at once (no handler call: the caller puts it
  // into rotation). Stale pings of the slot's last worker cannot change it.
  void assign(int worker, const WorkerEndpoint& endpoint);
  // The slot becomes vacant: out of rotation, no more pings, and its batches
  // in flight are reported failed (before it returns) so they can be retried.
  void vacate(int worker, const std::string& why);
  // Called with (worker, up) whenever a worker leaves or rejoins rotation,
  // from the HTTP client's thread. Set before start().
  void set_health_handler(std::function<void(int worker, bool up)> handler) override {
    on_health_ = std::move(handler);
  }

 private:
  struct InFlight {
    core::BatchRequest batch;
    std::vector<net::HttpRequestId> http_ids;  // one per request part
    std::vector<std::string> outputs;          // per input, filled as parts answer
    size_t parts_left = 0;
    std::vector<std::shared_ptr<const std::string>> inputs;  // held: a probe may reuse one
    // Which inputs each request part carries (to send one again). A part the
    // model refused whole is split in two halves appended here (the refused
    // one stays, answered by them), down to single inputs.
    std::vector<RequestPart> parts;
    std::string key;               // the inference key the parts were sent with
    std::vector<char> resent;      // per part: already sent again with a newer key
    std::vector<char> key_waited;  // per part: refused, and waited for the key file to change
  };
  // A part refused for its key while the key file held no other key yet
  // (TorchServe puts a new key in force before it rewrites the file in
  // place): sent again once the file has a new key (looked at from `poll_us`
  // on, every 10 ms), or at `until_us` as it is.
  struct KeyWait {
    std::uint64_t serial = 0;
    size_t part = 0;
    std::int64_t poll_us = 0;
    std::int64_t until_us = 0;
  };
  // An input to probe an ejected worker with, and its model.
  struct ProbeInput {
    int model = -1;
    std::shared_ptr<const std::string> input;
  };
  // What the sender keeps per worker (its health: health_).
  struct Worker {
    std::unordered_map<std::uint64_t, InFlight> in_flight;  // by batch serial
    std::uint64_t ok = 0, failed = 0;
    ProbeInput failed_input;  // from the batch that ejected it: the probe when no batch succeeded yet
    int last_model = 0;       // of its last batch: the model its health probe asks about
    std::vector<KeyWait> key_waits;
  };

  void on_part_done(int worker, std::uint64_t serial, size_t part, size_t part_size, const net::HttpResponse& response);
  // Sends part `part` of batch `serial` on `worker` (under mu_: the send only queues).
  void send_part_locked(int worker, std::uint64_t serial, InFlight& f, size_t part, const std::string& key);
  void fail_now(const core::BatchRequest& batch, const std::string& why);
  // Takes the worker out of rotation, cancels its requests and returns its
  // in-flight batches as failed results, for the caller to report after
  // releasing mu_ (which it holds).
  std::vector<core::BatchResult> take_down_locked(int worker, const std::string& why);
  void ping_all();
  void on_ping(int worker, std::uint64_t epoch_at_send, const std::string& key_sent, const net::HttpResponse& response);
  // Sends again the parts whose key wait is over (the file changed, or the time); under mu_.
  void resend_key_waits_locked(std::int64_t now_us);
  void on_probe(int worker, std::uint64_t epoch_at_send, const net::HttpResponse& response);
  // A passing ping of a worker that went down: asks its server about every
  // model (under mu_: the sends only queue); the last answer decides.
  struct ModelCheckRound {
    size_t left = 0;
    std::string missing;  // "model M: why; ..."
  };
  void send_model_check_locked(int worker, std::uint64_t epoch_at_send);
  void on_model_check(int worker, std::uint64_t epoch_at_send, const std::string& model,
                      const std::shared_ptr<ModelCheckRound>& round, const net::HttpResponse& response);
  // The inference key to send now (the key file's, else the option's).
  std::string inference_key(const std::string& inference_url) const;       // the key sent to that worker ("": none)
  TorchServeKeyFile* key_file_of(const std::string& inference_url) const;  // its key file; nullptr: none (yet)
  // The request carrying `inputs` (one batch, or one part of it) to `model` with `key`.
  net::HttpRequest batch_request(const std::string& base_url, int model, const std::vector<const std::string*>& inputs,
                                 const std::string& key) const;
  // The worker's health probe (under mu_: reads its endpoint and last model).
  net::HttpRequest health_request_locked(int worker) const;
  void notify(int worker, bool up);
  // Its key file's reload count (under mu_): always, or only when it refused a key; none without a key file.
  std::optional<std::uint64_t> key_file_reloads_locked(int worker) const;
  std::optional<std::uint64_t> key_reloads_locked(int worker) const;

  std::vector<WorkerEndpoint> workers_;
  std::vector<std::string> models_;
  TorchServeOptions options_;
  const BatchWire& wire_;
  core::WallClock wall_clock_;
  const core::Clock& clock_;  // options_.clock, else wall_clock_
  std::function<void(int, bool)> on_health_;

  mutable std::mutex mu_;
  std::vector<Worker> state_;
  HealthRecords health_;  // each worker's health and its transitions
  std::uint64_t next_serial_ = 0;
  bool stopping_ = false;
  ProbeInput last_good_;  // an input of the last batch a worker answered

  // Held through each controller's decision; stop() sets ticks_stopped_
  // under it, so no decision sends anything once the transport may go.
  std::mutex tick_mu_;
  bool ticks_stopped_ = false;
  HealthChecker health_checker_;
  OutlierEjector ejector_;
  std::unique_ptr<core::ControlLoop> own_loop_;  // when start() was given no loop

  // Declared last so it is destroyed first, while the state its callbacks touch is alive.
  std::unique_ptr<net::HttpTransport> client_;
};

}  // namespace lull::torchserve
