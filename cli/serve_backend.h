#pragma once
// `--backend torchserve|v2` of lull serve and lull profile: which model
// server protocol lull speaks to its workers. TorchServe's API (the default)
// or the Open Inference Protocol (KServe v2: Triton, KServe, MLServer,
// TorchServe in v2 mode; runtime/upstream/v2/). The parts that differ: the batch
// wire, the start-up model check, a pool's check of a new worker, and model
// loading for --variant-sets.
#include <boost/program_options.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/model_control.h"
#include "runtime/net/http_transport.h"
#include "runtime/upstream/torchserve/batch_wire.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"
#include "runtime/upstream/v2/v2_model_check.h"
#include "runtime/upstream/v2/v2_wire.h"
#include <set>

namespace lull::cli {

struct ServeBackendFlags {
  std::string backend = "torchserve";
  std::string v2_input_name;       // "": each model's one declared input (its metadata), else "input"
  std::string v2_binary = "auto";  // the binary tensor extension toward servers: auto, on, off
};

void add_serve_backend_options(boost::program_options::options_description& desc, ServeBackendFlags& flags);

// The protocol the flags chose. Throws UsageError for an unknown --backend.
class ServeBackend {
 public:
  explicit ServeBackend(const ServeBackendFlags& flags);
  bool v2() const { return v2_; }
  // The wire for TorchServeOptions::wire (nullptr: TorchServe's); lives as long as this.
  const torchserve::BatchWire* wire() const { return wire_.get(); }
  // One new worker's check, one attempt (a pool's start check): "" when its
  // server is ready with every model of `models` (none: server readiness),
  // else why not. For the v2 backend only.
  std::string check_worker(net::HttpTransport& client, const torchserve::WorkerEndpoint& worker,
                           const std::vector<std::string>& models, std::int64_t timeout_ms) const;
  // The v2 repository extension's loads and unloads (--variant-sets).
  std::unique_ptr<core::ModelControl> v2_model_control(net::HttpTransport& client) const;
  // The input name requests carry when no model's metadata says otherwise.
  std::string input_name() const { return input_name_.empty() ? "input" : input_name_; }
  // A v2 model check's options: the flag's name ("" when not given) and
  // where the models' declared inputs go; learn() hands them to the wire.
  v2::V2ModelCheckOptions check_options(std::map<std::string, std::string>* declared) const;
  void learn(const std::map<std::string, std::string>& declared) const;

 private:
  bool v2_ = false;
  std::string input_name_;  // --v2-input-name, "" when not given
  std::unique_ptr<torchserve::BatchWire> wire_;
  v2::V2Wire* v2_wire_ = nullptr;               // wire_, when v2
  bool probe_binary_ = false;                   // --v2-binary auto: the check asks each server's metadata
  mutable std::set<std::string> binary_found_;  // by check_options' checks, handed over by learn()
};

}  // namespace lull::cli
