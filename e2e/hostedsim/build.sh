#!/usr/bin/env bash
# Builds the hosted API server simulator (e2e/hostedsim) once per
# machine into the cache directory, beside the test cluster's binaries:
#
#   e2e/hostedsim/build.sh          build unless the cached binary is current
#   e2e/hostedsim/build.sh --path   print the binary's path
#
# The binary is $HCP_CACHE_DIR/hostedsim/hostedsim; it is rebuilt when the
# module's go.mod, any .go file or this script changes (a digest of them is kept
# beside it). Standard library only. Needs Go 1.21 or later on PATH or in
# /usr/local/go. One build at a time (flock); GOMAXPROCS and -p default to 1
# (HCP_HOSTEDSIM_BUILD_JOBS changes it) to stay light on shared machines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

MODEL_DIR=$HCP_CACHE_DIR/hostedsim
MODEL_BIN=$MODEL_DIR/hostedsim

if [ "${1:-}" = "--path" ]; then
  echo "$MODEL_BIN"
  exit 0
fi
[ $# -eq 0 ] || e2e_die "usage: $0 [--path]"

stamp() {
  (cd "$here" && cat build.sh go.mod $(ls ./*.go | sort)) | sha256sum | cut -d' ' -f1
}
current() { [ -x "$MODEL_BIN" ] && [ "$(cat "$MODEL_DIR/stamp" 2>/dev/null)" = "$(stamp)" ]; }

current && exit 0
GO=$(find_go) || e2e_die "no Go 1.21 or later found (PATH, /usr/local/go); it builds the e2e hostedsim"

mkdir -p "$MODEL_DIR"
exec 9>"$MODEL_DIR/build.lock"
flock 9
current && exit 0

jobs=${HCP_HOSTEDSIM_BUILD_JOBS:-1}
start=$(date +%s)
e2e_log "building hostedsim (go $("$GO" env GOVERSION))"
(cd "$here" && GOFLAGS="-mod=readonly -trimpath" CGO_ENABLED=0 GOTOOLCHAIN=auto GOWORK=off \
  GO111MODULE=on GOMAXPROCS=$jobs "$GO" build -p "$jobs" -ldflags "-s -w" -o "$MODEL_BIN.tmp" .) ||
  e2e_die "building e2e/hostedsim failed"
mv -f "$MODEL_BIN.tmp" "$MODEL_BIN"
stamp >"$MODEL_DIR/stamp"
e2e_log "built $MODEL_BIN in $(($(date +%s) - start))s"
