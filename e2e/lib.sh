# Shared helpers for the local-cluster scripts under e2e/. Sourced, not run.
# shellcheck shell=bash disable=SC2034

# Where machine-wide build products live (outside the work tree, so the
# apiserver is built once per machine and survives `make clean`).
HCP_CACHE_DIR=${HCP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hcp-controller}

# The one kube-apiserver the tests run against.
KUBE_VERSION=v1.20.2
KUBE_SRC_PACKAGE=kubernetes
KUBE_SRC_VERSION=1.20.5+really1.20.2-1.1+deb12u1
KUBE_APISERVER_BIN=${KUBE_APISERVER_BIN:-$HCP_CACHE_DIR/kube-apiserver-$KUBE_VERSION}

e2e_log() { echo "$(basename "$0"): $*" >&2; }
e2e_die() { e2e_log "$*"; exit 1; }

# ensure_packages PKG... installs the Debian packages that are missing, and
# nothing else. apt-get runs only when something is missing; it waits for the
# dpkg lock rather than failing when another install is under way.
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  e2e_log "installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 \
    install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
