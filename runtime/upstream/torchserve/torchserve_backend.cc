#include "runtime/upstream/torchserve/torchserve_backend.h"

#include <algorithm>
#include <future>
#include <stdexcept>

#include "runtime/log/log.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/batch_codec.h"
#include "runtime/upstream/torchserve/batch_wire.h"
#include "runtime/upstream/torchserve/request_split.h"
#include "runtime/upstream/torchserve/torchserve_token.h"

namespace lull::torchserve {

namespace {
// How long a part refused for its key waits for the key file to change
// (TorchServe rewrites it right after the new key is in force), and how often
// the file is looked at meanwhile.
constexpr std::int64_t kKeyFileWaitUs = 500'000;
constexpr std::int64_t kKeyFilePollUs = 10'000;
}  // namespace

TorchServeBackend::TorchServeBackend(std::vector<WorkerEndpoint> workers, std::vector<std::string> models,
                                     TorchServeOptions options, std::unique_ptr<net::HttpTransport> transport)
    : workers_(std::move(workers)),
      models_(std::move(models)),
      options_(options),
      wire_(options.wire ? *options.wire : torchserve_wire()),
      clock_(options.clock ? *options.clock : wall_clock_),
      state_(workers_.size()),
      health_(static_cast<int>(workers_.size()), options.outlier, clock_),
      health_checker_(*this, options.health_interval_ms * 1000),
      ejector_(*this),
      client_(transport ? std::move(transport) : std::make_unique<net::HttpClient>()) {
  if (workers_.empty()) throw std::invalid_argument("TorchServe backend: no workers");  // slots may be vacant
  health_.check_models_on_rejoin(options_.rejoin_model_check.has_value() && !models_.empty());
}

TorchServeBackend::~TorchServeBackend() { stop(); }

void TorchServeBackend::stop() {
  {
    std::lock_guard<std::mutex> lock(tick_mu_);  // waits for a decision in progress
    ticks_stopped_ = true;
  }
  if (own_loop_) own_loop_->stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;  // the client's shutdown cancels what is in flight: report none of it
  }
  client_.reset();
}

int TorchServeBackend::start(core::ControlLoop* loop) {
  // First round of pings, waited for, so that start-up knows who is up.
  std::vector<std::future<void>> done;
  for (int w = 0; w < num_workers(); ++w) {
    if (workers_[w].inference_url.empty()) continue;  // a vacant slot: nothing to ping
    auto p = std::make_shared<std::promise<void>>();
    done.push_back(p->get_future());
    net::HttpRequest req;
    std::uint64_t epoch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      epoch = health_.epoch(w);
      req = health_request_locked(w);
    }
    client_->send(req, [this, w, epoch, p, key = req.bearer_token](net::HttpResponse r) {
      on_ping(w, epoch, key, r);
      p->set_value();
    });
  }
  for (auto& f : done) f.wait();
  health_checker_.begin(clock_.now_us());
  if (!loop) {
    own_loop_ = std::make_unique<core::ControlLoop>(clock_);
    loop = own_loop_.get();
  }
  loop->add(health_checker_);
  loop->add(ejector_);
  if (own_loop_) own_loop_->start();
  int up = 0;
  for (int w = 0; w < num_workers(); ++w) up += worker_up(w);
  return up;
}

WorkerEndpoint TorchServeBackend::endpoint(int worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  return workers_.at(static_cast<std::size_t>(worker));
}

void TorchServeBackend::assign(int worker, const WorkerEndpoint& endpoint) {
  std::lock_guard<std::mutex> lock(mu_);
  workers_.at(static_cast<std::size_t>(worker)) = endpoint;
  health_.assign(worker);
}

void TorchServeBackend::vacate(int worker, const std::string& why) {
  std::vector<core::BatchResult> failed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    failed = take_down_locked(worker, why);
    workers_.at(static_cast<std::size_t>(worker)) = WorkerEndpoint{};
  }
  for (const auto& r : failed) report(r);
}

bool TorchServeBackend::worker_up(int worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_.up(worker);
}

