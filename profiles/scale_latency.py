#!/usr/bin/python3
"""Writes a synthetic worker kind: a lull profile with every latency scaled.

A faster (or slower) kind for trying mixed fleets (docs/operators-guide.md) without
the hardware: the same models and accuracies, each latency (latency_s and
every samples_s) times FACTOR, marked synthetic with its origin in
provenance. Run: profiles/scale_latency.py IN.json FACTOR OUT.json
"""
import json
import sys

if len(sys.argv) != 4:
    sys.exit("usage: scale_latency.py IN.json FACTOR OUT.json")
src, factor, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
if not factor > 0:
    sys.exit(f"scale_latency.py: FACTOR must be > 0 (got {sys.argv[2]})")
profile = json.load(open(src))
for model in profile["models"]:
    for entry in model["latencies"]:
        if "latency_s" in entry:
            entry["latency_s"] *= factor
        if "samples_s" in entry:
            entry["samples_s"] = [s * factor for s in entry["samples_s"]]
profile["synthetic"] = True
profile["provenance"] = f"synthetic: {src} with every latency x{factor:g} ({profile.get('provenance', '')})"
with open(out, "w") as f:
    json.dump(profile, f, indent=1)
    f.write("\n")
