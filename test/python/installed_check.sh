#!/usr/bin/env bash
# `import lull` from a `cmake --install` prefix: the package lands in
# PREFIX/lib/python3/dist-packages with its generated modules, and uses the
# installed PREFIX/bin/lull. Skipped (77) when the build installs no binary.
# Usage: installed_check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
export PYTHONPATH=$prefix/lib/python3/dist-packages
unset LULL_BINARY
/usr/bin/python3 - "$prefix" <<'PY'
import os, sys
prefix = sys.argv[1]
import lull, lull.policy_pb2
assert lull.__file__.startswith(prefix), "imported %s, not the installed package" % lull.__file__
PY
if [ ! -x "$prefix/bin/lull" ]; then
  echo "installed_check: the package imports from $PYTHONPATH; SKIP the rest: this build installs no bin/lull"
  exit 77
fi
/usr/bin/python3 - "$prefix" "$src/profiles/example-synthetic.json" <<'PY'
import os, sys
prefix, profile = sys.argv[1], sys.argv[2]
import lull
assert os.path.realpath(lull.binary()) == os.path.realpath(prefix + "/bin/lull"), lull.binary()
out = os.path.join(prefix, "set.pb")
lull.compile(profiles=profile, slo_ms=100, workers=2, load_qps=[10, 20], device="cpu", out=out)
assert [p.load_qps for p in lull.read_policy_set(out).policies] == [10, 20]
PY
echo "installed_check: ok ($prefix)"