WorkerStats TorchServeBackend::stats(int worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Worker& s = state_.at(static_cast<std::size_t>(worker));
  const HealthRecord& h = health_.at(worker);
  WorkerStats out;
  out.up = h.up;
  out.batches_in_flight = static_cast<int>(s.in_flight.size());
  out.batches_ok = s.ok;
  out.batches_failed = s.failed;
  out.ejections = h.ejections;
  out.last_error = h.last_error;
  return out;
}

core::WorkerEjection TorchServeBackend::ejection(int worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_.ejection(worker);
}

void TorchServeBackend::fail_now(const core::BatchRequest& batch, const std::string& why) {
  // Reported from the client's thread, never from inside start_batch: the
  // dispatcher may hold its own lock while it calls us.
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;  // the transport may be gone (stop())
  }
  client_->post([this, batch, why] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      state_[batch.worker].failed++;
      health_.note_error(batch.worker, why);
    }
    core::BatchResult r;
    r.worker = batch.worker;
    r.model = batch.model;
    r.queries = batch.queries;
    r.ok = false;
    r.error = why;
    report(r);
  });
}

void TorchServeBackend::start_batch(const core::BatchRequest& batch) {
  if (batch.worker < 0 || batch.worker >= num_workers() || batch.model < 0 ||
      batch.model >= static_cast<int>(models_.size()))
    throw std::out_of_range("TorchServe backend: batch names worker " + std::to_string(batch.worker) + " / model " +
                            std::to_string(batch.model) + " out of range");
  {
    // Stopping: the transport is being destroyed (its last completions can
    // start a batch from the session); nothing is sent or reported.
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
  }
  // Gather the inputs; a query abandoned meanwhile keeps its slot with an
  // empty input so the batch keeps the size the selector chose.
  std::vector<std::shared_ptr<const std::string>> held;
  std::vector<const std::string*> inputs;
  std::vector<size_t> sizes;
  static const std::string kEmpty;
  const bool carried = batch.inputs.size() == batch.queries.size();
  for (std::size_t i = 0; i < batch.queries.size(); ++i) {
    held.push_back(carried ? batch.inputs[i] : nullptr);
    inputs.push_back(held.back() ? held.back().get() : &kEmpty);
    sizes.push_back(inputs.back()->size());
  }
  std::vector<RequestPart> parts;
  try {
    parts = split_batch_request(sizes, options_.max_request_bytes - wire_.envelope_bytes());
  } catch (const RequestTooLargeError& e) {
    return fail_now(batch, endpoint(batch.worker).inference_url + " " + models_[batch.model] + ": " + e.what());
  }
  // Inputs the wire cannot send together (v2 tensor queries of different
  // layouts) go in separate parts, in order.
  std::vector<RequestPart> grouped;
  for (const auto& part : parts) {
    size_t begin = part.begin;
    for (size_t i = part.begin + 1; i < part.end; ++i)
      if (!wire_.same_request(*inputs[i - 1], *inputs[i])) {
        grouped.push_back({begin, i});
        begin = i;
      }
    grouped.push_back({begin, part.end});
  }
  parts = std::move(grouped);
  const std::string base_url = endpoint(batch.worker).inference_url;
  if (base_url.empty()) return fail_now(batch, "worker slot " + std::to_string(batch.worker) + " is vacant");
  const std::string key = inference_key(base_url);
  std::vector<net::HttpRequest> requests;
  for (const auto& part : parts)
    requests.push_back(
        batch_request(base_url, batch.model, {inputs.begin() + part.begin, inputs.begin() + part.end}, key));

  std::uint64_t serial;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!health_.up(batch.worker)) {
      serial = 0;  // failed below, outside the lock
    } else {
      serial = ++next_serial_;
      state_[batch.worker].last_model = batch.model;
      InFlight& f = state_[batch.worker].in_flight[serial];
      f.batch = batch;
      f.inputs = std::move(held);
      f.outputs.resize(batch.queries.size());
      f.parts_left = parts.size();
      f.parts = parts;
      f.key = key;
      f.resent.assign(parts.size(), 0);
      f.key_waited.assign(parts.size(), 0);
    }
  }
  if (serial == 0) return fail_now(batch, "worker " + base_url + " is down");
  const int worker = batch.worker;
  std::vector<net::HttpRequestId> ids;
  for (size_t p = 0; p < parts.size(); ++p) {
    const size_t n = parts[p].end - parts[p].begin;
    ids.push_back(client_->send(std::move(requests[p]), [this, worker, serial, p, n](net::HttpResponse r) {
      on_part_done(worker, serial, p, n, r);
    }));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = state_[worker].in_flight.find(serial);
  if (it == state_[worker].in_flight.end()) return;
  // Parts may have been resent or split already (their ids are set): keep those.
  auto& known = it->second.http_ids;
  if (known.size() < ids.size()) known.resize(ids.size());
  for (size_t p = 0; p < ids.size(); ++p)
    if (known[p] == net::HttpRequestId{}) known[p] = ids[p];
}

