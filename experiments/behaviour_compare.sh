#!/usr/bin/env bash
# behaviour_compare.sh OLD_LULL NEW_LULL [WORK]: runs behaviour_outputs.sh with
# both binaries and compares every file with cmp. Exit 0 when all are
# identical bit for bit; otherwise names each file that differs, exit 1.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${3:-$(mktemp -d)}"
"$HERE/behaviour_outputs.sh" "$1" "$WORK/old"
"$HERE/behaviour_outputs.sh" "$2" "$WORK/new"
status=0
n=0
while IFS= read -r f; do
  n=$((n + 1))
  if [ ! -f "$WORK/new/$f" ]; then echo "behaviour_compare.sh: $f: missing from the new outputs"; status=1
  elif ! cmp -s "$WORK/old/$f" "$WORK/new/$f"; then echo "behaviour_compare.sh: $f differs"; status=1; fi
done < <(cd "$WORK/old" && find . -type f | sort)
[ "$(cd "$WORK/new" && find . -type f | wc -l)" -eq "$n" ] || { echo "behaviour_compare.sh: the new outputs have other files"; status=1; }
[ $status -eq 0 ] && echo "behaviour_compare.sh: $n files identical ($WORK)"
exit $status
