#!/usr/bin/env bash
# run.sh: the README's main command. Sets up, builds, and runs the main job.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" "$root/build"
"$root/build/examples/quickstart/quickstart"
