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
         share/lull/profiles/replay_profile.json share/lull/profiles/inputs/01-gradient.png \
         share/lull/policies/example-synthetic.pb share/lull/policies/torchvision-cpu-measured.pb \
         share/doc/lull/user-guide.md share/doc/lull/kubernetes/lull.yaml share/doc/lull/copyright share/doc/lull/changelog.gz share/man/man1/lull.1.gz \
         lib/systemd/system/lull.service etc/default/lull; do
  [ -e "$prefix/$f" ] || fail "missing $f"
done
"$prefix/bin/lull" --version | grep -q '^lull ' || fail "the installed lull does not run"
# Every Python module the installed stand-in server imports is installed.
for m in "$(dirname "$0")"/../modelserver/*.py; do
  [ -e "$prefix/share/lull/modelserver/$(basename "$m")" ] || fail "missing share/lull/modelserver/$(basename "$m")"
done
version=$("$prefix/bin/lull" --version | cut -d' ' -f2)
zcat "$prefix/share/doc/lull/changelog.gz" | head -1 | grep -q "^lull ($version)" ||
  fail "changelog.gz's first entry is not version $version (packaging/debian/changelog)"
unit=$prefix/lib/systemd/system/lull.service
grep -q "^ExecStart=$prefix/bin/lull serve \$LULL_EXTRA_ARGS$" "$unit" || fail "ExecStart does not name the installed binary"
grep -q "^EnvironmentFile=-$prefix/etc/default/lull$" "$unit" || fail "EnvironmentFile does not name the installed settings"
# The installed example compiles: the shipped profile and the binary agree.
"$prefix/bin/lull" compile --profiles "$prefix/share/lull/profiles/example-synthetic.json" --slo-ms 100 \
  --workers 2 --load-qps 10:20:10 --out "$prefix/p.pb" >/dev/null 2>&1 || fail "the installed example does not compile"
# docs/operators-guide.md's installed demo, with this prefix for /usr: the installed
# stand-in replays the installed profile, the installed lull serves a policy
# compiled from it, and a prediction is answered; lull runs with the unit's
# settings file in its environment (the command line wins), so each setting
# there is one lull serve takes.
share=$prefix/share/lull
/usr/bin/python3 "$share/modelserver/lull_modelserver.py" --replay-profile "$share/profiles/replay_profile.json" \
  --port-file "$prefix/server.port" >"$prefix/server.log" 2>&1 &
server=$!
trap 'kill $server ${lull_pid:-} 2>/dev/null || true; rm -rf "$prefix"' EXIT
for _ in $(seq 1 300); do [ -s "$prefix/server.port" ] || ! kill -0 $server 2>/dev/null && break; sleep 0.1; done
[ -s "$prefix/server.port" ] || fail "the installed stand-in server did not start: $(cat "$prefix/server.log")"
"$prefix/bin/lull" compile --profiles "$share/profiles/replay_profile.json" --slo-ms 70 --workers 1 --load-qps 5:50:5 \
  --percentile 100 --out "$prefix/demo.pb" >/dev/null 2>&1 || fail "the demo policy does not compile"
(set -a && . "$prefix/etc/default/lull" && set +a &&
  exec "$prefix/bin/lull" serve --policies "$prefix/demo.pb" --servers "http://127.0.0.1:$(cat "$prefix/server.port")" \
  --listen 127.0.0.1:0 --port-file "$prefix/lull.port" 2>"$prefix/lull.log") &
lull_pid=$!
for _ in $(seq 1 300); do [ -s "$prefix/lull.port" ] || ! kill -0 $lull_pid 2>/dev/null && break; sleep 0.1; done
[ -s "$prefix/lull.port" ] || fail "the installed lull serve did not start: $(cat "$prefix/lull.log")"
answer=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$(cat "$prefix/lull.port")/predictions/image-classification" -d hello)
[ "${answer##* }" = 200 ] || fail "the demo's prediction: $answer"
kill $lull_pid $server
wait $lull_pid $server 2>/dev/null || true
# The installed Python example finds the installed profile and lull.
if /usr/bin/python3 -c 'import matplotlib, numpy, google.protobuf' 2>/dev/null; then
  PYTHONPATH=$prefix/lib/python3/dist-packages MPLBACKEND=Agg /usr/bin/python3 "$prefix/share/doc/lull/python-example.py" \
    "$prefix" >"$prefix/example.log" 2>&1 || fail "the installed python-example.py: $(tail -3 "$prefix/example.log")"
fi
if command -v systemd-analyze >/dev/null; then
  out=$(systemd-analyze verify "$unit" 2>&1) || fail "systemd-analyze verify: $out"
  # verify exits 0 on some warnings; the unit's own lines must be clean.
  if grep -q "lull.service:" <<<"$out"; then fail "systemd-analyze verify: $out"; fi
fi
echo "install_check: ok ($prefix)"
