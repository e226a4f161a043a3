// Reading the fleet description (format: docs/user-guide.md).
#include "schema/fleet_description.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "schema/json_reader.h"
#include "schema/number_text.h"

namespace lull {
namespace {

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw FleetDescriptionError(path_ + ": " + field + ": " + why);
  }

  // Refuses keys outside `known`, so a misspelt optional field is not silently defaulted.
  void only_keys(simdjson::dom::element e, const std::string& at, const std::set<std::string>& known) const {
    simdjson::dom::object obj;
    if (e.get(obj)) fail(at, "expected an object, got " + json::describe(e));
    for (auto field : obj)
      if (!known.count(std::string(field.key))) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        fail(at + "." + std::string(field.key), "unknown field (expected one of: " + list + ")");
      }
  }

  std::string text(simdjson::dom::element e, const std::string& key, const std::string& at) const {
    simdjson::dom::element v;
    std::string s;
    if (e[key].get(v) || !json::to_string(v, &s) || s.empty())
      fail(at + "." + key, "missing or not a non-empty string");
    return s;
  }

  // A number, or `fallback` when the key is absent and `fallback` is given.
  double number(simdjson::dom::element e, const std::string& key, const std::string& at,
                const double* fallback = nullptr) const {
    simdjson::dom::element v;
    if (e[key].get(v)) {
      if (fallback) return *fallback;
      fail(at + "." + key, "missing");
    }
    double x = 0;
    if (!json::to_double(v, &x)) fail(at + "." + key, "not a number (" + json::describe(v) + ")");
    if (!std::isfinite(x)) fail(at + "." + key, "must be a finite number (got " + number_text(x) + ")");
    return x;
  }

  std::string resolve(const std::string& file) const {
    if (std::filesystem::path(file).is_absolute()) return file;
    return (std::filesystem::path(path_).parent_path() / file).string();
  }

 private:
  std::string path_;
};

FleetKindDescription read_kind(const Reader& r, simdjson::dom::element e, const std::string& at) {
  r.only_keys(e, at, {"name", "profiles", "accuracy_percent", "price_per_s"});
  FleetKindDescription k;
  k.name = r.text(e, "name", at);
  k.profiles = r.resolve(r.text(e, "profiles", at));
  simdjson::dom::element v;
  if (!e["accuracy_percent"].get(v)) k.accuracy_percent = r.resolve(r.text(e, "accuracy_percent", at));
  k.price_per_s = r.number(e, "price_per_s", at);
  if (k.price_per_s < 0) r.fail(at + ".price_per_s", "must be >= 0 (got " + number_text(k.price_per_s) + ")");
  return k;
}

