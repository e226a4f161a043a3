// The one control loop (why and how: see control_loop.h).
#include "runtime/core/control_loop.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>

namespace lull::core {

Controller::Controller() : link_(std::make_shared<ControllerLink>()) { link_->controller = this; }

Controller::~Controller() {
  std::lock_guard<std::mutex> lock(link_->mu);
  link_->controller = nullptr;
  link_->loop = nullptr;
}

void Controller::wake_loop() const {
  std::lock_guard<std::mutex> lock(link_->mu);
  if (link_->loop) link_->loop->wake();
}

Controller* ControlLoop::controller_of(const Entry& e) {
  std::lock_guard<std::mutex> lock(e.link->mu);
  return e.link->controller;
}

ControlLoop::ControlLoop(const Clock& clock, Log log) : clock_(clock), log_(std::move(log)) {}

ControlLoop::ControlLoop(VirtualClock& clock) : clock_(clock), virtual_(&clock) {}

ControlLoop::~ControlLoop() { stop(); }

void ControlLoop::add(Controller& c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_ || stop_) throw std::logic_error("ControlLoop::add after start()");
    entries_.push_back(std::make_unique<Entry>(Entry{c.link_}));
  }
  // Not under mu_: wake_loop() takes the link's lock, then mu_.
  std::lock_guard<std::mutex> c_lock(c.link_->mu);
  c.link_->loop = this;
}

void ControlLoop::start(std::int64_t retry_us) {
  if (virtual_) throw std::logic_error("ControlLoop::start on a virtual clock");
  std::lock_guard<std::mutex> lock(mu_);
  if (started_ || stop_) return;
  started_ = true;
  retry_us_ = retry_us;
  for (auto& e : entries_) threads_.emplace_back([this, entry = e.get()] { run(*entry); });
}

void ControlLoop::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
  // No controller may wake a loop that is gone (the links outlive controllers
  // destroyed meanwhile: nothing here touches a controller).
  for (auto& e : entries_) {
    std::lock_guard<std::mutex> lock(e->link->mu);
    if (e->link->loop == this) e->link->loop = nullptr;
  }
}

bool ControlLoop::stopped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

void ControlLoop::wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++wakes_;
  }
  cv_.notify_all();
}

void ControlLoop::run(Entry& e) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const std::uint64_t seen = wakes_;
    lock.unlock();
    Controller* const c = controller_of(e);
    if (!c) return;  // destroyed (while the loop ran: its owner's error)
    const std::int64_t due = std::max(c->next_tick_us(), e.not_before_us);
    const std::int64_t now = clock_.now_us();
    if (due <= now) {
      try {
        c->tick(now);
      } catch (const std::exception& ex) {
        e.not_before_us = clock_.now_us() + retry_us_;
        if (log_) log_(c->controller_name() + ": " + ex.what());
      }
      lock.lock();
      continue;
    }
    lock.lock();
    const auto woken = [&] { return stop_ || wakes_ != seen; };
    if (due == Controller::kNever)
      cv_.wait(lock, woken);
    else
      cv_.wait_for(lock, std::chrono::microseconds(due - now), woken);
  }
}

bool ControlLoop::run_next_due(std::int64_t until_us) {
  if (!virtual_) throw std::logic_error("ControlLoop::run_next_due on a real clock");
  for (auto& e : entries_) {
    Controller* const c = controller_of(*e);
    if (!c) continue;  // destroyed: forgotten
    const std::int64_t due = c->next_tick_us();
    if (due > until_us) continue;
    virtual_->advance_to_us(std::max(virtual_->now_us(), due));
    c->tick(virtual_->now_us());
    return true;
  }
  return false;
}

}  // namespace lull::core
