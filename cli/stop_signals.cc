// Stop signals on a watcher thread (why: see stop_signals.h).
#include "cli/stop_signals.h"

#include <pthread.h>

namespace lull::cli {

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
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
  if (received() == 0) pthread_kill(watcher_.native_handle(), SIGTERM);
  watcher_.join();
}

void StopSignals::watch() {
  int sig = 0;
  sigwait(&set_, &sig);
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_) return;
  signal_ = sig;
  for (auto& f : callbacks_) f();
  cv_.notify_all();
}

StopSignals::Subscription StopSignals::subscribe(std::function<void()> on_stop) {
  std::lock_guard<std::mutex> lock(mu_);
  if (signal_ != 0) on_stop();
  callbacks_.push_back(std::move(on_stop));
  return Subscription(this, std::prev(callbacks_.end()));
}

StopSignals::Subscription::~Subscription() {
  if (!owner_) return;
  std::lock_guard<std::mutex> lock(owner_->mu_);
  owner_->callbacks_.erase(it_);
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

}  // namespace lull::cli
