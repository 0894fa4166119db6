#!/usr/bin/env bash
# `hcp-controller preview --check`: the guard rails' verdict offline, its
# exit statuses (0 allowed, 3 refused, 2 an invalid configuration or bad
# usage) and its JSON. Prints one line per check and "N passed, N failed".
set -u

BIN=${HCP_BIN:?set HCP_BIN to the hcp-controller binary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
FROM=2026-11-23T00:00:00Z

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }
run() { "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; out=$(cat "$tmp/out"); err=$(cat "$tmp/err"); }
# expect NAME STATUS NEEDLE ARGS...: exit STATUS, stdout+stderr contain NEEDLE.
expect() {
  local name=$1 want=$2 needle=$3
  shift 3
  run "$@"
  if [ "$rc" -eq "$want" ] && [[ "$out$err" == *"$needle"* ]]; then ok "$name"; else
    bad "$name" "status $rc (want $want)" "out: $out" "err: $err"; fi
}

cat >"$tmp/guard.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: guard-rails, namespace: hcp-controller}
data:
  minPermittedTime: 48h
  rollingPeriod: 7d
  minBlockLength: 4h
  maxExclusionLength: 14d
Y
policy() { # NAME DURATION EXCLUDE-UNTIL
  cat >"$tmp/$1.yaml" <<Y
apiVersion: changemanagement.hypershift.openshift.io/v1alpha1
kind: HostedChangeManagementPolicy
metadata: {name: $1, namespace: team}
spec:
  strategy: MaintenanceSchedule
  maintenanceSchedule:
    permit: {rrule: "FREQ=DAILY", startTime: "01:00", duration: $2}
    exclude: [{fromDate: "2027-03-01", untilDate: "$3", reason: launch}]
Y
}
printf 'maxExclusionLength: 14d\n' >"$tmp/excl.yaml"
# Daily 7h: 49h in any 7 days; with one day excluded, 6 x 7h = 42h.
policy inside 7h 2027-03-02
expect "7h a day, 1 day excluded: refused with the first short period" 3 \
  "minPermittedTime: the 7d from 2027-02-22T08:00:00Z to 2027-03-01T08:00:00Z permit 1d 18h of changes" \
  preview -f "$tmp/inside.yaml" --from $FROM --check --guard-config "$tmp/guard.yaml"
sed -i 's/minPermittedTime: 48h/minPermittedTime: 42h/' "$tmp/guard.yaml"
expect "exactly the minimum: allowed" 0 "Verdict: allowed." \
  preview -f "$tmp/inside.yaml" --from $FROM --check --guard-config "$tmp/guard.yaml"
policy long 7h 2027-03-16
expect "an exclusion of 15 days: refused, 1d too long" 3 \
  "is 15d long, 1d more than the 14d allowed" \
  preview -f "$tmp/long.yaml" --from $FROM --check --guard-config "$tmp/excl.yaml"
policy fifteen 7h 2027-03-15
expect "an exclusion of 14 days: allowed" 0 "Verdict: allowed." \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config "$tmp/excl.yaml"
run preview -f "$tmp/long.yaml" --from $FROM --check --guard-config "$tmp/excl.yaml" -o json
if [ "$rc" -eq 3 ] && [ "$(jq -r '[.allowed, .violations[0].rule, .violations[0].bySeconds] | join(" ")' <<<"$out")" = "false maxExclusionLength 86400" ]; then
  ok "-o json names the rule and by how much"
else bad "-o json" "$rc" "$out"; fi
expect "RestrictiveUntil beyond the limit" 3 "maxRestrictiveUntil: restrictiveUntil 2027-01-01T00:00:00Z is 9d later than the 30d from now allowed" \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config <(printf 'maxRestrictiveUntil: 30d\n') \
  --restrictive-until 2027-01-01T00:00:00Z
expect "the NodePool is judged on the intersection" 3 "minPermittedTime" \
  preview -f "$tmp/fifteen.yaml" -f <(sed 's/01:00/05:00/; s/fifteen/np/' "$tmp/fifteen.yaml") --from $FROM \
  --check --guard-config "$tmp/guard.yaml"
expect "an unknown key is refused, named" 2 "data.maxExclusion: unknown field" \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config <(printf 'kind: ConfigMap\ndata: {maxExclusion: 3d}\n')
expect "a bad duration is refused, named" 2 "maxExclusionLength: \"3 days\" is not a duration" \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config <(printf 'maxExclusionLength: 3 days\n')
expect "minTimeLeft no window can meet is refused, named" 3 "minTimeLeft: a change starts only with 8h of its window left, but the longest window over the next 12 months is 7h" \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config <(printf 'minTimeLeft: 8h\n')
expect "minTimeLeft a window meets is allowed" 0 "Verdict: allowed" \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config <(printf 'minTimeLeft: 7h\n')
cat >"$tmp/own-min.yaml" <<Y
apiVersion: changemanagement.hypershift.openshift.io/v1alpha1
kind: HostedChangeManagementPolicy
metadata: {name: own-min, namespace: team}
spec:
  strategy: MaintenanceSchedule
  minTimeLeft: {workerNodes: 8h}
  maintenanceSchedule:
    permit: {rrule: "FREQ=DAILY", startTime: "01:00", duration: 7h}
Y
expect "a policy's own minTimeLeft no window meets is refused, naming the field" 3 \
  "spec.minTimeLeft.workerNodes: a change starts only with 8h of its window left, but the longest window over the next 12 months is 7h (1h short): no change could ever start" \
  preview -f "$tmp/own-min.yaml" --from $FROM --check --guard-config "$tmp/excl.yaml"
sed 's/8h/7h/' "$tmp/own-min.yaml" >"$tmp/own-min7.yaml"
expect "a policy's own minTimeLeft a window meets is allowed" 0 "Verdict: allowed" \
  preview -f "$tmp/own-min7.yaml" --from $FROM --check --guard-config "$tmp/excl.yaml"
expect "a bad notifications key in the same file is refused, named" 2 \
  "notifications.leads[0]: must be a duration" \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config <(printf 'notifications: {leads: [48]}\n')
expect "a bad notification endpoint is refused, named" 2 "notifications.endpoints[0].url" \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config \
  <(printf 'notifications:\n  endpoints: [{name: ops, url: "ftp://x"}]\n')
expect "a bad pre-start check in the same file is refused, named" 2 \
  "checks[0].failurePolicy: \"Fail\" is not one of Hold, Ignore" \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config \
  <(printf 'checks:\n  - {name: cab, url: "https://cab.example.com", failurePolicy: Fail}\n')
expect "a check's timeout out of range is refused, named" 2 "checks[0].timeout: must be from 1s to 60s" \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config \
  <(printf 'checks:\n  - {name: cab, url: "https://cab.example.com", timeout: 5m}\n')
expect "good checks are allowed" 0 "Verdict: allowed" \
  preview -f "$tmp/fifteen.yaml" --from $FROM --check --guard-config \
  <(printf 'checks:\n  - {name: cab, url: "https://cab.example.com", timeout: 5s, systems: [control-plane]}\n')
expect "--check needs --guard-config" 2 "--check and --guard-config go together" \
  preview -f "$tmp/fifteen.yaml" --check
expect "--restrictive-until needs --check" 2 "--restrictive-until is only used with --check" \
  preview -f "$tmp/fifteen.yaml" --restrictive-until 2027-01-01T00:00:00Z
expect "a missing configuration file" 1 "cannot open" \
  preview -f "$tmp/fifteen.yaml" --check --guard-config "$tmp/nothere.yaml"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
