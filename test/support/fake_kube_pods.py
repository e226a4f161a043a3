"""Pods that run: the fake Kubernetes API server's Deployment made real on this machine.

fake_kube_api.py alone only keeps a list of pods, which is enough to test the
requests lull's Kubernetes pool sends. To run `lull serve --autoscale
--worker-pool kubernetes` end to end, each pod must also be a model server
that answers queries. With --run-command the fake starts one process per pod
(killed when the pod goes) and this file does the kubelet's part of it:

  - each pod has its own IP, as in a cluster: 127.0.1.K (all of 127.0.0.0/8 is
    loopback on Linux), and every pod's server listens on the same port, the
    one the Service's EndpointSlices name (port "http");
  - a readiness probe (GET /ping every --probe-interval-s, 200..399 passes,
    as Kubernetes' httpGet probe) decides the endpoint's `ready` condition;
  - a pod removed by a scale-down is `terminating` (ready false) and gets
    SIGTERM; it leaves the endpoints when its process has exited (SIGKILL
    after the grace period, as the kubelet does).

The command template gets {host} (the pod's IP) and {port}; it runs as
/bin/sh -c "exec COMMAND" in its own process group, its output appended to
LOG_DIR/POD.log.
"""
import os
import signal
import socket
import subprocess
import time
import urllib.request


def free_port():
    """A port free on every address now (the pods bind it on their own IPs)."""
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


class PodRunner:
    def __init__(self, command, log_dir, grace_s=10.0, probe_path="/ping"):
        self.command = command
        self.probe_path = probe_path
        self.log_dir = log_dir
        self.grace_s = grace_s
        self.port = free_port()
        if log_dir:
            os.makedirs(log_dir, exist_ok=True)

    @staticmethod
    def address(seq):
        if seq >= 254:
            raise ValueError("the fake runs at most 254 pods (one loopback address each)")
        return "127.0.1.%d" % (seq + 1)

    def start(self, pod):
        cmd = self.command.replace("{host}", pod["ip"]).replace("{port}", str(self.port))
        out = open(os.path.join(self.log_dir, pod["name"] + ".log"), "ab") if self.log_dir else subprocess.DEVNULL
        pod["proc"] = subprocess.Popen(["/bin/sh", "-c", "exec " + cmd], stdin=subprocess.DEVNULL, stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        if out is not subprocess.DEVNULL:
            out.close()

    @staticmethod
    def signal(pod, sig):
        try:
            os.killpg(pod["proc"].pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def terminate(self, pod):
        """The pod is deleted: SIGTERM now, SIGKILL once its grace period is over (reap())."""
        pod["terminating_since"] = time.monotonic()
        self.signal(pod, signal.SIGTERM)

    def kill(self, pod):
        self.signal(pod, signal.SIGKILL)
        pod["proc"].wait()

    def exited(self, pod):
        """True once the pod's process has exited; SIGKILLs it past the grace period."""
        if pod["proc"].poll() is not None:
            return True
        if time.monotonic() - pod["terminating_since"] > self.grace_s:
            self.signal(pod, signal.SIGKILL)
        return False

    def probe(self, pod):
        """The readiness probe: GET probe_path (/ping) answered 200..399 within a second."""
        if pod["proc"].poll() is not None:
            return False
        try:
            with urllib.request.urlopen("http://%s:%d%s" % (pod["ip"], self.port, self.probe_path), timeout=1) as r:
                return 200 <= r.status < 400
        except OSError:  # refused, timed out, or an HTTP error status
            return False

    def stop_all(self, pods):
        for p in pods:
            self.signal(p, signal.SIGTERM)
        end = time.monotonic() + 3
        for p in pods:
            try:
                p["proc"].wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.kill(p)
