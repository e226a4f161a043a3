#!/usr/bin/env bash
# `cmake --install` into a fresh prefix: the files docs/operators-guide.md lists are
# there, the installed lull runs from the prefix, the unit names the
# installed binary and settings file, and systemd accepts the unit.
# Usage: install_check.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
fail() { echo "install_check: $*" >&2; exit 1; }
for f in bin/lull share/lull/modelserver/lull_modelserver.py share/lull/modelserver/accuracy.json \
         share/lull/torchserve/lull_batch_handler.py share/lull/torchserve/lull_text_handler.py share/lull/profiles/example-synthetic.json \
         share/doc/lull/user-guide.md share/doc/lull/kubernetes/lull.yaml \
         lib/systemd/system/lull.service etc/default/lull; do
  [ -e "$prefix/$f" ] || fail "missing $f"
done
"$prefix/bin/lull" --version | grep -q '^lull ' || fail "the installed lull does not run"
unit=$prefix/lib/systemd/system/lull.service
grep -q "^ExecStart=$prefix/bin/lull serve \$LULL_EXTRA_ARGS$" "$unit" || fail "ExecStart does not name the installed binary"
grep -q "^EnvironmentFile=-$prefix/etc/default/lull$" "$unit" || fail "EnvironmentFile does not name the installed settings"
# The installed example compiles: the shipped profile and the binary agree.
"$prefix/bin/lull" compile --profiles "$prefix/share/lull/profiles/example-synthetic.json" --slo-ms 100 \
  --workers 2 --load-qps 10:20:10 --out "$prefix/p.pb" >/dev/null 2>&1 || fail "the installed example does not compile"
if command -v systemd-analyze >/dev/null; then
  out=$(systemd-analyze verify "$unit" 2>&1) || fail "systemd-analyze verify: $out"
  # verify exits 0 on some warnings; the unit's own lines must be clean.
  if grep -q "lull.service:" <<<"$out"; then fail "systemd-analyze verify: $out"; fi
fi
echo "install_check: ok ($prefix)"