void TorchServeBackend::on_part_done(int worker, std::uint64_t serial, size_t part, size_t part_size,
                                     const net::HttpResponse& response) {
  core::BatchResult result;
  std::vector<core::BatchResult> others_failed;
  bool went_down = false;
  bool ejected = false;
  std::string resend_key;  // set: send the part again with this key, nothing to report yet
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) return;
    Worker& s = state_[worker];
    auto it = s.in_flight.find(serial);
    if (it == s.in_flight.end()) return;  // already failed (worker down, or another part failed)
    InFlight& f = it->second;
    std::string why;
    // A fault of the worker's (counted towards ejection), unlike a 4xx
    // refusing the request (a missing model). A refused key counts: nothing
    // can be served with it.
    bool worker_fault = true;
    bool refused = false;  // for its key
    OutlierDetector::Failure kind = OutlierDetector::Failure::kServerError;
    const size_t begin = f.parts[part].begin;
    if (response.ok()) {
      try {
        auto outputs = wire_.decode_batch(response.body, part_size);
        for (size_t k = 0; k < outputs.size(); ++k) f.outputs[begin + k] = std::move(outputs[k]);
      } catch (const BatchCodecError& e) {
        why = e.what();
        kind = OutlierDetector::Failure::kMalformed;
      }
    } else if (response.error.empty() && is_model_refusal(response.status) && !is_token_refusal(response) &&
               !wire_.not_ready(response)) {
      // The model refused the request whole: halves again until the refused
      // inputs are alone; an input refused alone gets the model's answer.
      if (part_size > 1) {
        const size_t mid = begin + part_size / 2;
        const size_t first = f.parts.size();
        f.parts.push_back({begin, mid});
        f.parts.push_back({mid, f.parts[part].end});
        f.resent.resize(f.parts.size(), 0);
        f.key_waited.resize(f.parts.size(), 0);
        f.http_ids.resize(f.parts.size());
        f.parts_left += 1;  // this part is answered by its two halves
        send_part_locked(worker, serial, f, first, f.key);
        send_part_locked(worker, serial, f, first + 1, f.key);
        return;
      }
      f.outputs[begin] = refusal_prediction(response.status, refusal_message(response.body));
    } else if (is_token_refusal(response)) {
      std::string fresh;
      TorchServeKeyFile* file = key_file_of(workers_[static_cast<std::size_t>(worker)].inference_url);
      const bool newer = file && file->newer_inference_key(f.key, &fresh);  // counted
      if (newer && !f.resent[part]) {
        // The keys were rotated under this request: the same part again with the new key.
        f.resent[part] = 1;
        resend_key = std::move(fresh);
      } else if (file && !newer && !f.resent[part] && !f.key_waited[part]) {
        // TorchServe puts a new key in force before it rewrites key_file.json
        // (in place): the file may still hold the refused key, or nothing. The
        // part waits for the file to change, a bounded time (probe_ejected).
        f.key_waited[part] = 1;
        const std::int64_t now = clock_.now_us();
        s.key_waits.push_back({serial, part, now + kKeyFilePollUs, now + kKeyFileWaitUs});
        lock.unlock();
        ejector_.wake();
        return;
      } else {
        // The key in use is refused: the worker cannot serve, and refusals
        // that persist take it out with this as the reason (a passing /ping,
        // which needs no key, does not bring it back; a probe with new keys does).
        why = describe_token_refusal(workers_[worker].inference_url, "inference", !f.key.empty(), response);
        refused = true;
      }
    } else {
      why = response.describe();
      if (response.timed_out)
        kind = OutlierDetector::Failure::kTimeout;
      else if (response.status == 0)
        kind = OutlierDetector::Failure::kTransport;
      else if (wire_.not_ready(response))
        why += ": " + refusal_message(response.body);  // a fault of the worker's: another serves the batch
      else
        worker_fault = response.status >= 500;
    }
    if (!resend_key.empty()) {
      send_part_locked(worker, serial, f, part, resend_key);
      return;
    }
    if (why.empty() && --f.parts_left > 0) return;  // the other parts are still out
    const core::BatchRequest batch = std::move(f.batch);
    const ProbeInput first_input{batch.model, f.inputs.empty() ? nullptr : f.inputs.front()};
    result.worker = batch.worker;
    result.model = batch.model;
    result.queries = batch.queries;
    result.ok = why.empty();
    if (result.ok) {
      result.outputs = std::move(f.outputs);
      result.input_status = take_input_errors(result.outputs);  // rejected inputs: answered, not retried
      for (size_t i = 0; i < f.inputs.size(); ++i)
        if (f.inputs[i] && (result.input_status.empty() || result.input_status[i] == 0)) {
          last_good_ = ProbeInput{batch.model, f.inputs[i]};  // answered: a probe any sound worker passes
          break;
        }
    } else {
      for (size_t p = 0; p < f.http_ids.size(); ++p)
        if (p != part) client_->cancel(f.http_ids[p]);  // a failed part fails the batch: drop the rest
    }
    s.in_flight.erase(it);
    if (result.ok) {
      s.ok++;
      health_.batch_ok(worker);  // rejected inputs included: the worker answered
    } else {
      s.failed++;
      const std::string error = models_[batch.model] + ": " + why;
      result.error = workers_[worker].inference_url + " " + error;
      const BatchFault fault = health_.batch_failed(worker, error, worker_fault, kind, refused,
                                                    refused ? key_file_reloads_locked(worker) : std::nullopt);
      if (fault.ejected) {
        ejected = true;
        s.failed_input = first_input;
      }
      if (fault.take_down) {
        went_down = true;
        others_failed = take_down_locked(worker, fault.down_why);
      }
    }
  }
  if (ejected) ejector_.wake();
  if (went_down) notify(worker, false);
  report(result);
  for (const auto& r : others_failed) report(r);
}

