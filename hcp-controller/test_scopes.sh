#!/usr/bin/env bash
# Scoped exclusions (exclude[].scope, DESIGN.md 3.16) in `hcp-controller
# preview --change KIND`: over 300 random policies across DST zones, each
# exclusion with a random scope, the windows of each kind of change must be
# the policy's windows without exclusions minus exactly the exclusions whose
# scope holds that kind, computed apart in hcp-controller/scope_oracle.py
# (0 differences, to the second, over 460 days). Then the words: a bad
# scope is refused naming the field, --change refuses an unknown kind, and
# the table names the scope that holds a change. Prints one line per check
# and a final "N passed, N failed".
set -u

BIN=${HCP_BIN:?set HCP_BIN to the hcp-controller binary}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
ORACLE=$HERE/scope_oracle.py
N=${SCOPE_POLICIES:-300}
FROM=2026-11-01T00:00:00Z
DAYS=460
KINDS="control-plane control-plane-minor nodes nodes-minor"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }

"$PY" "$ORACLE" generate "$tmp" "$N" 46
refused=0
for p in "$tmp"/p[0-9][0-9][0-9].json; do
  s=${p%.json}
  "$BIN" preview -f "$s.base.json" --from "$FROM" --count 5000 -o json >"$s.base.windows.json" 2>"$tmp/err" ||
    { refused=$((refused + 1)); cat "$tmp/err"; continue; }
  for k in $KINDS; do
    "$BIN" preview -f "$p" --change "$k" --from "$FROM" --count 5000 -o json >"$s.$k.json" 2>"$tmp/err" ||
      { refused=$((refused + 1)); cat "$tmp/err"; }
  done
done
line=$("$PY" "$ORACLE" compare "$tmp" "$FROM" "$DAYS" 2>&1)
status=$?
last=${line##*$'\n'}
if [ "$refused" -eq 0 ] && [ "$status" -eq 0 ] && [[ "$last" == "$N policies ("*", 0 differences" ]]; then
  ok "preview --change equals the independent computation: $last"
else
  bad "preview --change vs the independent computation over $N random policies" "$(head -c 2000 <<<"$line")" "$refused previews refused"
fi

# Without --change every exclusion applies, whatever its scope: the
# default is the kind every exclusion holds (a node minor upgrade).
s=$tmp/p000
"$BIN" preview -f "$s.json" --from "$FROM" --count 5000 -o json >"$tmp/all.json"
if cmp -s "$tmp/all.json" "$s.nodes-minor.json"; then
  ok "preview without --change applies every exclusion (as --change nodes-minor)"
else
  bad "preview's default" "$(head -c 300 "$tmp/all.json")" "$(head -c 300 "$s.nodes-minor.json")"
fi

cat >"$tmp/freeze.yaml" <<'Y'
apiVersion: changemanagement.hypershift.openshift.io/v1alpha1
kind: HostedChangeManagementPolicy
metadata: {name: freeze, namespace: team-a}
spec:
  strategy: MaintenanceSchedule
  maintenanceSchedule:
    timeZone: America/New_York
    permit: {rrule: "FREQ=DAILY", startTime: "00:00", duration: 24h}
    exclude:
    - {fromDate: "2026-11-26", untilDate: "2026-12-01", reason: black-friday, scope: Nodes}
    - {fromDate: "2026-12-20", untilDate: "2027-01-02", reason: year-end, scope: MinorUpgrades}
Y
out=$("$BIN" preview -f "$tmp/freeze.yaml" --from 2026-11-27T15:00:00Z --change nodes 2>&1)
if grep -q "changes are not permitted (excluded: black-friday (scope Nodes)); the next window opens 2026-12-01T05:00:00Z" <<<"$out" &&
   grep -q "Windows of a node z-stream or configuration: only the exclusions whose scope holds it apply" <<<"$out"; then
  ok "the table names the scope that holds a node change (black-friday (scope Nodes))"
else
  bad "the table for --change nodes" "$out"
fi
out=$("$BIN" preview -f "$tmp/freeze.yaml" --from 2026-11-27T15:00:00Z --change control-plane 2>&1)
if grep -q "Now (2026-11-27T15:00:00Z): changes are permitted" <<<"$out"; then
  ok "a control-plane z-stream passes the Nodes freeze"
else
  bad "--change control-plane inside a Nodes freeze" "$out"
fi
out=$("$BIN" preview -f "$tmp/freeze.yaml" --from 2026-12-24T15:00:00Z --change control-plane-minor 2>&1)
if grep -q "excluded: year-end (scope MinorUpgrades)" <<<"$out"; then
  ok "a control-plane minor upgrade is held by the MinorUpgrades exclusion"
else
  bad "--change control-plane-minor inside a MinorUpgrades exclusion" "$out"
fi

sed 's/scope: Nodes/scope: nodes/' "$tmp/freeze.yaml" >"$tmp/bad.yaml"
out=$("$BIN" preview -f "$tmp/bad.yaml" 2>&1)
rc=$?
if [ "$rc" = 2 ] && grep -q 'spec.maintenanceSchedule.exclude\[0\].scope: "nodes" is not one of AllChanges, MinorUpgrades, Nodes, MinorUpgradesAndNodes' <<<"$out"; then
  ok "a scope that is not one of the four is refused, naming the field (exit 2)"
else
  bad "a bad scope (exit $rc)" "$out"
fi
out=$("$BIN" preview -f "$tmp/freeze.yaml" --change workers 2>&1)
rc=$?
if [ "$rc" = 2 ] && grep -q -- '--change: "workers" is not one of all, control-plane, control-plane-minor, nodes, nodes-minor' <<<"$out"; then
  ok "--change refuses an unknown kind (exit 2)"
else
  bad "--change workers (exit $rc)" "$out"
fi

# The calendar: each exclusion's event names what it holds and its scope.
out=$("$BIN" preview -f "$tmp/freeze.yaml" --from 2026-11-20T00:00:00Z -o ics 2>&1 | tr -d '\r')
if grep -q "^SUMMARY:team-a/freeze: node changes excluded: black-friday" <<<"$out" &&
   grep -q "^CATEGORIES:Nodes" <<<"$out" && grep -q "^CATEGORIES:MinorUpgrades" <<<"$out"; then
  ok "the calendar's exclusion events carry the scope (SUMMARY and CATEGORIES)"
else
  bad "the calendar's exclusions" "$(grep -E '^(SUMMARY|CATEGORIES)' <<<"$out" | head -6)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
