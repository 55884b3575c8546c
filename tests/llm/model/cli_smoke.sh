#!/bin/sh
# cli_smoke.sh: the llm command on the tiny-llama fixture: tokenize, greedy text from token
# ids, dump-logits size, a benchmark run (on the CPU and behind the emulated USB bridge), --cache-type,
# and error messages. Skips (77) without fixtures.
llm="$1"
m="$TG_FIXTURES/models/tiny-llama-f32.gguf"
[ -f "$m" ] || exit 77
fail() { echo "FAIL: $*"; exit 1; }
ids=$("$llm" -m "$m" --tokenize -p "The quick brown fox" 2>/dev/null) || fail "tokenize exited $?"
[ "$ids" = "1 450 4996 17354 1701 29916" ] || fail "tokenize printed '$ids'"
text=$("$llm" -m "$m" --tokens 1,450,4996,17354,1701,432,17204,975,278,17366,11203 -n 16 --max-context 64 2>/dev/null) ||
  fail "generation exited $?"
[ "$text" = "yanyanyanyanyanyanyanyanyanyanyanyanyanyanyanyan" ] || fail "greedy text '$text'"
out="${TMPDIR:-/tmp}/tg_cli_smoke_$$.f32"
"$llm" -m "$m" --dump-logits "$out" --tokens 1,450,4996 2>/dev/null || fail "dump-logits exited $?"
size=$(wc -c < "$out")
rm -f "$out"
[ "$size" -eq $((3 * 32000 * 4)) ] || fail "dump-logits wrote $size bytes"
bench=$("$llm" -m "$m" --benchmark 3 --max-context 64 --chunk-size 8 2>/dev/null) || fail "benchmark exited $?"
lines=$(echo "$bench" | grep -c "tok/s")
[ "$lines" -eq 4 ] || fail "benchmark printed $lines timing lines"
# The first prompt after warm-up (13 tokens: a chunk of 8, a tile of 4, one) compiles nothing.
echo "$bench" | grep -q "^first prompt after warm-up: 13 tokens, time to first token [0-9.]* s, 0 kernels compiled for it$" ||
  fail "benchmark's first-prompt line: $(echo "$bench" | head -1)"
echo "$bench" | grep -q "^bridge:" && fail "a CPU benchmark reported bridge transfers"
# Behind the emulated USB bridge: warm-up compiled and captured everything (prefill chunks and
# decode replay graphs), and the benchmark counts the bridge's transfers per token.
bench=$("$llm" -m "$m" --device AMD:EMU:gfx12:usb --benchmark 2 --max-context 24 --chunk-size 8 2>/dev/null) ||
  fail "benchmark on AMD:EMU:gfx12:usb exited $?"
echo "$bench" | grep -q "^first prompt after warm-up: 13 tokens, time to first token [0-9.]* s, 0 kernels compiled for it$" ||
  fail "AMD:EMU benchmark's first-prompt line: $(echo "$bench" | head -1)"
echo "$bench" | grep -q "^bridge: [0-9.]* USB transfers ([0-9.]* KiB) per decode token replaying its graph, [0-9.]* of them polls" ||
  fail "AMD:EMU benchmark's bridge line: $(echo "$bench" | tail -1)"
err=$("$llm" -m "$m" --device AMD:EMU:gfx12:usb --tokens 1,450,4996 -n 2 --max-context 24 -v 2>&1 >/dev/null) ||
  fail "-v generation on AMD:EMU:gfx12:usb exited $?"
echo "$err" | grep -q "^bridge: [0-9]* USB transfers for the prompt, [0-9.]* per generated token" ||
  fail "-v generation's bridge line: '$(echo "$err" | tail -1)'"
# --beam: the warm-up searches the kernels (a line per search on stderr), into a fresh tuning cache;
# the greedy text stays what the default shapes give.
cache="${TMPDIR:-/tmp}/tg_cli_smoke_beam_$$"
mkdir -p "$cache"
err=$(TG_CACHE="$cache/tuning.db" "$llm" -m "$m" --tokens 1,450,4996,17354,1701,432,17204,975,278,17366,11203 -n 4 \
  --max-context 32 --chunk-size 8 --beam 1 2>&1 >"$cache/text") || fail "--beam 1 exited $?"
text=$(cat "$cache/text")
rm -rf "$cache"
[ "$text" = "yanyanyanyan" ] || fail "--beam 1 greedy text '$text'"
echo "$err" | grep -q "^beam: " || fail "--beam 1 searched nothing: '$err'"
# --beam on AMD:EMU: GPU schedules searched on the runner's own emulated GPU, ranked by the
# modeled cost; the greedy text stays the same.
mkdir -p "$cache"
err=$(TG_CACHE="$cache/tuning.db" "$llm" -m "$m" --device AMD:EMU --tokens 1,450,4996,17354,1701,432,17204,975,278,17366,11203 \
  -n 4 --max-context 32 --chunk-size 8 --beam 1 2>&1 >"$cache/text") || fail "--beam 1 on AMD:EMU exited $?"
text=$(cat "$cache/text")
rm -rf "$cache"
[ "$text" = "yanyanyanyan" ] || fail "--beam 1 on AMD:EMU greedy text '$text'"
echo "$err" | grep -q "^beam: r_.* group=" || fail "--beam 1 on AMD:EMU searched no GPU schedule: '$err'"
text=$("$llm" -m "$m" --tokens 1,450,4996 -n 4 --max-context 64 --cache-type f16 2>/dev/null) || fail "--cache-type f16 exited $?"
[ -n "$text" ] || fail "--cache-type f16 printed nothing"
err=$("$llm" -m "$m" --tokens 1,450 -n 1 --cache-type f8 2>&1) && fail "--cache-type f8 was accepted"
case "$err" in *"cache-type"*) ;; *) fail "--cache-type f8 message '$err'" ;; esac
err=$("$llm" -m "$m" --tokens 1,99999 -n 1 2>&1) && fail "an out-of-range id was accepted"
case "$err" in *"error: "*"99999"*) ;; *) fail "error message '$err'" ;; esac
echo ok
