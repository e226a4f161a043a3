#!/bin/sh
# The C++ sources are as clang-format (.clang-format) writes them.
# Skips (77) without clang-format, fails instead under LULL_REQUIRE_TOOLS=1.
root=${1:?usage: check_format.sh SOURCE_DIR}
if ! command -v clang-format >/dev/null 2>&1; then
  echo "clang-format not installed"
  [ "${LULL_REQUIRE_TOOLS:-0}" = 1 ] && exit 1
  exit 77
fi
cd "$root" || exit 1
files=$(find schema compiler runtime cli test -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' | sort)
[ -n "$files" ] || { echo "no sources found under $root"; exit 1; }
# --dry-run --Werror names each file and line that would change.
echo "$files" | xargs clang-format --dry-run --Werror 2>&1 | grep -m 20 'error:' && {
  echo "run: clang-format -i on the files above"; exit 1; }
exit 0