void TorchServeBackend::resend_key_waits_locked(std::int64_t now_us) {
  for (std::size_t w = 0; w < state_.size(); ++w) {
    Worker& s = state_[w];
    if (s.key_waits.empty()) continue;
    TorchServeKeyFile* file = key_file_of(workers_[w].inference_url);
    if (file) file->refresh_if_changed("after the server refused the inference key");
    const std::string key = file ? file->inference_key() : std::string();
    std::vector<KeyWait> waiting;
    for (const KeyWait& k : s.key_waits) {
      auto it = s.in_flight.find(k.serial);
      if (it == s.in_flight.end()) continue;  // failed meanwhile (the worker went down)
      InFlight& f = it->second;
      if (key == f.key && now_us < k.until_us) {
        waiting.push_back(k);
        waiting.back().poll_us = std::min(k.until_us, now_us + kKeyFilePollUs);
        continue;
      }
      // A new key: sent with it, once. None by now: sent as it is, and refused again it fails the batch.
      if (key != f.key) f.resent[k.part] = 1;
      send_part_locked(static_cast<int>(w), k.serial, f, k.part, key);
    }
    s.key_waits = std::move(waiting);
  }
}

void TorchServeBackend::send_part_locked(int worker, std::uint64_t serial, InFlight& f, size_t part,
                                         const std::string& key) {
  // The client's send only queues (like cancel, safe under the lock).
  static const std::string kEmpty;  // an input abandoned meanwhile keeps its slot
  std::vector<const std::string*> inputs;
  for (size_t i = f.parts[part].begin; i < f.parts[part].end; ++i)
    inputs.push_back(f.inputs[i] ? f.inputs[i].get() : &kEmpty);
  const size_t n = inputs.size();
  f.http_ids.resize(f.parts.size());
  f.http_ids[part] =
      client_->send(batch_request(workers_[worker].inference_url, f.batch.model, inputs, key),
                    [this, worker, serial, part, n](net::HttpResponse r) { on_part_done(worker, serial, part, n, r); });
}

