#!/usr/bin/env bash
# Builds what the end-to-end suites need, each once per machine into its
# cache, while `make test` runs the unit, sanitizer, valgrind and fuzz
# suites, which keep one core of two busy: on a fresh machine the builds
# (the API server, Cluster API's managers, HyperShift's NodePool reconciler,
# the behaviour model, the Service stand-in, the image's base) then overlap
# those suites instead of following them. Warm, every build finds its cache
# current in under a second.
#
#   scripts/prebuild-e2e.sh start DIR   start the builds in the background
#                                       (log DIR/prebuild-e2e.log); returns at once
#   scripts/prebuild-e2e.sh wait DIR    wait until they have ended, then print
#                                       how long each took and what failed
#
# As each build ends, DIR/prebuild-e2e.d/NAME.end is made (ok or not): the
# end-to-end lanes (scripts/e2e-lanes.sh) start a suite once the builds it
# needs have ended, while the others still build.
#
# A failed build is not fatal here: the suite that needs it runs the same
# build again when it starts and reports the failure there.
set -uo pipefail
cd "$(dirname "$0")/.."

# name=script, in the order the suites need them: every instance needs the
# API server, and most Cluster API's managers (its webhooks serve on "main"
# too) and the model; the Service stand-in, hostedsim, HyperShift's
# reconciler and the image's base serve a target or two each. HyperShift's
# CRDs are staged first (seconds): "main" installs them, and a stage would
# otherwise wait for the reconciler's build, which holds the same lock.
#
# The model, the Service stand-in and hostedsim (the hosted API servers of
# e2e-project) require exactly the module versions the API server's build
# compiles (e2e/model/go.mod pins them; the other two use the standard
# library only), so they build with its Go build cache, kept until then
# (HCP_KEEP_BUILD=1) and deleted after them unless HCP_KEEP_BUILD was asked
# for: only their own packages compile (the model alone took 258 s at -p 1
# from an empty cache).
HCP_CACHE_DIR=${HCP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hcp-controller}
shared_gocache=$HCP_CACHE_DIR/gocache # build-kube-apiserver.sh's
BUILDS=(hypershift-crds="e2e/hypershift/build.sh --crds"
  apiserver="env HCP_KEEP_BUILD=1 e2e/build-kube-apiserver.sh"
  model="env GOCACHE=$shared_gocache HCP_MODEL_BUILD_JOBS=2 e2e/model/build.sh"
  svcproxy="env GOCACHE=$shared_gocache e2e/svcproxy/build.sh"
  hostedsim="env GOCACHE=$shared_gocache e2e/hostedsim/build.sh"
  capi=e2e/capi/build.sh hypershift=e2e/hypershift/build.sh image=e2e/image/build-base.sh)

cmd=${1:?start, wait or run} dir=${2:?directory}
lock=$dir/prebuild-e2e.lock log=$dir/prebuild-e2e.log
mkdir -p "$dir"
case "$cmd" in
  start)
    rm -rf "$dir/prebuild-e2e.d"
    mkdir -p "$dir/prebuild-e2e.d"
    # The lock is taken before the builds go to the background and held by
    # them (the descriptor is inherited) until the last ends: `wait` cannot
    # miss them.
    exec 9>"$lock"
    flock -n 9 || { echo "prebuild-e2e: already running ($lock)"; exit 0; }
    "$0" run "$dir" >"$log" 2>&1 </dev/null &
    echo "prebuild-e2e: building the end-to-end suites' programs in the background (log $log)"
    ;;
  run)
    t0=$SECONDS
    mkdir -p "$dir/prebuild-e2e.d"
    for nb in "${BUILDS[@]}"; do
      name=${nb%%=*} b=${nb#*=} t=$SECONDS
      # shellcheck disable=SC2086 # the script and its argument
      if $b; then
        echo "prebuild-e2e: $b: ok, $((SECONDS - t)) s (ended at $((SECONDS - t0)) s)"
      else
        echo "prebuild-e2e: $b: FAILED (exit status $?), $((SECONDS - t)) s; its suite builds it again"
      fi
      : >"$dir/prebuild-e2e.d/$name.end"
      if [ "$name" = hostedsim ] && [ "${HCP_KEEP_BUILD:-0}" != 1 ]; then rm -rf "$shared_gocache"; fi
    done
    echo "prebuild-e2e: all ended in $((SECONDS - t0)) s"
    ;;
  wait)
    t=$SECONDS
    [ -e "$lock" ] && flock "$lock" true
    echo "prebuild-e2e: waited $((SECONDS - t)) s for the builds"
    [ -f "$log" ] && grep '^prebuild-e2e: ' "$log"
    ;;
  *) echo "usage: $0 start|wait|run DIR" >&2; exit 2 ;;
esac
exit 0
