#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR: `meson install` into a DESTDIR, then build user programs
# from the installed files alone, with pkg-config, and run them: the quickstart (a DSL plan on
# the CPU), hello_llm (the LLM library generating from a synthetic model made by the installed
# llm-synth, checked against the installed llm command's text), and a program that opens the
# emulated GPU through tg-emu.
set -euo pipefail
build=$1 src=$2
dest=$(mktemp -d "${TMPDIR:-/tmp}/tg_install_XXXXXX")
trap 'rm -rf "$dest"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

meson install -C "$build" --destdir "$dest" --no-rebuild --quiet || fail "meson install exited $?"
pc=$(find "$dest" -name tg.pc -print -quit)
[ -n "$pc" ] || fail "no tg.pc installed"
libdir=$(dirname "$(dirname "$pc")")
bindir=$(dirname "$(find "$dest" -name llm -type f -print -quit)")
for f in tg-llm.pc tg-emu.pc; do [ -f "$libdir/pkgconfig/$f" ] || fail "no $f installed"; done
for f in tg/tg.hpp tg/device.hpp tg/log.hpp tg/llm/llm.hpp; do
  [ -n "$(find "$dest" -path "*/include/$f" -print -quit)" ] || fail "<$f> not installed"
done
for b in llm llm-synth tg-amd; do [ -x "$bindir/$b" ] || fail "$b not installed in $bindir"; done
# BEAM's NV worker, where libtg looks for it (drivers/nv/nv_worker.hpp): <libdir>/tg beside libtg.
[ -x "$libdir/tg/tg-nv-worker" ] || fail "tg-nv-worker not installed in $libdir/tg"
set +e; "$libdir/tg/tg-nv-worker" > /dev/null 2> worker.err; rc=$?; set -e
[ "$rc" = 64 ] && grep -q "not by hand" worker.err || fail "tg-nv-worker without arguments: exit $rc, $(cat worker.err)"

# The .pc files name the real prefix; the sysroot maps it into the DESTDIR.
export PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest LD_LIBRARY_PATH=$libdir
cxx=${CXX:-c++}
cd "$dest"  # nothing from the source or build tree is on any path from here on

"$cxx" "$src/examples/quickstart/quickstart.cpp" $(pkg-config --cflags --libs tg) -o quickstart ||
  fail "the quickstart does not build against the installed tg"
./quickstart > quickstart.out || fail "the installed quickstart exited $?: $(cat quickstart.out)"
grep -q "max |y - reference|" quickstart.out || fail "quickstart printed: $(cat quickstart.out)"

"$cxx" "$src/examples/hello_llm/hello_llm.cpp" $(pkg-config --cflags --libs tg-llm) -o hello_llm ||
  fail "hello_llm does not build against the installed tg-llm"
"$bindir/llm-synth" -q -o model.gguf --arch llama --type Q8_0 --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 2 \
  --n-ff 512 --context-length 512 --seed 3 || fail "the installed llm-synth exited $?"
./hello_llm model.gguf "Why is the sky blue?" > hello.out 2> hello.err || fail "hello_llm exited $?: $(cat hello.err)"
grep -qx '\[[0-9]* tokens\]' hello.out || fail "hello_llm printed no token count: $(cat hello.out)"
grep -q "llm: loading model.gguf" hello.err || fail "the library logged nothing to stderr: $(cat hello.err)"
"$bindir/llm" -m model.gguf -p "Why is the sky blue?" -n 32 --max-context 512 > llm.out 2>/dev/null ||
  fail "the installed llm exited $?"
head -n -1 hello.out > hello.text
cmp -s hello.text llm.out || fail "hello_llm and llm generated different text: '$(cat hello.text)' vs '$(cat llm.out)'"

cat > emu.cpp <<'CPP'
#include <tg/device.hpp>
#include <vector>
int main() {
  tg::device gpu("AMD:EMU");  // registered by linking tg-emu
  std::vector<float> in(256, 1.5f), out(256, 0.0f);
  tg::buffer b = gpu.allocate(in.size() * 4);
  b.copy_in(in.data(), in.size() * 4);
  b.copy_out(out.data(), out.size() * 4);
  return out == in ? 0 : 1;
}
CPP
"$cxx" emu.cpp $(pkg-config --cflags --libs tg-emu) -o emu || fail "a program does not build against tg-emu"
./emu || fail "the emulated GPU from tg-emu did not round-trip a buffer"
echo ok
