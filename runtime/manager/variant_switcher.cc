// Make-before-break variant switches (the order and why: variant_switcher.h).
#include "runtime/manager/variant_switcher.h"

#include <algorithm>
#include <exception>
#include <iterator>
#include <sstream>

#include "runtime/manager/model_variants.h"
#include "runtime/net/prometheus_text.h"

namespace lull::manager {

// Passes calls on, and records which models each worker holds after each
// call that succeeded (for /metrics and the trim of new workers); a load of
// a model the record says the worker holds is not sent.
class VariantSwitcher::Recording final : public ModelControl {
 public:
  explicit Recording(VariantSwitcher& s) : s_(s) {}
  void load(const std::string& worker, const std::string& model) override {
    {
      // Already there (a new worker whose trim failed keeps the model): the
      // management API would refuse to register it twice, and it is ready.
      std::lock_guard<std::mutex> lock(s_.mu_);
      const auto it = s_.loaded_.find(worker);
      if (it != s_.loaded_.end() && it->second.count(model)) return;
    }
    s_.control_.load(worker, model);
    std::lock_guard<std::mutex> lock(s_.mu_);
    s_.loaded_[worker].insert(model);
  }
  void unload(const std::string& worker, const std::string& model) override {
    s_.control_.unload(worker, model);
    std::lock_guard<std::mutex> lock(s_.mu_);
    s_.loaded_[worker].erase(model);
  }

 private:
  VariantSwitcher& s_;
};

namespace {
std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
  return out.empty() ? "none" : out;
}
}  // namespace

VariantSwitcher::VariantSwitcher(std::vector<ModelVariant> variants, WorkerList workers, ModelControl& control,
                                 PolicySwap& swap, std::function<void(const std::string&)> log,
                                 VariantSwitchOptions options)
    : variants_(std::move(variants)),
      workers_(std::move(workers)),
      control_(control),
      swap_(swap),
      log_(std::move(log)),
      rule_(
          [this] {
            std::vector<double> from_qps;
            for (const auto& v : variants_) from_qps.push_back(v.from_qps);
            return from_qps;
          }(),
          options.hysteresis, options.dwell_us) {
  // The workers up now hold the full set; so does every one that joins later.
  for (const auto& w : workers_())
    for (const auto& m : variants_.at(0).models) loaded_[w].insert(m);
}

VariantSwitcher::VariantSwitcher(std::vector<ModelVariant> variants, std::vector<std::string> workers,
                                 ModelControl& control, PolicySwap& swap, std::function<void(const std::string&)> log,
                                 VariantSwitchOptions options)
    : VariantSwitcher(
          std::move(variants), [workers = std::move(workers)] { return workers; }, control, swap, std::move(log),
          options) {}

std::vector<std::string> VariantSwitcher::sync_workers(ModelControl& recording) {
  const std::vector<std::string> now = workers_();
  std::vector<std::string> fresh;
  std::set<std::string> held;  // what every worker it knows holds
  bool known_any = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = loaded_.begin(); it != loaded_.end();)  // gone: stopped, failed or draining
      it = std::find(now.begin(), now.end(), it->first) == now.end() ? loaded_.erase(it) : std::next(it);
    for (const auto& w : now) {
      const auto it = loaded_.find(w);
      if (it == loaded_.end()) {
        fresh.push_back(w);
        continue;
      }
      if (!known_any) {
        held = it->second;
      } else {
        std::set<std::string> both;
        for (const auto& m : held)
          if (it->second.count(m)) both.insert(m);
        held.swap(both);
      }
      known_any = true;
    }
    if (!known_any) {
      const auto& models = variants_[static_cast<std::size_t>(current_)].models;
      held.insert(models.begin(), models.end());
    }
    for (const auto& w : fresh)
      for (const auto& m : variants_.at(0).models) loaded_[w].insert(m);
  }
  for (const auto& w : fresh) {
    std::vector<std::string> unloaded, failed;
    for (const auto& m : variants_.at(0).models) {
      if (held.count(m)) continue;
      try {
        recording.unload(w, m);
        unloaded.push_back(m);
      } catch (const std::exception& e) {  // it keeps the model: only memory, never a wrong answer
        failed.push_back(m + " (" + e.what() + ")");
      }
    }
    if (log_ && (!unloaded.empty() || !failed.empty()))
      log_("variant: new worker " + w + " joined with the full set; unloaded " + joined(unloaded) + " (not in use)" +
           (failed.empty() ? "" : "; could not unload " + joined(failed)));
  }
  return now;
}

