#!/usr/bin/env bash
# Builds the Service stand-in of the rolling update test (e2e/svcproxy)
# once per machine into the cache directory:
#
#   e2e/svcproxy/build.sh          build unless the cached binary is current
#   e2e/svcproxy/build.sh --path   print the binary's path
#
# The binary is $HCP_CACHE_DIR/svcproxy/svcproxy; it is rebuilt when go.mod,
# any .go file or this script changes (go_build_cached in e2e/lib.sh).
# Standard library only. Needs Go 1.21 or later on PATH or in
# /usr/local/go. GOMAXPROCS and -p default to 1 (HCP_SVCPROXY_BUILD_JOBS
# changes it) to stay light on shared machines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

PROXY_BIN=$HCP_CACHE_DIR/svcproxy/svcproxy

if [ "${1:-}" = "--path" ]; then
  echo "$PROXY_BIN"
  exit 0
fi
[ $# -eq 0 ] || e2e_die "usage: $0 [--path]"
go_build_cached "$here" "$PROXY_BIN" "${HCP_SVCPROXY_BUILD_JOBS:-1}"