std::vector<core::BatchResult> TorchServeBackend::take_down_locked(int worker, const std::string& why) {
  Worker& s = state_[worker];
  health_.take_down(worker, why);
  std::vector<core::BatchResult> failed;
  for (auto& [serial, f] : s.in_flight) {
    for (auto id : f.http_ids) client_->cancel(id);
    core::BatchResult r;
    r.worker = f.batch.worker;
    r.model = f.batch.model;
    r.queries = f.batch.queries;
    r.ok = false;
    r.error = workers_[worker].inference_url + " " + why;
    failed.push_back(std::move(r));
    s.failed++;
  }
  s.in_flight.clear();
  return failed;
}

void TorchServeBackend::on_ping(int worker, std::uint64_t epoch_at_send, const std::string& key_sent,
                                const net::HttpResponse& response) {
  const bool healthy = wire_.healthy(response);
  std::vector<core::BatchResult> failed;
  bool changed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    std::string why;
    // Refused for its key: one refusal alone does not take it down (health_records.h).
    const bool refused = !healthy && options_.key_file && is_token_refusal(response);
    if (healthy) {
      // An ejected worker rejoins by its probe only; one that went down, maybe after its models are checked.
      const HealthRecords::Rejoin rejoin = health_.rejoin_at_ping(worker, epoch_at_send);
      changed = rejoin == HealthRecords::Rejoin::kBack;
      if (rejoin == HealthRecords::Rejoin::kCheckModels) send_model_check_locked(worker, epoch_at_send);
    } else if (health_.ping_failed(
                   worker,
                   refused ? describe_token_refusal(workers_[static_cast<std::size_t>(worker)].inference_url,
                                                    "inference", !key_sent.empty(), response)
                           : response.describe(),
                   &why, refused)) {
      failed = take_down_locked(worker, why);
      changed = true;
    }
  }
  if (changed) notify(worker, healthy);
  for (const auto& r : failed) report(r);
}

void TorchServeBackend::send_model_check_locked(int worker, std::uint64_t epoch_at_send) {
  ModelCheckOptions check = *options_.rejoin_model_check;
  check.timeout_ms = options_.health_timeout_ms;
  auto round = std::make_shared<ModelCheckRound>();
  round->left = models_.size();
  for (const std::string& model : models_)
    client_->send(model_check_request(workers_[static_cast<std::size_t>(worker)], model, check),
                  [this, worker, epoch_at_send, model, round](net::HttpResponse r) {
                    on_model_check(worker, epoch_at_send, model, round, r);
                  });
}

void TorchServeBackend::on_model_check(int worker, std::uint64_t epoch_at_send, const std::string& model,
                                       const std::shared_ptr<ModelCheckRound>& round,
                                       const net::HttpResponse& response) {
  std::string note, url;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    if (!model_loaded(response)) {
      const std::string why = response.ok() ? "no worker READY" : response.describe();
      round->missing += (round->missing.empty() ? "model " : "; model ") + model + " not loaded (" + why + ")";
    }
    if (--round->left > 0) return;
    if (!health_.models_checked(worker, epoch_at_send, round->missing, &note)) {
      if (note.empty()) return;
      url = workers_[static_cast<std::size_t>(worker)].inference_url;
    }
  }
  if (!note.empty()) return log::warn("worker %s %s", url.c_str(), note.c_str());
  notify(worker, true);
}

net::HttpRequest TorchServeBackend::health_request_locked(int worker) const {
  const Worker& s = state_[static_cast<std::size_t>(worker)];
  net::HttpRequest req = wire_.health_request(workers_[static_cast<std::size_t>(worker)].inference_url,
                                              models_.empty() ? "" : models_[static_cast<std::size_t>(s.last_model)]);
  req.timeout_ms = options_.health_timeout_ms;
  req.connect_timeout_ms = options_.health_timeout_ms;
  req.bearer_token = inference_key(workers_[static_cast<std::size_t>(worker)].inference_url);
  return req;
}

void TorchServeBackend::notify(int worker, bool up) {
  if (on_health_) on_health_(worker, up);
}

void TorchServeBackend::ping_all() {
  for (int w = 0; w < num_workers(); ++w) {
    std::uint64_t epoch;
    net::HttpRequest req;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (workers_[w].inference_url.empty()) continue;  // vacant slot
      epoch = health_.epoch(w);
      req = health_request_locked(w);
    }
    const std::string key = req.bearer_token;
    client_->send(std::move(req), [this, w, epoch, key](net::HttpResponse r) { on_ping(w, epoch, key, r); });
  }
}

