#!/usr/bin/env bash
# Builds kube-apiserver v1.20.2 from Debian's `kubernetes` source package and
# caches the binary outside the work tree, once per machine:
#
#   e2e/build-kube-apiserver.sh          build unless the cached binary exists
#   e2e/build-kube-apiserver.sh --path   print where the binary is (or will be)
#
# The source comes from a private deb-src list under the cache directory, so the
# machine's apt configuration is left untouched. `apt-get source` unpacks it
# with dpkg-source, which applies debian/patches. The vendored
# github.com/modern-go/reflect2 1.0.1 crashes under Go 1.19 (it reads runtime
# internals that moved), so it is replaced by Debian's 1.0.2 copy, and the
# OpenAPI validator gets upstream's fix for empty strings under Go >= 1.16
# (below), before the source's own `make WHAT=cmd/kube-apiserver` runs with
# Debian's golang-go.
# Set HCP_KEEP_BUILD=1 to keep the unpacked source and Go build cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ "${1:-}" = "--path" ]; then
  echo "$KUBE_APISERVER_BIN"
  exit 0
fi

# Bump when the way the binary is made changes, so machines rebuild it.
RECIPE=2

binary_ok() {
  [ -x "$KUBE_APISERVER_BIN" ] &&
    [ "$(cat "$KUBE_APISERVER_BIN.recipe" 2>/dev/null)" = "$RECIPE" ] &&
    "$KUBE_APISERVER_BIN" --version 2>/dev/null | grep -qx "Kubernetes $KUBE_VERSION"
}

binary_ok && exit 0

mkdir -p "$HCP_CACHE_DIR"
# One build at a time per machine; a second caller waits and then reuses it.
exec 9>"$HCP_CACHE_DIR/build.lock"
flock 9
binary_ok && exit 0

ensure_packages golang-go golang-github-modern-go-reflect2-dev dpkg-dev make \
  rsync ca-certificates debian-archive-keyring

reflect2=/usr/share/gocode/src/github.com/modern-go/reflect2
[ -f "$reflect2/reflect2.go" ] || e2e_die "$reflect2 is missing"

start=$(date +%s)
build="$HCP_CACHE_DIR/build"
apt="$HCP_CACHE_DIR/apt"
rm -rf "$build"
mkdir -p "$build" "$apt/lists/partial" "$apt/cache/archives/partial"

# A deb-src list of our own; only these options point apt at it.
cat >"$apt/sources.list" <<'EOF'
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main
EOF
apt_opts=(
  -o "Dir::Etc::SourceList=$apt/sources.list"
  -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State::Lists=$apt/lists"
  -o "Dir::Cache=$apt/cache"
  -o "APT::Sandbox::User=root"
)
e2e_log "fetching source $KUBE_SRC_PACKAGE=$KUBE_SRC_VERSION"
apt-get "${apt_opts[@]}" update -qq
(cd "$build" && apt-get "${apt_opts[@]}" source -qq "$KUBE_SRC_PACKAGE=$KUBE_SRC_VERSION")
src=$(find "$build" -mindepth 1 -maxdepth 1 -type d -name "$KUBE_SRC_PACKAGE-*" | head -1)
[ -n "$src" ] && [ -f "$src/Makefile" ] || e2e_die "unpacked source not found in $build"
[ -d "$src/vendor/github.com/modern-go/reflect2" ] || e2e_die "no vendored reflect2 in $src"

e2e_log "replacing vendored reflect2 with $reflect2"
rm -rf "$src/vendor/github.com/modern-go/reflect2"
cp -rL "$reflect2" "$src/vendor/github.com/modern-go/reflect2"
rm -f "$src/vendor/github.com/modern-go/reflect2/go.mod" "$src/vendor/github.com/modern-go/reflect2/go.sum"

# Since Go 1.16 reflect.Zero returns shared memory, so the vendored OpenAPI
# validator's zero-value test became true for "", and custom resources refused
# every empty string ("must be of type string: \"null\""). Upstream's fix
# (kube-openapi #230, in Kubernetes 1.20.5) tests for nil only; do the same.
zero_check='if data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data)) {'
patched=0
while IFS= read -r f; do
  ZC=$zero_check perl -pi -e 's/\Q$ENV{ZC}\E/if data == nil {/' "$f"
  grep -qF "$zero_check" "$f" && e2e_die "could not patch $f"
  e2e_log "patched the zero-value check in ${f#"$src"/}"
  patched=$((patched + 1))
done < <(grep -rlF "$zero_check" "$src/vendor" --include=type.go)
[ "$patched" -gt 0 ] || e2e_die "the OpenAPI zero-value check to patch was not found"

e2e_log "building kube-apiserver (several minutes)"
export GOPATH="$build/gopath" GOCACHE="$build/gocache" GOFLAGS=-mod=vendor \
  GOPROXY=off GO111MODULE=on GOTOOLCHAIN=local
# No .git in a source package: give the version stamp explicitly.
export KUBE_GIT_VERSION=$KUBE_VERSION KUBE_GIT_MAJOR=1 KUBE_GIT_MINOR=20 \
  KUBE_GIT_TREE_STATE=archive KUBE_GIT_COMMIT=debian-$KUBE_SRC_VERSION
make -C "$src" WHAT=cmd/kube-apiserver
out=$(find "$src/_output" -type f -name kube-apiserver -perm -u+x | head -1)
[ -n "$out" ] || e2e_die "build produced no kube-apiserver"

install -m 0755 "$out" "$KUBE_APISERVER_BIN.tmp"
mv -f "$KUBE_APISERVER_BIN.tmp" "$KUBE_APISERVER_BIN"
echo "$RECIPE" >"$KUBE_APISERVER_BIN.recipe"
binary_ok || e2e_die "$KUBE_APISERVER_BIN does not report $KUBE_VERSION"
if [ "${HCP_KEEP_BUILD:-0}" != 1 ]; then
  chmod -R u+w "$build" 2>/dev/null || true
  rm -rf "$build"
fi
e2e_log "built $KUBE_APISERVER_BIN in $(($(date +%s) - start))s"
