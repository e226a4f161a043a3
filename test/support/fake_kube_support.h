#pragma once
// The fake Kubernetes API server (fake_kube_api.py) for the tests: over TLS
// with a certificate for 127.0.0.1 made once per test run with openssl, the
// bearer token "tok-123", namespace/Deployment/Service "lull"/"models"/
// "models"; and its test controls (/_fake/...).
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "test/support/model_server_process.h"
#include "runtime/net/http_client.h"

namespace lull::manager::testing {

using serve::testing::free_port;
using serve::testing::ModelServerProcess;

// The fake Deployment's scale subresource.
inline const std::string kScale = "/apis/apps/v1/namespaces/lull/deployments/models/scale";

// A scratch directory with a token file and a self-signed certificate for 127.0.0.1 (made once).
struct Secrets {
  std::string dir, token, cert, key, other_cert;
  Secrets() {
    dir = "/tmp/lull-kube-test-" + std::to_string(free_port());
    token = dir + "/token";
    cert = dir + "/ca.crt";
    key = dir + "/tls.key";
    other_cert = dir + "/other.crt";
    const std::string mk = "mkdir -p " + dir + " && printf 'tok-123\\n' > " + token;
    const auto openssl = [&](const std::string& crt, const std::string& k) {
      return "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext "
             "subjectAltName=IP:127.0.0.1 -keyout " +
             k + " -out " + crt + " 2>/dev/null";
    };
    if (std::system((mk + " && " + openssl(cert, key) + " && " + openssl(other_cert, dir + "/other.key")).c_str()) != 0)
      throw std::runtime_error("cannot make the test certificate with openssl");
  }
  ~Secrets() { std::system(("rm -rf " + dir).c_str()); }
};

inline const Secrets& secrets() {
  static Secrets s;
  return s;
}

inline ModelServerProcess fake_api(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--token",     "tok-123", "--tls-cert",   secrets().cert, "--tls-key", secrets().key,
                                   "--namespace", "lull",    "--deployment", "models",       "--service", "models"};
  args.insert(args.end(), extra.begin(), extra.end());
  return ModelServerProcess(args, 0, 60, "test/support/fake_kube_api.py");
}

// POSTs a test control (e.g. "/_fake/faults?method=PATCH&status=409&count=1"); true on 200.
inline bool fake_control(net::HttpClient& client, const ModelServerProcess& api, const std::string& path_and_query) {
  net::HttpRequest r;
  r.method = "POST";
  r.url = "https://127.0.0.1:" + std::to_string(api.port()) + path_and_query;
  r.ca_file = secrets().cert;
  return client.fetch(r).ok();
}

}  // namespace lull::manager::testing
