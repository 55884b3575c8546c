#!/usr/bin/env bash
# fuzz-gguf.sh: fuzz the GGUF reader and reference dequantizer with libFuzzer for SECONDS.
# Usage: scripts/fuzz-gguf.sh [SECONDS]   (default 60)
# Needs clang-19 and libclang-rt-19-dev (Debian). Builds tests/llm/gguf/fuzz_gguf.cpp with
# -fsanitize=fuzzer,address,undefined into build-fuzz/, seeds the corpus with writer-made files,
# and leaves any crash-* input in build-fuzz/. Exits non-zero when libFuzzer finds a crash.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
out=${TG_FUZZ_DIR:-$root/build-fuzz}
cxx=${TG_FUZZ_CXX:-clang++-19}
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz-gguf: $cxx not found (apt-get install clang-19 libclang-rt-19-dev)" >&2
  exit 1
fi

mkdir -p "$out/corpus"
common=(-std=c++20 -g -O1 -fno-omit-frame-pointer -ffp-contract=off
  -I"$root/include" -I"$root")
sources=("$root"/llm/gguf/*.cpp)
target="$root/tests/llm/gguf/fuzz_gguf.cpp"

echo "fuzz-gguf: building $out/fuzz_gguf"
"$cxx" "${common[@]}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  "${sources[@]}" "$target" -o "$out/fuzz_gguf"
# The CI driver doubles as the seed maker: it writes the writer-made seed files.
"$cxx" "${common[@]}" "${sources[@]}" "$target" "$root/tests/llm/gguf/fuzz_gguf_driver.cpp" \
  -o "$out/fuzz_gguf_seeds"
"$out/fuzz_gguf_seeds" --write-seeds "$out/seeds"

# Byte strings the reader branches on: the magic, versions, value and tensor type ids, keys.
cat > "$out/gguf.dict" <<'DICT'
"GGUF"
"\x02\x00\x00\x00"
"\x03\x00\x00\x00"
"\x08\x00\x00\x00"
"\x09\x00\x00\x00"
"\x0c\x00\x00\x00"
"\x0e\x00\x00\x00"
"\x1e\x00\x00\x00"
"\x00\x00\x00\x00\x00\x00\x00\x80"
"\xff\xff\xff\xff\xff\xff\xff\x7f"
"general.alignment"
"tokenizer.ggml.tokens"
DICT

cd "$out"  # libFuzzer writes crash-* files to the working directory
echo "fuzz-gguf: fuzzing for $seconds s"
./fuzz_gguf -max_total_time="$seconds" -max_len=16384 -dict=gguf.dict -print_final_stats=1 corpus seeds
