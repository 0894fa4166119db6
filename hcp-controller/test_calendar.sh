#!/usr/bin/env bash
# `hcp-controller preview -o ics` read by an independent iCalendar parser
# (Debian's python3-icalendar): over 300 random policies its events must be
# exactly the windows of `preview -o json` and the policies' exclusions
# with their reasons (0 differences). Prints one line per check and a final
# "N passed, N failed".
set -u

BIN=${HCP_BIN:?set HCP_BIN to the hcp-controller binary}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
COMPARE=$HERE/../e2e/controller/ics_compare.py # the oracle the calendar feed's e2e shares
N=${CALENDAR_POLICIES:-300}
FROM=2026-11-23T09:30:00Z
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }

"$PY" "$COMPARE" generate "$tmp" "$N" 15
refused=0
for p in "$tmp"/p[0-9][0-9][0-9].json; do
  "$BIN" preview -f "$p" --from "$FROM" --count 40 -o json >"${p%.json}.windows.json" 2>"$tmp/err" &&
    "$BIN" preview -f "$p" --from "$FROM" --count 40 -o ics >"${p%.json}.ics" 2>>"$tmp/err" ||
    { refused=$((refused + 1)); cat "$tmp/err"; }
done
line=$("$PY" "$COMPARE" compare-all "$tmp" "$FROM" 2>&1)
status=$?
last=${line##*$'\n'}
if [ "$refused" -eq 0 ] && [ "$status" -eq 0 ] && [ "$last" = "${last/ 0 events/}" ] &&
   [[ "$last" == "$N policies, "*", 0 differences" ]]; then
  ok "preview -o ics equals preview -o json over $last"
else
  bad "preview -o ics vs -o json over $N random policies" "$line" "$refused policies refused"
fi

# Lines: CRLF, at most 75 octets, folds never split a UTF-8 sequence.
"$BIN" preview -f "$tmp/p000.json" --from "$FROM" -o ics >"$tmp/c.ics"
if LC_ALL=C awk '{ sub(/\r$/, ""); if (length($0) > 75) exit 1 }' "$tmp/c.ics" &&
   [ "$(grep -c $'\r$' "$tmp/c.ics")" -eq "$(wc -l <"$tmp/c.ics")" ] &&
   iconv -f UTF-8 -t UTF-8 "$tmp/c.ics" >/dev/null 2>&1; then
  ok "lines end in CRLF and are folded at 75 octets"
else
  bad "line folding" "$(head -c 600 "$tmp/c.ics")"
fi

# A reason with every TEXT special character survives the round trip.
cat >"$tmp/x.yaml" <<'Y'
apiVersion: changemanagement.hypershift.openshift.io/v1alpha1
kind: HostedChangeManagementPolicy
metadata: {name: freeze, namespace: team-a}
spec:
  strategy: MaintenanceSchedule
  maintenanceSchedule:
    permit: {rrule: "FREQ=WEEKLY;BYDAY=SA", duration: 8h}
    exclude:
    - {fromDate: "2026-12-19", untilDate: "2027-01-04", reason: 'Year end; no changes, a\b — ünïcödé'}
Y
"$BIN" preview -f "$tmp/x.yaml" --from "$FROM" -o ics >"$tmp/x.ics"
got=$("$PY" -c 'import sys; from icalendar import Calendar
for e in Calendar.from_ical(open(sys.argv[1],"rb").read()).walk("VEVENT"):
    if "excluded" in str(e["SUMMARY"]): print(e["SUMMARY"], e.decoded("DTSTART").isoformat(), e.decoded("DTEND").isoformat())' "$tmp/x.ics")
want='team-a/freeze: changes excluded: Year end; no changes, a\b — ünïcödé 2026-12-19T00:00:00+00:00 2027-01-04T00:00:00+00:00'
if [ "$got" = "$want" ]; then ok "an exclusion is an event of its own with its reason"; else bad "exclusion event" "got:  $got" "want: $want"; fi

# UIDs are stable: the same window has the same UID from a later instant.
"$BIN" preview -f "$tmp/x.yaml" --from 2026-11-25T00:00:00Z -o ics >"$tmp/y.ics"
a=$(grep -m1 '^UID:window-20261128' "$tmp/x.ics"); b=$(grep -m1 '^UID:window-20261128' "$tmp/y.ics")
if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$(grep -c '^UID:' "$tmp/x.ics")" -eq "$(grep '^UID:' "$tmp/x.ics" | sort -u | wc -l)" ]; then
  ok "UIDs are unique and stable per window"
else
  bad "UIDs" "$a" "$b"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
