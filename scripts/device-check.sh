#!/usr/bin/env bash
# device-check.sh: tg on an NVIDIA GPU, in two halves (issue 18). The GPU machine has the NVIDIA
# driver, CUDA (nvcc, ptxas), cmake, ninja and meson, but no LLVM 19 and no Boost, and fetches
# nothing; so everything tg needs travels from here.
#
#   scripts/device-check.sh bundle [build-dir]    here: build, then pack into build-dir/nv-check/
#                                                 libs.tar.xz (every library the binaries load
#                                                 that is not glibc; repacked only when they change)
#                                                 and bins.tar.xz (the DSL tests, the PTX test,
#                                                 nv_bandwidth, nv_matvec_sweep, llm and llm-synth
#                                                 with tg's own libraries), together well
#                                                 under 60 MiB
#   scripts/device-check.sh run DIR [OUT] [quick] there (DIR holds the two archives): unpack and,
#                                                 within about 8 minutes on 16 cores, print
#                                                 nvidia-smi's line, the device-to-device copy
#                                                 bandwidth, the PTX of every codegen test checked
#                                                 by ptxas, the DSL test suite on NV, the LLM's
#                                                 logits on NV against the CPU's on small synthetic
#                                                 models, the decode matmuls with the default GPU
#                                                 opts and their neighbours (nv_matvec_sweep), and
#                                                 the LLM benchmark (tok/s, with launch lists too, then each
#                                                 kernel's time by CUDA events) on synthetic
#                                                 8B-shaped Q8_0 and Q4_K_M models; also into
#                                                 OUT/device-check.txt, with each section's seconds;
#                                                 quick (about 2 minutes): the sweep's defaults only,
#                                                 and the benchmark without -v or --no-graphs
#                                                 (SWEEP=full: the whole sweep even so; PROFILE=1:
#                                                 and each kernel's time, -v)
#
# With the device tool: bundle here, then run `scripts/device-check.sh run build/nv-check "$OUT"`
# there with carry ["build/nv-check"].
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

