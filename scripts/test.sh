#!/usr/bin/env bash
# test.sh: the README's test command. Sets up, builds, and runs the whole test suite
# (everything but the `hw` suite, which needs a real GPU), then prints one summary line
# `N passed, N failed` counting doctest test cases.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" "$root/build" || { echo "0 passed, 1 failed"; exit 1; }
meson test -C "$root/build" --no-suite hw --print-errorlogs --num-processes 2 "$@"
rc=$?
python3 "$root/scripts/count_tests.py" "$root/build/meson-logs/testlog.json"
count_rc=$?
[ $rc -ne 0 ] && exit $rc
exit $count_rc