FleetClassDescription read_class(const Reader& r, simdjson::dom::element e, const std::string& at,
                                 const FleetDescription& fleet) {
  r.only_keys(e, at, {"name", "slo_ms", "share", "max_violation", "min_accuracy", "workers", "weights"});
  FleetClassDescription c;
  c.name = r.text(e, "name", at);
  const std::string named = at + " '" + c.name + "'";
  c.slo_ms = r.number(e, "slo_ms", named);
  if (!(c.slo_ms > 0)) r.fail(named + ".slo_ms", "must be > 0 (got " + number_text(c.slo_ms) + ")");
  c.share = r.number(e, "share", named);
  if (!(c.share > 0 && c.share <= 1)) r.fail(named + ".share", "must be in (0, 1] (got " + number_text(c.share) + ")");
  const double default_violation = 0.01, no_floor = 0;
  c.max_violation = r.number(e, "max_violation", named, &default_violation);
  if (!(c.max_violation > 0 && c.max_violation < 1))
    r.fail(named + ".max_violation", "must be in (0, 1) (got " + number_text(c.max_violation) + ")");
  c.min_accuracy = r.number(e, "min_accuracy", named, &no_floor);
  if (!(c.min_accuracy >= 0 && c.min_accuracy < 1))
    r.fail(named + ".min_accuracy", "must be in [0, 1) (got " + number_text(c.min_accuracy) + ")");
  simdjson::dom::element v;
  if (!e["workers"].get(v)) {
    simdjson::dom::object workers;
    if (v.get(workers)) r.fail(named + ".workers", "expected an object {kind: count}, got " + json::describe(v));
    for (auto field : workers) {
      const std::string kind(field.key);
      const std::string wat = named + ".workers." + kind;
      if (fleet.kind_index(kind) < 0) r.fail(wat, "unknown kind (not in kinds)");
      for (const auto& w : c.workers)
        if (w.kind == kind) r.fail(wat, "the kind is named twice");
      double n = 0;
      if (!json::to_double(field.value, &n) || !(n >= 1) || n != std::floor(n) || n > 1e6)
        r.fail(wat, "the count must be a whole number >= 1");
      c.workers.push_back({kind, static_cast<int>(n), 0});
    }
    if (c.workers.empty()) r.fail(named + ".workers", "the class has no workers");
  }
  if (!e["weights"].get(v)) {
    simdjson::dom::object weights;
    if (v.get(weights)) r.fail(named + ".weights", "expected an object {kind: weight}, got " + json::describe(v));
    if (c.workers.empty()) r.fail(named + ".weights", "fixed weights need the class's workers");
    std::set<std::string> seen;
    double sum = 0;
    for (auto field : weights) {
      const std::string kind(field.key);
      const std::string wat = named + ".weights." + kind;
      if (!seen.insert(kind).second) r.fail(wat, "the kind is named twice");
      auto it = std::find_if(c.workers.begin(), c.workers.end(), [&](const auto& w) { return w.kind == kind; });
      if (it == c.workers.end()) r.fail(wat, "not a kind of the class's workers");
      double w = 0;
      if (!json::to_double(field.value, &w) || !(w >= 0 && w <= 1)) r.fail(wat, "must be a number in [0, 1]");
      it->weight = w;
      sum += w;
    }
    for (const auto& w : c.workers)
      if (!seen.count(w.kind)) r.fail(named + ".weights." + w.kind, "missing (one weight per kind of workers)");
    if (std::abs(sum - 1) > 1e-6) r.fail(named + ".weights", "sum to " + number_text(sum) + ", not 1");
    c.fixed_weights = true;
  }
  return c;
}

}  // namespace

int FleetDescription::kind_index(const std::string& name) const {
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i].name == name) return static_cast<int>(i);
  return -1;
}

FleetDescription read_fleet_description(const std::string& path) {
  json::JsonFileReader parser(FileKind::kSettings);
  const simdjson::dom::element root =
      json::parse_file_or_throw<FleetDescriptionError>(parser, path, "fleet description");
  const Reader r(path);
  r.only_keys(root, "fleet", {"kinds", "classes"});
  FleetDescription fleet;
  fleet.path = path;
  simdjson::dom::array list;
  if (root["kinds"].get(list)) r.fail("kinds", "missing or not a list");
  for (simdjson::dom::element e : list) {
    const std::string at = "kinds[" + std::to_string(fleet.kinds.size()) + "]";
    auto kind = read_kind(r, e, at);
    if (fleet.kind_index(kind.name) >= 0) r.fail(at + ".name", "a second kind named '" + kind.name + "'");
    fleet.kinds.push_back(std::move(kind));
  }
  if (fleet.kinds.empty()) r.fail("kinds", "the list is empty");
  if (root["classes"].get(list)) r.fail("classes", "missing or not a list");
  double shares = 0;
  for (simdjson::dom::element e : list) {
    const std::string at = "classes[" + std::to_string(fleet.classes.size()) + "]";
    auto c = read_class(r, e, at, fleet);
    for (const auto& other : fleet.classes)
      if (other.name == c.name) r.fail(at + ".name", "a second class named '" + c.name + "'");
    shares += c.share;
    fleet.classes.push_back(std::move(c));
  }
  if (fleet.classes.empty()) r.fail("classes", "the list is empty");
  if (std::abs(shares - 1) > 1e-6) r.fail("classes[].share", "the shares sum to " + number_text(shares) + ", not 1");
  return fleet;
}

void require_workers(const FleetDescription& fleet) {
  for (std::size_t i = 0; i < fleet.classes.size(); ++i)
    if (fleet.classes[i].workers.empty())
      throw FleetDescriptionError(fleet.path + ": classes[" + std::to_string(i) + "] '" + fleet.classes[i].name +
                                  "'.workers: the class has no workers (a count per kind)");
}

}  // namespace lull
