#!/usr/bin/python3
"""lull serve's log, access log and service-manager notifications (issue 24).

Each case starts the latency-replay stand-in server and `lull serve` over a
one-worker policy set, sends requests, stops lull with SIGTERM and checks
what it wrote. Usage: serve_logs_test.py CASE (levels, json, access, notify,
usage); LULL names the binary. Exit 0 passes, 1 fails (a line per failure).
  levels  a plain line is "TIME LEVEL lull serve: MESSAGE"; a debug line (a
          batch done) is absent at info and present at debug (set through
          LULL_SERVE_LOG_LEVEL); --config's log-level = warn drops info lines
          and keeps a worker going down; with stderr the journal's stream
          ($JOURNAL_STREAM) each line starts with its syslog priority <N>
  json    --log-format json: every stderr line and every access log line
          parses as a JSON object with the documented fields
  access  --access-log -: one plain line per response on stdout (method, path,
          status, body bytes as the client got them, duration), the
          server's own refusals (413) and 404s included
  notify  with $NOTIFY_SOCKET (a datagram socket this test reads): READY=1
          arrives once /ping answers, RELOADING=1 (with MONOTONIC_USEC) then
          READY=1 on SIGHUP, STOPPING=1 on SIGTERM; and an abstract socket (@name)
  usage   a bad --log-level, --log-format or --access-log path: exit 2, one
          line naming the flag, no access log file left behind
"""
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
LULL = os.environ.get("LULL", str(ROOT / "build" / "lull"))
PROFILE = ROOT / "test" / "data" / "replay_profile.json"
TASK = json.loads(PROFILE.read_text())["task"]
PLAIN = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (trace|debug|info|warning|error) lull serve: \S")
ACCESS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (\S+) (\S+) (\S+) (\d{3}) (\d+) (\d+\.\d{3})$")
FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print(f"serve_logs: FAIL: {what}", file=sys.stderr)
    return ok


