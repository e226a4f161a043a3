#pragma once
// `lull serve --autoscale`: the flags of the worker pool (model-server
// processes on this machine, or a Kubernetes Deployment) and of the
// ServingAutoscaler, turned into the server's AutoscaleSpec
// (runtime/server/serve_spec.h; the Server builds and runs them).
#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "cli/autoscale_flags.h"
#include "runtime/server/serve_spec.h"

namespace lull::cli {

struct ServeAutoscaleFlags {
  AutoscaleFlags autoscale;  // --autoscale and the controller's options (shared with lull simulate)
  std::string pool = "local";
  std::string command, log_dir;
  double start_timeout_s = 60, drain_timeout_s = 30, stop_grace_s = 5;
  int initial_workers = 0;
  double retry_base_s = 1, retry_max_s = 30;
  std::string k8s_server, k8s_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token",
                          k8s_ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
                          k8s_namespace = "default", k8s_deployment, k8s_service, k8s_port_name = "http",
                          k8s_management_port_name = "management";
  double k8s_not_ready_timeout_s = 300, k8s_call_budget_s = 5;
};

void add_serve_autoscale_options(boost::program_options::options_description& desc, ServeAutoscaleFlags& flags);

// Checks the flags (UsageError naming the flag) and turns them into the
// server's autoscale spec. `models`: the model check every new worker must
// pass (empty: the health check only). `command_required` false: a fleet,
// whose groups may each name their own command (cli/serve_fleet.h).
server::AutoscaleSpec autoscale_spec(const ServeAutoscaleFlags& flags, std::vector<std::string> models,
                                     const std::string& management_key, bool command_required = true);

}  // namespace lull::cli
