// Stop signals on a watcher thread (why: see stop_signals.h).
#include "runtime/server/stop_signals.h"

#include <pthread.h>

#include <cstdlib>

#include "runtime/log/log.h"

namespace lull::server {

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  watcher_ = std::thread([this] { watch(); });
}

StopSignals::~StopSignals() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  // Wakes its sigwait: SIGTERM directed at the watcher thread (blocked there
  // as everywhere, so it is only ever taken by sigwait).
  pthread_kill(watcher_.native_handle(), SIGTERM);
  watcher_.join();
}

void StopSignals::watch() {
  for (;;) {
    int sig = 0;
    sigwait(&set_, &sig);
    std::unique_lock<std::mutex> lock(mu_);
    if (closing_) return;
    if (sig == SIGHUP) {
      if (signal_ != 0) continue;  // stopping: nothing to reload
      if (hangup_callbacks_.empty()) log::warn("SIGHUP: not serving yet, nothing reloaded");
      for (auto& f : hangup_callbacks_) f();
      continue;
    }
    if (signal_ != 0) {  // the second stop signal
      log::warn("signal %d again while stopping: exiting now", sig);
      cv_.wait(lock, [this] { return exit_holds_ == 0; });
      std::_Exit(128 + sig);
    }
    signal_ = sig;
    for (auto& f : callbacks_) f();
    cv_.notify_all();
  }
}

StopSignals::ExitHold StopSignals::hold_forced_exit() {
  std::lock_guard<std::mutex> lock(mu_);
  ++exit_holds_;
  return ExitHold(this);
}

void StopSignals::ExitHold::release() {
  if (!owner_) return;
  {
    std::lock_guard<std::mutex> lock(owner_->mu_);
    --owner_->exit_holds_;
  }
  owner_->cv_.notify_all();
  owner_ = nullptr;
}

StopSignals::Subscription StopSignals::subscribe(std::function<void()> on_stop) {
  std::lock_guard<std::mutex> lock(mu_);
  if (signal_ != 0) on_stop();
  callbacks_.push_back(std::move(on_stop));
  return Subscription(this, &callbacks_, std::prev(callbacks_.end()));
}

StopSignals::Subscription StopSignals::on_hangup(std::function<void()> on_hangup) {
  std::lock_guard<std::mutex> lock(mu_);
  hangup_callbacks_.push_back(std::move(on_hangup));
  return Subscription(this, &hangup_callbacks_, std::prev(hangup_callbacks_.end()));
}

StopSignals::Subscription::~Subscription() {
  if (!owner_) return;
  std::lock_guard<std::mutex> lock(owner_->mu_);
  list_->erase(it_);
}

int StopSignals::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return signal_ != 0; });
  return signal_;
}

int StopSignals::received() {
  std::lock_guard<std::mutex> lock(mu_);
  return signal_;
}

}  // namespace lull::server
