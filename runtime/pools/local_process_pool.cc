// Model-server processes as workers (why and how: see local_process_pool.h).
#include "runtime/pools/local_process_pool.h"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "runtime/core/text_template.h"
#include "runtime/upstream/torchserve/model_check.h"

namespace lull::pools {

std::string expand_command(const std::string& command_template, int port, int management_port) {
  return core::fill_template(
      command_template, {{"{port}", std::to_string(port)}, {"{management_port}", std::to_string(management_port)}});
}

LocalProcessPool::LocalProcessPool(net::HttpTransport& client, const core::Clock& clock,
                                   LocalProcessPoolOptions options, ProcessLauncher& launcher, core::ControlLoop* loop)
    : client_(client), clock_(clock), launcher_(launcher), options_(std::move(options)) {
  if (options_.command.find("{port}") == std::string::npos)
    throw std::invalid_argument("worker command '" + options_.command +
                                "': no {port} (lull allocates each worker's port and puts it there)");
  if (options_.port_modulus < 1 || options_.port_residue < 0 || options_.port_residue >= options_.port_modulus)
    throw std::invalid_argument("local pool: port class " + std::to_string(options_.port_residue) + " mod " +
                                std::to_string(options_.port_modulus) + " is empty");
  if (options_.log_dir.empty()) {
    char tmpl[] = "/tmp/lull-workers-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a log directory under /tmp");
    options_.log_dir = tmpl;
  }
  if (!loop) {
    own_loop_ = std::make_unique<core::ControlLoop>(clock_);
    loop = own_loop_.get();
  }
  loop->add(supervisor_);
  if (own_loop_) own_loop_->start();
}

LocalProcessPool::~LocalProcessPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& w : workers_) {
      w->cancel_check->cancel();
      if (w->process && !w->process->poll_exited()) w->process->signal(SIGTERM);
    }
  }
  if (own_loop_) own_loop_->stop();  // after the pass in progress, if any; none starts after stopping_
  // One grace period for all: each waits for what is left of it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.stop_grace_ms);
  for (auto& w : workers_) {
    if (w->process) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      w->process->wait_exited(std::max<std::int64_t>(left.count(), 0));
    }
    w->process.reset();  // SIGKILLs what is left
    if (w->check.valid()) w->check.wait();
  }
}

void LocalProcessPool::CheckCancel::cancel() {
  {
    std::lock_guard<std::mutex> lock(mu);
    cancelled = true;
  }
  cv.notify_all();
}

bool LocalProcessPool::CheckCancel::is_cancelled() {
  std::lock_guard<std::mutex> lock(mu);
  return cancelled;
}

bool LocalProcessPool::CheckCancel::wait_for(std::int64_t ms) {
  std::unique_lock<std::mutex> lock(mu);
  return cv.wait_for(lock, std::chrono::milliseconds(ms), [this] { return cancelled; });
}

void LocalProcessPool::set_drain_hook(manager::DrainHook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  drain_hook_ = std::move(hook);
}

void LocalProcessPool::set_state_handler(manager::WorkerStateHandler handler) {
  notices_.set_handler(std::move(handler));
}

LocalProcessPool::Worker* LocalProcessPool::find(const std::string& id) {
  for (auto& w : workers_)
    if (w->info.id == id) return w.get();
  return nullptr;
}

void LocalProcessPool::set_state(Worker& w, manager::WorkerState s, std::vector<manager::WorkerInfo>& changed,
                                 const std::string& failure) {
  w.info.state = s;
  w.info.since_us = clock_.now_us();
  if (!failure.empty()) w.info.failure = failure;
  changed.push_back(w.info);
}

void LocalProcessPool::terminate(Worker& w) {
  w.cancel_check->cancel();
  if (!w.process || w.process->poll_exited() || w.term_sent_us >= 0) return;
  w.process->signal(SIGTERM);
  w.term_sent_us = clock_.now_us();
}

