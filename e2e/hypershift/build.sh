#!/usr/bin/env bash
# Builds hcp-hypershift, HyperShift's own NodePool reconciler (main.go), once
# per machine, and stages beside it the CRDs an API server must serve for it
# to run. HyperShift is compiled from the Go module proxy through the module
# in this directory (go.mod pins the HyperShift release; go.sum is committed,
# so every byte of source is checked against the checksum database).
#
#   e2e/hypershift/build.sh          build unless the cached program is current
#   e2e/hypershift/build.sh --crds   stage the CRDs only (no compiling), unless staged
#   e2e/hypershift/build.sh --path   print the directory that holds it
#
# The program lives in $HCP_CACHE_DIR/hypershift-<version>/ (outside the work
# tree, so `make clean` keeps it), the CRDs in its crds/ directory, copied as
# they are from the module cache: HyperShift's HostedCluster and NodePool,
# and the Cluster API and AWS provider kinds the reconciler reads and writes,
# of the releases go.mod resolves. Their conversion is None (one version
# served), as the files have it: the conversion webhooks Cluster API's own
# kustomize patches add are not there. Beside real Cluster API, whose own
# CRDs come with its managers (e2e/capi), an instance serves those of
# crds-capi/ instead: HyperShift's HostedControlPlane and the AWS provider
# kinds HyperShift's install embeds, labelled as it labels them. The program
# is rebuilt when go.mod, go.sum, a .go file or this recipe change; CRDs
# missing from the cache are staged without a rebuild. Needs Go 1.21 or
# later on PATH or in /usr/local/go (Go fetches the toolchain the module's go
# line names). A cold build takes a few minutes; HCP_HYPERSHIFT_BUILD_JOBS
# (default 2) bounds GOMAXPROCS and -p. Set HCP_KEEP_BUILD=1 to keep the Go
# build cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

# Bump when the way the program is made changes (the CRDs staged included),
# so machines rebuild it.
RECIPE=1

HS_VERSION=$(awk '$1 == "github.com/openshift/hypershift" && $2 ~ /^v/ {print $2}' "$here/go.mod")
HS_BIN_DIR=${HS_BIN_DIR:-$HCP_CACHE_DIR/hypershift-$HS_VERSION}
HS_BIN=$HS_BIN_DIR/hcp-hypershift
CRD_DIR=$HS_BIN_DIR/crds

# The CRDs staged, as MODULE:PATH in that module's source.
HS_ASSETS=cmd/install/assets/hypershift-operator/zz_generated.crd-manifests
CRDS=(
  "github.com/openshift/hypershift:$HS_ASSETS/hostedclusters-Default.crd.yaml"
  "github.com/openshift/hypershift:$HS_ASSETS/nodepools-Default.crd.yaml"
)
for k in clusters machinedeployments machinesets machines machinehealthchecks; do
  CRDS+=("sigs.k8s.io/cluster-api:config/crd/bases/cluster.x-k8s.io_$k.yaml")
done
for k in awsmachinetemplates awsmachines; do
  CRDS+=("sigs.k8s.io/cluster-api-provider-aws/v2:config/crd/bases/infrastructure.cluster.x-k8s.io_$k.yaml")
done
# Beside real Cluster API ("capi-hypershift" instances, whose Cluster API
# CRDs are Cluster API's own), as HyperShift's install applies them
# (cmd/install/assets/assets.go, capiResources): its HostedControlPlane (the
# Cluster's control plane) and the AWS provider's cluster and machine kinds
# it embeds, each with the contract label cluster.x-k8s.io/v1beta1 naming
# the version Cluster API reads. Staged in crds-capi/, as
# MODULE:PATH=CONTRACT-VERSION.
CAPI_CRD_DIR=$HS_BIN_DIR/crds-capi
HS_INSTALL=cmd/install/assets
CAPI_CRDS=(
  "github.com/openshift/hypershift:$HS_INSTALL/hypershift-operator/zz_generated.crd-manifests/hostedcontrolplanes-Default.crd.yaml=v1beta1"
)
for k in awsclusters awsmachines awsmachinetemplates; do
  CAPI_CRDS+=("github.com/openshift/hypershift:$HS_INSTALL/cluster-api-provider-aws/infrastructure.cluster.x-k8s.io_$k.yaml=v1beta2")
done

GO=$(find_go) || e2e_die "no Go 1.21 or later found (PATH, /usr/local/go); it builds HyperShift"
# -buildvcs=false: the program is in this work tree, whose state (a git
# status) has no place in it.
export GOFLAGS="-mod=readonly -trimpath -buildvcs=false" CGO_ENABLED=0 \
  GOTOOLCHAIN=auto GOWORK=off GO111MODULE=on

crds_only=0
case "${1:-}" in
  --path) echo "$HS_BIN_DIR"; exit 0 ;;
  --crds) crds_only=1 ;;
  "") ;;
  *) e2e_die "usage: $0 [--path | --crds]" ;;
esac

hs_stamp() { module_stamp "$here" "$RECIPE"; }