int VariantSwitcher::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

bool VariantSwitcher::step(double load_qps, std::int64_t now_us) {
  Recording recording(*this);
  const std::vector<std::string> workers = sync_workers(recording);
  const int from = current();
  const int to = rule_.decide(from, load_qps, now_us);
  if (to < 0) return false;
  const ModelVariant& old_v = variants_[static_cast<std::size_t>(from)];
  const ModelVariant& new_v = variants_[static_cast<std::size_t>(to)];
  std::vector<int> dropped;  // ids in the full set's model list
  const auto& full_models = new_v.tables.at(0).models;
  for (std::size_t i = 0; i < full_models.size(); ++i) {
    const std::string& m = full_models[i].name;
    const auto in = [&m](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), m) != v.end(); };
    if (in(old_v.models) && !in(new_v.models)) dropped.push_back(static_cast<int>(i));
  }
  bool swapped = false;
  std::string swap_error;
  ModelSetChange change;
  try {
    change = change_model_set(
        recording, workers, old_v.models, new_v.models,
        [&](const std::vector<std::string>&) {
          swap_.swap(new_v.tables, dropped);
          swapped = true;
        },
        /*all_or_nothing=*/true);
  } catch (const std::exception& e) {  // the swap failed or its batches did not finish: nothing unloaded
    swap_error = e.what();
  }
  std::ostringstream line;
  line << "variant switch " << old_v.name << " -> " << new_v.name << " at load " << load_qps << " qps: ";
  std::lock_guard<std::mutex> lock(mu_);
  if (swapped) {
    current_ = to;
    ++switches_;
    line << "now using " << joined(new_v.models) << " (loaded " << joined(change.loaded) << ", unloaded "
         << joined(change.unloaded) << ")";
    if (!swap_error.empty()) line << "; not unloaded: " << swap_error;
  } else {
    ++failures_;
    last_failure_ = !swap_error.empty() ? swap_error : change.failures.empty() ? "unknown" : change.failures.front();
    line << "failed, keeping " << old_v.name << " (" << joined(old_v.models) << "): " << last_failure_;
  }
  for (std::size_t i = 1; i < change.failures.size(); ++i) line << "; " << change.failures[i];
  if (log_) log_(line.str());
  return swapped;
}

std::string VariantSwitcher::metrics_text() const {
  namespace prom = net::prom;
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  net::prom::family(out, "lull_variant_current", "gauge", "The model variant in use (0: the full set), by name.");
  net::prom::sample(
      out,
      "lull_variant_current{variant=\"" + net::prom::escape(variants_[static_cast<std::size_t>(current_)].name) + "\"}",
      current_);
  net::prom::family(out, "lull_variant_switches_total", "counter", "Variant switches done.");
  net::prom::sample(out, "lull_variant_switches_total", static_cast<double>(switches_));
  net::prom::family(
      out, "lull_variant_switch_failures_total", "counter",
      "Variant switches abandoned (a model failed to load, or the swap did not finish); the old set stays.");
  net::prom::sample(out, "lull_variant_switch_failures_total", static_cast<double>(failures_));
  if (!last_failure_.empty()) {
    net::prom::family(out, "lull_variant_last_failure_info", "gauge", "Why the last variant switch failed.");
    net::prom::sample(out, "lull_variant_last_failure_info{reason=\"" + net::prom::escape(last_failure_) + "\"}", 1);
  }
  net::prom::family(out, "lull_worker_models_loaded", "gauge",
                    "Models each worker holds (loaded through the management API).");
  for (const auto& [worker, models] : loaded_)
    net::prom::sample(out, "lull_worker_models_loaded{worker=\"" + net::prom::escape(worker) + "\"}",
                      static_cast<double>(models.size()));
  net::prom::family(out, "lull_worker_model_loaded", "gauge", "1 for each model a worker holds.");
  for (const auto& [worker, models] : loaded_)
    for (const auto& m : models)
      net::prom::sample(out,
                        "lull_worker_model_loaded{worker=\"" + net::prom::escape(worker) + "\",model=\"" +
                            net::prom::escape(m) + "\"}",
                        1);
  return out;
}

}  // namespace lull::manager