std::string LocalProcessPool::start_check(const torchserve::WorkerEndpoint& endpoint, std::int64_t deadline_us,
                                          std::shared_ptr<CheckCancel> cancel) const {
  std::string last = "no answer yet";
  while (!cancel->is_cancelled()) {
    const std::int64_t left_ms = (deadline_us - clock_.now_us()) / 1000;
    if (left_ms <= 0) break;
    if (options_.check) {
      last = options_.check(client_, endpoint, std::min<std::int64_t>(left_ms, 2000));
      if (last.empty()) return "";
      if (cancel->wait_for(options_.check_interval_ms)) break;
      continue;
    }
    // Its own keys when it has them (TorchServe writes them as it starts; until then: none).
    const torchserve::TorchServeKeys keys =
        options_.keys_for ? options_.keys_for(endpoint) : torchserve::TorchServeKeys{"", options_.management_key};
    net::HttpRequest ping;
    ping.url = endpoint.inference_url + "/ping";
    ping.bearer_token = keys.inference;
    ping.timeout_ms = std::min<std::int64_t>(left_ms, 1000);
    ping.connect_timeout_ms = ping.timeout_ms;
    const auto r = client_.fetch(ping);
    if (r.ok()) {
      if (options_.models.empty()) return "";
      try {
        torchserve::ModelCheckOptions check;
        check.management_key = keys.management;
        check.timeout_ms = std::min<std::int64_t>(left_ms, 2000);
        torchserve::check_models_loaded(client_, {endpoint}, options_.models, check);
        return "";
      } catch (const torchserve::ModelCheckError& e) {
        last = std::string("model check: ") + e.what();
      }
    } else {
      last = "health check GET /ping: " + r.describe();
    }
    if (cancel->wait_for(options_.check_interval_ms)) break;
  }
  if (cancel->is_cancelled()) return "start-up cancelled";
  return "not up within " + std::to_string(options_.start_timeout_ms) + " ms (last: " + last + ")";
}

int LocalProcessPool::pick_port() {
  // The launcher's ports are spread over the range (random start, free
  // ones), so one in G is in this class: a bounded number of tries.
  const int tries = 64 * options_.port_modulus;
  for (int i = 0; i < tries; ++i) {
    const int port = launcher_.pick_port();
    if (port % options_.port_modulus == options_.port_residue) return port;
  }
  throw std::runtime_error("no free port p with p mod " + std::to_string(options_.port_modulus) + " = " +
                           std::to_string(options_.port_residue) + " in " + std::to_string(tries) + " tries");
}

std::vector<std::string> LocalProcessPool::start_workers(int n) {
  if (n < 0) throw std::invalid_argument("start_workers: n < 0");
  std::vector<std::string> ids;
  std::vector<manager::WorkerInfo> changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < n; ++i) {
      auto w = std::make_unique<Worker>();
      w->info.id = options_.id_prefix + std::to_string(next_id_++);
      w->info.since_us = clock_.now_us();
      ids.push_back(w->info.id);
      try {
        const int port = pick_port();
        const bool two_ports = options_.command.find("{management_port}") != std::string::npos;
        int management_port = port;
        while (two_ports && management_port == port) management_port = pick_port();
        w->info.inference_url = "http://127.0.0.1:" + std::to_string(port);
        w->info.management_url = "http://127.0.0.1:" + std::to_string(management_port);
        w->process = launcher_.launch(expand_command(options_.command, port, management_port),
                                      options_.log_dir + "/" + w->info.id + ".log");
        w->deadline_us = clock_.now_us() + options_.start_timeout_ms * 1000;
        const torchserve::WorkerEndpoint endpoint{w->info.inference_url, w->info.management_url};
        w->check =
            std::async(std::launch::async, [this, endpoint, deadline = w->deadline_us, cancel = w->cancel_check] {
              return start_check(endpoint, deadline, cancel);
            });
        set_state(*w, manager::WorkerState::kStarting, changed);
      } catch (const std::exception& e) {
        set_state(*w, manager::WorkerState::kFailed, changed, e.what());
      }
      workers_.push_back(std::move(w));
    }
    notices_.queue(changed);
  }
  notices_.deliver();
  return ids;
}

