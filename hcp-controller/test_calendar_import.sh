#!/usr/bin/env bash
# Exclusion calendars (spec.exclusionCalendars, DESIGN.md 3.16) through
# `hcp-controller preview`, the ConfigMap beside the policy in the file:
# the round trip of 300 random policies across DST zones (their windows as
# preview -o ics writes them, imported as the freeze calendar of a
# Permissive policy, permit exactly the complement, to the second, over a
# year: hcp-controller/ics_roundtrip.py), calendars as Outlook and Google
# export them, and what a calendar that is missing, has two keys or cannot
# be read does: it holds, and preview says why with the line. Prints one
# line per check and a final "N passed, N failed".
set -u

BIN=${HCP_BIN:?set HCP_BIN to the hcp-controller binary}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$HERE/../pkg/policy/testdata
PY=/usr/bin/python3
N=${ROUNDTRIP_POLICIES:-300}
FROM=2026-12-05T00:00:00Z
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }

line=$("$PY" "$HERE/ics_roundtrip.py" "$BIN" "$tmp" "$N" 57 "$FROM" 2>&1)
last=${line##*$'\n'}
if [[ "$last" == "$N policies, "*" 0 differences" ]]; then
  ok "round trip: $last"
else
  bad "round trip over $N random policies" "$(head -c 2000 <<<"$line")"
fi

# A policy and its calendar's ConfigMap; $1 the ICS file, $2 the policy's
# extra spec (YAML lines under spec:), $3 the ConfigMap's data key.
manifest() {
  {
    cat <<Y
apiVersion: changemanagement.hypershift.openshift.io/v1alpha1
kind: HostedChangeManagementPolicy
metadata:
  name: freeze-aware
  namespace: clusters
spec:
$2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: freezes
  namespace: clusters
  labels:
    changemanagement.hypershift.openshift.io/exclusion-calendar: "true"
data:
  $3: |
Y
    sed 's/\r$//; s/^/    /' "$1"
  }
}

daily="  strategy: MaintenanceSchedule
  maintenanceSchedule:
    timeZone: Europe/Berlin
    permit:
      recurrence:
        frequency: Daily
      startTime: \"22:00\"
      duration: 4h
  exclusionCalendars:
  - name: freezes"

manifest "$DATA/outlook-freezes.ics" "$daily" outlook.ics >"$tmp/outlook.yaml"
out=$("$BIN" preview -f "$tmp/outlook.yaml" --from 2026-12-20T12:00:00Z --count 3 -o json 2>"$tmp/err")
want='{"windows":[{"start":"2026-12-20T21:00:00Z","end":"2026-12-20T23:00:00Z"},{"start":"2027-01-03T23:00:00Z","end":"2027-01-04T01:00:00Z"},{"start":"2027-01-04T21:00:00Z","end":"2027-01-05T01:00:00Z"}]}'
if [ "$out" = "$want" ] && [ ! -s "$tmp/err" ]; then
  ok "Outlook's year-end freeze (all-day, Windows zone names) cuts the Berlin windows at its midnights"
else
  bad "Outlook calendar" "got  $out" "want $want" "$(cat "$tmp/err")"
fi
out=$("$BIN" preview -f "$tmp/outlook.yaml" --from 2027-09-30T20:00:00Z --count 1 2>&1)
if grep -q "excluded: Quarter-end close (calendar freezes)" <<<"$out"; then
  ok "the table names the calendar's event that holds: Quarter-end close (calendar freezes)"
else
  bad "the table's reason" "$out"
fi

manifest "$DATA/google-freezes.ics" "${daily/Europe\/Berlin/America/New_York}" google.ics >"$tmp/google.yaml"
out=$("$BIN" preview -f "$tmp/google.yaml" --from 2026-12-18T12:00:00Z --count 4 -o json 2>"$tmp/err")
# The windows are 22:00 to 02:00 New York. 18 Dec's instance, moved to
# 20:00, holds until 21 Dec 06:00: the windows of the 18th, 19th and 20th
# are held; the 21st's is the first. 25 Dec's instance is an EXDATE: the
# 24th's window (ending the 25th 02:00) goes too.
want='{"windows":[{"start":"2026-12-22T03:00:00Z","end":"2026-12-22T07:00:00Z"},{"start":"2026-12-23T03:00:00Z","end":"2026-12-23T07:00:00Z"},{"start":"2026-12-24T03:00:00Z","end":"2026-12-24T07:00:00Z"},{"start":"2026-12-25T03:00:00Z","end":"2026-12-25T07:00:00Z"}]}'
if [ "$out" = "$want" ] && [ ! -s "$tmp/err" ]; then
  ok "Google's weekend freeze (RRULE COUNT, a moved instance) holds 18 Dec 20:00 to 21 Dec 06:00 New York"
else
  bad "Google calendar" "got  $out" "want $want" "$(cat "$tmp/err")"
fi
out=$("$BIN" preview -f "$tmp/google.yaml" --from 2026-12-25T12:00:00Z --count 2 -o json 2>"$tmp/err")
want='{"windows":[{"start":"2026-12-26T03:00:00Z","end":"2026-12-26T07:00:00Z"},{"start":"2026-12-27T03:00:00Z","end":"2026-12-27T07:00:00Z"}]}'
if [ "$out" = "$want" ]; then
  ok "Google's EXDATE of 25 Dec lets that weekend's windows through"
else
  bad "Google EXDATE" "got  $out" "want $want"
fi

# Fail safe: missing, two keys without `key`, unreadable: every change the
# calendar covers is held, and preview says why (with the line).
"$BIN" preview -f - --from "$FROM" --count 2 -o json >"$tmp/out" 2>"$tmp/err" <<Y
apiVersion: changemanagement.hypershift.openshift.io/v1alpha1
kind: HostedChangeManagementPolicy
metadata: {name: p, namespace: clusters}
spec:
  strategy: Permissive
  exclusionCalendars:
  - name: nowhere
Y
if [ "$(cat "$tmp/out")" = '{"windows":[]}' ] &&
  grep -q "exclusion calendar nowhere: ConfigMap clusters/nowhere not found; the changes it covers are held" "$tmp/err"; then
  ok "a calendar whose ConfigMap is missing holds everything, and says so"
else
  bad "missing calendar" "$(cat "$tmp/out")" "$(cat "$tmp/err")"
fi

printf 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nSUMMARY:ok\r\nDTSTART:20261224T000000Z\r\nDURATION:P1D\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:bad\r\nDTSTART;TZID=Europe/Atlantis:20261231T000000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n' >"$tmp/broken.ics"
manifest "$tmp/broken.ics" "  strategy: Permissive
  exclusionCalendars:
  - name: freezes
    key: broken.ics" broken.ics >"$tmp/broken.yaml"
"$BIN" preview -f "$tmp/broken.yaml" --from "$FROM" --count 2 -o json >"$tmp/out" 2>"$tmp/err"
if [ "$(cat "$tmp/out")" = '{"windows":[]}' ] &&
  grep -q 'could not be read: line 8: DTSTART.s TZID "Europe/Atlantis" is neither a VTIMEZONE of the calendar nor a known time zone' "$tmp/err"; then
  ok "a calendar with an event it cannot read holds everything, naming the line and why"
else
  bad "unreadable calendar" "$(cat "$tmp/out")" "$(cat "$tmp/err")"
fi

manifest "$DATA/outlook-freezes.ics" "  strategy: Permissive
  exclusionCalendars:
  - name: freezes
    key: Freezes.ics" outlook.ics >"$tmp/nokey.yaml"
"$BIN" preview -f "$tmp/nokey.yaml" --from "$FROM" --count 2 -o json >"$tmp/out" 2>"$tmp/err"
if [ "$(cat "$tmp/out")" = '{"windows":[]}' ] && grep -q "has no key Freezes.ics in its data" "$tmp/err"; then
  ok "a key the ConfigMap does not have holds everything, naming it"
else
  bad "missing key" "$(cat "$tmp/out")" "$(cat "$tmp/err")"
fi

# A bad entry is refused, naming the field.
"$BIN" preview -f - --from "$FROM" >"$tmp/out" 2>"$tmp/err" <<Y
apiVersion: changemanagement.hypershift.openshift.io/v1alpha1
kind: HostedChangeManagementPolicy
metadata: {name: p}
spec:
  strategy: Permissive
  exclusionCalendars:
  - name: freezes
    scope: Workers
Y
status=$?
if [ "$status" -eq 2 ] && grep -q 'spec.exclusionCalendars\[0\].scope: "Workers" is not one of AllChanges' "$tmp/err"; then
  ok "a bad scope is refused naming spec.exclusionCalendars[0].scope (exit 2)"
else
  bad "bad scope" "exit $status" "$(cat "$tmp/err")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
