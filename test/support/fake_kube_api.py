#!/usr/bin/python3
"""A fake Kubernetes API server for the Kubernetes worker pool's tests.

No cluster can run on the test machine, so lull's Kubernetes actuator is
tested against this: one Deployment with its scale subresource, its pods and
the EndpointSlices of the Service in front of them, answering only the calls
the actuator makes, and checking each request as the Kubernetes API documents
it. Anything else is refused the way the API server refuses it (a Status
object), so a request that a real server would reject fails the test too.
The rules (paths, patch types, Status reasons and messages, the scale-down
order) are test/support/fake_kube_rules.json, which the in-process fake
(test/support/fake_kubernetes_api.h) reads too:

  Authorization: Bearer TOKEN           else 401 Unauthorized
  GET   /apis/apps/v1/namespaces/NS/deployments/NAME/scale
        -> {"kind": "Scale", "apiVersion": "autoscaling/v1", "spec": {"replicas": N}, "status": {...}}
  PATCH /apis/apps/v1/namespaces/NS/deployments/NAME/scale
        Content-Type: a patch type (application/merge-patch+json, ...strategic-merge-patch+json,
        json-patch+json, apply-patch+yaml) else 415; only merge/strategic-merge are implemented
        here; body {"spec": {"replicas": N >= 0}} else 422 Invalid (400 BadRequest: not JSON)
  PATCH /api/v1/namespaces/NS/pods/POD  (merge patch of metadata.annotations) else 404 NotFound
  GET   /apis/discovery.k8s.io/v1/namespaces/NS/endpointslices?labelSelector=kubernetes.io/service-name=SVC
        -> {"kind": "EndpointSliceList", "items": [one EndpointSlice with every pod]}

Scaling down removes pods as a ReplicaSet chooses: not-ready ones first, then
the lowest controller.kubernetes.io/pod-deletion-cost, then the newest.

Test controls (no authorization, outside the API's paths):
  --fail METHOD:STATUS:COUNT   the next COUNT METHOD requests answer STATUS (409 Conflict,
                               500 InternalError, ...) with a Status body; repeatable
  --start-not-ready N          a new pod is not ready in its first N listings of the endpoints
  GET  /_fake/log              every API request so far, one line each:
                               "METHOD PATH|CONTENT_TYPE|BODY"
  GET  /_fake/answers          every API request's answer so far, one line each: "STATUS METHOD PATH"
  POST /_fake/lose-pod?name=P  the pod vanishes (a node failure); the Deployment replaces it
  POST /_fake/faults?method=M&status=S&count=N[&path=SUFFIX]
                               queue: the next N requests with method M (and a path ending in
                               SUFFIX, e.g. /scale) answer S with the Status body the API sends
                               (409 Conflict, 500 InternalError, ...); count=-1: until cleared
  POST /_fake/faults?clear=1   drop every queued fault
  POST /_fake/hang?seconds=S&count=N[&method=M]
                               a hanging API server: the next N API requests (with method M;
                               count=-1: until cleared) are logged, then answered only after S
                               seconds (S large: never, as far as the client waits)
  POST /_fake/hang?clear=1     answer at once again (requests already waiting keep waiting)
  POST /_fake/kill-pod?name=P[&restart_after_s=S]
                               running pods: SIGKILL the pod's process (as an OOM kill); the
                               kubelet restarts the container after S (--restart-delay-s; the
                               Deployment's restartPolicy: Always); meanwhile its probe fails
  POST /_fake/restart-pod?name=P  restart a killed pod's container now (tests: no waiting)

Several Deployments (a fleet's groups, docs/operators-guide.md): --deployment and
--service repeated, paired in order (and --run-command, one per Deployment or
one for all); each has its own pods (the Kth Deployment's numbered from
K*100, its own loopback addresses) and answers at its own paths, and the
log, answers, faults and hangs are the server's, one for all.

Pods that run (fake_kube_pods.py): with --run-command CMD every pod is a
process on its own loopback IP (127.0.1.K), started when the pod is created
and stopped (SIGTERM) when a scale-down removes it; its endpoint is ready only
while its readiness probe (GET /ping; --readiness-path) passes, and a removed pod stays listed
as terminating until its process has exited. The EndpointSlice then names one
port, "http" (the pool uses it for the management API too). --start-not-ready
does not apply: the probe decides.
"""
import argparse
import json
import os
import signal
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from fake_kube_pods import PodRunner

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_kube_rules.json")) as rules_file:
    RULES = json.load(rules_file)
