#include "runtime/session/fleet_service.h"

#include <cstdio>
#include <future>
#include <stdexcept>

#include "runtime/core/fleet_split.h"
#include "runtime/log/log.h"
#include "runtime/net/prometheus_text.h"
#include "runtime/frontend/build_info.h"
#include "runtime/session/fleet_metrics.h"
#include "runtime/session/process_metrics.h"
#include "schema/number_text.h"

namespace lull::session {

FleetService::FleetService(const core::FleetTables& fleet, std::vector<std::vector<frontend::QueryService*>> groups,
                           core::Clock& clock, std::uint64_t seed)
    : fleet_(fleet), groups_(std::move(groups)), clock_(clock) {
  if (groups_.size() != fleet_.classes.size() || fleet_.classes.empty())
    throw std::invalid_argument("fleet service: one group list per class");
  for (std::size_t c = 0; c < groups_.size(); ++c) {
    if (groups_[c].size() != fleet_.classes[c].kinds.size())
      throw std::invalid_argument("fleet service: class '" + fleet_.classes[c].name + "': one group per kind");
    std::vector<double> split_loads;
    for (const auto& sp : fleet_.classes[c].splits) split_loads.push_back(sp.load_qps);
    auto state = std::make_unique<ClassState>(std::move(split_loads));
    state->rng.seed(seed + c);
    state->routed.assign(groups_[c].size(), 0);
    state->tables = std::make_shared<const core::FleetClassTables>(fleet_.classes[c]);
    state->splits = fleet_.classes[c].splits;
    for (const auto& k : fleet_.classes[c].kinds) state->counts.push_back(k.workers);
    classes_.push_back(std::move(state));
  }
}

int FleetService::pick_kind(const std::vector<double>& weights, double u) {
  double sum = 0;
  int last = -1;
  for (std::size_t k = 0; k < weights.size(); ++k) {
    if (weights[k] <= 0) continue;
    last = static_cast<int>(k);
    sum += weights[k];
    if (u < sum) return last;
  }
  return last;  // rounding: the sum fell a hair short of 1
}

int FleetService::route(std::size_t c) {
  ClassState& s = *classes_[c];
  std::lock_guard<std::mutex> lock(s.mu);
  const std::int64_t now_us = clock_.now_us();
  follow_counts(c, now_us);
  const auto& split = s.splits[static_cast<std::size_t>(s.split.on_arrival(now_us))];
  const int k = pick_kind(split.weights, std::uniform_real_distribution<double>(0, 1)(s.rng));
  ++s.routed[static_cast<std::size_t>(k)];
  return k;
}

void FleetService::follow_counts(std::size_t c, std::int64_t now_us) {
  ClassState& s = *classes_[c];
  if (groups_[c].size() < 2) return;  // one kind: nothing to split
  if (s.counts_checked_us >= 0 && now_us - s.counts_checked_us < 100'000) return;
  s.counts_checked_us = now_us;
  std::vector<int> counts;
  for (frontend::QueryService* g : groups_[c]) {
    counts.push_back(g->workers_up());
    if (counts.back() < 0) return;  // not known: the file's split stays
  }
  if (counts == s.counts) return;
  const auto& cl = *s.tables;
  const core::ClassResplit r = core::resplit_for_counts(cl, counts);
  std::string up;
  for (std::size_t k = 0; k < counts.size(); ++k)
    up += (k ? ", " : "") + cl.kinds[k].kind + " " + std::to_string(counts[k]);
  if (r.searched || r.fallback.empty()) {
    const auto& now = r.splits[static_cast<std::size_t>(std::max(0, s.split.current()))];
    std::string weights;
    for (std::size_t k = 0; k < now.weights.size(); ++k) weights += (k ? " / " : "") + number_text(now.weights[k]);
    std::string was;
    if (r.searched) {
      const auto& kept = r.file_weights[static_cast<std::size_t>(std::max(0, s.split.current()))];
      char text[160];
      std::snprintf(text, sizeof text, ", re-searched for these counts (the file's weights on them: %.4f, %.4f)",
                    kept.accuracy, kept.violation_rate);
      was = text;
    }
    log::info("class '%s': workers up %s: split %s at %g qps (expected accuracy %.4f, violation %.4f)%s",
              cl.name.c_str(), up.c_str(), weights.c_str(), now.load_qps, now.accuracy, now.violation_rate,
              was.c_str());
  } else if (!s.fallback_logged) {
    s.fallback_logged = true;
    log::warn("class '%s': workers up %s: keeping the file's split weights: %s", cl.name.c_str(), up.c_str(),
              r.fallback.c_str());
  }
  s.splits = r.splits;
  s.counts = std::move(counts);
}

void FleetService::replace_tables(const core::FleetTables& next) {
  for (std::size_t c = 0; c < classes_.size(); ++c) {
    auto tables = std::make_shared<const core::FleetClassTables>(next.classes.at(c));
    std::vector<double> split_loads;
    for (const auto& sp : tables->splits) split_loads.push_back(sp.load_qps);
    ClassState& s = *classes_[c];
    std::lock_guard<std::mutex> lock(s.mu);
    s.tables = std::move(tables);
    s.split = core::SplitChooser(std::move(split_loads));
    s.splits = s.tables->splits;
    s.counts.clear();
    for (const auto& k : s.tables->kinds) s.counts.push_back(k.workers);
    s.counts_checked_us = -1;  // the counts up, read at the next arrival
    s.fallback_logged = false;
  }
}

void FleetService::serve_class_async(const std::string& query_class, std::string input, std::int64_t waited_us,
                                     std::function<void(frontend::Answer)> done) {
  int c = 0;
  if (!query_class.empty()) {
    c = fleet_.class_index(query_class);
    if (c < 0) {
      {
        std::lock_guard<std::mutex> lock(unknown_mu_);
        ++unknown_class_;
      }
      std::string known;
      for (const auto& cl : fleet_.classes) known += (known.empty() ? "" : ", ") + cl.name;
      frontend::Answer a;
      a.http_status = 400;
      a.body = "unknown class '" + query_class + "' (X-Lull-Class); this fleet serves " + known;
      return done(std::move(a));
    }
  }
  const auto cls = static_cast<std::size_t>(c);
  groups_[cls][static_cast<std::size_t>(route(cls))]->serve_async(std::move(input), waited_us, std::move(done));
}

void FleetService::serve_async(std::string input, std::int64_t waited_us, std::function<void(frontend::Answer)> done) {
  serve_class_async("", std::move(input), waited_us, std::move(done));
}

frontend::Answer FleetService::serve(std::string input) {
  auto answer = std::make_shared<std::promise<frontend::Answer>>();
  auto future = answer->get_future();
  serve_async(std::move(input), 0, [answer](frontend::Answer a) { answer->set_value(std::move(a)); });
  return future.get();
}

bool FleetService::healthy() {
  for (const auto& kinds : groups_) {
    bool any = false;
    for (frontend::QueryService* g : kinds) any = any || g->healthy();
    if (!any) return false;
  }
  return true;
}

std::string FleetService::metrics_text() {
  std::vector<GroupMetrics> groups;
  for (std::size_t c = 0; c < groups_.size(); ++c)
    for (std::size_t k = 0; k < groups_[c].size(); ++k)
      groups.push_back({"class=\"" + net::prom::escape(fleet_.classes[c].name) + "\",kind=\"" +
                            net::prom::escape(fleet_.classes[c].kinds[k].kind) + "\"",
                        groups_[c][k]->metrics_text()});
  std::string out = merge_group_metrics(groups);
  std::string load, weight, routed;
  for (std::size_t c = 0; c < groups_.size(); ++c) {
    const auto& cl = fleet_.classes[c];
    ClassState& s = *classes_[c];
    std::lock_guard<std::mutex> lock(s.mu);
    const double qps = s.split.estimate_qps();  // as of the class's latest arrival
    const std::string name = "class=\"" + net::prom::escape(cl.name) + "\"";
    net::prom::sample(load, "lull_fleet_class_load_queries_per_second{" + name + "}", qps);
    const auto& split = s.splits[static_cast<std::size_t>(std::max(0, s.split.current()))];
    for (std::size_t k = 0; k < cl.kinds.size(); ++k) {
      const std::string labels = "{" + name + ",kind=\"" + net::prom::escape(cl.kinds[k].kind) + "\"}";
      net::prom::sample(weight, "lull_fleet_kind_weight" + labels, split.weights[k]);
      net::prom::sample(routed, "lull_fleet_routed_queries_total" + labels, static_cast<double>(s.routed[k]));
    }
  }
  net::prom::family(out, "lull_fleet_class_load_queries_per_second", "gauge",
                    "Each class's arrival rate as the front end measures it (its split is chosen by it).");
  out += load;
  net::prom::family(out, "lull_fleet_kind_weight", "gauge",
                    "The share of a class's queries each kind gets at the class's load now.");
  out += weight;
  net::prom::family(out, "lull_fleet_routed_queries_total", "counter", "Queries of each class sent to each kind.");
  out += routed;
  std::uint64_t unknown = 0;
  {
    std::lock_guard<std::mutex> lock(unknown_mu_);
    unknown = unknown_class_;
  }
  net::prom::family(out, "lull_fleet_unknown_class_total", "counter",
                    "Queries refused (400) for naming a class the fleet does not serve.");
  net::prom::sample(out, "lull_fleet_unknown_class_total", static_cast<double>(unknown));
  return out + frontend::render_build_info() + render_process_metrics();
}

}  // namespace lull::session
