// libFuzzer target: what the Kubernetes pool reads from the API server's
// answers (runtime/pools/kubernetes_objects): a hostile API server may send
// anything. Reading either refuses the body with KubernetesObjectError or
// returns what the pool may use: a replica count in 0..2^31-1; endpoints
// with an IPv4/IPv6 address and a pod name (a DNS-1123 name, or the address),
// each pod once; ports in 1..65535, each (name, port) once. The first byte
// picks the reader; the rest is the body.
#include <arpa/inet.h>

#include <cstdint>
#include <set>
#include <string>

#include "runtime/pools/kubernetes_objects.h"
#include "test/fuzz/fuzz_support.h"

namespace {

using lull::fuzz::finding;
using namespace lull::pools;

bool is_ip(const std::string& s) {
  unsigned char buf[16];
  if (s.find('\0') != std::string::npos) return false;  // inet_pton would stop at it
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

void check_scale(const std::string& body) {
  try {
    const int n = parse_scale_replicas(body);
    if (n < 0) finding("a negative replica count was read");
  } catch (const KubernetesObjectError&) {
  }
}

void check_slices(const std::string& body) {
  KubernetesEndpoints read;
  try {
    read = parse_endpoint_slices(body);
  } catch (const KubernetesObjectError&) {
    return;
  }
  std::set<std::string> pods;
  for (const auto& ep : read.endpoints) {
    if (!is_ip(ep.address)) finding("an endpoint address is not an IP literal");
    if (ep.pod.empty()) finding("an endpoint without a pod name");
    if (ep.pod.find('/') != std::string::npos) finding("a pod name with a '/' (it goes into a request path)");
    if (!pods.insert(ep.pod).second) finding("a pod listed twice");
  }
  std::set<std::pair<std::string, int>> ports;
  for (const auto& p : read.ports) {
    if (p.second < 1 || p.second > 65535) finding("a port outside 1..65535");
    if (!ports.insert(p).second) finding("a port listed twice");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0)
    check_scale(body);
  else
    check_slices(body);
  return 0;
}
