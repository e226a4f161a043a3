#!/usr/bin/env python3
"""Every sleep in test/ is a bounded poll or an allowed pacing sleep.

A test that sleeps a fixed time and then asserts is slow on an idle machine
and flaky on a busy one; a test should instead poll the condition it needs,
with a limit. This finds every sleep call under test/ (C++ sleep_for,
sleep_until, usleep, nanosleep; Python time.sleep; a shell `sleep N`; code
only, not comments nor quoted strings; test/fuzz is left out) and accepts it
when it is a bounded poll: inside a loop (the nearest less indented line
above, within a few lines, is a for/while header, or the loop is on the same
line) whose header has a bound (a comparison, range(), seq, a fixed list)
and which can end early (a condition in the header, or a break or return in
the loop). Any other sleep must be on ALLOWED below, by file, the line's
code and how many such lines, with a one-line reason: a pacing sleep of a load generator or a fake
that simulates latency, whose test judges no elapsed time against a
constant. One line per finding, FILE:LINE: what; exit 1 if there is any.
An ALLOWED entry no longer found is reported too (it would hide a new sleep
of the same text).
Usage: check_test_sleeps.py SOURCE_DIR
"""
import pathlib
import re
import sys

# (file under test/, the sleep line's code, stripped) -> why it may sleep
# (or (N, why): N lines of that text in that file; else one).
ALLOWED = {
    ("test/cli/v2_large_bodies_clients.py", "time.sleep(wait)  # pacing of the small client, not a judgement"):
        "open-loop pacing of the small client (20 queries a second); the verdict counts answers and reads lull's latency",
    ("test/upstream/torchserve/token_rotation_test.cc",
     "std::this_thread::sleep_until(start + std::chrono::milliseconds(20 * i));"):
        (3, "open-loop client pacing, 50 queries a second; the verdict counts answers"),
    ("test/server/poisoned_input_test.cc", "std::this_thread::sleep_for(milliseconds(10));"):
        "open-loop client pacing (about 100 qps); the verdict counts answers",
    ("test/server/poisoned_input_test.cc", "if (i % 20 < 18) std::this_thread::sleep_for(milliseconds(10));"):
        "open-loop client pacing with bursts of three; the verdict counts answers",
    ("test/server/serve_fault_test.cc", "std::this_thread::sleep_for(milliseconds(20));"):
        "open-loop client pacing, a server killed at query 20; the verdict counts answers",
    ("test/server/churn_clients.py", "time.sleep(rng.random() * 0.02)"):
        (3, "a churning client's random pause between its moves; the verdict counts answers"),
    ("test/frontend/frontend_churn_test.cc", "std::this_thread::sleep_for(std::chrono::milliseconds(3));"):
        "the fake backend's answer latency",
    ("test/frontend/frontend_churn_test.cc", "std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 20));"):
        (3, "a churning client's random pause inside a request; the verdict counts answers"),
    ("test/frontend/frontend_churn_test.cc", "std::this_thread::sleep_for(std::chrono::seconds(6));"):
        "how long the churning clients run; the verdict counts answers and open connections",
    ("test/support/fake_kube_api.py", "time.sleep(interval_s)"):
        "the fake cluster's pod status loop period",
    ("test/support/fake_kube_api.py", "time.sleep(hang_s)"):
        "the fake API's hung answer (an injected fault)",
    ("test/support/fake_kubernetes_api.h", "std::this_thread::sleep_for(std::chrono::milliseconds(r.timeout_ms));"):
        "the fake API's hung answer (an injected fault), as long as the request's own timeout",
    ("test/modelserver/lull_modelserver.py", "time.sleep(self.key_write_delay_ms / 1000.0)"):
        "the stand-in's simulated gap between a key rotation and the key file's rewrite (TorchServe's order)",
    ("test/modelserver/lull_modelserver.py", "time.sleep(self.server.delay_ms / 1000.0)"):
        "the stand-in server's injected answer delay",
    ("test/modelserver/management.py", "time.sleep(self.load_delay_ms / 1000.0)"):
        "the stand-in server's injected model load time",
    ("test/modelserver/models.py", "time.sleep(self.latency_s(len(inputs)))"):
        "the stand-in model's inference latency",
    ("test/bench/runtime/selection_bench.cc", "std::this_thread::sleep_for(period);"):
        "a benchmark's policy poster pacing; no verdict",
    ("test/server/overload_test.sh", "sleep 0.5"):
        "the RSS sampler's period while lull serve runs",
    ("test/cli/admin_under_overload_test.sh", "sleep 0.1"):
        "the scrape client's pacing (ten scrapes a second)",
    ("test/server/shard_fault_test.sh", "sleep 2.7"):
        "load runs on three shards before shard 1 is killed; no verdict on the time",
    ("test/server/shard_fault_nginx_test.sh", "sleep 2.7"):
        "load runs on three shards before shard 1 is killed; no verdict on the time",
    ("test/server/shard_fault_test.sh",
     "for _ in 1 2 3 4 5 6; do n=$(shard1_open); [ \"${n:-0}\" -gt \"$IN_FLIGHT\" ] && IN_FLIGHT=$n; sleep 0.05; done"):
        "samples shard 1's open requests over 300 ms before the kill (the loss allowed)",
    ("test/server/shard_fault_nginx_test.sh",
     "for _ in 1 2 3 4 5 6; do n=$(shard1_open); [ \"${n:-0}\" -gt \"$IN_FLIGHT\" ] && IN_FLIGHT=$n; sleep 0.05; done"):
        "samples shard 1's open requests over 300 ms before the kill (the loss allowed)",
    ("test/server/shard_fault_nginx_test.sh", "sleep 2"):
        "shard 1 stays down for 2 s of load (nginx's passive checks see it fail); no verdict on the time",
    ("test/server/shard_fault_test.sh",
     "sleep $(awk -v d=\"$DOWN_MS\" 'BEGIN {s = 2 - (d < 0 ? 3 : d / 1000); print (s > 0 ? s : 0)}')"):
        "shard 1 stays down for 2 s of load in all; no verdict on the time",
    # Being rewritten to run in process on the injected clock.
    ("test/core/control_loop_test.cc", "std::this_thread::sleep_for(std::chrono::milliseconds(2));"):
        "being rewritten onto the injected clock",
}