bundle() {
  local build=${1:-$root/build}
  "$root/scripts/setup.sh" "$build" > /dev/null || { echo "device-check: the build failed"; exit 1; }
  local out=$build/nv-check stage
  mkdir -p "$out"
  stage=$(mktemp -d)
  mkdir -p "$stage/nv-check/bin" "$stage/nv-check/lib"
  local bins=("$build/examples/llm/cli/llm" "$build/examples/llm/synth/llm-synth" "$build/tests/bench/nv_bandwidth"
              "$build/tests/bench/nv_matvec_sweep" "$build/tests/runtime/codegen/codegen_nvptx_test")
  for t in "$build"/tests/dsl/dsl_*_test; do
    case "$(basename "$t")" in dsl_amd_*|dsl_errors_test) ;; *) bins+=("$t") ;; esac  # AMD-only and compile-error tests stay
  done
  cp "${bins[@]}" "$stage/nv-check/bin/"
  # Every library the binaries load, but glibc's own (the GPU machine has its own glibc, as new
  # as this one's or newer).
  # tg's own (libtg*.so) travel with the binaries, so that the others' archive (LLVM's most of
  # it) is packed again only when they change.
  mkdir -p "$stage/nv-check/tg"
  for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
      libtg*) cp -L "$lib" "$stage/nv-check/tg/" ;;
      *) cp -L "$lib" "$stage/nv-check/lib/" ;;
    esac
  done
  cp "$build/drivers/tg-nv-worker" "$stage/nv-check/tg/"  # BEAM's worker, found beside libtg
  tar -C "$stage" -cf - nv-check/bin nv-check/tg | xz -T2 -6 > "$out/bins.tar.xz"
  local sum
  sum=$(cd "$stage" && sha256sum nv-check/lib/* | sha256sum | cut -c1-16)
  if [ "$(cat "$out/libs.sum" 2>/dev/null)" != "$sum" ]; then
    tar -C "$stage" -cf - nv-check/lib | xz -T2 -9 > "$out/libs.tar.xz"
    echo "$sum" > "$out/libs.sum"
  fi
  rm -rf "$stage"
  echo "device-check: $out, $(du -cm "$out"/*.tar.xz | tail -1 | cut -f1) MiB"
}

# "== name" and, when it ends, "(name: N s)".
section() { echo "== $1"; section_name=$1; section_start=$(date +%s); }
section_end() { echo "($section_name: $(( $(date +%s) - section_start )) s)"; }

# Cosine and greedy agreement of two float32 logit files of n_vocab per position.
compare_logits() {
  python3 - "$1" "$2" "$3" <<'EOF'
import array, math, sys
def read(path):
    a = array.array("f")
    with open(path, "rb") as f: a.frombytes(f.read())
    return a
a, b, vocab = read(sys.argv[1]), read(sys.argv[2]), int(sys.argv[3])
if len(a) != len(b) or len(a) % vocab: sys.exit(f"sizes differ: {len(a)} and {len(b)} floats")
cosines, same, worst = [], 0, 0.0
for p in range(len(a) // vocab):
    x, y = a[p * vocab:(p + 1) * vocab], b[p * vocab:(p + 1) * vocab]
    norms = math.sqrt(sum(u * u for u in x) * sum(v * v for v in y))
    cosines.append(sum(u * v for u, v in zip(x, y)) / norms if norms > 0 else float("nan"))
    same += max(range(vocab), key=x.__getitem__) == max(range(vocab), key=y.__getitem__)
    worst = max(worst, max(abs(u - v) for u, v in zip(x, y)))
n = len(a) // vocab
zero = sum(c != c for c in cosines)  # nan: a position whose logits are all zero
print(f"{n} positions: min cosine {min(c for c in cosines if c == c) if zero < n else float('nan'):.6f}"
      f"{f' ({zero} with all-zero logits)' if zero else ''}, greedy token equal at {same}/{n}, max |diff| {worst:.3g}")
EOF
}

run() {
  local from=$1 out=${2:-.} quick=${3:-}
  local dir
  dir=$(mktemp -d)
  for a in "$from"/libs.tar.xz "$from"/bins.tar.xz; do
    tar -C "$dir" -xJf "$a" || { echo "device-check: cannot unpack $a"; exit 1; }
  done
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$dir/nv-check/tg:$dir/nv-check/lib" PATH="$PATH:/usr/local/cuda/bin"
  local bin=$dir/nv-check/bin models=$dir/models
  mkdir -p "$models"
  {
    if [ -n "$quick" ]; then  # both 8B models written meanwhile, on the CPUs the GPU sections leave idle
      for type in Q8_0 Q4_K_M; do
        "$bin/llm-synth" --preset llama3.1-8b --type "$type" -o "$models/8b-$type.gguf" > "$models/synth-$type.log" 2>&1 &
      done
    fi
    section "machine"
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.memory --format=csv,noheader
    echo "$(nproc) CPUs, $(ldd --version | head -1)"
    section_end

    section "bandwidth"
    timeout 60 "$bin/nv_bandwidth"
    section_end

    section "PTX of the codegen tests (ptxas: $(command -v ptxas || echo missing))"
    timeout 120 "$bin/codegen_nvptx_test" 2>&1 | tail -4
    section_end

    section "DSL tests on NV"
    ls "$bin"/dsl_*_test | xargs -P 8 -I{} sh -c \
      'r=$(TG_TEST_DEVICE=NV timeout 90 {} 2>&1); echo "$(basename {}): rc $? $(echo "$r" | grep -E "test cases:" | tr -s " ")";
       echo "$r" | grep -E "ERROR|error:|CHECK|REQUIRE|what\(\)" | head -12 | sed "s/^/    /"'
    section_end

    section "LLM logits on NV against the CPU (small synthetic models)"
    local tokens=1,300,301,302,303,304,305,306,307,308,309,310,311,312,313,314,315,316,317,318,319,320
    for type in F32 Q8_0 Q4_K_M; do
      local m=$models/small-$type.gguf
      timeout 60 "$bin/llm-synth" --n-embd 512 --n-layer 2 --n-head 8 --n-head-kv 2 --n-ff 1024 --vocab-size 2048 \
        --type "$type" --random-norms -o "$m" > "$models/synth.log" 2>&1 || { tail -3 "$models/synth.log"; continue; }
      timeout 60 "$bin/llm" --model "$m" --device CPU --tokens "$tokens" --dump-logits "$models/cpu.f32" > /dev/null 2>&1
      if timeout 90 "$bin/llm" --model "$m" --device NV --tokens "$tokens" --dump-logits "$models/nv.f32" > "$models/nv.log" 2>&1; then
        printf '%s: ' "$type"; compare_logits "$models/cpu.f32" "$models/nv.f32" 2048
      else
        echo "$type: llm --device NV failed:"; tail -5 "$models/nv.log"
      fi
    done
    section_end

    section "BEAM on NV (TG_BEAM=2, candidates in tg-nv-worker) on the small Q8_0 model, then from its cache"
    local cache=$models/tuning.db
    TG_BEAM=2 TG_CACHE=$cache timeout 240 "$bin/llm" --model "$models/small-Q8_0.gguf" --device NV --benchmark 8 2>&1 |
      grep -E "^beam: .* candidates, .* in [0-9]+ ms|^prefill|^decode|^error" | tail -14
    TG_CACHE=$cache timeout 60 "$bin/llm" --model "$models/small-Q8_0.gguf" --device NV --benchmark 8 2>&1 | grep -E "^prefill|^decode|^error"
    section_end

    section "decode matmuls at the 8B shapes: default GPU opts and their neighbours"
    local defaults=${quick:+--defaults}
    [ "${SWEEP:-}" = full ] && defaults=
    timeout 180 "$bin/nv_matvec_sweep" NV $defaults > "$out/matvec-sweep.txt" 2>&1
    head -3 "$out/matvec-sweep.txt"; sed -n '/^per matmul/,$p' "$out/matvec-sweep.txt"; echo "(every row: OUT/matvec-sweep.txt)"
    section_end

    for type in Q8_0 Q4_K_M; do
      section "LLM, 8B-shaped $type (n_embd 4096, 32 layers, 8 KV heads, ffn 14336)"
      local m=$models/8b-$type.gguf
      if [ -n "$quick" ]; then
        wait; tail -1 "$models/synth-$type.log"
      else
        timeout 150 "$bin/llm-synth" --preset llama3.1-8b --type "$type" -o "$m" > "$models/synth.log" 2>&1; tail -1 "$models/synth.log"
      fi
      echo "-- decode and prefill, graphs replayed as CUDA graphs"
      timeout 150 "$bin/llm" --model "$m" --device NV --max-context 1024 --benchmark 32 2>&1 | grep -v -E "^ +[0-9.]+ ms" | tail -12
      echo "-- the same, graphs replayed as launch lists (TG_NV_GRAPHS=0)"
      TG_NV_GRAPHS=0 timeout 150 "$bin/llm" --model "$m" --device NV --max-context 1024 --benchmark 32 2>&1 | grep -E "^prefill|^error"
      if [ -n "$quick" ] && [ "${PROFILE:-}" = 1 ]; then
        echo "-- each kernel by CUDA events (-v)"
        timeout 150 "$bin/llm" --model "$m" --device NV --max-context 1024 --benchmark 4 -v 2>&1 | grep -E "^[0-9.]+ ms|^prefill|^decode kernel"
      fi
      if [ -n "$quick" ]; then rm -f "$m"; section_end; continue; fi
      if [ "$type" = Q8_0 ]; then
        echo "-- the same, each kernel launched on its own (--no-graphs)"
        timeout 150 "$bin/llm" --model "$m" --device NV --max-context 1024 --benchmark 32 --no-graphs 2>&1 | grep -E "^prefill"
      fi
      echo "-- each kernel by CUDA events (-v)"
      timeout 150 "$bin/llm" --model "$m" --device NV --max-context 1024 --benchmark 4 -v 2>&1 | grep -v -E "^ +[0-9.]+ ms" | tail -70
      rm -f "$m"
      section_end
    done
  } 2>&1 | tee "$out/device-check.txt"
  rm -rf "$dir"
}

case "${1:-}" in
  bundle) shift; bundle "$@" ;;
  run) shift; [ $# -ge 1 ] || { echo "usage: $0 run DIR [OUT]"; exit 2; }; run "$@" ;;
  *) sed -n '2,24p' "$0"; exit 2 ;;
esac
