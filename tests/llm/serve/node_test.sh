#!/bin/sh
# node_test.sh: runs a Node test script against `llm --serve` on the synthetic model.
# Usage: node_test.sh DEPS_DIR SCRIPT.mjs PACKAGE...   (PACKAGE: openai or puppeteer-core)
# Installs the npm packages into DEPS_DIR (the build folder) on first use, pinned for the
# machine's Node: openai@6.49.0 on Node 20+, openai@4.104.0 on Node 18, puppeteer-core@24.43.1
# (node >= 18). Starts the server on a free loopback port, passes the script its URL, and
# checks that SIGTERM then stops the server with status 0. Skips (77) only when Node, the npm
# registry or Chromium cannot be had. TG_SERVE_CONTEXT: the server's --max-context (default 4096).
set -u
deps="$1"
script="$2"
shift 2
command -v node > /dev/null || { echo "SKIP: node is not installed (scripts/setup.sh installs nodejs)"; exit 77; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || { echo "SKIP: node $major is older than 18"; exit 77; }
mkdir -p "$deps"
[ -f "$deps/package.json" ] || echo '{"private": true}' > "$deps/package.json"
for package in "$@"; do
  case "$package" in
    openai) if [ "$major" -ge 20 ]; then version=6.49.0; else version=4.104.0; fi ;;
    puppeteer-core) version=24.43.1 ;;
    *) echo "FAIL: no pinned version for $package"; exit 1 ;;
  esac
  have=$(node -p "try{require('$deps/node_modules/$package/package.json').version}catch{''}" 2> /dev/null)
  if [ "$have" != "$version" ]; then
    command -v npm > /dev/null || { echo "SKIP: npm is not installed"; exit 77; }
    npm install --prefix "$deps" --no-audit --no-fund --loglevel=error "$package@$version" ||
      { echo "SKIP: npm could not install $package@$version (offline?)"; exit 77; }
  fi
done
log=$(mktemp)
trap 'rm -f "$log"; [ -n "${pid:-}" ] && kill -9 "$pid" 2> /dev/null' EXIT
"$TG_SERVE_LLM" -m "$TG_SERVE_MODEL" --serve 0 --threads 1 --max-context "${TG_SERVE_CONTEXT:-4096}" \
  --queue-limit 16 2> "$log" &
pid=$!
port=""
for _ in $(seq 1 600); do
  port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log")
  [ -n "$port" ] && break
  kill -0 "$pid" 2> /dev/null || { cat "$log"; echo "FAIL: the server exited"; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { cat "$log"; echo "FAIL: the server did not listen"; exit 1; }
# The script is copied next to node_modules so that its imports resolve there.
cp "$script" "$deps/"
node "$deps/$(basename "$script")" "http://127.0.0.1:$port"
rc=$?
kill -TERM "$pid"
wait "$pid"
server_rc=$?
pid=""
[ $rc -eq 0 ] || { cat "$log"; exit $rc; }
[ $server_rc -eq 0 ] || { cat "$log"; echo "FAIL: the server exited $server_rc after SIGTERM"; exit 1; }
exit 0
