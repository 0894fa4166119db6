#!/usr/bin/env bash
# Installs the Debian packages hcp-controller needs to build and test.
# Idempotent: packages already present are not touched, and apt-get runs only
# when something is missing. Extra package names may be passed as arguments.
set -euo pipefail

packages=(
  build-essential pkg-config ca-certificates tzdata
  libical-dev libev-dev libcurl4-openssl-dev libjansson-dev libfyaml-dev
  libmicrohttpd-dev libcmocka-dev
  clang libclang-rt-14-dev valgrind
  prometheus
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
