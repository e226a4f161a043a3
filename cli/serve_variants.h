#pragma once
// `lull serve --variant-sets VARIANTS.json` (the manifest `lull plan variants`
// writes) or `SMALL.pb@QPS,...`: model variants while serving (issue 10),
// on fixed servers or under --autoscale (then each variant is a policy
// library over the same worker counts as --policies, the switcher asks the
// autoscaler for the workers up, and the autoscaler's capacity table follows
// the variant in use: docs/scaling.md, "Variants and autoscaling").
// The servers start with the full set (--policies; a manifest's first
// variant) loaded; above each variant's load its set's policies (compiled by
// the plan, or with `lull compile --models`) serve, and the models only the full set uses are unloaded
// through the management API, make-before-break (runtime/manager/
// variant_switcher.h). A thread counts the arrivals and feeds their rate to
// a load forecaster (by default the mean of the last 5 s: the Dispatcher's
// own estimate follows bursts, and switching on it would load and unload
// models every few seconds), whose value picks the variant. Kept out
// of serve_command.cc (the composition root), which only asks this file for
// the session's hooks and to start and stop.
#include <boost/program_options.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/variant_sets.h"
#include "runtime/clock.h"
#include "runtime/manager/load_forecast.h"
#include "runtime/manager/session_policy_swap.h"
#include "runtime/torchserve/torchserve_model_control.h"
#include "runtime/manager/variant_switcher.h"
#include "runtime/policy_table.h"
#include "runtime/net/http_client.h"
#include "runtime/serve/serve_session.h"

namespace lull::cli {

// The choice of variant (shared with lull simulate: variant_sets.h), and how
// a server loads models and waits for the batches on the ones that go.
struct ServeVariantsFlags : VariantChoiceFlags {
  double drain_timeout_s = 30;
  std::string archive = "{model}.mar";
  // How models are loaded and unloaded (set by lull serve for --backend v2,
  // not a flag); empty: TorchServe's management API with `archive`.
  std::function<std::unique_ptr<runtime::ModelControl>(serve::HttpTransport&)> model_control;
};

void add_serve_variants_options(boost::program_options::options_description& desc, ServeVariantsFlags& flags);

class ServeVariants {
 public:
  // Reads and checks the variant sets against the full set `full` (one
  // table per worker count: --policies, a set or a library; each variant's
  // file must cover the same counts) (UsageError naming the flag, or the
  // loader's error naming the file); starts nothing. `workers`: the
  // management URLs of the workers in rotation, asked at each step (fixed
  // servers, or the autoscaler's pool).
  ServeVariants(const ServeVariantsFlags& flags, const std::vector<runtime::PolicyTable>& full,
                const std::string& full_name, manager::WorkerList workers, const std::string& management_key);
  ~ServeVariants();
  // Arrivals are counted; /metrics gains the variant families.
  void configure(serve::ServeOptions& options);
  // Called after each switch with the new variant's library (--autoscale:
  // the autoscaler's capacity table follows the variant). Before start().
  void on_switch(std::function<void(const std::vector<runtime::PolicyTable>&)> hook) { on_switch_ = std::move(hook); }
  void start(serve::ServeSession& session);
  // Ends the thread; call it before the session goes.
  void stop();

 private:
  void loop();

  ServeVariantsFlags flags_;
  std::vector<manager::ModelVariant> variants_;
  manager::WorkerList workers_;
  std::function<void(const std::vector<runtime::PolicyTable>&)> on_switch_;
  serve::HttpClient client_;
  std::unique_ptr<runtime::ModelControl> control_;
  std::unique_ptr<manager::SessionPolicySwap> swap_;
  std::unique_ptr<manager::VariantSwitcher> switcher_;
  std::unique_ptr<manager::LoadForecaster> forecaster_;
  std::atomic<std::uint64_t> arrivals_{0};
  runtime::WallClock clock_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace lull::cli
