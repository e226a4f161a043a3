#!/usr/bin/python3
"""Runs the user guide's examples marked runnable, as written, in order.

A ```sh block right after `<!-- runnable -->` must run as it stands (from
the repository root, `lull` on PATH); `<!-- runnable: ../shared -->` marks
one that needs the RAMSIS artifact data beside the checkout. Lines starting
with '#' are the output the guide shows (comments to the shell). The blocks
run in one bash, in order (later ones may use earlier files), with -euo
pipefail; the first failing block is named by its line in the guide.
Exit 77 (ctest: skipped) when ../shared is absent and blocks needed it,
unless LULL_REQUIRE_SHARED=1, which makes that a failure.
Usage: run_guide_examples.py GUIDE.md BUILD_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

guide, build = sys.argv[1], os.path.abspath(sys.argv[2])
root = os.path.dirname(os.path.dirname(os.path.abspath(guide)))
shared = os.path.join(os.path.dirname(root), "shared")
text = open(guide).read()

blocks = []  # (line, needs_shared, code)
marker = re.compile(r"^([ ]*)<!-- runnable(: \.\./shared)? -->\n\1```sh\n(.*?)^\1```", re.M | re.S)
for m in marker.finditer(text):
    indent = len(m.group(1))
    code = "\n".join(line[indent:] for line in m.group(3).splitlines())
    blocks.append((text.count("\n", 0, m.start()) + 1, bool(m.group(2)), code))
if not blocks:
    sys.exit(f"{guide}: no block marked <!-- runnable -->")

have_shared = os.path.isdir(os.path.join(shared, "ramsis-artifact"))
if not have_shared and os.environ.get("LULL_REQUIRE_SHARED") == "1":
    sys.exit(f"{shared}: missing (LULL_REQUIRE_SHARED=1)")
run = [b for b in blocks if have_shared or not b[1]]
script = ["set -euo pipefail", f"cd {root}"]
for line, _, code in run:
    script.append(f"echo '== {os.path.basename(guide)}:{line}' >&2")
    script.append(f"trap 'echo \"{os.path.basename(guide)}:{line}: this example failed\" >&2' ERR")
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
