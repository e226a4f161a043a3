// Checked reads of the Kubernetes API's answers (why: see kubernetes_objects.h).
#include "runtime/pools/kubernetes_objects.h"

#include <arpa/inet.h>

#include <cmath>
#include <set>
#include <sstream>
#include <unordered_set>

#include "runtime/net/json_value.h"

namespace lull::pools {

using net::JsonValue;

namespace {

[[noreturn]] void refuse(const std::string& field, const std::string& why) {
  throw KubernetesObjectError(field + ": " + why);
}

std::string number_text(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

JsonValue parse_object(const std::string& body) {
  JsonValue v;
  if (!net::parse_json(body, &v)) throw KubernetesObjectError("the answer is not JSON");
  if (v.kind_case() != JsonValue::kStructValue) throw KubernetesObjectError("the answer is not a JSON object");
  return v;
}

// The member, or nullptr when absent or null (the API omits or nulls empty fields alike).
const JsonValue* member(const JsonValue& object, const char* name) {
  const JsonValue* v = net::json_field(object, name);
  return v && v->kind_case() != JsonValue::kNullValue ? v : nullptr;
}

const JsonValue* member_of_kind(const JsonValue& object, const char* name, JsonValue::KindCase kind,
                                const std::string& field, const char* kind_name) {
  const JsonValue* v = member(object, name);
  if (v && v->kind_case() != kind) refuse(field, std::string("not ") + kind_name);
  return v;
}

// An integer in [lo, hi], or refused naming `what` it should have been.
std::int64_t integer_in(const JsonValue& v, const std::string& field, std::int64_t lo, std::int64_t hi,
                        const std::string& what) {
  if (v.kind_case() != JsonValue::kNumberValue) refuse(field, "not a number");
  const double x = v.number_value();
  if (!(x >= static_cast<double>(lo) && x <= static_cast<double>(hi)) || x != std::floor(x))
    refuse(field, number_text(x) + " is not " + what);
  return static_cast<std::int64_t>(x);
}

bool is_ip_literal(const std::string& s) {
  unsigned char buf[16];
  // inet_pton reads up to a NUL: "10.0.0.2\0/evil" must not pass as 10.0.0.2.
  if (s.find('\0') != std::string::npos) return false;
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

std::string at(const std::string& field, int i) { return field + "[" + std::to_string(i) + "]"; }

KubernetesEndpoint read_endpoint(const JsonValue& e, const std::string& field) {
  if (e.kind_case() != JsonValue::kStructValue) refuse(field, "not an object");
  KubernetesEndpoint ep;
  if (const JsonValue* a = member_of_kind(e, "addresses", JsonValue::kListValue, field + ".addresses", "a list");
      a && a->list_value().values_size() > 0) {
    const JsonValue& first = a->list_value().values(0);
    const std::string f = field + ".addresses[0]";
    if (first.kind_case() != JsonValue::kStringValue) refuse(f, "not a string");
    if (!is_ip_literal(first.string_value()))
      refuse(f, "'" + first.string_value() + "' is not an IPv4 or IPv6 address");
    ep.address = first.string_value();
  }
  if (const JsonValue* ref =
          member_of_kind(e, "targetRef", JsonValue::kStructValue, field + ".targetRef", "an object")) {
    const std::string f = field + ".targetRef.name";
    if (const JsonValue* name = member_of_kind(*ref, "name", JsonValue::kStringValue, f, "a string")) {
      if (!is_object_name(name->string_value()))
        refuse(f, "'" + name->string_value().substr(0, 64) + "' is not a pod name (a DNS-1123 subdomain)");
      ep.pod = name->string_value();
    }
  }
  if (ep.pod.empty()) ep.pod = ep.address;
  if (const JsonValue* c =
          member_of_kind(e, "conditions", JsonValue::kStructValue, field + ".conditions", "an object")) {
    if (const JsonValue* r = member_of_kind(*c, "ready", JsonValue::kBoolValue, field + ".conditions.ready", "a bool"))
      ep.ready = r->bool_value();
    if (const JsonValue* t =
            member_of_kind(*c, "terminating", JsonValue::kBoolValue, field + ".conditions.terminating", "a bool"))
      ep.terminating = t->bool_value();
  }
  return ep;
}

}  // namespace

bool is_object_name(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alnum(s.front()) && alnum(s.back());
}

bool is_service_name(const std::string& s) {
  return s.size() <= 63 && is_object_name(s) && s.find('.') == std::string::npos && s.front() >= 'a' &&
         s.front() <= 'z';
}

int parse_scale_replicas(const std::string& body) {
  const JsonValue v = parse_object(body);
  const JsonValue* spec = member(v, "spec");
  if (!spec) throw KubernetesObjectError("no spec in the answer");
  if (spec->kind_case() != JsonValue::kStructValue) refuse("spec", "not an object");
  const JsonValue* replicas = member(*spec, "replicas");
  if (!replicas) return 0;  // a Scale with 0 replicas may omit spec.replicas (omitempty)
  return static_cast<int>(
      integer_in(*replicas, "spec.replicas", 0, kMaxKubernetesReplicas, "a replica count (an integer 0..2147483647)"));
}

KubernetesEndpoints parse_endpoint_slices(const std::string& body) {
  const JsonValue v = parse_object(body);
  const JsonValue* items = net::json_field(v, "items");
  if (!items || items->kind_case() != JsonValue::kListValue) throw KubernetesObjectError("no items list in the answer");
  KubernetesEndpoints out;
  std::set<std::pair<std::string, int>> ports_seen;
  std::unordered_set<std::string> pods_seen;
  for (int i = 0; i < items->list_value().values_size(); ++i) {
    const JsonValue& slice = items->list_value().values(i);
    const std::string field = at("items", i);
    if (slice.kind_case() != JsonValue::kStructValue) refuse(field, "not an object");
    if (const JsonValue* ps = member_of_kind(slice, "ports", JsonValue::kListValue, field + ".ports", "a list")) {
      for (int j = 0; j < ps->list_value().values_size(); ++j) {
        const JsonValue& p = ps->list_value().values(j);
        const std::string pf = at(field + ".ports", j);
        if (p.kind_case() != JsonValue::kStructValue) refuse(pf, "not an object");
        std::pair<std::string, int> port;
        if (const JsonValue* n = member_of_kind(p, "name", JsonValue::kStringValue, pf + ".name", "a string"))
          port.first = n->string_value();
        const JsonValue* number = member(p, "port");
        if (!number) continue;  // no port: "every port" in the API, nothing lull can address
        port.second = static_cast<int>(integer_in(*number, pf + ".port", 1, 65535, "a port (1..65535)"));
        if (ports_seen.insert(port).second) out.ports.push_back(std::move(port));
      }
    }
    const JsonValue* endpoints =
        member_of_kind(slice, "endpoints", JsonValue::kListValue, field + ".endpoints", "a list");
    if (!endpoints) continue;  // a slice with no endpoints: null
    for (int j = 0; j < endpoints->list_value().values_size(); ++j) {
      KubernetesEndpoint ep = read_endpoint(endpoints->list_value().values(j), at(field + ".endpoints", j));
      if (ep.address.empty()) continue;
      // A pod can show in two slices while they are being updated: keep the first.
      if (pods_seen.insert(ep.pod).second) out.endpoints.push_back(std::move(ep));
    }
  }
  return out;
}

}  // namespace lull::pools