def wait_for(predicate, seconds=60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def request(url, body=None):
    """(status, body bytes) of one request; HTTP errors are answers too."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Rig:
    """The stand-in server and a policy set; serve() starts lull over them."""

    def __init__(self, work):
        self.work = pathlib.Path(work)
        self.policies = self.work / "set.pb"
        subprocess.run([LULL, "compile", "--profiles", str(PROFILE), "--slo-ms", "100", "--workers", "1",
                        "--load-qps", "10:60:10", "--max-queue", "8", "--out", str(self.policies)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = self.work / "server.port"
        self.server = subprocess.Popen(
            ["/usr/bin/python3", str(ROOT / "test" / "modelserver" / "lull_modelserver.py"), "--replay-profile",
             str(PROFILE), "--port-file", str(port_file)], stderr=open(self.work / "server.log", "w"))
        if not wait_for(lambda: port_file.exists() and port_file.read_text().strip()):
            raise RuntimeError("the stand-in server did not start")
        self.server_url = f"http://127.0.0.1:{port_file.read_text().strip()}"
        self.lull = None

    def serve(self, name, *args, env=None, stdout=subprocess.DEVNULL, journal=False):
        """Starts lull serve (stderr to NAME.err) and waits for its port;
        journal: $JOURNAL_STREAM names that file, as systemd names its stream."""
        port_file = self.work / f"{name}.port"
        self.err = self.work / f"{name}.err"
        self.err.touch()
        if journal:
            st = self.err.stat()
            env = {**(env or {}), "JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}
        self.lull = subprocess.Popen(
            [LULL, "serve", "--policies", str(self.policies), "--servers", self.server_url, "--listen", "127.0.0.1:0",
             "--port-file", str(port_file), "--no-model-check", "--health-timeout-ms", "5000", *args], stderr=open(self.err, "w"), stdout=stdout,
            env={**os.environ, **(env or {})})
        if not wait_for(lambda: port_file.exists() and port_file.read_text().strip() or self.lull.poll() is not None):
            raise RuntimeError("lull serve did not start")
        if self.lull.poll() is not None:
            raise RuntimeError(f"lull serve exited: {self.err.read_text()}")
        self.url = f"http://127.0.0.1:{port_file.read_text().strip()}"
        return self.url

    def predict(self):
        return request(f"{self.url}/predictions/{TASK}", b"an input")

    def stop(self):
        """SIGTERM; returns lull's stderr lines."""
        self.lull.send_signal(signal.SIGTERM)
        check(self.lull.wait(timeout=30) == 0, "lull serve did not exit 0 on SIGTERM")
        return self.err.read_text().splitlines()

    def close(self):
        for p in (self.lull, self.server):
            if p and p.poll() is None:
                p.kill()
                p.wait()


def case_levels(rig):
    rig.serve("info")
    check(rig.predict()[0] == 200, "a prediction at info failed")
    lines = rig.stop()
    for line in lines:
        check(PLAIN.match(line), f"not TIME LEVEL lull serve: MESSAGE: {line!r}")
    check(any(" info lull serve: task '" in l for l in lines), "no info line naming the task at info")
    check(not any(" debug " in l for l in lines), "a debug line at --log-level info")

    rig.serve("debug", env={"LULL_SERVE_LOG_LEVEL": "debug"})
    check(rig.predict()[0] == 200, "a prediction at debug failed")
    lines = rig.stop()
    check(any(re.search(r" debug lull serve: batch done: worker 0, \S+, 1 queries, ok$", l) for l in lines),
          "no 'batch done' debug line with LULL_SERVE_LOG_LEVEL=debug")

    # A $JOURNAL_STREAM that is not stderr (inherited, stderr redirected): plain lines.
    config = rig.work / "serve.conf"
    config.write_text("log-level = warn\n")
    rig.serve("warn", "--config", str(config), env={"JOURNAL_STREAM": "1:1"})
    check(rig.predict()[0] == 200, "a prediction at warn failed")
    rig.server.send_signal(signal.SIGSTOP)  # the worker stops answering: a warning
    check(wait_for(lambda: "down: out of rotation" in rig.err.read_text(), 30), "no worker-down line at warn")
    rig.server.send_signal(signal.SIGCONT)
    lines = rig.stop()
    check(not any(" info " in l or " debug " in l for l in lines), f"info or debug lines at warn: {lines}")
    check(all(PLAIN.match(l) for l in lines), f"lines at warn not plain: {lines}")

    # stderr is the journal's stream: "<N>" first, N the line's syslog priority.
    rig.serve("journal", "--log-level", "debug", journal=True)
    check(rig.predict()[0] == 200, "a prediction with the journal stream failed")
    lines = rig.stop()
    priority = {"debug": "7", "info": "6", "warning": "4", "error": "3"}
    for line in lines:
        m = re.match(r"^<(\d)>(.*)$", line)
        if check(m and PLAIN.match(m.group(2)), f"not <N>TIME LEVEL lull serve: MESSAGE: {line!r}"):
            check(m.group(1) == priority[PLAIN.match(m.group(2)).group(1)], f"priority of {line!r}")
    check(any(l.startswith("<7>") for l in lines) and any(l.startswith("<6>") for l in lines),
          f"no debug or info line in the journal run: {lines}")


def case_json(rig):
    access_log = rig.work / "access.jsonl"
    rig.serve("json", "--log-format", "json", "--log-level", "debug", "--access-log", str(access_log))
    sent = [rig.predict()[0], request(f"{rig.url}/ping")[0], request(f"{rig.url}/nowhere")[0]]
    lines = rig.stop()
    check(len(lines) >= 3, f"few JSON log lines: {lines}")
    messages = []
    for line in lines:
        try:
            o = json.loads(line)
        except ValueError:
            check(False, f"a log line is not JSON: {line!r}")
            continue
        check(set(o) == {"time", "level", "logger", "message"}, f"log line fields: {sorted(o)}")
        check(o.get("logger") == "lull serve" and o.get("level") in ("debug", "info", "warning", "error"),
              f"logger or level: {line!r}")
        check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o.get("time", "")), f"time: {line!r}")
        messages.append(o.get("message", ""))
    check(any(m.startswith(f"task '{TASK}'") for m in messages), "no task line among the JSON messages")
    check(any(m.startswith("batch done: ") for m in messages), "no debug batch line among the JSON messages")
    records = [json.loads(l) for l in access_log.read_text().splitlines()]
    logged = sorted((r["path"], r["status"]) for r in records)
    check(logged == sorted(zip([f"/predictions/{TASK}", "/ping", "/nowhere"], sent)), f"access records {records}")
    for r in records:
        check(set(r) == {"time", "client", "method", "path", "status", "bytes", "duration_ms"}, f"fields: {sorted(r)}")
        check(r["client"] == "127.0.0.1" and isinstance(r["duration_ms"], float), f"access record: {r}")


