#!/bin/sh
# cli_vram.sh: `llm` on a model whose KV cache does not fit an emulated 128 MiB card (about 29 MiB
# that the driver can allocate): the memory plan's error (llm/model/memory_plan.hpp) with the numbers and
# a --max-context that fits, exit status 1 and no crash; then that context runs.
llm="$1"
synth="$2"
fail() { echo "FAIL: $*"; rm -f "$m"; exit 1; }
m="${TMPDIR:-/tmp}/tg_cli_vram_$$.gguf"
"$synth" -q -o "$m" --context-length 65536 --seed 2 || fail "llm-synth exited $?"
dev="AMD:EMU:vram=128M"
err=$("$llm" -m "$m" --device "$dev" --max-context 65536 --tokens 1,2,3 -n 2 2>&1)
rc=$?
echo "$err"
[ "$rc" -eq 1 ] || fail "a model that does not fit exited $rc"
case "$err" in *"error: "*"does not fit"*"KV cache "*" MiB is free; --max-context "*" or less would fit"*) ;;
  *) fail "message '$err'" ;; esac
case "$err" in *"terminate called"*|*"Aborted"*|*"core dumped"*) fail "crashed: '$err'" ;; esac
n=$(printf '%s\n' "$err" | sed -n 's/.*--max-context \([0-9]*\) or less would fit.*/\1/p')
[ -n "$n" ] && [ "$n" -gt 1000 ] && [ "$n" -lt 65536 ] || fail "suggested context '$n'"
"$llm" -m "$m" --device "$dev" --max-context "$n" --tokens 1,2,3 -n 2 >/dev/null 2>&1 || fail "--max-context $n exited $?"
rm -f "$m"
echo ok
