#!/usr/bin/env bash
# device-check.sh: tg on an NVIDIA GPU, in two halves (issue 18). The GPU machine has the NVIDIA
# driver, CUDA (nvcc, ptxas), cmake, ninja and meson, but no LLVM 19 and no Boost, and fetches
# nothing; so everything tg needs travels from here.
#
#   scripts/device-check.sh bundle [build-dir]    here: build, then pack the test binaries, llm,
#                                                 llm-synth and every library they load that is not
#                                                 glibc into build-dir/nv-check.tar.xz (well under 60 MiB)
#   scripts/device-check.sh run BUNDLE [OUT]      there: unpack and, within about 10 minutes, print
#                                                 nvidia-smi's line, the device-to-device copy
#                                                 bandwidth, the DSL test suite on NV, the PTX of every
#                                                 codegen test checked by ptxas, and the LLM benchmark
#                                                 (per-kernel times) on synthetic 8B-shaped Q8_0 and
#                                                 Q4_K_M models; also into OUT/device-check.txt
#
# With the device tool: bundle here, then run `scripts/device-check.sh run build/nv-check.tar.xz "$OUT"`
# there with carry ["build/nv-check.tar.xz"].
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

bundle() {
  local build=${1:-$root/build}
  "$root/scripts/setup.sh" "$build" > /dev/null || { echo "device-check: the build failed"; exit 1; }
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/nv-check/bin" "$stage/nv-check/lib"
  local bins=("$build/examples/llm/cli/llm" "$build/examples/llm/synth/llm-synth" "$build/tests/bench/nv_bandwidth"
              "$build/tests/runtime/codegen/codegen_nvptx_test")
  for t in "$build"/tests/dsl/dsl_*_test; do
    case "$(basename "$t")" in dsl_amd_*|dsl_errors_test) ;; *) bins+=("$t") ;; esac  # AMD-only and compile-error tests stay
  done
  cp "${bins[@]}" "$stage/nv-check/bin/"
  # Every library the binaries load, but glibc's own (the GPU machine has its own glibc).
  for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) continue ;; esac
    cp -L "$lib" "$stage/nv-check/lib/"
  done
  tar -C "$stage" -cf - nv-check | xz -T2 -9 > "$build/nv-check.tar.xz"
  rm -rf "$stage"
  echo "device-check: $build/nv-check.tar.xz, $(du -m "$build/nv-check.tar.xz" | cut -f1) MiB"
}

run() {
  local archive=$1 out=${2:-.}
  local dir
  dir=$(mktemp -d)
  tar -C "$dir" -xJf "$archive" || { echo "device-check: cannot unpack $archive"; exit 1; }
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$dir/nv-check/lib" PATH="$PATH:/usr/local/cuda/bin"
  local bin=$dir/nv-check/bin models=$dir/models
  mkdir -p "$models"
  {
    echo "== nvidia-smi"
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.memory,pcie.link.gen.max --format=csv,noheader
    echo "== bandwidth"
    timeout 60 "$bin/nv_bandwidth"
    echo "== PTX of the codegen tests (ptxas: $(command -v ptxas || echo missing))"
    timeout 120 "$bin/codegen_nvptx_test" 2>&1 | tail -3
    echo "== DSL tests on NV"
    for t in "$bin"/dsl_*_test; do
      printf '%s: ' "$(basename "$t")"
      TG_TEST_DEVICE=NV timeout 120 "$t" 2>&1 | tail -2 | tr '\n' ' '
      echo
    done
    for type in Q8_0 Q4_K_M; do
      echo "== LLM, 8B-shaped $type (n_embd 4096, 32 layers, 8 KV heads, ffn 14336)"
      timeout 240 "$bin/llm-synth" --preset llama3.1-8b --type "$type" -o "$models/8b-$type.gguf" > /dev/null &&
        timeout 240 "$bin/llm" --model "$models/8b-$type.gguf" --device NV --benchmark 20 -v 2>&1 | tail -60
      rm -f "$models/8b-$type.gguf"
    done
  } 2>&1 | tee "$out/device-check.txt"
  rm -rf "$dir"
}

case "${1:-}" in
  bundle) shift; bundle "$@" ;;
  run) shift; [ $# -ge 1 ] || { echo "usage: $0 run BUNDLE [OUT]"; exit 2; }; run "$@" ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
