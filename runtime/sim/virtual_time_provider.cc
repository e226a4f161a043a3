#include "runtime/sim/virtual_time_provider.h"

#include <chrono>

namespace lull::sim {
namespace {
bool same(const core::PolicyRequest& a, const core::PolicyRequest& b) {
  return a.workers == b.workers && a.load_qps == b.load_qps;
}
}  // namespace

VirtualTimeProvider::VirtualTimeProvider(core::PolicyCompiler& compiler, const core::Clock& clock,
                                         std::int64_t delay_us)
    : compiler_(compiler), clock_(clock), delay_us_(delay_us) {}

void VirtualTimeProvider::request(const core::PolicyRequest& request) {
  if (!running_) return start(request);
  if (!same(running_->request, request)) waiting_ = request;
}

void VirtualTimeProvider::start(const core::PolicyRequest& request) {
  const auto t0 = std::chrono::steady_clock::now();
  core::PolicyTable table = compiler_.compile(request);
  wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++compilations_;
  running_ = Running{request, clock_.now_us() + delay_us_, std::move(table)};
}

core::PolicyTable VirtualTimeProvider::pop_ready() {
  core::PolicyTable t = std::move(running_->table);
  running_.reset();
  if (waiting_) {
    const core::PolicyRequest next = *waiting_;
    waiting_.reset();
    start(next);
  }
  return t;
}

}  // namespace lull::sim