SKIP = ("test/fuzz/",)
CXX = {".cc", ".h", ".cpp", ".hpp", ".cu"}
CXX_SLEEP = re.compile(r"\b(?:sleep_for|sleep_until|usleep|nanosleep)\s*\(|(?<![\w.:])sleep\s*\(")
PY_SLEEP = re.compile(r"\btime\.sleep\s*\(")
SH_SLEEP = re.compile(r"(?:^|[\s;&|({])sleep\s+[\d$]")
LOOP = {
    "cxx": re.compile(r"\b(?:for|while)\s*\("),
    "py": re.compile(r"^\s*(?:for|while)\b"),
    "sh": re.compile(r"\b(?:for|while|until)\b"),
}
BOUND = re.compile(r"<|>|-lt\b|-le\b|-gt\b|-ge\b|\brange\(|\bseq\b|\bfor\s+\w+\s+in\s+\d")
EARLY = re.compile(r"\bbreak\b|\breturn\b")
LOOKBACK = 14


def strip_code(line, kind):
    """The line without its comment and without the text of quoted strings."""
    out, quote, i = [], None, 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and kind != "sh" or c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
                out.append(c)
        elif c in "\"'" and not (kind == "cxx" and c == "'" and i > 0 and line[i - 1].isalnum()):
            quote = c
            out.append(c)
        elif kind == "cxx" and line.startswith("//", i):
            break
        elif kind in ("py", "sh") and c == "#" and (i == 0 or line[i - 1] in " \t;"):
            break
        else:
            out.append(c)
        i += 1
    return "".join(out)


def indent(line):
    return len(line) - len(line.lstrip())


def bounded_poll(code, i, kind):
    """Whether the sleep on line i is inside a bounded loop that can end early."""
    loop = LOOP[kind]
    header = None
    if loop.search(code[i]):
        header = i
    else:
        level = indent(code[i])
        for j in range(i - 1, max(-1, i - LOOKBACK), -1):
            if not code[j].strip():
                continue
            if indent(code[j]) < level:
                if loop.search(code[j]):
                    header = j
                    break
                level = indent(code[j])
    if header is None:
        return False
    head = code[header]
    if not BOUND.search(head):
        return False
    if kind == "cxx" and re.search(r"\bfor\s*\([^;]*;[^;]*(?:&&|\|\|)", head):
        return True
    if kind == "cxx" and re.search(r"\bwhile\s*\(.*(?:&&|\|\|)", head):
        return True
    body = code[header:i + 4]
    return any(EARLY.search(b) for b in body)


def kind_of(path):
    if path.suffix in CXX:
        return "cxx"
    if path.suffix == ".py":
        return "py"
    if path.suffix == ".sh":
        return "sh"
    return None


# The checker's own cases: (kind, lines, whether the last line is a bounded poll).
SELF_CHECKS = [
    ("cxx", ["start();", "std::this_thread::sleep_for(ms(100));"], False),
    ("cxx", ["for (int i = 0; i < 10 && !done(); ++i)", "  std::this_thread::sleep_for(ms(1));"], True),
    ("cxx", ["for (int i = 0; i < n; ++i) {", "  post(i);", "  std::this_thread::sleep_for(ms(1));"], False),
    ("cxx", ["for (;;) {", "  if (done()) return;", "  std::this_thread::sleep_for(ms(1));"], False),
    ("sh", ["start &", "sleep 1"], False),
    ("sh", ["for _ in $(seq 1 5); do [ -s f ] && break; sleep 0.1; done"], True),
    ("py", ["while time.monotonic() < end:", "    if ok():", "        return True", "    time.sleep(0.1)"], True),
]


def main():
    root = pathlib.Path(sys.argv[1])
    found, bad = {}, []
    for kind, lines, poll in SELF_CHECKS:
        if bounded_poll([strip_code(line, kind) for line in lines], len(lines) - 1, kind) != poll:
            bad.append("check_test_sleeps.py: its own case %r is %s a bounded poll" % (lines, "not" if poll else "read as"))
    for path in sorted((root / "test").rglob("*")):
        rel = path.relative_to(root).as_posix()
        kind = kind_of(path)
        if kind is None or not path.is_file() or rel.startswith(SKIP):
            continue
        lines = path.read_text(errors="replace").splitlines()
        code = [strip_code(line, kind) for line in lines]
        pattern = {"cxx": CXX_SLEEP, "py": PY_SLEEP, "sh": SH_SLEEP}[kind]
        for i, c in enumerate(code):
            if not pattern.search(c) or bounded_poll(code, i, kind):
                continue
            key = (rel, lines[i].strip())
            found[key] = found.get(key, 0) + 1
            allowed = ALLOWED.get(key)
            if allowed is not None and found[key] <= (allowed[0] if isinstance(allowed, tuple) else 1):
                continue
            bad.append("%s:%d: a sleep that is not a bounded poll (poll the condition the test needs, with a limit; "
                       "or, for a pacing sleep, add it to ALLOWED in test/cmake/check_test_sleeps.py with its reason): "
                       "%s" % (rel, i + 1, lines[i].strip()))
    for key in sorted(set(ALLOWED) - set(found)):
        print("note: %s: allowed sleep no longer found (drop it from ALLOWED): %s" % key)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