void TorchServeBackend::check_health() {
  std::lock_guard<std::mutex> tick(tick_mu_);
  if (ticks_stopped_) return;
  if (options_.key_file && options_.key_file->refresh_if_changed()) ejector_.wake();  // new keys: probe now
  ping_all();
}

std::int64_t TorchServeBackend::next_probe_us() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::int64_t next = core::Controller::kNever;
  for (int w = 0; w < num_workers(); ++w) {
    for (const KeyWait& k : state_[static_cast<std::size_t>(w)].key_waits)
      next = std::min(next, k.poll_us);                                // the key file looked at again
    if (!workers_[static_cast<std::size_t>(w)].inference_url.empty())  // a vacant slot is never probed
      next = std::min(next, health_.probe_due_us(w, key_reloads_locked(w)));
  }
  return next;
}

void TorchServeBackend::probe_ejected(std::int64_t now) {
  std::lock_guard<std::mutex> tick(tick_mu_);
  if (ticks_stopped_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    resend_key_waits_locked(now);
  }
  for (int w = 0; w < num_workers(); ++w) {
    net::HttpRequest req;
    std::uint64_t epoch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (workers_[w].inference_url.empty()) continue;  // a vacant slot
      const ProbeInput probe = last_good_.input ? last_good_ : state_[w].failed_input;
      // Nothing to probe with: its time being over is enough, the next passing ping puts it back.
      if (health_.start_probe(w, now, key_reloads_locked(w), probe.input != nullptr) != HealthRecords::Probe::kSend)
        continue;
      epoch = health_.epoch(w);
      req = batch_request(workers_[w].inference_url, probe.model, {probe.input.get()},
                          inference_key(workers_[w].inference_url));
    }
    client_->send(std::move(req), [this, w, epoch](net::HttpResponse r) { on_probe(w, epoch, r); });
  }
}

void TorchServeBackend::on_probe(int worker, std::uint64_t epoch_at_send, const net::HttpResponse& response) {
  std::string why;
  if (!response.ok()) {
    why = response.describe();
  } else {
    try {
      wire_.decode_batch(response.body, 1);
    } catch (const BatchCodecError& e) {
      why = e.what();
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    // Assigned or vacated meanwhile, or back already: not this probe's to decide.
    if (why.empty() ? !health_.probe_passed(worker, epoch_at_send)
                    : !health_.probe_failed(worker, epoch_at_send, why, key_reloads_locked(worker)))
      return;
  }
  if (!why.empty()) return ejector_.wake();  // its next probe is due at the new ejection's end
  notify(worker, true);
}

net::HttpRequest TorchServeBackend::batch_request(const std::string& base_url, int model,
                                                  const std::vector<const std::string*>& inputs,
                                                  const std::string& key) const {
  net::HttpRequest req = wire_.batch_request(base_url, models_[model], inputs);
  req.timeout_ms = options_.batch_timeout_ms;
  req.bearer_token = key;
  return req;
}

TorchServeKeyFile* TorchServeBackend::key_file_of(const std::string& inference_url) const {
  return options_.key_file ? options_.key_file->of(inference_url) : nullptr;
}

std::string TorchServeBackend::inference_key(const std::string& inference_url) const {
  if (!options_.key_file) return options_.inference_key;
  TorchServeKeyFile* file = key_file_of(inference_url);
  return file ? file->inference_key() : "";
}

std::string TorchServeBackend::down_reason(int worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_.at(worker).down_why;
}

std::optional<std::uint64_t> TorchServeBackend::key_reloads_locked(int worker) const {
  if (!health_.at(worker).refused_key) return std::nullopt;  // not asked: opening a key file is not free
  return key_file_reloads_locked(worker);
}

std::optional<std::uint64_t> TorchServeBackend::key_file_reloads_locked(int worker) const {
  const TorchServeKeyFile* file = key_file_of(workers_[static_cast<std::size_t>(worker)].inference_url);
  if (!file) return std::nullopt;
  return file->reloads();
}

}  // namespace lull::torchserve