PATCH_TYPES = tuple(RULES["patch_types"])
PATCH_TYPES_IMPLEMENTED = tuple(RULES["patch_types_implemented"])
COST = RULES["deletion_cost"]
# Each scale_down_order key of a pod: the pod that sorts first goes first.
ORDER_KEYS = {"not_ready": lambda p: p["ready"], "lowest_deletion_cost": lambda p: int(p["annotations"].get(COST, "0")),
              "newest": lambda p: -p["seq"]}
SCALE_DOWN_KEY = [ORDER_KEYS[k] for k in RULES["scale_down_order"]]


def rule_path(name, namespace, deployment=""):
    return RULES["paths"][name].replace("{namespace}", namespace).replace("{deployment}", deployment)


class Cluster:
    """One Deployment, its pods and its Service; `first` (the server's first Deployment) holds what they share."""

    def __init__(self, args, deployment, service, run_command, seq_base=0, first=None):
        self.args = args
        self.deployment, self.service = deployment, service
        self.pods = []  # {"name", "ip", "ready", "annotations", "seq"}; running: "proc"
        self.terminating = []  # running: pods scaled away whose processes have not exited yet
        self.next_seq = seq_base
        self.runner = PodRunner(run_command, args.run_log_dir, probe_path=args.readiness_path) if run_command else None
        if first:
            self.lock, self.log, self.answers, self.failures, self.hangs = \
                first.lock, first.log, first.answers, first.failures, first.hangs
        else:
            self.lock = threading.Lock()
            self.log = []
            self.answers = []
            self.failures = []  # [method, status, count (-1: until cleared), path suffix]
            self.hangs = []  # [method ("": any), seconds, count (-1: until cleared)]
            for spec in args.fail:
                method, status, count = spec.split(":")
                self.failures.append([method, int(status), int(count), ""])
        for _ in range(args.replicas):
            self.add_pod(ready=True)

    def add_pod(self, ready):
        seq = self.next_seq
        self.next_seq += 1
        pod = {"name": "%s-%d" % (self.deployment, seq), "ip": "10.0.0.%d" % (seq + 1),
               "ready": ready, "annotations": {}, "seq": seq,
               "lists_left": 0 if ready else self.args.start_not_ready}
        if self.runner:
            pod["ip"] = self.runner.address(seq)
            pod["ready"] = False  # until its readiness probe passes
            self.runner.start(pod)
        self.pods.append(pod)

    def scale_to(self, replicas):
        while len(self.pods) < replicas:
            self.add_pod(ready=self.args.start_not_ready == 0)
        while len(self.pods) > replicas:
            victim = min(self.pods, key=lambda p: tuple(k(p) for k in SCALE_DOWN_KEY))
            self.pods.remove(victim)
            if self.runner:
                self.runner.terminate(victim)
                self.terminating.append(victim)

    def lose(self, name):
        for p in [p for p in self.pods if p["name"] == name]:
            self.pods.remove(p)
            if self.runner:
                self.runner.kill(p)
        self.add_pod(ready=self.args.start_not_ready == 0)

    def kubelet(self, interval_s):
        """Running pods: readiness probes, and terminating pods leave once exited (its own thread)."""
        while True:
            with self.lock:
                pods = list(self.pods)
            ready = {p["name"]: self.runner.probe(p) for p in pods}  # HTTP outside the lock
            with self.lock:
                for p in self.pods:
                    p["ready"] = ready.get(p["name"], p["ready"])
                self.terminating = [p for p in self.terminating if not self.runner.exited(p)]
                self.restart_dead()
            time.sleep(interval_s)

    def take_failure(self, method, path):
        for f in self.failures:
            if f[0] == method and f[2] != 0 and path.endswith(f[3]):
                if f[2] > 0:
                    f[2] -= 1
                return f[1]
        return None

    def take_hang(self, method):
        for h in self.hangs:
            if h[0] in ("", method) and h[2] != 0:
                if h[2] > 0:
                    h[2] -= 1
                return h[1]
        return 0

    def kill(self, name, restart_after_s):
        """The pod's process is SIGKILLed; the kubelet restarts it (restartPolicy: Always) after the delay."""
        for p in self.pods:
            if p["name"] == name and self.runner:
                self.runner.kill(p)
                p["restart_at"] = time.monotonic() + restart_after_s
                return True
        return False

    def restart_now(self, name):
        for p in self.pods:
            if p["name"] == name and "restart_at" in p:
                p["restart_at"] = time.monotonic()
                return True
        return False

    def restart_dead(self):
        """The kubelet's part: a running pod whose container exited is restarted when its delay is over."""
        for p in self.pods:
            if p["proc"].poll() is None:
                continue
            p.setdefault("restart_at", time.monotonic() + self.args.restart_delay_s)
            if time.monotonic() >= p["restart_at"]:
                p.pop("restart_at")
                p["restarts"] = p.get("restarts", 0) + 1
                self.runner.start(p)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _send(self, code, obj):
        if getattr(self, "api_request", None):  # under the cluster's lock
            self.server.cluster.answers.append("%d %s" % (code, self.api_request))
            self.api_request = None
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _status(self, code, message=None):
        known = RULES["statuses"].get(str(code), {"reason": "Unknown", "message": "Unknown"})
        reason = known["reason"]
        if message is None:
            message = known["message"].replace("{deployment}", self.server.cluster.deployment)
        self._send(code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                          "message": message, "reason": reason, "code": code})

    @staticmethod
    def _scale(c):
        return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {"name": c.deployment, "namespace": c.args.namespace},
                "spec": {"replicas": len(c.pods)},
                "status": {"replicas": len(c.pods), "selector": "app=%s" % c.deployment}}

    @staticmethod
    def _slices(c):
        endpoints = []
        for p in c.pods:
            conditions = {"serving": p["ready"], "terminating": False}
            if not p["ready"] or p["seq"] % 2:  # "ready" absent on some: the API says absent means ready
                conditions["ready"] = p["ready"]
            endpoints.append({"addresses": [p["ip"]], "conditions": conditions,
                              "targetRef": {"kind": "Pod", "name": p["name"], "namespace": c.args.namespace}})
            if not c.runner:
                p["lists_left"] = max(0, p["lists_left"] - 1)
                p["ready"] = p["lists_left"] == 0  # ready from the listing after its Nth on
        for p in c.terminating:  # still running: ready false, serving while its probe passed
            endpoints.append({"addresses": [p["ip"]],
                              "conditions": {"ready": False, "serving": p["ready"], "terminating": True},
                              "targetRef": {"kind": "Pod", "name": p["name"], "namespace": c.args.namespace}})
        ports = [{"name": "http", "port": c.runner.port, "protocol": "TCP"}] if c.runner else \
                [dict(port, protocol="TCP") for port in RULES["ports"]]
        return {"kind": "EndpointSliceList", "apiVersion": "discovery.k8s.io/v1", "metadata": {},
                "items": [{"kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1",
                           "metadata": {"name": c.service + "-abc12",
                                        "labels": {RULES["paths"]["service_selector"].rstrip("="): c.service}},
                           "addressType": "IPv4", "endpoints": endpoints or None, "ports": ports}]}

    def _handle(self, method):
        c = self.server.cluster
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        if url.path.startswith("/_fake/"):
            with c.lock:
                if url.path in ("/_fake/log", "/_fake/answers"):
                    lines = c.log if url.path == "/_fake/log" else c.answers
                    data = "".join(line + "\n" for line in lines).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    return self.wfile.write(data)
                query = parse_qs(url.query)
                name = query.get("name", [""])[0]
                owner = next((d for d in self.server.clusters if any(p["name"] == name for p in d.pods)), c)
                if url.path == "/_fake/lose-pod":
                    owner.lose(name)
                    return self._send(200, {})
                if url.path == "/_fake/kill-pod":
                    delay = float(query.get("restart_after_s", [c.args.restart_delay_s])[0])
                    return self._send(200, {}) if owner.kill(name, delay) else self._status(404)
                if url.path == "/_fake/restart-pod":
                    return self._send(200, {}) if owner.restart_now(name) else self._status(404)
                if url.path == "/_fake/hang":
                    if "clear" in query:
                        c.hangs.clear()
                        return self._send(200, {})
                    try:
                        c.hangs.append([query.get("method", [""])[0], float(query["seconds"][0]),
                                        int(query["count"][0])])
                    except (KeyError, ValueError):
                        return self._status(400, "hang: seconds and count are required")
                    return self._send(200, {})
                if url.path == "/_fake/faults":
                    if "clear" in query:
                        c.failures.clear()
                        return self._send(200, {})
                    try:
                        c.failures.append([query["method"][0], int(query["status"][0]), int(query["count"][0]),
                                           query.get("path", [""])[0]])
                    except (KeyError, ValueError):
                        return self._status(400, "faults: method, status and count are required")
                    return self._send(200, {})
            return self._status(404)
        ns = c.args.namespace
        ctype = self.headers.get("Content-Type") or ""
        with c.lock:
            c.log.append("%s %s|%s|%s" % (method, self.path, ctype if method == "PATCH" else "", body))
            hang_s = c.take_hang(method)
        if hang_s > 0:  # outside the lock: other requests are answered meanwhile
            time.sleep(hang_s)
        with c.lock:
            self.api_request = "%s %s" % (method, url.path)
            if self.headers.get("Authorization") != "Bearer " + c.args.token:
                return self._status(401)
            failure = c.take_failure(method, url.path)
            if failure:
                return self._status(failure)
            scales = {rule_path("scale", ns, d.deployment): d for d in self.server.clusters}
            dep = scales.get(url.path)
            if dep and method == "GET":
                return self._send(200, self._scale(dep))
            if method == "PATCH" and (dep or url.path.startswith(rule_path("pod", ns))):
                if ctype.split(";")[0].strip() not in PATCH_TYPES:
                    return self._status(415, "the body of the request was in an unknown format - accepted media "
                                             "types include: " + ", ".join(PATCH_TYPES))
                if ctype.split(";")[0].strip() not in PATCH_TYPES_IMPLEMENTED:
                    return self._status(415, "this fake implements merge patches only")
                try:
                    patch = json.loads(body)
                except ValueError:
                    return self._status(400, "error decoding patch: not JSON")
                if dep:
                    replicas = (patch.get("spec") or {}).get("replicas") if isinstance(patch, dict) else None
                    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0 or set(patch) != {"spec"}:
                        return self._status(422, 'Scale.autoscaling "%s" is invalid: spec.replicas' % dep.deployment)
                    dep.scale_to(replicas)
                    return self._send(200, self._scale(dep))
                name = url.path.rsplit("/", 1)[1]
                pod = next((p for d in self.server.clusters for p in d.pods if p["name"] == name), None)
                if pod is None:
                    return self._status(404, 'pods "%s" not found' % name)
                annotations = ((patch.get("metadata") or {}).get("annotations")) if isinstance(patch, dict) else None
                if not isinstance(annotations, dict) or set(patch) != {"metadata"}:
                    return self._status(422, 'Pod "%s" is invalid: metadata.annotations' % name)
                pod["annotations"].update(annotations)
                return self._send(200, {"kind": "Pod", "apiVersion": "v1",
                                        "metadata": {"name": name, "annotations": pod["annotations"]}})
            if url.path == rule_path("endpoint_slices", ns) and method == "GET":
                selector = parse_qs(url.query).get("labelSelector", [""])[0]
                svc = next((d for d in self.server.clusters if selector == RULES["paths"]["service_selector"] + d.service),
                           None)
                if svc is None:
                    return self._send(200, {"kind": "EndpointSliceList", "items": []})
                return self._send(200, self._slices(svc))
            return self._status(404, "the server could not find the requested resource")

    def do_GET(self):
        self._handle("GET")

    def do_PATCH(self):
        self._handle("PATCH")

    def do_POST(self):
        self._handle("POST")

    def do_PUT(self):
        self._handle("PUT")

    def do_DELETE(self):
        self._handle("DELETE")


