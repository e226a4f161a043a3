#!/usr/bin/python3
"""Runs the guides' examples marked runnable, as written, in order.

A ```sh block right after `<!-- runnable -->` must run as it stands (from
the repository root, `lull` on PATH); `<!-- runnable: ../shared -->` marks
one that needs the RAMSIS artifact data beside the checkout. Lines starting
with '#' are the output the guide shows (comments to the shell). The blocks
of every guide run in one bash, in the order given (later ones may use
earlier files), with -euo pipefail; the first failing block is named by
its file and line.
Exit 77 (ctest: skipped) when ../shared is absent and blocks needed it,
unless LULL_REQUIRE_SHARED=1, which makes that a failure.
Usage: run_guide_examples.py GUIDE.md [GUIDE.md...] BUILD_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

guides, build = sys.argv[1:-1], os.path.abspath(sys.argv[-1])
root = os.path.dirname(os.path.dirname(os.path.abspath(guides[0])))
shared = os.path.join(os.path.dirname(root), "shared")

blocks = []  # (where, needs_shared, code)
marker = re.compile(r"^([ ]*)<!-- runnable(: \.\./shared)? -->\n\1```sh\n(.*?)^\1```", re.M | re.S)
for guide in guides:
    text = open(guide).read()
    found = 0
    for m in marker.finditer(text):
        indent = len(m.group(1))
        code = "\n".join(line[indent:] for line in m.group(3).splitlines())
        where = f"{os.path.basename(guide)}:{text.count(chr(10), 0, m.start()) + 1}"
        blocks.append((where, bool(m.group(2)), code))
        found += 1
    if not found:
        sys.exit(f"{guide}: no block marked <!-- runnable -->")

have_shared = os.path.isdir(os.path.join(shared, "ramsis-artifact"))
if not have_shared and os.environ.get("LULL_REQUIRE_SHARED") == "1":
    sys.exit(f"{shared}: missing (LULL_REQUIRE_SHARED=1)")
run = [b for b in blocks if have_shared or not b[1]]
script = ["set -euo pipefail", f"cd {root}"]
for where, _, code in run:
    script.append(f"echo '== {where}' >&2")
    script.append(f"trap 'echo \"{where}: this example failed\" >&2' ERR")
    script.append(code)
env = dict(os.environ, PATH=build + os.pathsep + os.environ["PATH"])
with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
    f.write("\n".join(script) + "\n")
rc = subprocess.run(["bash", f.name], env=env).returncode
os.unlink(f.name)
if rc != 0:
    sys.exit(rc)
skipped = len(blocks) - len(run)
print(f"run_guide_examples: {len(run)} examples ran, {skipped} skipped")
if skipped:
    print(f"skipped: {skipped} examples need {shared}")
    sys.exit(77)
