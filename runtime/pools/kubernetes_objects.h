#pragma once
// What the Kubernetes pool reads from the API server's answers, checked as
// the API documents the objects: an API server that is broken, or hostile,
// answers with an error naming the field ("items[0].ports[1].port: 70000 is
// not a port (1..65535)"), never a replica count or a worker URL made from a
// number or an address of the wrong kind. Pure functions of the body: the
// fuzz target (test/fuzz/kubernetes_objects_fuzz.cc) runs them directly.
//
//   Scale:             {"spec":{"replicas":N}}  N an integer, 0..2147483647 (int32); absent: 0 (omitempty)
//   EndpointSliceList: {"items":[{"ports":[{"name","port"}],"endpoints":[{"addresses":[IP,...],
//                        "conditions":{"ready","terminating"},"targetRef":{"name"}}]}]}
//
// A pod in two slices (while they are updated) counts once, as first seen;
// the work is O(n log n) in the endpoints, so a slice list of 100k endpoints
// costs a fraction of a second, not a quadratic dedup.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lull::pools {

// One pod behind the Service, from its EndpointSlices.
struct KubernetesEndpoint {
  std::string pod;      // targetRef.name (the address when there is no targetRef)
  std::string address;  // the first address: an IPv4 or IPv6 literal
  bool ready = true;    // conditions.ready; absent means ready (the API's advice)
  bool terminating = false;
};

struct KubernetesEndpoints {
  std::vector<KubernetesEndpoint> endpoints;       // one per pod
  std::vector<std::pair<std::string, int>> ports;  // the slices' (name, port), distinct, in order
};

// The answer is not the object the call expects; what() names the field.
struct KubernetesObjectError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The largest replica count the API accepts (Scale.spec.replicas is an int32).
constexpr std::int64_t kMaxKubernetesReplicas = 2147483647;

// A DNS-1123 subdomain, as Deployment and pod names are (they go into request paths).
bool is_object_name(const std::string& s);
// A DNS-1035 label, as Service names are: at most 63 of a-z, 0-9 and '-', a letter first.
bool is_service_name(const std::string& s);

// Scale.spec.replicas of a GET .../scale answer.
int parse_scale_replicas(const std::string& body);
// The endpoints and ports of an EndpointSliceList answer.
KubernetesEndpoints parse_endpoint_slices(const std::string& body);

}  // namespace lull::pools
