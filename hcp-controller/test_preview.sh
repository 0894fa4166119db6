#!/usr/bin/env bash
# Tests of `hcp-controller preview` (and the subcommand dispatch) against the
# built binary in $HCP_BIN. Prints one line per check and a final
# "N passed, N failed".
set -u

BIN=${HCP_BIN:?set HCP_BIN to the hcp-controller binary}
HERE=$(cd "$(dirname "$0")" && pwd)
EXAMPLES="$HERE/../examples"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() {
  failed=$((failed + 1))
  echo "FAIL $1"
  shift
  for line in "$@"; do echo "     $line"; done
}

# run NAME ARGS...: runs the binary, leaving stdout, stderr and status in
# $out, $err and $rc.
run() {
  "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}

# expect_json NAME WANT ARGS...: exit 0, empty stderr, stdout exactly WANT.
expect_json() {
  local name=$1 want=$2
  shift 2
  run "$@"
  if [ "$rc" -eq 0 ] && [ "$out" = "$want" ] && [ -z "$err" ]; then
    ok "$name"
  else
    bad "$name" "status $rc" "got:  $out" "want: $want" "stderr: $err"
  fi
}

# expect_fail NAME STATUS NEEDLE ARGS...: exit STATUS, stderr contains
# NEEDLE, nothing on stdout.
expect_fail() {
  local name=$1 want_rc=$2 needle=$3
  shift 3
  run "$@"
  if [ "$rc" -eq "$want_rc" ] && [[ "$err" == *"$needle"* ]] && [ -z "$out" ]; then
    ok "$name"
  else
    bad "$name" "status $rc (want $want_rc)" "stderr: $err" "want in stderr: $needle" "stdout: $out"
  fi
}

# contains NAME HAYSTACK NEEDLE
contains() {
  if [[ "$2" == *"$3"* ]]; then ok "$1"; else bad "$1" "missing: $3" "in: $2"; fi
}

FROM=2026-01-01T00:00:00Z

policy_yaml() { # policy_yaml FILE NAME MAINTENANCE-SCHEDULE-YAML (indented 4)
  cat >"$1" <<EOF
apiVersion: changemanagement.hypershift.openshift.io/v1alpha1
kind: HostedChangeManagementPolicy
metadata:
  name: $2
  namespace: clusters
spec:
  strategy: MaintenanceSchedule
  maintenanceSchedule:
$3
EOF
}

# ---- weekend windows in UTC, as rrule (YAML), JSON and structured --------
W3='{"windows":[{"start":"2026-01-03T00:00:00Z","end":"2026-01-05T00:00:00Z"},{"start":"2026-01-10T00:00:00Z","end":"2026-01-12T00:00:00Z"},{"start":"2026-01-17T00:00:00Z","end":"2026-01-19T00:00:00Z"}]}'
policy_yaml "$tmp/weekend.yaml" weekend '    permit:
      rrule: "FREQ=WEEKLY;BYDAY=SA,SU"'
expect_json "weekend rrule, YAML" "$W3" preview -f "$tmp/weekend.yaml" --from $FROM --count 3 -o json

cat >"$tmp/weekend.json" <<'EOF'
{"apiVersion": "changemanagement.hypershift.openshift.io/v1alpha1",
 "kind": "HostedChangeManagementPolicy",
 "metadata": {"name": "weekend"},
 "spec": {"strategy": "MaintenanceSchedule",
          "maintenanceSchedule": {"timeZone": "UTC", "permit": {"rrule": "FREQ=WEEKLY;BYDAY=SA,SU"}}}}
EOF
expect_json "weekend rrule, JSON" "$W3" preview --file "$tmp/weekend.json" --from=$FROM --count=3 --output json

policy_yaml "$tmp/weekend-structured.yaml" weekend '    permit:
      recurrence:
        frequency: Weekly
        weekly:
          daysOfWeek: [Saturday, Sunday]'
expect_json "weekend structured recurrence" "$W3" preview -f "$tmp/weekend-structured.yaml" --from $FROM --count 3 -o json

expect_json "policy from standard input" "$W3" preview -f - --from $FROM --count 3 -o json <"$tmp/weekend.yaml"

expect_json "--from with a numeric offset" "$W3" preview -f "$tmp/weekend.yaml" --from 2026-01-01T01:00:00+01:00 --count 3 -o json

expect_json "--count limits the list" \
  '{"windows":[{"start":"2026-01-03T00:00:00Z","end":"2026-01-05T00:00:00Z"}]}' \
  preview -f "$tmp/weekend.yaml" --from $FROM --count 1 -o json

run preview -f "$tmp/weekend.yaml" --from $FROM -o json
n=$(grep -o '"start"' <<<"$out" | wc -l)
if [ "$rc" -eq 0 ] && [ "$n" -eq 10 ]; then ok "--count defaults to 10"; else bad "--count defaults to 10" "got $n windows: $out"; fi

# A window already open at --from is listed with its true start.
expect_json "true start before --from" \
  '{"windows":[{"start":"2026-01-03T00:00:00Z","end":"2026-01-05T00:00:00Z"},{"start":"2026-01-10T00:00:00Z","end":"2026-01-12T00:00:00Z"}]}' \
  preview -f "$tmp/weekend.yaml" --from 2026-01-04T12:00:00Z --count 2 -o json

# A window ending exactly at --from is over.
expect_json "window ending at --from is not listed" \
  '{"windows":[{"start":"2026-01-10T00:00:00Z","end":"2026-01-12T00:00:00Z"}]}' \
  preview -f "$tmp/weekend.yaml" --from 2026-01-05T00:00:00Z --count 1 -o json

# ---- intersection of several -f ------------------------------------------
policy_yaml "$tmp/mornings.yaml" mornings '    permit:
      recurrence:
        frequency: Daily
      startTime: "08:00"
      duration: 4h'
expect_json "intersection of two policies" \
  '{"windows":[{"start":"2026-01-03T08:00:00Z","end":"2026-01-03T12:00:00Z"},{"start":"2026-01-04T08:00:00Z","end":"2026-01-04T12:00:00Z"},{"start":"2026-01-10T08:00:00Z","end":"2026-01-10T12:00:00Z"}]}' \
  preview -f "$tmp/weekend.yaml" -f "$tmp/mornings.yaml" --from $FROM --count 3 -o json

policy_yaml "$tmp/mondays.yaml" mondays '    permit:
      rrule: "FREQ=WEEKLY;BYDAY=MO"'
expect_json "disjoint intersection has no window" '{"windows":[]}' \
  preview -f "$tmp/weekend.yaml" -f "$tmp/mondays.yaml" --from $FROM -o json

# ---- unbounded intervals and the look-ahead ------------------------------
cat >"$tmp/permissive.yaml" <<'EOF'
kind: HostedChangeManagementPolicy
spec: {strategy: Permissive}
EOF
expect_json "Permissive: permitted since forever, never ending" \
  '{"windows":[{"start":null,"end":null}]}' preview -f "$tmp/permissive.yaml" --from $FROM -o json

cat >"$tmp/restrictive.json" <<'EOF'
{"kind": "HostedChangeManagementPolicy", "spec": {"strategy": "Restrictive"}}
EOF
expect_json "Restrictive: no window" '{"windows":[]}' preview -f "$tmp/restrictive.json" --from $FROM -o json

policy_yaml "$tmp/freeze.yaml" freeze '    exclude:
    - fromDate: "2026-03-01"
      untilDate: "2026-03-03"
      reason: Migration'
expect_json "exclusions only: unbounded on both sides" \
  '{"windows":[{"start":null,"end":"2026-03-01T00:00:00Z"},{"start":"2026-03-03T00:00:00Z","end":null}]}' \
  preview -f "$tmp/freeze.yaml" --from $FROM -o json

expect_json "Permissive within a schedule is the schedule" "$W3" \
  preview -f "$tmp/permissive.yaml" -f "$tmp/weekend.yaml" --from $FROM --count 3 -o json

# 2036-02-29 is 3652 days after --from (inside the 365.25-day years of the
# look-ahead); 2040-02-29 is not.
policy_yaml "$tmp/leap.yaml" leap '    permit:
      rrule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"'
expect_json "windows 10 years or more ahead are not listed" \
  '{"windows":[{"start":"2028-02-29T00:00:00Z","end":"2028-03-01T00:00:00Z"},{"start":"2032-02-29T00:00:00Z","end":"2032-03-01T00:00:00Z"},{"start":"2036-02-29T00:00:00Z","end":"2036-03-01T00:00:00Z"}]}' \
  preview -f "$tmp/leap.yaml" --from 2026-03-01T00:00:00Z --count 10 -o json

# Time zones: Zurich weeknights 22:00 for 6h are 21:00Z in winter.
policy_yaml "$tmp/zurich.yaml" zurich '    timeZone: Europe/Zurich
    permit:
      recurrence:
        frequency: Weekly
        weekly:
          daysOfWeek: [Wednesday]
      startTime: "22:00"
      duration: 6h'
expect_json "time zone with DST" \
  '{"windows":[{"start":"2026-03-25T21:00:00Z","end":"2026-03-26T03:00:00Z"},{"start":"2026-04-01T20:00:00Z","end":"2026-04-02T02:00:00Z"}]}' \
  preview -f "$tmp/zurich.yaml" --from 2026-03-20T00:00:00Z --count 2 -o json

# A multi-document file: only the policy documents count.
{ cat "$tmp/weekend.yaml"; printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n'; } >"$tmp/multi.yaml"
expect_json "multi-document YAML" "$W3" preview -f "$tmp/multi.yaml" --from $FROM --count 3 -o json

# The shipped examples are valid.
for f in "$EXAMPLES"/*.yaml "$EXAMPLES"/*.json; do
  [ -e "$f" ] || continue
  run preview -f "$f" --from $FROM -o json
  if [ "$rc" -eq 0 ] && [[ "$out" == '{"windows":['* ]]; then ok "example $(basename "$f")"; else bad "example $(basename "$f")" "status $rc" "$err"; fi
done

# ---- invalid policies and bad usage ----------------------------------------
policy_yaml "$tmp/bad-start.yaml" bad '    permit:
      rrule: FREQ=DAILY
      startTime: "25:00"'
expect_fail "invalid startTime" 2 \
  'spec.maintenanceSchedule.permit.startTime: "25:00" is not a valid HH:MM time' \
  preview -f "$tmp/bad-start.yaml" --from $FROM -o json

policy_yaml "$tmp/bad-day.yaml" bad '    permit:
      recurrence:
        frequency: Weekly
        weekly:
          daysOfWeek: [Monday, Tuesday, Funday]'
expect_fail "invalid day of week" 2 \
  'spec.maintenanceSchedule.permit.recurrence.weekly.daysOfWeek[2]: "Funday" is not a day of the week' \
  preview -f "$tmp/bad-day.yaml" --from $FROM

policy_yaml "$tmp/typo.yaml" bad '    permit:
      rrule: FREQ=DAILY
      duraton: 2h'
expect_fail "unknown field" 2 'spec.maintenanceSchedule.permit.duraton: unknown field' \
  preview -f "$tmp/typo.yaml" --from $FROM

expect_fail "an invalid policy among valid ones" 2 'is not a valid HH:MM time' \
  preview -f "$tmp/weekend.yaml" -f "$tmp/bad-start.yaml" --from $FROM -o json

printf 'kind: HostedChangeManagementPolicy\nspec: [1\n' >"$tmp/broken.yaml"
expect_fail "unparsable YAML" 2 'YAML line' preview -f "$tmp/broken.yaml"
printf '{"kind": "HostedChangeManagementPolicy",}' >"$tmp/broken.json"
expect_fail "unparsable JSON" 2 'JSON line 1' preview -f "$tmp/broken.json"
printf 'apiVersion: v1\nkind: ConfigMap\n' >"$tmp/cm.yaml"
expect_fail "no policy in the file" 2 'no HostedChangeManagementPolicy document found' preview -f "$tmp/cm.yaml"
expect_fail "missing file" 1 'cannot open' preview -f "$tmp/does-not-exist.yaml"
expect_fail "directory as file" 1 "$tmp" preview -f "$tmp"

expect_fail "no -f" 2 'at least one -f POLICY is required' preview --from $FROM
expect_fail "-f without value" 2 'Usage:' preview -f
expect_fail "--count 0" 2 '--count' preview -f "$tmp/weekend.yaml" --count 0
expect_fail "--count not a number" 2 '--count' preview -f "$tmp/weekend.yaml" --count 3x
expect_fail "--count overflow" 2 '--count' preview -f "$tmp/weekend.yaml" --count 99999999999999999999
expect_fail "bad --from" 2 '--from' preview -f "$tmp/weekend.yaml" --from yesterday
expect_fail "--from before 1970" 2 'outside the years 1970..9999' preview -f "$tmp/weekend.yaml" --from 1969-12-31T23:59:59Z
expect_fail "bad -o" 2 'unknown output format' preview -f "$tmp/weekend.yaml" -o xml
expect_fail "unknown flag" 2 'unknown argument' preview -f "$tmp/weekend.yaml" --verbose

# ---- table output --------------------------------------------------------
run preview -f "$tmp/zurich.yaml" --from 2026-03-20T00:00:00Z --count 2
if [ "$rc" -eq 0 ]; then ok "table exits 0"; else bad "table exits 0" "status $rc" "$err"; fi
contains "table header" "$out" "START (UTC)"
contains "table local time before DST" "$out" "2026-03-25 22:00 +01:00"
contains "table local time after DST" "$out" "2026-04-01 22:00 +02:00"
contains "table UTC time" "$out" "2026-04-01T20:00:00Z"
contains "table duration" "$out" "6h"
contains "table time zone" "$out" "Local times are in Europe/Zurich."
contains "table now line, closed" "$out" "Now (2026-03-20T00:00:00Z): changes are not permitted; the next window opens 2026-03-25T21:00:00Z (in 5d 21h)."
rows=$(grep -cE '^[0-9]+ ' <<<"$out")
if [ "$rows" -eq 2 ]; then ok "table has --count rows"; else bad "table has --count rows" "$rows rows" "$out"; fi

run preview -f "$tmp/weekend.yaml" --from 2026-01-04T12:00:00Z --count 1 -o table
contains "table now line, open" "$out" "Now (2026-01-04T12:00:00Z): changes are permitted until 2026-01-05T00:00:00Z (12h left)."
contains "table two-day duration" "$out" "2d"

policy_yaml "$tmp/xmas.yaml" xmas '    permit:
      rrule: FREQ=DAILY
    exclude:
    - fromDate: "2026-12-24"
      untilDate: "2026-12-27"
      reason: Holidays'
run preview -f "$tmp/xmas.yaml" --from 2026-12-25T00:00:00Z --count 1
contains "table names the exclusion" "$out" "changes are not permitted (excluded: Holidays); the next window opens 2026-12-27T00:00:00Z (in 2d)."

run preview -f "$tmp/restrictive.json" --from $FROM
contains "table with no window" "$out" "no window opens within 10 years"
run preview -f "$tmp/permissive.yaml" --from $FROM
contains "table unbounded" "$out" "changes are permitted, indefinitely."
contains "table unbounded duration" "$out" "unbounded"

# ---- minimum time left: the effective start ------------------------------
cat >"$tmp/minleft.yaml" <<EOF
apiVersion: changemanagement.hypershift.openshift.io/v1alpha1
kind: HostedChangeManagementPolicy
metadata: {name: sat, namespace: clusters}
spec:
  strategy: MaintenanceSchedule
  minTimeLeft: {controlPlane: 2h, workerNodes: 30m}
  maintenanceSchedule:
    permit:
      recurrence: {frequency: Weekly, weekly: {daysOfWeek: [Saturday]}}
      startTime: "02:00"
      duration: 4h
EOF
run preview -f "$tmp/minleft.yaml" --from 2026-11-26T00:00:00Z --count 1
contains "minTimeLeft: the start before the window" "$out" "Control plane (minimum time left 2h): the next start is 2026-11-28T02:00:00Z (window 2026-11-28T02:00:00Z to 2026-11-28T06:00:00Z: changes may start until 2026-11-28T04:00:00Z)."
run preview -f "$tmp/minleft.yaml" --from 2026-11-28T04:00:00Z --count 1
contains "minTimeLeft: exactly the minimum left starts now" "$out" "Control plane (minimum time left 2h): a change may start now, until 2026-11-28T04:00:00Z."
run preview -f "$tmp/minleft.yaml" --from 2026-11-28T04:00:01Z --count 1
contains "minTimeLeft: less than the minimum waits for the next window" "$out" "Control plane (minimum time left 2h): the next start is 2026-12-05T02:00:00Z"
contains "minTimeLeft: the worker nodes' own minimum" "$out" "Worker nodes (minimum time left 30m): a change may start now, until 2026-11-28T05:30:00Z."
sed 's/duration: 4h/duration: 1h/' "$tmp/minleft.yaml" >"$tmp/minleft-short.yaml"
run preview -f "$tmp/minleft-short.yaml" --from 2026-11-26T00:00:00Z --count 1
contains "minTimeLeft: windows shorter than it" "$out" "Control plane (minimum time left 2h): no window within 10 years is that long: no change would start."
run preview -f "$tmp/weekend.yaml" --from $FROM --count 1
if [[ "$out" != *"minimum time left"* ]]; then ok "no minimum, no effective-start line"; else bad "no minimum line" "$out"; fi
run preview -f "$tmp/minleft.yaml" --from 2026-11-26T00:00:00Z --count 1 -o ics
unfolded=$(tr -d '\r' <<<"$out" | sed -e ':a' -e 'N' -e '$!ba' -e 's/\n //g')
contains "minTimeLeft: the calendar says until when changes start" "$unfolded" \
  "DESCRIPTION:Material changes may start in this window until 2026-11-28T04:00:00Z (minimum time left 2h: none starts in its last 2h)."
run preview -f "$tmp/minleft.yaml" -f "$tmp/weekend.yaml" --from 2026-11-28T05:00:00Z --count 1
contains "minTimeLeft: an intersection takes the larger workerNodes only" "$out" "Worker nodes (minimum time left 30m): a change may start now, until 2026-11-28T05:30:00Z."
if [[ "$out" != *"Control plane (minimum"* ]]; then ok "an intersection has no control-plane minimum"; else bad "intersection cp" "$out"; fi

# ---- dispatch ------------------------------------------------------------
run --help
if [ "$rc" -eq 0 ] && [[ "$out" == *"preview"* ]]; then ok "--help"; else bad "--help" "status $rc" "$out"; fi
# --not-before: a held change's earliest start (the release waves' soak end):
# inside a window it starts then, before one at its opening, and the
# calendar marks the windows before it.
run preview -f "$tmp/minleft.yaml" --from 2026-11-26T00:00:00Z --count 3 --not-before 2026-11-28T03:00:00Z
contains "--not-before inside a window: it starts then" "$out" \
  "Not before 2026-11-28T03:00:00Z: the first start is 2026-11-28T03:00:00Z (in the window until 2026-11-28T06:00:00Z)."
run preview -f "$tmp/minleft.yaml" --from 2026-11-26T00:00:00Z --count 3 --not-before 2026-11-28T07:00:00Z
contains "--not-before after a window: the next one's opening" "$out" \
  "Not before 2026-11-28T07:00:00Z: the first start is 2026-12-05T02:00:00Z (in the window until 2026-12-05T06:00:00Z)."
run preview -f "$tmp/minleft.yaml" --from 2026-11-26T00:00:00Z --count 3 --not-before 2026-12-05T03:00:00Z -o ics
unfolded=$(tr -d '\r' <<<"$out" | sed -e ':a' -e 'N' -e '$!ba' -e 's/\n //g')
contains "--not-before: the calendar's window before it says so" "$unfolded" \
  "Not in this window: a held change (--not-before)\\, held until 2026-12-05T03:00:00Z."
contains "--not-before: the calendar's window it falls in says from when" "$unfolded" \
  "Held: a held change (--not-before)\\; it may start in this window from 2026-12-05T03:00:00Z."
run preview -f "$tmp/minleft.yaml" --from 2026-11-26T00:00:00Z --count 3
if [[ "$out" != *"Not before"* ]]; then ok "no --not-before, no line"; else bad "no --not-before line" "$out"; fi
expect_fail "--not-before needs a time" 2 "--not-before needs an RFC 3339 time" \
  preview -f "$tmp/minleft.yaml" --not-before tomorrow
run preview --help
if [ "$rc" -eq 0 ] && [[ "$out" == *"--count N"* ]]; then ok "preview --help"; else bad "preview --help" "status $rc" "$out"; fi
expect_fail "unknown command" 2 'unknown command' frobnicate

echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
