#pragma once
// The serving side's WorkerSlots (runtime/core/worker_slots.h) for `lull serve
// --autoscale`: a worker joining a slot is assigned to the TorchServe
// backend (its URLs) and put into the ServeSession's rotation; draining and
// leaving go to the session, and a worker that left has what it still had in
// flight failed over by the backend. The simulator's counterpart is
// sim/dispatcher_slots.h. One adapter for the Server (runtime/server) and the tests.
#include <functional>
#include <string>

#include "runtime/session/serve_session.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "runtime/core/worker_slots.h"

namespace lull::pools {

class SessionSlots final : public core::WorkerSlots {
 public:
  // Both must outlive this; the session's and the backend's slot counts must agree.
  SessionSlots(torchserve::TorchServeBackend& backend, session::ServeSession& session)
      : backend_(backend), session_(session) {}
  int slot_count() const override {
    return backend_.num_workers() == session_.worker_slots() ? session_.worker_slots() : -1;
  }
  void join(int slot, const std::string& inference_url, const std::string& management_url) override {
    backend_.assign(slot, torchserve::WorkerEndpoint{inference_url, management_url});
    session_.add_worker(slot, inference_url);
  }
  void drain(int slot, std::function<void()> drained) override { session_.drain_worker(slot, std::move(drained)); }
  void leave(int slot, const std::string& why) override {
    session_.remove_worker(slot);
    backend_.vacate(slot, why);  // what it still had in flight (a worker that died) fails over now
  }
  bool healthy(int slot) const override { return backend_.worker_up(slot); }

 private:
  torchserve::TorchServeBackend& backend_;
  session::ServeSession& session_;
};

}  // namespace lull::pools
