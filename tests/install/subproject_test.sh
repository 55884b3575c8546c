#!/usr/bin/env bash
# subproject_test.sh SOURCE_DIR NATIVE_FILE: tg used as a meson subproject, as a user's project
# would: subprojects/tg is the source tree, dependency('tg') and dependency('tg-llm') resolve
# through tg's meson.override_dependency, and the quickstart builds and runs against it.
# tg's own tests and examples are not configured inside another project (meson.is_subproject()),
# so only what the user's target needs is built: libtg and its parts.
set -euo pipefail
src=$1 native=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/tg_subproject_XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$work/user/subprojects"
ln -s "$src" "$work/user/subprojects/tg"
cp "$src/examples/quickstart/quickstart.cpp" "$work/user/"
cat > "$work/user/meson.build" <<'MESON'
project('user', 'cpp', default_options: ['cpp_std=c++20', 'buildtype=release'])
subproject('tg')
tg = dependency('tg')          # found through tg's override_dependency, not pkg-config
tg_llm = dependency('tg-llm')  # declared too; not built unless a target uses it
executable('quickstart', 'quickstart.cpp', dependencies: tg)
MESON
cd "$work/user"
meson setup b --native-file "$native" --wrap-mode=nodownload > setup.log 2>&1 ||
  fail "meson setup of a project using tg as a subproject failed: $(tail -20 setup.log)"
grep -q "tg_dep\|Subproject tg finished" setup.log || fail "tg was not configured as a subproject: $(tail -5 setup.log)"
if grep -q "tests/dsl" b/build.ninja; then fail "tg's own tests were configured inside the user's project"; fi
ninja -C b quickstart > build.log 2>&1 || fail "the quickstart does not build against tg as a subproject: $(tail -20 build.log)"
./b/quickstart > quickstart.out || fail "quickstart exited $?: $(cat quickstart.out)"
grep -q "max |y - reference|" quickstart.out || fail "quickstart printed: $(cat quickstart.out)"
echo ok
