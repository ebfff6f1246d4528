#!/usr/bin/env bash
# Installs the independent MCAP reader the recording tests use (@mcap/core and protobufjs from
# the npm registry, versions pinned by package-lock.json) into tests/mcap/js/node_modules.
# .ci/install-deps runs it; tests/mcap/run_js.sh runs it when node_modules is missing.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null; then
  echo "setup.sh: npm not found: the independent-reader test will skip" >&2
  exit 0
fi
npm ci --no-audit --no-fund --ignore-scripts
