#!/usr/bin/env bash
# size_report.sh: lines per folder (generated tables apart), DSL op count and env knobs,
# for the size delta in a change description.
set -euo pipefail
cd "$(dirname "$0")/.."
count() { git ls-files "$@" | grep -v -e '/regs/' -e '_gen\.hpp$' | xargs -r cat | wc -l; }
printf '%-28s %8s\n' folder lines
for dir in include/tg runtime drivers/cpu drivers/amd drivers/emu examples tests scripts; do
  [ -d "$dir" ] || continue
  printf '%-28s %8d\n' "$dir" "$(count "$dir")"
done
printf '%-28s %8d\n' "generated (regs, *_gen.hpp)" "$(git ls-files drivers/amd/regs 'runtime/queue/*_gen.hpp' | xargs -r cat | wc -l)"
echo "AST ops: $(awk '/op_names\[\] = {/,/};/' include/tg/ast/node.hpp | grep -o '"[^"]*"' | wc -l)"
echo "env knobs: $(git ls-files | xargs -r grep -ho 'getenv("[A-Z_]*")' 2>/dev/null | sort -u | tr '\n' ' ')"