void LocalProcessPool::stop_worker(const std::string& id) {
  std::vector<manager::WorkerInfo> changed;
  manager::DrainHook hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Worker* w = find(id);
    if (!w) throw std::invalid_argument("worker pool: no worker '" + id + "'");
    if (w->info.state == manager::WorkerState::kStarting) {  // never served: nothing to drain
      terminate(*w);
      set_state(*w, manager::WorkerState::kStopped, changed);
    } else if (w->info.state == manager::WorkerState::kUp) {
      w->deadline_us = clock_.now_us() + options_.drain_timeout_ms * 1000;
      set_state(*w, manager::WorkerState::kDraining, changed);
      hook = drain_hook_;
      if (!hook) w->drained = true;
    }
    notices_.queue(changed);
  }
  notices_.deliver();
  if (hook) {
    hook(id, [this, id] {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (Worker* w = find(id)) w->drained = true;
      }
      supervisor_.poke();
    });
  }
  supervisor_.poke();
}

std::vector<manager::WorkerInfo> LocalProcessPool::list_workers() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<manager::WorkerInfo> out;
  for (const auto& w : workers_) out.push_back(w->info);
  return out;
}

int LocalProcessPool::pid_of(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  Worker* w = find(id);
  return w && w->process && !w->process->exited() ? static_cast<int>(w->process->pid()) : -1;
}

void LocalProcessPool::Supervisor::poke() {
  poked_ = true;
  wake_loop();
}

void LocalProcessPool::Supervisor::tick(std::int64_t now_us) {
  poked_ = false;  // a poke during the pass ticks again at once
  const bool changed = pool_.supervise();
  next_us_ = changed ? kNow : now_us + pool_.options_.tick_ms * 1000;
}

bool LocalProcessPool::supervise() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    std::vector<manager::WorkerInfo> changed;
    tick(changed);
    if (changed.empty()) return false;
    notices_.queue(changed);
  }
  notices_.deliver();
  return true;
}

void LocalProcessPool::tick(std::vector<manager::WorkerInfo>& changed) {
  const std::int64_t now = clock_.now_us();
  for (auto& wp : workers_) {
    Worker& w = *wp;
    const bool exited = w.process && w.process->poll_exited();
    const auto how = [&](const char* when) {
      const std::string line = w.process->last_log_line();
      return w.process->exit_description() + " " + when + (line.empty() ? "" : " (last output: " + line + ")");
    };
    switch (w.info.state) {
      case manager::WorkerState::kStarting:
        if (exited) {
          w.cancel_check->cancel();
          set_state(w, manager::WorkerState::kFailed, changed, how("during start-up"));
        } else if (w.check.valid() && w.check.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
          const std::string why = w.check.get();
          if (why.empty()) {
            set_state(w, manager::WorkerState::kUp, changed);
          } else {
            terminate(w);
            set_state(w, manager::WorkerState::kFailed, changed, why);
          }
        }
        break;
      case manager::WorkerState::kUp:
        if (exited) set_state(w, manager::WorkerState::kFailed, changed, how("while up"));
        break;
      case manager::WorkerState::kDraining:
        if (exited && w.term_sent_us < 0) {
          set_state(w, manager::WorkerState::kFailed, changed, how("while draining"));
        } else if (exited) {
          set_state(w, manager::WorkerState::kStopped, changed);
        } else if (w.term_sent_us < 0 && (w.drained || now >= w.deadline_us)) {
          if (!w.drained)
            w.info.failure =
                "drain did not finish within " + std::to_string(options_.drain_timeout_ms) + " ms; stopped anyway";
          terminate(w);
        }
        break;
      case manager::WorkerState::kStopped:
      case manager::WorkerState::kFailed:
        break;
    }
    // SIGKILL whatever outlives its grace period after SIGTERM.
    if (w.process && !w.process->exited() && w.term_sent_us >= 0 && !w.kill_sent &&
        now >= w.term_sent_us + options_.stop_grace_ms * 1000) {
      w.process->signal(SIGKILL);
      w.kill_sent = true;
    }
  }
}

}  // namespace lull::pools