def case_access(rig):
    out = rig.work / "access.out"
    rig.serve("access", "--access-log", "-", "--max-body-bytes", "64", stdout=open(out, "w"))
    sent = []  # (method, path, status, bytes) as the client saw them
    for _ in range(3):
        status, body = rig.predict()
        sent.append(("POST", f"/predictions/{TASK}", status, len(body)))
    status, body = request(f"{rig.url}/predictions/{TASK}", b"x" * 65)  # the server's own 413
    sent.append(("POST", f"/predictions/{TASK}", status, len(body)))
    status, body = request(f"{rig.url}/metrics")
    sent.append(("GET", "/metrics", status, len(body)))
    status, body = request(f"{rig.url}/nowhere")
    sent.append(("GET", "/nowhere", status, len(body)))
    check([s[2] for s in sent] == [200, 200, 200, 413, 200, 404], f"statuses sent: {[s[2] for s in sent]}")
    rig.stop()
    lines = [l for l in out.read_text().splitlines() if l != rig.url.rsplit(":", 1)[1]]  # not the port line
    logged = []
    for line in lines:
        m = ACCESS.match(line)
        if check(m, f"not TIME CLIENT METHOD PATH STATUS BYTES DURATION_MS: {line!r}"):
            check(m.group(2) == "127.0.0.1", f"client: {line!r}")
            logged.append((m.group(3), m.group(4), int(m.group(5)), int(m.group(6))))
    # A line is written once its response is, so two answered close together
    # may be logged in either order.
    check(sorted(logged) == sorted(sent), f"access lines {logged}, responses {sent}")


def notifications(sock, seconds=30.0):
    """The next datagram's assignments as a dict (empty on timeout)."""
    sock.settimeout(seconds)
    try:
        data = sock.recv(4096).decode()
    except socket.timeout:
        return {}
    return dict(line.split("=", 1) for line in data.splitlines() if "=" in line)


def case_notify(rig):
    for abstract in (False, True):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = f"@lull-notify-test-{os.getpid()}"
            sock.bind("\0" + name[1:])
        else:
            name = str(rig.work / "notify.sock")
            sock.bind(name)
        rig.serve(f"notify-{abstract}", env={"NOTIFY_SOCKET": name})
        first = notifications(sock)
        # READY=1 is sent after the front end answers: /ping works at once.
        ping = request(f"{rig.url}/ping")[0]
        check(first.get("READY") == "1", f"first notification {first}, not READY=1 ({name})")
        check(ping == 200, f"/ping answered {ping} right after READY=1")
        rig.lull.send_signal(signal.SIGHUP)
        reloading = notifications(sock)
        check(reloading.get("RELOADING") == "1" and reloading.get("MONOTONIC_USEC", "").isdigit(),
              f"on SIGHUP: {reloading}, not RELOADING=1 with MONOTONIC_USEC")
        check(notifications(sock).get("READY") == "1", "no READY=1 after the reload")
        check(rig.predict()[0] == 200, "a prediction after the reload failed")
        lines = rig.stop()
        check(any("SIGHUP: reloaded" in l for l in lines), "no 'SIGHUP: reloaded' line")
        check(notifications(sock, 5).get("STOPPING") == "1", "no STOPPING=1 on SIGTERM")
        sock.close()


def case_usage(rig):
    access_log = rig.work / "no" / "such" / "dir" / "access.log"
    for args, flag in ((["--log-level", "loud"], "--log-level"), (["--log-format", "xml"], "--log-format"),
                       (["--access-log", str(access_log)], "--access-log")):
        r = subprocess.run([LULL, "serve", "--policies", str(rig.policies), "--servers", rig.server_url, *args],
                           capture_output=True, text=True, timeout=60)
        lines = r.stderr.splitlines()
        check(r.returncode == 2, f"{args}: exit {r.returncode}, not 2")
        check(len(lines) == 1 and lines[0].startswith(f"lull serve: {flag}"), f"{args}: stderr {lines}")
    check(not access_log.parent.exists(), "a refused --access-log made folders")


CASES = {"levels": case_levels, "json": case_json, "access": case_access, "notify": case_notify,
         "usage": case_usage}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: serve_logs_test.py {'|'.join(CASES)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="lull-logs.") as work:
        rig = Rig(work)
        try:
            CASES[sys.argv[1]](rig)
        finally:
            rig.close()
    print(f"serve_logs {sys.argv[1]}: {'FAIL' if FAILURES else 'ok'}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
