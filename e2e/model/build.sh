#!/usr/bin/env bash
# Builds the HyperShift / Cluster API behaviour model (e2e/model) once per
# machine into the cache directory, beside the test cluster's binaries:
#
#   e2e/model/build.sh          build unless the cached binary is current
#   e2e/model/build.sh --path   print the binary's path
#
# The binary is $HCP_CACHE_DIR/model/hcp-model; it is rebuilt when the
# module's go.mod, go.sum, any .go file or this script changes (go_build_cached
# of e2e/lib.sh keeps a digest of them beside it). The module pins k8s.io/client-go and k8s.io/apimachinery to the
# versions of e2e/apiserver/go.mod, so on a machine that has built the API
# server the Go module cache already holds them; otherwise they come from the
# module proxy and go.sum checks them. Needs Go 1.21 or later on PATH or in
# /usr/local/go. One build at a time (flock); GOMAXPROCS and -p default to 1
# (HCP_MODEL_BUILD_JOBS changes it) to stay light on shared machines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

MODEL_DIR=$HCP_CACHE_DIR/model
MODEL_BIN=$MODEL_DIR/hcp-model

if [ "${1:-}" = "--path" ]; then
  echo "$MODEL_BIN"
  exit 0
fi
[ $# -eq 0 ] || e2e_die "usage: $0 [--path]"

go_build_cached "$here" "$MODEL_BIN" "${HCP_MODEL_BUILD_JOBS:-1}"
