# lull from Python, notebook style: each "# %%" block is a cell; it also runs
# top to bottom as a script (CI does, test/python/).
#
#   PYTHONPATH=build/python /usr/bin/python3 docs/python-example.py [OUT_DIR]
#
# Compiles the shipped synthetic profile, reads the policies into numpy and
# draws one policy's heat map (queue length x slack -> model) into OUT_DIR
# (default: the temp folder, e.g. /tmp; docs/ holds the committed plot).

# %% Compile: the keyword arguments are `lull compile`'s flags.
import os
import sys
import tempfile

import matplotlib.pyplot as plt
import numpy as np

import lull

here = os.path.dirname(os.path.abspath(__file__))
# The profile beside the checkout's docs/, or where the package installs it
# (this file in PREFIX/share/doc/lull, the profiles in PREFIX/share/lull/profiles).
profiles = next(p for p in (os.path.join(here, "..", "profiles"), os.path.join(here, "..", "..", "lull", "profiles"))
                if os.path.isfile(os.path.join(p, "example-synthetic.json")))
work_dir = tempfile.TemporaryDirectory(prefix="lull-python-example-")  # removed at exit
out_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.gettempdir()  # where the plot goes
policy_file = os.path.join(work_dir.name, "example-synthetic.pb")
report = lull.compile(profiles=os.path.join(profiles, "example-synthetic.json"), slo_ms=100, workers=4,
                      load_qps="20:200:20", device="cpu", out=policy_file)
print("compiled %d policies in %.2f s" % (len(report["policies"]), report["total_seconds"]))

# %% Read the set: numpy arrays per policy.
policies = lull.read_policy_set(policy_file)
print("task %s, SLO %g ms, %d workers, models %s" % (policies.task, policies.slo_ms, policies.workers,
                                                      ", ".join(policies.models)))
print("load QPS  exp. accuracy  exp. violation")
for p in policies.policies:
    print("%8g  %13.4f  %14.2e" % (p.load_qps, p.expected["accuracy"], p.expected["violation_rate"]))

# %% Heat map of the policy for 100 QPS: which model serves at each (queue length, slack).
policy = policies.policy(100)
names = policies.models
fig, (ax_model, ax_load) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2]})
n_max = policy.model.shape[0] - 1
# Slack interval j spans [T_j, T_j+1); the last one is drawn up to the SLO.
edges_ms = np.append(policy.slack_ms, max(policies.slo_ms, policy.slack_ms[-1] + 1))
model = np.ma.masked_less(policy.model, 0)  # row n = 0: nothing to serve
cmap = plt.get_cmap("viridis", len(names))
mesh = ax_model.pcolormesh(edges_ms, np.arange(n_max + 2) - 0.5, model, cmap=cmap,
                           vmin=-0.5, vmax=len(names) - 0.5)
bar = fig.colorbar(mesh, ax=ax_model, ticks=range(len(names)))
bar.ax.set_yticklabels(["%s (%.2f)" % (m, a) for m, a in zip(names, policies.accuracy)])
ax_model.set_title("model served at %g QPS (%s batching)" % (policy.load_qps, policy.inputs["batching"].lower()))
ax_model.set_xlabel("slack of the earliest query (ms)")
ax_model.set_ylabel("queue length n")

# %% Beside it: the set's expected accuracy by load.
loads = [p.load_qps for p in policies.policies]
ax_load.plot(loads, [p.expected["accuracy"] for p in policies.policies], marker="o")
ax_load.axvline(policy.load_qps, color="grey", linestyle=":")
ax_load.set_xlabel("load (QPS)")
ax_load.set_ylabel("expected accuracy")
ax_load.set_title("expected accuracy by load")
fig.suptitle("%s: %d workers, SLO %g ms" % (policies.task, policies.workers, policies.slo_ms))
fig.tight_layout()
heatmap = os.path.join(out_dir, "python-policy-heatmap.png")
fig.savefig(heatmap, dpi=90)
print("wrote", heatmap)
