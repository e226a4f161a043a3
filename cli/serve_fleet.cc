#include "cli/serve_fleet.h"

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/fleet_kubernetes.h"
#include "cli/output_file.h"
#include "compiler/online/drift_recompile.h"
#include "runtime/core/fleet_tables.h"
#include "runtime/manager/fleet_capacity.h"
#include "runtime/net/json_value.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"
#include "schema/bounded_file.h"
#include "schema/fleet_file.h"

namespace lull::cli {

namespace {

// One group's entry: its fixed servers, or (--autoscale) the command its
// local pool runs ('' : --worker-command).
struct GroupEntry {
  std::vector<std::string> urls;
  std::string command;
};
using Groups = std::map<std::string, std::map<std::string, GroupEntry>>;

// The file as class -> kind -> entry; UsageError for any other shape. A
// group is a list of URLs, or {"servers": [URLs], "command": "CMD {port}"}.
Groups read_servers_file(const std::string& path) {
  const std::string flag = "--fleet-servers " + path;
  std::string text;
  try {
    text = read_bounded_file(path, FileKind::kSettings);
  } catch (const FileReadError& e) {
    throw UsageError(std::string("--fleet-servers ") + e.what());
  }
  net::JsonValue root;
  const std::string shape =
      ": not {\"CLASS\": {\"KIND\": [\"http://HOST:PORT\", ...] or {\"servers\": [...], \"command\": \"...\"}}, ...}";
  if (!net::parse_json(text, &root) || !root.has_struct_value()) throw UsageError(flag + shape);
  Groups out;
  for (const auto& [cls, kinds] : root.struct_value().fields()) {
    if (!kinds.has_struct_value()) throw UsageError(flag + ": class '" + cls + "'" + shape);
    for (const auto& [kind, group] : kinds.struct_value().fields()) {
      const std::string at = flag + ": class '" + cls + "', kind '" + kind + "'";
      GroupEntry& entry = out[cls][kind];
      const net::JsonValue* urls = &group;
      if (group.has_struct_value()) {
        urls = nullptr;
        for (const auto& [field, value] : group.struct_value().fields()) {
          if (field == "servers") {
            urls = &value;
          } else if (field == "command") {
            if (!value.has_string_value() || value.string_value().empty())
              throw UsageError(at + ": command: not a non-empty string");
            entry.command = value.string_value();
          } else {
            throw UsageError(at + ": unknown field '" + field + "' (servers, command)");
          }
        }
        if (!urls) continue;
      }
      if (!urls->has_list_value()) throw UsageError(at + shape);
      for (const auto& u : urls->list_value().values()) {
        if (!u.has_string_value()) throw UsageError(at + ": a URL that is not a string");
        entry.urls.push_back(u.string_value());
      }
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

server::FleetSpec fleet_spec(const std::string& policies, const std::string& servers_file,
                             const std::string& recompile_out, std::uint64_t seed, bool autoscale) {
  server::FleetSpec spec;
  spec.seed = seed;
  spec.tables = core::load_fleet_tables(policies);
  const core::FleetTables& fleet = spec.tables;
  const std::string flag = "--fleet-servers " + servers_file;
  const Groups servers = read_servers_file(servers_file);
  std::vector<std::string> class_names;
  for (const auto& c : fleet.classes) class_names.push_back(c.name);
  for (const auto& [cls, kinds] : servers) {
    const int c = fleet.class_index(cls);
    if (c < 0)
      throw UsageError(flag + ": class '" + cls + "' is not in the fleet (its classes: " + joined(class_names) + ")");
    std::vector<std::string> kind_names;
    for (const auto& k : fleet.classes[static_cast<std::size_t>(c)].kinds) kind_names.push_back(k.kind);
    for (const auto& [kind, urls] : kinds)
      if (fleet.classes[static_cast<std::size_t>(c)].kind_index(kind) < 0)
        throw UsageError(flag + ": class '" + cls + "': kind '" + kind + "' is not one of its kinds (" +
                         joined(kind_names) + ")");
  }
  // --recompile-on-drift: each drifting kind's set replaced in one fleet,
  // written whole (atomically) after each recompilation.
  std::shared_ptr<schema::FleetPolicy> served;
  auto write_mu = std::make_shared<std::mutex>();
  if (!recompile_out.empty()) {
    check_binary_output(recompile_out, "--recompile-on-drift");
    served = std::make_shared<schema::FleetPolicy>(read_fleet_policy(policies));
  }
  for (std::size_t c = 0; c < fleet.classes.size(); ++c) {
    const auto& cl = fleet.classes[c];
    const auto found = servers.find(cl.name);
    if (found == servers.end() && !autoscale) throw UsageError(flag + ": class '" + cl.name + "' has no servers");
    const std::map<std::string, GroupEntry> no_entries;  // --autoscale: every group on --worker-command
    const auto& entries = found == servers.end() ? no_entries : found->second;
    std::vector<server::FleetGroupSpec> groups;
    for (std::size_t k = 0; k < cl.kinds.size(); ++k) {
      const auto& kind = cl.kinds[k];
      const std::string at = flag + ": class '" + cl.name + "', kind '" + kind.kind + "'";
      const auto entry = entries.find(kind.kind);
      const GroupEntry none;
      const GroupEntry& e = entry == entries.end() ? none : entry->second;
      server::FleetGroupSpec g;
      if (autoscale) {
        if (!e.urls.empty())
          throw UsageError(at + ": servers with --autoscale (the group's pool starts them; give \"command\")");
        g.autoscale.local.command = e.command;  // the rest: fleet_autoscale()
      } else {
        if (!e.command.empty()) throw UsageError(at + ": command: only with --autoscale");
        if (e.urls.size() != static_cast<std::size_t>(kind.workers))
          throw UsageError(at + ": " + std::to_string(e.urls.size()) + " servers; the fleet has " +
                           std::to_string(kind.workers) + " workers of this kind");
        std::string list;
        for (const auto& u : e.urls) list += (list.empty() ? "" : ",") + u;
        try {
          g.servers = torchserve::parse_worker_endpoints(list, "");
        } catch (const std::invalid_argument& ex) {
          throw UsageError(at + ": " + ex.what());
        }
      }
      int set_index = -1;
      for (std::size_t s = 0; s < kind.library.size(); ++s)
        if (kind.library[s].workers == kind.workers) set_index = static_cast<int>(s);
      g.table = kind.library.at(static_cast<std::size_t>(set_index));  // the fleet file's checks promise it
      if (kind.library.size() > 1) g.library = kind.library;
      if (served) {
        g.drift.out_path = recompile_out;
        // The kind's set for its count alone: one set recompiled, its bytes replace that set.
        *g.drift.served.add_sets() =
            served->classes(static_cast<int>(c)).kinds(static_cast<int>(k)).library().sets(set_index);
        g.drift.recompile = compiler::recompile_with_latencies;
        g.drift.write = [served, write_mu, recompile_out, c, k, set_index](const std::string& bytes) {
          std::lock_guard<std::mutex> lock(*write_mu);
          schema::PolicySet* set = served->mutable_classes(static_cast<int>(c))
                                       ->mutable_kinds(static_cast<int>(k))
                                       ->mutable_library()
                                       ->mutable_sets(set_index);
          if (!set->ParseFromString(bytes)) throw std::runtime_error("recompiled set: cannot parse its bytes");
          write_binary_output(recompile_out, fleet_policy_bytes(*served), "--recompile-on-drift");
        };
      }
      groups.push_back(std::move(g));
    }
    spec.groups.push_back(std::move(groups));
  }
  return spec;
}

void fleet_autoscale(server::FleetSpec& fleet, const server::AutoscaleSpec& base) {
  const auto& classes = fleet.tables.classes;
  int groups = 0;
  for (const auto& c : classes) groups += static_cast<int>(c.kinds.size());
  int index = 0;
  std::vector<FleetKubernetesGroup> kube;  // --worker-pool kubernetes: each group's Deployment
  for (std::size_t c = 0; c < classes.size(); ++c)
    for (std::size_t k = 0; k < classes[c].kinds.size(); ++k, ++index) {
      server::AutoscaleSpec& a = fleet.groups[c][k].autoscale;
      const std::string at =
          "--fleet-servers: class '" + classes[c].name + "', kind '" + classes[c].kinds[k].kind + "'";
      const std::string command = a.local.command.empty() ? base.local.command : a.local.command;
      if (base.pool == "kubernetes" && !a.local.command.empty())
        throw UsageError(at + ": command: only with --worker-pool local (a Deployment runs the kind's servers)");
      if (base.pool == "local" && command.empty())
        throw UsageError(at + ": no \"command\" for its pool, and no --worker-command");
      a = base;
      a.local.command = command;
      a.local.port_modulus = groups;  // several pools on one host, as shards: ports and IDs of their own
      a.local.port_residue = index;
      a.local.id_prefix = "local-g" + std::to_string(index) + "-";
      a.scaler.target = manager::group_target(base.scaler.target, classes[c]);
      a.scaler.initial_workers = classes[c].kinds[k].workers;
      if (base.pool == "kubernetes") kube.push_back({classes[c].name, classes[c].kinds[k].kind, &a.kubernetes});
    }
  name_fleet_deployments(kube);
}

std::string describe_fleet(const server::FleetSpec& fleet) {
  std::string out;
  for (const auto& c : fleet.tables.classes) {
    out += (out.empty() ? "" : "; ") + ("class '" + c.name + "' (SLO " + std::to_string(c.slo_us / 1000) + " ms):");
    for (std::size_t k = 0; k < c.kinds.size(); ++k)
      out += (k ? ", " : " ") + c.kinds[k].kind + " x" + std::to_string(c.kinds[k].workers);
  }
  return out;
}

}  // namespace lull::cli