hs_built() { [ -x "$HS_BIN" ] && [ "$(cat "$HS_BIN_DIR/recipe" 2>/dev/null)" = "$(hs_stamp)" ]; }
crds_staged() {
  local c
  for c in "${CRDS[@]}"; do
    [ -s "$CRD_DIR/$(basename "${c#*:}")" ] || return 1
  done
  for c in "${CAPI_CRDS[@]}"; do
    c=${c%=*}
    [ -s "$CAPI_CRD_DIR/$(basename "${c#*:}")" ] || return 1
  done
}
hs_ready() { hs_built && crds_staged; }

if [ $crds_only = 1 ]; then crds_staged && exit 0; else hs_ready && exit 0; fi

mkdir -p "$HS_BIN_DIR"
# One build at a time per machine; a second caller waits and then reuses it.
exec 9>"$HS_BIN_DIR/build.lock"
flock 9
if [ $crds_only = 1 ]; then crds_staged && exit 0; else hs_ready && exit 0; fi

# module_dir MODULE: the source directory of MODULE (at the version go.mod
# resolves) in the module cache, downloading it if needed.
module_dir() {
  local dir
  dir=$(cd "$here" && "$GO" list -m -f '{{.Dir}}' "$1" 2>/dev/null) || dir=
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    (cd "$here" && "$GO" mod download "$1") || e2e_die "$1: download failed"
    dir=$(cd "$here" && "$GO" list -m -f '{{.Dir}}' "$1")
  fi
  [ -f "$dir/go.mod" ] || e2e_die "$1: no module sources in $dir"
  echo "$dir"
}

# contract_labelled FILE VERSION: FILE's CRD with the label
# cluster.x-k8s.io/v1beta1: VERSION, as HyperShift's install adds it.
contract_labelled() {
  awk -v v="$2" '
    /^metadata:$/ && !m { print; m = 1; print "  labels:"; print "    cluster.x-k8s.io/v1beta1: " v; next }
    { print }' "$1"
}

# The CRDs first: a path missing from a module fails before any compiling
# starts. Each set is staged in a new directory that then replaces the old;
# staging alone (new CRDs, the program current) rebuilds nothing.
stage_crds() {
  local c f
  rm -rf "$CRD_DIR.tmp" "$CAPI_CRD_DIR.tmp"
  mkdir -p "$CRD_DIR.tmp" "$CAPI_CRD_DIR.tmp"
  for c in "${CRDS[@]}"; do
    f=$(module_dir "${c%%:*}")/${c#*:}
    [ -f "$f" ] || e2e_die "$f: no such CRD in ${c%%:*}"
    cp "$f" "$CRD_DIR.tmp/"
  done
  for c in "${CAPI_CRDS[@]}"; do
    f=${c%=*}
    f=$(module_dir "${f%%:*}")/${f#*:}
    [ -f "$f" ] || e2e_die "$f: no such CRD in ${c%%:*}"
    grep -q '^  labels:$' "$f" && e2e_die "$f: already labelled; contract_labelled would duplicate the label"
    contract_labelled "$f" "${c##*=}" >"$CAPI_CRD_DIR.tmp/$(basename "$f")"
  done
  chmod u+w "$CRD_DIR.tmp"/* "$CAPI_CRD_DIR.tmp"/*
  rm -rf "$CRD_DIR" "$CAPI_CRD_DIR"
  mv "$CRD_DIR.tmp" "$CRD_DIR"
  mv "$CAPI_CRD_DIR.tmp" "$CAPI_CRD_DIR"
}
crds_staged || stage_crds
[ $crds_only = 1 ] && exit 0
hs_built && exit 0

jobs=${HCP_HYPERSHIFT_BUILD_JOBS:-2}
export GOCACHE="$HCP_CACHE_DIR/gocache-hypershift"

progress_start "HyperShift $HS_VERSION NodePool reconciler (go $("$GO" env GOVERSION), -p $jobs)" \
  "the e2e suites run HyperShift's own reconciler, once per machine, cached in $HS_BIN_DIR" \
  "about 4 minutes of two cores (measured 3.6 min)" go_build_status

# The stamp of the sources as they are when the build starts: a source
# changed during the build makes the program out of date, not current.
stamp=$(hs_stamp)
t=$(date +%s)
e2e_log "building hcp-hypershift from $here (HyperShift $HS_VERSION)"
GOMAXPROCS=$jobs go_build_logged "$GO" "$here" "$HS_BIN.tmp" . -p "$jobs" -ldflags "-s -w" ||
  e2e_die "building hcp-hypershift failed"
mv -f "$HS_BIN.tmp" "$HS_BIN"
e2e_log "built hcp-hypershift in $(($(date +%s) - t))s"

echo "$stamp" >"$HS_BIN_DIR/recipe"
hs_ready || e2e_die "$HS_BIN_DIR: the program or its CRDs are not there after the build"
if [ "${HCP_KEEP_BUILD:-0}" != 1 ]; then
  rm -rf "$GOCACHE"
fi
progress_stop
