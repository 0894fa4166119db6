#!/usr/bin/env bash
# Builds the real Cluster API the e2e suites run beside, once per machine:
# the core manager (sigs.k8s.io/cluster-api/core) and the Docker
# infrastructure provider (sigs.k8s.io/cluster-api/test/infrastructure/docker),
# whose in-memory backend needs no container engine. Both are compiled from
# the Go module proxy through the wrapper module in this directory (go.mod
# pins the Cluster API release; go.sum is committed, so every byte of source
# is checked against the checksum database).
#
#   e2e/capi/build.sh          build unless the cached managers are current
#   e2e/capi/build.sh --path   print the directory that holds them
#   e2e/capi/build.sh --src M  print the source directory of module M
#                              (cluster-api or cluster-api/test) in the
#                              module cache, downloading it if needed: the
#                              CRDs and webhook manifests are read from there
#
# The managers live in $HCP_CACHE_DIR/capi-<version>/ (outside the work tree,
# so `make clean` keeps them); they are rebuilt when go.mod, go.sum, tools.go
# or this recipe change. Needs Go 1.21 or later on PATH or in /usr/local/go
# (Go fetches the toolchain the module's go line names). A cold build takes a
# few minutes and about 1.2 GiB; HCP_CAPI_BUILD_JOBS (default 2) bounds
# GOMAXPROCS and -p. Set HCP_KEEP_BUILD=1 to keep the Go build cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

# Bump when the way the managers are made changes, so machines rebuild them.
RECIPE=1

CAPI_VERSION=$(awk '$1 == "sigs.k8s.io/cluster-api" && $2 ~ /^v/ {print $2}' "$here/go.mod")
CAPI_BIN_DIR=${CAPI_BIN_DIR:-$HCP_CACHE_DIR/capi-$CAPI_VERSION}
CORE_BIN=$CAPI_BIN_DIR/capi-manager
DOCKER_BIN=$CAPI_BIN_DIR/capd-manager

GO=$(find_go) || e2e_die "no Go 1.21 or later found (PATH, /usr/local/go); it builds Cluster API"
export GOFLAGS="-mod=readonly -trimpath" CGO_ENABLED=0 GOTOOLCHAIN=auto \
  GOWORK=off GO111MODULE=on

case "${1:-}" in
  --path) echo "$CAPI_BIN_DIR"; exit 0 ;;
  --src)
    m=sigs.k8s.io/${2:?usage: --src cluster-api|cluster-api/test}
    dir=$(cd "$here" && "$GO" list -m -f '{{.Dir}}' "$m" 2>/dev/null) || dir=
    if [ -z "$dir" ] || [ ! -d "$dir" ]; then
      (cd "$here" && "$GO" mod download "$m") || e2e_die "$m: download failed"
      dir=$(cd "$here" && "$GO" list -m -f '{{.Dir}}' "$m")
    fi
    [ -f "$dir/go.mod" ] || e2e_die "$m: no module sources in $dir"
    echo "$dir"
    exit 0 ;;
  "") ;;
  *) e2e_die "usage: $0 [--path | --src MODULE]" ;;
esac

capi_stamp() { module_stamp "$here" "$RECIPE"; }

capi_binaries_ok() {
  [ -x "$CORE_BIN" ] && [ -x "$DOCKER_BIN" ] &&
    [ "$(cat "$CAPI_BIN_DIR/recipe" 2>/dev/null)" = "$(capi_stamp)" ]
}

capi_binaries_ok && exit 0

mkdir -p "$CAPI_BIN_DIR"
# One build at a time per machine; a second caller waits and then reuses it.
exec 9>"$CAPI_BIN_DIR/build.lock"
flock 9
capi_binaries_ok && exit 0

jobs=${HCP_CAPI_BUILD_JOBS:-2}
export GOCACHE="$HCP_CACHE_DIR/gocache-capi"

# The version stamp Cluster API's own build (hack/version.sh) writes in.
ldflags="-s -w"
for v in gitVersion=$CAPI_VERSION gitMajor=1 gitTreeState=clean \
  gitCommit=module-$CAPI_VERSION buildDate=1970-01-01T00:00:00Z; do
  ldflags+=" -X sigs.k8s.io/cluster-api/version.$v"
done

progress_start "Cluster API $CAPI_VERSION managers (go $("$GO" env GOVERSION), -p $jobs)" \
  "the e2e-capi suite runs the real Cluster API, once per machine, cached in $CAPI_BIN_DIR" \
  "up to about 25 minutes of two cores (measured 26 min under load)" go_build_status
build_capi_bin() { # build_capi_bin OUTPUT PACKAGE
  local t=$(date +%s)
  e2e_log "building $(basename "$1") from $2 $CAPI_VERSION"
  GOMAXPROCS=$jobs go_build_logged "$GO" "$here" "$1.tmp" "$2" -p "$jobs" -ldflags "$ldflags" ||
    e2e_die "building $2 failed"
  mv -f "$1.tmp" "$1"
  e2e_log "built $(basename "$1") in $(($(date +%s) - t))s"
}
build_capi_bin "$CORE_BIN" sigs.k8s.io/cluster-api/core
build_capi_bin "$DOCKER_BIN" sigs.k8s.io/cluster-api/test/infrastructure/docker

capi_stamp >"$CAPI_BIN_DIR/recipe"
capi_binaries_ok || e2e_die "$CAPI_BIN_DIR: the managers are not there after the build"
if [ "${HCP_KEEP_BUILD:-0}" != 1 ]; then
  rm -rf "$GOCACHE"
fi
progress_stop
