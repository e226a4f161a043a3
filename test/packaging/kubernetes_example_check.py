#!/usr/bin/python3
"""The Kubernetes example holds what docs/operators-guide.md says it does.

kubectl cannot validate offline (even --dry-run=client asks an API server), so
this parses the YAML and checks the fields a user relies on: the policy
library on a volume (a ConfigMap is capped at 1 MiB), the model store
mounted, liveness and readiness probes and resources on every container (lull's
on its live and ready endpoints), and the image built by packaging/Containerfile.
Usage: kubernetes_example_check.py DOCS_KUBERNETES_DIR
"""
import sys
import yaml

docs = sys.argv[1]


def load(name):
    with open(f"{docs}/{name}") as f:
        return [d for d in yaml.safe_load_all(f) if d]


def deployment(objs, name):
    for o in objs:
        if o["kind"] == "Deployment" and o["metadata"]["name"] == name:
            return o["spec"]["template"]["spec"]
    sys.exit(f"no Deployment {name}")


def check(cond, what):
    if not cond:
        sys.exit(f"kubernetes example: {what}")


lull_objs, model_objs = load("lull.yaml"), load("model-servers.yaml")
claims = {o["metadata"]["name"] for o in lull_objs + model_objs if o["kind"] == "PersistentVolumeClaim"}
for objs, name, mount in ((lull_objs, "lull", "/policies"), (model_objs, "models", "/models")):
    pod = deployment(objs, name)
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for c in pod["containers"]:
        for probe in ("readinessProbe", "livenessProbe"):
            check(probe in c, f"{name}/{c['name']} has no {probe}")
        check("requests" in c.get("resources", {}), f"{name}/{c['name']} requests no resources")
        mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
        check(mount in mounts, f"{name}/{c['name']} does not mount {mount}")
        vol = volumes[mounts[mount]["name"]]
        check("configMap" not in vol, f"{mount} is a ConfigMap (1 MiB limit)")
        claim = vol.get("persistentVolumeClaim", {}).get("claimName")
        check(claim in claims, f"{mount}: claim {claim} is not defined")
lull_pod = deployment(lull_objs, "lull")
check(lull_pod["containers"][0]["image"] == "lull:latest", "lull's image is not lull:latest (packaging/Containerfile)")
check(lull_pod["containers"][0].get("imagePullPolicy") == "IfNotPresent",
      "lull's image is pulled by default (Always for :latest): a locally built image needs IfNotPresent")
# lull listens before its model pods are ready: it is live (never restarted
# while they load) and ready only once it can serve.
lull_c = lull_pod["containers"][0]
check("--wait-for-servers-s" in lull_c["args"], "lull does not wait for its model servers (--wait-for-servers-s)")
for probe, path in (("startupProbe", "/v2/health/live"), ("livenessProbe", "/v2/health/live"),
                    ("readinessProbe", "/v2/health/ready")):
    check(lull_c.get(probe, {}).get("httpGet", {}).get("path") == path, f"lull's {probe} is not on {path}")
namespaces = {o["metadata"]["name"] for o in lull_objs + model_objs if o["kind"] == "Namespace"}
for o in lull_objs + model_objs:
    ns = o["metadata"].get("namespace")
    check(o["kind"] == "Namespace" or ns in namespaces, f"{o['kind']} {o['metadata']['name']}: namespace {ns} not defined")
print("kubernetes example: ok")
