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
# A failed build is not fatal here: the suite that needs it runs the same
# build again when it starts and reports the failure there.
set -uo pipefail
cd "$(dirname "$0")/.."

BUILDS=(e2e/build-kube-apiserver.sh e2e/capi/build.sh e2e/hypershift/build.sh e2e/model/build.sh
  e2e/svcproxy/build.sh e2e/image/build-base.sh)

cmd=${1:?start, wait or run} dir=${2:?directory}
lock=$dir/prebuild-e2e.lock log=$dir/prebuild-e2e.log
mkdir -p "$dir"
case "$cmd" in
  start)
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
    for b in "${BUILDS[@]}"; do
      t=$SECONDS
      if "$b"; then
        echo "prebuild-e2e: $b: ok, $((SECONDS - t)) s"
      else
        echo "prebuild-e2e: $b: FAILED (exit status $?), $((SECONDS - t)) s; its suite builds it again"
      fi
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
