#!/usr/bin/env bash
# Runs test executables (cmocka binaries or shell scripts), prints their
# output, and adds their counts to a tally file.
#
#   run-tests.sh --tally FILE --label NAME [--wrap "CMD ARGS"] TEST...
#   run-tests.sh --summary FILE [BUILD-LOG]
#                                    prints where the time went (FILE.times:
#                                    every suite, slowest first; the builds
#                                    of BUILD-LOG, scripts/prebuild-e2e.sh's;
#                                    the wall time since FILE.start), then
#                                    "N passed, N failed" over the tally
#
# A test binary reports its counts with cmocka's summary lines
# ("[  PASSED  ] N test(s)." / "[  FAILED  ] N test(s)"); a shell test prints
# a line "N passed, N failed". A test that exits non-zero without reporting a
# failure counts as one failure. After each test a line "-- NAME: N passed,
# N failed, S s" gives its counts and how long it ran. Each call also adds
# one line to FILE.times (label, what ran: the test's name or "N tests",
# passed, failed, seconds, and the lane of scripts/e2e-lanes.sh, E2E_LANE,
# "-" outside one) for the table --summary prints.
set -uo pipefail

tally="" label="" wrap=""
if [ "${1:-}" = "--summary" ]; then
  f=${2:?tally file} blog=${3:-}
  passed=0 failed=0
  if [ -f "$f.times" ]; then
    echo "---- where the time went: every suite, slowest first ----"
    printf '  %-20s %-34s %7s %7s  %s\n' label suite checks seconds lane
    sort -t$'\t' -k5,5nr "$f.times" |
      awk -F'\t' '{printf "  %-20s %-34s %7d %7d  %s\n", $1, $2, $3 + $4, $5, $6}'
    awk -F'\t' '{n++; s += $5} END {printf "  %d suites, %d s in all (side by side, so more than the wall time)\n", n, s}' "$f.times"
  fi
  if [ -n "$blog" ] && [ -f "$blog" ]; then
    echo "---- the end-to-end suites' builds (beside the first suites) ----"
    sed -n 's/^prebuild-e2e: /  /p' "$blog"
  fi
  if [ -f "$f.start" ]; then
    echo "---- wall time: $(($(date +%s) - $(cat "$f.start"))) s ----"
  fi
  if [ -f "$f" ]; then
    while read -r _ p fl; do passed=$((passed + p)); failed=$((failed + fl)); done < "$f"
    echo "---- test summary by suite ----"
    awk '{p[$1]+=$2; f[$1]+=$3} END {for (k in p) printf "  %-10s %5d passed, %d failed\n", k, p[k], f[k]}' "$f" | sort
  fi
  echo "${passed} passed, ${failed} failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
  exit
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --tally) tally=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --wrap) wrap=$2; shift 2 ;;
    *) break ;;
  esac
done
mkdir -p "$(dirname "${tally:-build/x}")"
total_failed=0 total_passed=0 t_all=$SECONDS
for t in "$@"; do
  out=$(mktemp)
  echo "== ${label}: $(basename "$t")"
  t0=$SECONDS
  if [[ "$t" == *.sh ]]; then
    $wrap bash "$t" 2>&1 | tee "$out"; rc=${PIPESTATUS[0]}
  else
    $wrap "$t" 2>&1 | tee "$out"; rc=${PIPESTATUS[0]}
  fi
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
  if [ -z "$p$f" ]; then
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
    p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
    f=$(echo "$line" | sed -n 's/.*passed, \([0-9]*\) failed.*/\1/p')
  fi
  p=${p:-0} f=${f:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "!! ${label}: $(basename "$t") exited with status $rc" >&2
    f=1
  fi
  [ -n "$tally" ] && echo "${label} ${p} ${f}" >> "$tally"
  echo "-- ${label}: $(basename "$t"): ${p} passed, ${f} failed, $((SECONDS - t0)) s"
  total_failed=$((total_failed + f)) total_passed=$((total_passed + p))
  rm -f "$out"
done
if [ -n "$tally" ] && [ $# -gt 0 ]; then
  what=$(basename "$1")
  [ $# -gt 1 ] && what="$# tests"
  printf '%s\t%s\t%d\t%d\t%d\t%s\n' "$label" "$what" "$total_passed" "$total_failed" \
    "$((SECONDS - t_all))" "${E2E_LANE:--}" >>"$tally.times"
fi
[ "$total_failed" -eq 0 ]
