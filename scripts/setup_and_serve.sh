#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build, and serve the app on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
ATTNLAB_SKIP_NATIVE=1 bash scripts/build.sh
exec node scripts/serve.mjs --port "${PORT:-8080}"
