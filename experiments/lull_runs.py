"""Shared helpers for the experiments: the artifact's tasks (image, text),
compile policy sets and run `lull simulate` (both cached in build/experiments:
delete it after changing lull), and compute accuracy increases the way the
paper reports them (percentage points of accuracy per satisfied query, over the
points where every method's violation rate is below 5%)."""
import collections
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared"))
ARTIFACT = os.path.join(SHARED, "ramsis-artifact")
TWITTER = os.path.join(ARTIFACT, "twitter_04_25_norm.txt")
LULL = os.environ.get("LULL", os.path.join(ROOT, "build", "lull"))
WORK = os.environ.get("LULL_EXPERIMENT_WORK", os.path.join(ROOT, "build", "experiments"))
RESULTS = os.path.join(ROOT, "experiments", "results")
SCHEDULERS = ("lull", "jellyfish", "modelswitching")
VIOLATION_CUTOFF = 0.05

# A task of the artifact: its profiles and accuracy table, the models the
# experiments use, the SLOs the paper evaluates it under (the first is the
# default) and the paper's worker count for a constant load.
Task = collections.namedtuple("Task", "name profiles accuracy models slos workers")
TASKS = {
    # The 9 Pareto image models (mdp-spec), SLOs 150/300/500 ms, 60 workers.
    "image": Task("image", os.path.join(ARTIFACT, "profiles", "image_cloud_cpu"),
                  os.path.join(ARTIFACT, "image_accuracy.json"),
                  "shufflenet_v2_x0_5,mobilenet_v3_large,efficientnet_b0,efficientnet_b2,efficientnet_b3,"
                  "efficientnet_b4,efficientnet_v2_s,efficientnet_v2_m,efficientnet_v2_l", (150, 300, 500), 60),
    # All 5 BERT models of the artifact, SLOs 100/200/300 ms, 20 workers.
    "text": Task("text", os.path.join(ARTIFACT, "profiles", "text_cloud_cpu"),
                 os.path.join(ARTIFACT, "text_accuracy.json"),
                 "bert_tiny,bert_mini,bert_small,bert_medium,bert_base", (100, 200, 300), 20),
}


def add_task_argument(ap):
    ap.add_argument("--task", choices=sorted(TASKS), default="image",
                    help="the artifact's task (default image; its results keep their file names, "
                         "text results get a _text suffix)")


def result_name(stem, task):
    """experiments/results/<stem>.md for the image task, <stem>_text.md for text."""
    return os.path.join(RESULTS, stem if task == "image" else f"{stem}_{task}")


def check_inputs(task="image"):
    t = TASKS[task]
    for path in (LULL, t.profiles, t.accuracy, TWITTER):
        if not os.path.exists(path):
            sys.exit(f"missing {path} (build lull first; the artifact lives in ../shared)")
    os.makedirs(WORK, exist_ok=True)
    os.makedirs(RESULTS, exist_ok=True)


def compile_args(task, slo_ms, workers, loads):
    """The `lull compile` arguments shared by every experiment for one task."""
    t = TASKS[task]
    return [LULL, "compile", "--profiles", t.profiles, "--accuracy-percent", t.accuracy, "--slo-ms", str(slo_ms),
            "--workers", str(workers), "--load-qps", loads, "--models", t.models, "--device", "cpu"]


