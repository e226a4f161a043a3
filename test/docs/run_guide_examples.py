#!/usr/bin/python3
"""Runs the guides' examples marked runnable, as written, in order, and checks
the output they show.

Every ```sh block is marked, on the line before it:
  <!-- runnable -->            runs as it stands (from the repository root,
                               `lull` on PATH);
  <!-- runnable: OPTS -->      the same, OPTS a comma list of `../shared`
                               (needs the RAMSIS artifact data beside the
                               checkout) and `measured` (its numbers are
                               measured: only the shape of its output is
                               checked);
  <!-- template -->            names files or servers the reader supplies
                               (PROFILE.json, SET.pb): not run, counted.
A block with no mark fails the test. In a runnable block, a line starting
with '# ' (or a lone '#') is output the guide shows, '## ' a comment. Each
shown line must match a line the block printed (stdout and stderr together),
spaces aside: a token holding `...` stands for any text there; a number
followed by `s` (a time) matches any number, and in a `measured` block every
number does. A block with a shown line that matches none is a mismatch.
The blocks of every guide run in one bash, in the order given (later ones
may use earlier files), with -euo pipefail; the first failing block is named
by its file and line.
Prints the counts (blocks run, templated, skipped, mismatched) and fails on
a mismatch, an unmarked block or a failing one.
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

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
TIME_UNIT = re.compile(r"^s[,;:)]*$")


def token_pattern(token, next_token, measured):
    """A regex for one shown token."""
    if "..." in token:
        return ".*".join(re.escape(part) for part in token.split("..."))
    out, pos = [], 0
    for m in re.finditer(NUMBER, token):
        out.append(re.escape(token[pos:m.start()]))
        # A number ending its token and followed by `s`, or a number in a measured block: any number.
        is_time = m.end() == len(token) and next_token is not None and TIME_UNIT.match(next_token)
        out.append(NUMBER if measured or is_time else re.escape(m.group(0)))
        pos = m.end()
    out.append(re.escape(token[pos:]))
    return "".join(out)


def line_pattern(shown, measured):
    tokens = shown.split()
    parts = [token_pattern(t, tokens[i + 1] if i + 1 < len(tokens) else None, measured)
             for i, t in enumerate(tokens)]
    return re.compile(r"\s+".join(parts))


def shown_lines(code):
    for line in code.splitlines():
        s = line.strip()
        if s.startswith("# ") and s[2:].strip() not in ("", "..."):
            yield s[2:].strip()


blocks = []  # (where, options, code)
templated, unmarked = 0, []
fence = re.compile(r"^([ ]*)```sh\n(.*?)^\1```", re.M | re.S)
mark = re.compile(r"^[ ]*<!-- (runnable(?:: ([^>]*?))?|template) -->[ ]*$")
for guide in guides:
    text = open(guide).read()
    found = 0
    for m in fence.finditer(text):
        indent = len(m.group(1))
        where = f"{os.path.basename(guide)}:{text.count(chr(10), 0, m.start()) + 1}"
        end = max(0, m.start() - 1)
        k = mark.match(text[text.rfind("\n", 0, end) + 1:end])
        if not k:
            unmarked.append(where)
            continue
        if k.group(1) == "template":
            templated += 1
            continue
        options = {o.strip() for o in (k.group(2) or "").split(",") if o.strip()}
        bad = options - {"../shared", "measured"}
        if bad:
            sys.exit(f"{where}: unknown runnable option(s) {sorted(bad)}")
        code = "\n".join(line[indent:] for line in m.group(2).splitlines())
        blocks.append((where, options, code))
        found += 1
    if not found:
        sys.exit(f"{guide}: no block marked <!-- runnable -->")

have_shared = os.path.isdir(os.path.join(shared, "ramsis-artifact"))
if not have_shared and os.environ.get("LULL_REQUIRE_SHARED") == "1":
    sys.exit(f"{shared}: missing (LULL_REQUIRE_SHARED=1)")
run = [b for b in blocks if have_shared or "../shared" not in b[1]]
outdir = tempfile.mkdtemp(prefix="lull-guide.")
script = ["set -euo pipefail", f"cd {root}"]
for i, (where, _, code) in enumerate(run):
    out = os.path.join(outdir, f"{i}.out")
    script.append(f"echo '== {where}' >&2")
    script.append(f"trap 'cat {out} >&2; echo \"{where}: this example failed\" >&2' ERR")
    script.append("{")
    script.append(code)
    script.append(f"}} > {out} 2>&1")
    script.append(f"cat {out} >&2")
    script.append(f"echo {i} > {outdir}/done")
env = dict(os.environ, PATH=build + os.pathsep + os.environ["PATH"])
with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
    f.write("\n".join(script) + "\n")
rc = subprocess.run(["bash", f.name], env=env).returncode
os.unlink(f.name)

done_file = os.path.join(outdir, "done")
done = int(open(done_file).read()) if os.path.exists(done_file) else -1
ran, mismatched = 0, []
for i, (where, options, code) in enumerate(run[:done + 1]):
    ran += 1
    printed = [" ".join(line.split()) for line in open(os.path.join(outdir, f"{i}.out"), errors="replace").read().splitlines()]
    for shown in shown_lines(code):
        p = line_pattern(shown, "measured" in options)
        if not any(p.fullmatch(line) for line in printed):
            mismatched.append(f"{where}: shown '{shown}' matches no line printed")
for m in mismatched:
    print(f"run_guide_examples: mismatch: {m}", file=sys.stderr)
for u in unmarked:
    print(f"run_guide_examples: {u}: a sh block marked neither <!-- runnable --> nor <!-- template -->",
          file=sys.stderr)
skipped = len(blocks) - len(run)
blocks_mismatched = len({m.split(": shown")[0] for m in mismatched})
print(f"run_guide_examples: {ran} blocks ran, {templated} templated, {skipped} skipped (need {shared}), "
      f"{blocks_mismatched} mismatched, {len(unmarked)} unmarked")
subprocess.run(["rm", "-rf", outdir])
if rc != 0:
    sys.exit(rc)
if mismatched or unmarked:
    sys.exit(1)
if skipped:
    sys.exit(77)
