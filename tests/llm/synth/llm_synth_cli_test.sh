#!/bin/sh
# llm_synth_cli_test.sh: runs llm-synth ($1) end to end: a model is written, bad input fails.
set -u
synth="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$synth" -q -o "$dir/a.gguf" --arch qwen2 --type Q4_K_M --n-layer 2 --seed 5 || fail "writing a qwen2 Q4_K_M model"
[ -s "$dir/a.gguf" ] || fail "no model written"
head -c 4 "$dir/a.gguf" | grep -q GGUF || fail "the file does not start with GGUF"
"$synth" -q -o "$dir/b.gguf" --arch qwen2 --type Q4_K_M --n-layer 2 --seed 5 --threads 3 || fail "second write"
cmp -s "$dir/a.gguf" "$dir/b.gguf" || fail "same seed, different bytes"

"$synth" -o "$dir/c.gguf" --arch llama --rope-freqs --untied --vocab-size 512 2> "$dir/log" || fail "llama with options"
grep -q "llm-synth: wrote" "$dir/log" || fail "no completion message: $(cat "$dir/log")"

"$synth" --list-presets | grep -q "qwen3-0.6b" || fail "--list-presets lacks qwen3-0.6b"

"$synth" -o "$dir/d.gguf" --type Q3_K 2> "$dir/err" && fail "an unknown type was accepted"
grep -q "^error: synth: unknown weight type 'Q3_K'" "$dir/err" || fail "unexpected message: $(cat "$dir/err")"
"$synth" -o "$dir/d.gguf" --arch qwen3 --rope-freqs 2> "$dir/err" && fail "rope_freqs on qwen3 was accepted"
"$synth" -o "$dir/d.gguf" --vocab-size 10 2> "$dir/err" && fail "a vocab size below the vocabulary was accepted"
"$synth" 2> "$dir/err" && fail "a missing --output was accepted"
[ -e "$dir/d.gguf" ] && fail "a failed run left a file behind"
exit 0