def policy_set(workers, loads="200:4000:200", batching="max", task="image", slo_ms=None):
    """Compiles (once) the policy set of `task` for `workers` at `slo_ms` (the
    task's first SLO by default: image 150 ms, text 100 ms)."""
    slo_ms = slo_ms or TASKS[task].slos[0]
    suffix = "" if batching == "max" else f"_{batching}"
    out = os.path.join(WORK, f"{task}_slo{slo_ms}_w{workers}_{loads.replace(':', '-')}{suffix}.pb")
    if not os.path.exists(out):
        print(f"compiling {out} ...", file=sys.stderr, flush=True)
        subprocess.run(compile_args(task, slo_ms, workers, loads) + ["--batching", batching, "--out", out],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def simulate(policies, workers, trace, scheduler="lull", latency="p95", seed=1, tag="", replay="hold", task="image"):
    """Runs `lull simulate` (cached under the policy file's name and the tag);
    replay="reference" is the reference simulator's trace replay and end of
    run (mdp-spec 8)."""
    stem = os.path.splitext(os.path.basename(policies))[0]
    out = os.path.join(WORK, f"sim_{stem}_{tag}_{workers}_{scheduler}_{latency}_{replay}_{seed}.json")
    if not os.path.exists(out):
        cmd = [LULL, "simulate", "--policies", policies, "--workers", str(workers), "--trace", trace,
               "--replay", replay, "--scheduler", scheduler, "--latency", latency, "--seed", str(seed), "--out", out]
        if latency == "sampled":
            cmd += ["--profiles", TASKS[task].profiles]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        r = json.load(f)
    assert r["dropped"] == 0 and r["completed"] + r["not_dispatched_at_end"] == r["queries"], f"queries lost in {out}"
    return r


def increases(rows, baseline):
    """rows: [{scheduler: result}], returns (average, highest, points) of lull's
    accuracy gain over `baseline` in percentage points, over the points where
    every method's violation rate is below the cutoff."""
    gains = [100 * (r["lull"]["accuracy_per_satisfied_query"] - r[baseline]["accuracy_per_satisfied_query"])
             for r in rows if all(r[s]["violation_rate"] < VIOLATION_CUTOFF for s in SCHEDULERS)]
    if not gains:
        return float("nan"), float("nan"), 0
    return sum(gains) / len(gains), max(gains), len(gains)


def dominance_line(rows, tolerance_points=0.1):
    """Whether lull's accuracy is at least each baseline's (within the
    tolerance) at every point where every method violates < 5%."""
    bad = []
    for i, r in enumerate(rows):
        if not all(r[s]["violation_rate"] < VIOLATION_CUTOFF for s in SCHEDULERS):
            continue
        for b in ("jellyfish", "modelswitching"):
            gap = 100 * (r[b]["accuracy_per_satisfied_query"] - r["lull"]["accuracy_per_satisfied_query"])
            if gap > tolerance_points:
                bad.append(f"point {i}: {b} ahead by {gap:.2f}")
    return ("lull >= both baselines (0.1-point tolerance) at every point below the 5% cutoff: "
            + ("yes" if not bad else "NO (" + "; ".join(bad) + ")"))


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def published_cell(value):
    return "—" if value is None else f"{value:.2f}"


def increase_lines(rows, published, over, label):
    """Markdown lines (and a printed summary) of lull's accuracy gains over each
    baseline next to the published figures (None: the paper has none for this
    configuration), plus the dominance check."""
    lines = ["", f"Accuracy increase of lull (points), over {over} where every method violates < 5%:", "",
             "| vs | average | highest | points | published average | published highest |", "|---|---|---|---|---|---|"]
    for b in ("jellyfish", "modelswitching"):
        avg, hi, n = increases(rows, b)
        pub_avg, pub_hi = published.get(b, (None, None))
        lines.append(f"| {b} | {avg:.2f} | {hi:.2f} | {n} | {published_cell(pub_avg)} | {published_cell(pub_hi)} |")
        print(f"{label}: lull vs {b}: average +{avg:.2f}, highest +{hi:.2f} points "
              f"(published {published_cell(pub_avg)} / {published_cell(pub_hi)})")
    lines += ["", dominance_line(rows)]
    print(lines[-1])
    return lines


def plot_schedulers(xs, rows, xlabel, title, path):
    """Accuracy per satisfied query and violation rate of every scheduler against xs."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for s, label in zip(SCHEDULERS, ("lull", "Jellyfish+", "ModelSwitching")):
        a1.plot(xs, [100 * r[s]["accuracy_per_satisfied_query"] for r in rows], "o-", label=label)
        a2.plot(xs, [100 * r[s]["violation_rate"] for r in rows], "o-", label=label)
    a1.set_xlabel(xlabel); a1.set_ylabel("accuracy per satisfied query (%)"); a1.legend()
    a2.set_xlabel(xlabel); a2.set_ylabel("SLO violation rate (%)"); a2.set_yscale("symlog", linthresh=0.1)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)

