#!/usr/bin/env bash
# Builds the test cluster's programs once per machine: kube-apiserver and
# kubectl of one Kubernetes release and the etcd that release is tested with,
# all compiled from the Go module proxy through the wrapper module in
# e2e/apiserver/ (its go.mod pins k8s.io/kubernetes and each k8s.io/* staging
# module to the versions published for that release; go.sum is committed, so
# every byte of source is checked against the checksum database).
#
#   e2e/build-kube-apiserver.sh            build unless the cached binaries are current
#   e2e/build-kube-apiserver.sh --path     print the directory that holds them
#   e2e/build-kube-apiserver.sh --pin V    rewrite e2e/apiserver/go.mod for
#                                          Kubernetes V (e.g. 1.34.4) and tidy it
#
# The binaries live in $HCP_CACHE_DIR/k8s-<version>/ (outside the work tree, so
# `make clean` keeps them); they are rebuilt when go.mod, go.sum or this
# recipe change. Needs Go 1.21 or later on PATH or in /usr/local/go (older
# than the module's `go` line, Go fetches the toolchain it names from the
# module proxy). Set HCP_KEEP_BUILD=1 to keep the Go build cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# Bump when the way the binaries are made changes, so machines rebuild them.
RECIPE=3

case "${1:-}" in
  --path) echo "$KUBE_BIN_DIR"; exit 0 ;;
  --pin) pin=${2:?usage: --pin VERSION} ;;
  "") pin= ;;
  *) e2e_die "usage: $0 [--path | --pin VERSION]" ;;
esac

GO=$(find_go) || e2e_die "no Go 1.21 or later found (PATH, /usr/local/go); it builds the test cluster's kube-apiserver"
export GOFLAGS="-mod=readonly -trimpath" CGO_ENABLED=0 GOTOOLCHAIN=auto \
  GOWORK=off GO111MODULE=on

if [ -n "$pin" ]; then
  pin=${pin#v}
  [[ "$pin" =~ ^1\.([0-9]+)\.[0-9]+$ ]] || e2e_die "--pin wants a version like 1.34.4"
  staging=0.${pin#1.}
  mod=$(cd "$KUBE_MODULE_DIR" && GOFLAGS=-mod=mod "$GO" mod download -json "k8s.io/kubernetes@v$pin" |
    sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  [ -f "$mod" ] || e2e_die "k8s.io/kubernetes@v$pin: no go.mod from the module proxy"
  edits=(-require="k8s.io/kubernetes@v$pin")
  # etcd: the version the release itself is tested against.
  etcd=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2}' "$mod")
  [ -n "$etcd" ] && edits+=(-require="go.etcd.io/etcd/server/v3@$etcd")
  for m in $(awk '$2 == "=>" && $3 ~ /^\.\/staging\// {print $1}' "$mod"); do
    edits+=(-replace="$m=$m@v$staging")
  done
  (cd "$KUBE_MODULE_DIR" && "$GO" mod edit "${edits[@]}")
  (cd "$KUBE_MODULE_DIR" && GOFLAGS=-mod=mod "$GO" mod tidy)
  e2e_log "pinned Kubernetes v$pin (staging modules v$staging); run without --pin to build"
  exit 0
fi

apiserver_stamp() { module_stamp "$KUBE_MODULE_DIR" "$RECIPE"; }

apiserver_binaries_ok() {
  [ -x "$KUBE_APISERVER_BIN" ] && [ -x "$KUBECTL_BIN" ] && [ -x "$ETCD_BIN" ] &&
    [ "$(cat "$KUBE_BIN_DIR/recipe" 2>/dev/null)" = "$(apiserver_stamp)" ] &&
    # Whole outputs, not `| grep -q`: under pipefail grep's early exit would
    # kill the writer with SIGPIPE and fail the check.
    [ "$("$KUBE_APISERVER_BIN" --version 2>/dev/null)" = "Kubernetes $KUBE_VERSION" ] &&
    [[ "$("$ETCD_BIN" --version 2>/dev/null)" == "etcd Version: ${ETCD_VERSION#v}"$'\n'* ]]
}

apiserver_binaries_ok && exit 0

mkdir -p "$HCP_CACHE_DIR"
# One build at a time per machine; a second caller waits and then reuses it.
exec 9>"$HCP_CACHE_DIR/build.lock"
flock 9
apiserver_binaries_ok && exit 0

export GOCACHE="$HCP_CACHE_DIR/gocache"
mkdir -p "$KUBE_BIN_DIR"

# The version stamp the release's own build (hack/lib/version.sh) writes into
# both version packages; without it the binaries say v0.0.0-master and
# kubectl warns of version skew.
minor=${KUBE_VERSION#v1.}
minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=module-$KUBE_VERSION"
  ldflags+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

progress_start "kube-apiserver, kubectl $KUBE_VERSION and etcd $ETCD_VERSION (go $("$GO" env GOVERSION))" \
  "the test cluster of make demo and make test, once per machine, cached in $KUBE_BIN_DIR" \
  "9-15 minutes of two cores and about 700 MiB of Go modules" go_build_status
build_apiserver_bin() { # build_apiserver_bin OUTPUT PACKAGE [LDFLAGS]
  e2e_log "building $(basename "$1") from $2"
  go_build_logged "$GO" "$KUBE_MODULE_DIR" "$1.tmp" "$2" -ldflags "${3:-}" ||
    e2e_die "building $2 failed"
  mv -f "$1.tmp" "$1"
}
build_apiserver_bin "$KUBE_APISERVER_BIN" k8s.io/kubernetes/cmd/kube-apiserver "$ldflags"
build_apiserver_bin "$KUBECTL_BIN" k8s.io/kubernetes/cmd/kubectl "$ldflags"
build_apiserver_bin "$ETCD_BIN" go.etcd.io/etcd/server/v3 "-s -w"

apiserver_stamp >"$KUBE_BIN_DIR/recipe"
apiserver_binaries_ok || e2e_die "$KUBE_BIN_DIR: the binaries do not report $KUBE_VERSION / etcd $ETCD_VERSION"
if [ "${HCP_KEEP_BUILD:-0}" != 1 ]; then
  rm -rf "$GOCACHE"
fi
progress_stop
