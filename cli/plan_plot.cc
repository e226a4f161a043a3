#include "cli/plan_plot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace lull::cli {
namespace {

// argv[1]: plan JSON, argv[2]: PNG. Saves to a temporary name, then renames.
const char* kScript = R"PY(
import json, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plan = json.load(open(sys.argv[1]))
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
title = f"{plan['task']}, SLO {plan['slo_ms']:g} ms, expected violation <= {plan['max_violation']:g}"
if "schedule" in plan:
    s = plan["schedule"]
    t = [w["start_s"] for w in s]
    end = t[-1] + plan["window_s"]
    left.step(t + [end], [w["load_qps"] for w in s] + [s[-1]["load_qps"]], where="post", color="tab:blue")
    left.set_xlabel("time (s)")
    left.set_ylabel("planned load (QPS)", color="tab:blue")
    twin = left.twinx()
    twin.step(t + [end], [w["workers"] for w in s] + [s[-1]["workers"]], where="post", color="tab:red")
    twin.set_ylabel("workers", color="tab:red")
    left.set_title(f"{plan['worker_seconds']:.0f} worker-seconds")
else:
    cap = [c for c in plan["capacity"] if c["max_load_qps"] > 0]
    left.plot([c["workers"] for c in cap], [c["max_load_qps"] for c in cap], "o-", label="highest load meeting the target")
    left.plot([plan["workers"]], [plan["load_qps"]], "r*", markersize=14, label=f"plan: {plan['workers']} workers")
    left.set_xlabel("workers")
    left.set_ylabel("load (QPS)")
    left.legend()
curve = plan["accuracy_by_workers"]
pts = curve["points"]
right.plot([p["workers"] for p in pts], [100 * p["expected_accuracy"] for p in pts], "-", color="tab:blue")
ok = [p for p in pts if p["meets_target"] == "yes"]
short = [p for p in pts if p["meets_target"] != "yes"]
right.plot([p["workers"] for p in ok], [100 * p["expected_accuracy"] for p in ok], "o", color="tab:blue",
           label="meets the target")
right.plot([p["workers"] for p in short], [100 * p["expected_accuracy"] for p in short], "o", mfc="none",
           color="tab:blue", label="misses it")
right.set_xlabel("workers")
right.set_ylabel(f"expected accuracy (%) at {curve['load_qps']:g} QPS")
right.legend()
fig.suptitle(title)
fig.tight_layout()
tmp = sys.argv[2] + ".tmp.png"
fig.savefig(tmp, dpi=110)
os.replace(tmp, sys.argv[2])
)PY";

// Debian's python (where python3-matplotlib installs) before one on PATH.
std::string python() { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

}  // namespace

void write_plan_plot(const std::string& plan_json_text, const std::string& png_path) {
  char json_path[] = "/tmp/lull_plan_XXXXXX";
  const int fd = mkstemp(json_path);
  if (fd < 0) throw std::runtime_error("--plot: cannot create a temporary file");
  close(fd);
  std::ofstream(json_path) << plan_json_text;
  const std::string err_path = std::string(json_path) + ".err";
  const std::string py = python();
  std::vector<std::string> args = {py, "-c", kScript, json_path, png_path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, py.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (rc == 0) waitpid(pid, &status, 0);
  std::ifstream err(err_path);
  std::string line, last;
  while (std::getline(err, line))
    if (!line.empty()) last = line;
  std::remove(json_path);
  std::remove(err_path.c_str());
  if (rc != 0) throw std::runtime_error("--plot: cannot run " + py + " (matplotlib plots the plan)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("--plot " + png_path + ": " + py + " failed: " + last);
}

}  // namespace lull::cli
