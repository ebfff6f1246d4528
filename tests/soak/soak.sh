#!/usr/bin/env bash
# tests/soak/soak.sh [MINUTES] [BUILD_DIR]: partitad under a rig's load (see soak.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
minutes=${1:-2}
build=${2:-$root/build}
ninja -C "$build" daemon/partitad proto/partita_pb2.py >/dev/null
export PARTITA_PB2_DIR="$build/proto" OPENBLAS_NUM_THREADS=1
exec /usr/bin/python3 "$root/tests/soak/soak.py" "$build/daemon/partitad" "$root" "$minutes"
