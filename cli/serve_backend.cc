// --backend (why: see serve_backend.h).
#include "cli/serve_backend.h"

#include "cli/commands.h"
#include "runtime/upstream/v2/v2_model_check.h"
#include "runtime/upstream/v2/v2_model_control.h"
#include "runtime/upstream/v2/v2_wire.h"

namespace lull::cli {

namespace po = boost::program_options;

void add_serve_backend_options(po::options_description& desc, ServeBackendFlags& f) {
  // clang-format off
  desc.add_options()
      ("backend", po::value(&f.backend)->default_value(f.backend),
       "the model servers' protocol: torchserve (TorchServe's inference and management APIs) or v2 (the Open "
       "Inference Protocol: Triton, KServe, MLServer; docs/operators-guide.md)")
      ("v2-input-name", po::value(&f.v2_input_name),
       "--backend v2: the name of the models' input a batch is sent as, for every model (default: each "
       "model's one input declared in its metadata, else 'input')")
      ("v2-binary", po::value(&f.v2_binary)->default_value(f.v2_binary),
       "--backend v2: send bytes batches with the binary tensor extension (raw, not base64): auto (to the "
       "servers whose metadata lists binary_tensor_data, as Triton's and lull's do), on, off");
  // clang-format on
}

ServeBackend::ServeBackend(const ServeBackendFlags& flags) : input_name_(flags.v2_input_name) {
  if (flags.backend == "v2") {
    v2_ = true;
    auto wire = std::make_unique<v2::V2Wire>(input_name_);
    if (flags.v2_binary == "on")
      wire->set_binary(v2::V2Wire::Binary::kOn);
    else if (flags.v2_binary == "off")
      wire->set_binary(v2::V2Wire::Binary::kOff);
    else if (flags.v2_binary != "auto")
      throw UsageError("--v2-binary: expected auto, on or off (got '" + flags.v2_binary + "')");
    probe_binary_ = flags.v2_binary == "auto";
    v2_wire_ = wire.get();
    wire_ = std::move(wire);
  } else if (flags.backend != "torchserve") {
    throw UsageError("--backend: expected torchserve or v2 (got '" + flags.backend + "')");
  }
}

std::string ServeBackend::check_worker(net::HttpTransport& client, const torchserve::WorkerEndpoint& worker,
                                       const std::vector<std::string>& models, std::int64_t timeout_ms) const {
  if (models.empty()) {
    net::HttpRequest req;
    req.url = worker.inference_url + "/v2/health/ready";
    req.timeout_ms = timeout_ms;
    req.connect_timeout_ms = timeout_ms;
    const auto r = client.fetch(req);
    return r.ok() ? "" : "health check GET /v2/health/ready: " + r.describe();
  }
  try {
    std::map<std::string, std::string> declared;
    std::set<std::string> binary;  // this worker's own (pool threads check workers at once)
    v2::V2ModelCheckOptions o = check_options(&declared);
    o.binary_servers = probe_binary_ ? &binary : nullptr;
    o.timeout_ms = timeout_ms;
    v2::check_v2_models_ready(client, {worker}, models, o);
    if (v2_wire_) v2_wire_->learn_input_names(declared), v2_wire_->learn_binary_servers(binary);
    return "";
  } catch (const torchserve::ModelCheckError& e) {
    return e.what();
  }
}

v2::V2ModelCheckOptions ServeBackend::check_options(std::map<std::string, std::string>* declared) const {
  v2::V2ModelCheckOptions o;
  o.input_name = input_name_;
  o.declared = declared;
  if (probe_binary_) o.binary_servers = &binary_found_;
  return o;
}

void ServeBackend::learn(const std::map<std::string, std::string>& declared) const {
  if (v2_wire_) v2_wire_->learn_input_names(declared), v2_wire_->learn_binary_servers(binary_found_);
}

std::unique_ptr<core::ModelControl> ServeBackend::v2_model_control(net::HttpTransport& client) const {
  return std::make_unique<v2::V2ModelControl>(client);
}

}  // namespace lull::cli
