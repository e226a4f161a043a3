"""The report side shared by the scaling end-to-end scripts (autoscale_e2e.sh,
variants_e2e.sh, varscale_e2e.sh): each load phase's loadgen report as a row,
and a sample read from lull's /metrics text."""
import json
import re


def phase_rows(work, phases, base):
    """One row per "MULT:SECONDS" phase from WORK/phaseI.json."""
    rows = []
    for i, p in enumerate(phases):
        mult, secs = p.split(":")
        r = json.load(open(f"{work}/phase{i}.json"))
        rows.append(dict(phase=i, load=base * int(mult), seconds=int(secs), sent=r["sent"], ok=r["ok"],
                         http_5xx=r["http_5xx"], unanswered=r["unanswered"], violation=r["violation_rate"],
                         accuracy=r["accuracy_per_satisfied"], models=r.get("models", {})))
    return rows


def metric(metrics, name):
    """The value of the sample `name` (with its labels) in Prometheus text, or None."""
    m = re.search("^" + re.escape(name) + r" (\S+)$", metrics, re.M)
    return float(m.group(1)) if m else None


def no_loss_no_5xx(rows):
    return all(r["sent"] == r["ok"] and r["http_5xx"] == 0 and r["unanswered"] == 0 for r in rows)


def failed_batches(metrics):
    return sum(float(v) for v in re.findall(r'^lull_worker_batches_total\{[^}]*result="failed"\} (\S+)$', metrics, re.M))