def main():
    ap = argparse.ArgumentParser(description="fake Kubernetes API server (tests)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--token", required=True)
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--namespace", default="lull")
    ap.add_argument("--deployment", action="append", help="repeatable: several Deployments (default: models)")
    ap.add_argument("--service", action="append", help="the Kth --deployment's Service (default: models)")
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--start-not-ready", type=int, default=0)
    ap.add_argument("--fail", action="append", default=[])
    ap.add_argument("--run-command", action="append",
                    help="run each pod: a command with {host} (the pod's IP) and {port}; one per --deployment, or one")
    ap.add_argument("--run-log-dir", help="each running pod's output goes to DIR/POD.log")
    ap.add_argument("--restart-delay-s", type=float, default=0.5,
                    help="running pods: a container that died is restarted after this")
    ap.add_argument("--readiness-path", default="/ping",
                    help="running pods' readiness probe (/v2/health/ready for Open Inference Protocol servers)")
    ap.add_argument("--probe-interval-s", type=float, default=0.2, help="running pods' readiness probe period")
    args = ap.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    deployments, services, commands = args.deployment or ["models"], args.service or ["models"], args.run_command or [None]
    if len(services) != len(deployments) or len(commands) not in (1, len(deployments)):
        ap.error("--service (and --run-command, unless one) once per --deployment")
    server.clusters = []
    for i, (dep, svc) in enumerate(zip(deployments, services)):
        cmd = commands[i if len(commands) > 1 else 0]
        first = server.clusters[0] if server.clusters else None
        server.clusters.append(Cluster(args, dep, svc, cmd, seq_base=100 * i, first=first))
    server.cluster = server.clusters[0]
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % server.server_address[1])
        os.replace(tmp, args.port_file)
    print("fake-kube-api: https" if args.tls_cert else "fake-kube-api: http", server.server_address[1],
          file=sys.stderr, flush=True)
    for cluster in server.clusters:
        if cluster.runner:
            threading.Thread(target=cluster.kubelet, args=(args.probe_interval_s,), daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so that the pods' processes are stopped
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        for cluster in server.clusters:
            if cluster.runner:
                with cluster.lock:
                    cluster.runner.stop_all(cluster.pods + cluster.terminating)


if __name__ == "__main__":
    main()
