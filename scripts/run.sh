#!/usr/bin/env bash
# run.sh: the README's main command. Sets up, builds, and runs the main job offline: the
# LLM example on a synthetic model made on the spot (random weights, a byte-level
# vocabulary: the text it writes is noise, the machinery is real), then its benchmark.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
"$root/scripts/setup.sh" "$build"

"$build/examples/quickstart/quickstart"
echo

model=$build/models/synth-llama-q8_0.gguf
if [ ! -f "$model" ]; then
  mkdir -p "$build/models"
  "$build/examples/llm/synth/llm-synth" -o "$model" --arch llama --type Q8_0 \
    --n-embd 1024 --n-layer 8 --n-head 16 --n-head-kv 4 --n-ff 2816 --context-length 2048 --seed 1
fi
"$build/examples/llm/cli/llm" --model "$model" --prompt "Why is the sky blue?" -n 32 --temperature 0.8 --seed 7
echo
"$build/examples/llm/cli/llm" --model "$model" --prompt "Why is the sky blue?" --benchmark 16
cat <<MSG

That was a synthetic model. To run a real one, download a GGUF (e.g. Qwen2.5-0.5B-Instruct-Q4_K_M.gguf) and:
  $build/examples/llm/cli/llm --model Qwen2.5-0.5B-Instruct-Q4_K_M.gguf --prompt "Why is the sky blue?"
  $build/examples/llm/cli/llm --model Qwen2.5-0.5B-Instruct-Q4_K_M.gguf --chat
  $build/examples/llm/cli/llm --model Qwen2.5-0.5B-Instruct-Q4_K_M.gguf --benchmark 20

With an AMD RX 7000 / RX 9000 card (PCIe slot with amdgpu unbound, or an ASM2464 USB dock):
  $build/examples/tg-amd/tg-amd list
  $build/examples/tg-amd/tg-amd info AMD:0
  $build/examples/tg-amd/tg-amd copy-bench AMD:0
Without one, the same against the emulated GPU behind an emulated USB bridge:
  $build/examples/tg-amd/tg-amd --emulate gfx12 --via usb info
MSG
