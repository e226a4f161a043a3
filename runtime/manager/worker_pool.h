#pragma once
// The worker-pool actuator: the one interface through which the resource
// manager adds and removes workers, whatever runs them (the simulator's
// virtual workers, model-server processes on this machine, a Kubernetes
// Deployment). The manager decides how many; a pool makes it happen and says
// where each worker stands. Implementations: SimulatedWorkerPool (here),
// LocalProcessPool and KubernetesPool (runtime/manager/, over the serve
// layer's HTTP client). docs/operators-guide.md describes them.
//
// A worker is removed without losing a query: stop_worker() first asks the
// serving layer, through the drain hook, to send it nothing new and to let
// its batches in flight finish (the Dispatcher hands its queue to the others
// when it is marked unavailable); only when the serving layer says "drained"
// (or the drain time limit passes) is the worker stopped.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lull::manager {

enum class WorkerState {
  kStarting,  // asked for; not yet serving (provisioning, health or model check pending)
  kUp,        // passed its checks: the serving layer may route to it
  kDraining,  // being removed: no new queries, batches in flight finish
  kStopped,   // removed as asked
  kFailed,    // did not start, or died; WorkerInfo::failure says why
};

// "starting", "up", "draining", "stopped", "failed" (logs, /metrics labels).
const char* worker_state_name(WorkerState s);

struct WorkerInfo {
  std::string id;  // stable and unique within the pool ("sim-3", "local-1", a pod name)
  WorkerState state = WorkerState::kStarting;
  std::string inference_url;   // base URL once known; empty for simulated workers
  std::string management_url;  // TorchServe's management API (the inference URL when one port serves both)
  std::int64_t since_us = 0;   // when it entered `state` (the pool's clock)
  std::string failure;         // why it last failed ("exited with status 2 during start-up: ..."); "" if never
};

// Called by a pool to take a worker out of rotation. The serving layer stops
// routing to `worker_id` at once and calls `drained` (once, from any thread)
// when the worker has no batch in flight. Without a hook a pool treats every
// worker as drained at once. `drained` must not be called after the pool is
// destroyed.
using DrainHook = std::function<void(const std::string& worker_id, std::function<void()> drained)>;
// Called after every change of a worker's state (possibly from a pool's own
// thread): the serving layer adds a worker to rotation when it is up and
// forgets it when it is stopped or failed.
using WorkerStateHandler = std::function<void(const WorkerInfo& worker)>;

class WorkerPool {
 public:
  virtual ~WorkerPool() = default;
  // Asks for `n` more workers; returns their ids (each starts in kStarting,
  // or kFailed at once when the pool cannot even ask). Thread-safe.
  virtual std::vector<std::string> start_workers(int n) = 0;
  // Drains then stops the worker. Unknown id: std::invalid_argument naming
  // it. A worker already stopping, stopped or failed: nothing to do.
  virtual void stop_worker(const std::string& id) = 0;
  // Every worker the pool has started, in start order, with its state now.
  virtual std::vector<WorkerInfo> list_workers() = 0;
  // Set both before the first start_workers().
  virtual void set_drain_hook(DrainHook hook) = 0;
  virtual void set_state_handler(WorkerStateHandler handler) = 0;
};

// The workers in `state` among `workers`.
int count_workers(const std::vector<WorkerInfo>& workers, WorkerState state);

}  // namespace lull::manager
