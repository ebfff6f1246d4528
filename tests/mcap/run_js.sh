#!/usr/bin/env bash
# An independent reader and writer against ours (docs/recording.md):
#  1. `partita simulate --record` writes a recording; @mcap/core reads it (stream and indexed,
#     every CRC and index), protobufjs decodes it with the schema the file carries, and the
#     states must equal the CSV rows simulate printed, bit for bit;
#  2. @mcap/core rewrites the recording (its own chunks, indexes and summary); our reader must
#     find it complete, `export --csv` must print simulate's rows and `replay` must reproduce
#     every state bit for bit.
# Skips (exit 77) without node or npm; CI installs both (.ci/install-deps).
# usage: run_js.sh PARTITA MODELS_DIR WORK_DIR
set -euo pipefail
partita=$1 models=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "SKIP: node or npm not installed (Debian: nodejs npm)"
  exit 77
fi
if [ ! -d "$here/js/node_modules/@mcap/core" ]; then
  bash "$here/js/setup.sh" || true
fi
if [ ! -d "$here/js/node_modules/@mcap/core" ]; then
  echo "SKIP: @mcap/core could not be installed (npm ci in tests/mcap/js)"
  exit 77
fi
mkdir -p "$work"
cd "$work"
rm -f run.mcap js.mcap
for model in pendulum.yaml double_pendulum.yaml; do
  args=(--duration 4 --record run.mcap)
  [ "$model" = pendulum.yaml ] && args+=(--set tau=0.25 --init hinge=0.3 --init-rate hinge=-1)
  "$partita" simulate "$models/$model" "${args[@]}" > sim.csv
  node "$here/js/check_recording.cjs" read run.mcap sim.csv "$models/$model"
  node "$here/js/check_recording.cjs" rewrite run.mcap js.mcap
  "$partita" info js.mcap --json > info.json
  grep -q '"complete":true' info.json || { echo "FAIL: our reader: $(cat info.json)"; exit 1; }
  "$partita" export js.mcap --csv | cmp - sim.csv
  "$partita" replay js.mcap
done
echo "ok"
