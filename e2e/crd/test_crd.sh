#!/usr/bin/env bash
# The HostedChangeManagementPolicy CRD of crds/, installed as shipped, against
# the real API server: each x-kubernetes-validations rule refuses one object
# that breaks only that rule, with the rule's own message and field path; one
# valid object of every recurrence kind (and an rrule) is stored as written and
# `hcp-controller preview` finds windows in it.
#
# Needs the "main" instance (make e2e brings it up) and HCP_BIN. Prints
# "N passed, N failed" last.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
e2e=$(cd "$here/.." && pwd)
repo=$(cd "$e2e/.." && pwd)
HCP_BIN=${HCP_BIN:-$repo/build/hcp-controller}
CRD=$repo/crds/changemanagement.hypershift.openshift.io_hostedchangemanagementpolicies.yaml

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
not_ok() { failed=$((failed + 1)); echo "FAIL - $1${2:+: $2}"; }

eval "$("$e2e/cluster.sh" env main | sed 's/^/export /')" ||
  { echo "main instance not running"; echo "0 passed, 1 failed"; exit 1; }
k() { kubectl --kubeconfig "$HCP_E2E_KUBECONFIG" "$@"; }

tmp=$(mktemp -d)
ns="hcp-crd-$$"
trap 'k delete namespace "$ns" --wait=false >/dev/null 2>&1; rm -rf "$tmp"' EXIT
k create namespace "$ns" >/dev/null

# The served CRD is the shipped file: same rules, none dropped.
shipped=$(grep -c -- '- rule:' "$CRD")
served=$(k get crd hostedchangemanagementpolicies.changemanagement.hypershift.openshift.io -o json |
  jq '[.. | objects | select(has("x-kubernetes-validations")) | .["x-kubernetes-validations"][]] | length')
if [ "$shipped" -ge 9 ] && [ "$served" = "$shipped" ]; then
  ok "the API server serves all $shipped CEL rules of the shipped CRD"
else
  not_ok "the API server serves all CEL rules of the shipped CRD" "shipped $shipped, served $served"
fi

# policy NAME SCHEDULE-YAML: a policy document (schedule indented by 4).
policy() {
  cat <<DOC
apiVersion: changemanagement.hypershift.openshift.io/v1alpha1
kind: HostedChangeManagementPolicy
metadata:
  name: $1
  namespace: $ns
spec:
  strategy: MaintenanceSchedule
  maintenanceSchedule:
$(sed 's/^/    /' <<<"$2")
DOC
}

# refused NAME FIELD MESSAGE SCHEDULE-YAML: applying is refused, and the API
# server's answer names FIELD and carries MESSAGE.
refused() {
  local name=$1 field=$2 msg=$3 out
  if out=$(policy "$name" "$4" | k apply -f - 2>&1); then
    not_ok "refused: $name" "the API server accepted it: $out"
    k delete -n "$ns" hostedchangemanagementpolicy "$name" >/dev/null 2>&1
    return
  fi
  if [[ "$out" == *"$field"*"$msg"* ]]; then
    ok "refused: $name ($field: $msg)"
  else
    not_ok "refused: $name" "want '$field' and '$msg' in: $out"
  fi
}

P=spec.maintenanceSchedule.permit
R=$P.recurrence
refused both-recurrence-and-rrule "$P" "recurrence and rrule are mutually exclusive" '
permit:
  recurrence: {frequency: Daily}
  rrule: FREQ=DAILY'
refused daily-on-weekly "$R" "daily is only allowed when frequency is Daily" '
permit:
  recurrence: {frequency: Weekly, daily: {interval: 2}, weekly: {daysOfWeek: [Monday]}}'
refused weekly-missing "$R" "weekly is required when frequency is Weekly and not allowed otherwise" '
permit:
  recurrence: {frequency: Weekly}'
refused monthly-missing "$R" "monthly is required when frequency is Monthly and not allowed otherwise" '
permit:
  recurrence: {frequency: Monthly}'
refused yearly-on-daily "$R" "yearly is required when frequency is Yearly and not allowed otherwise" '
permit:
  recurrence: {frequency: Daily, yearly: {by: Date, date: {datesOfMonth: [1], month: May}}}'
refused monthly-by-date-with-day "$R.monthly" "by Date requires date, by Day requires day, and the other one is not allowed" '
permit:
  recurrence:
    frequency: Monthly
    monthly: {by: Date, day: {days: [{weekOfMonth: First, dayOfWeek: Monday}]}}'
refused yearly-by-day-with-date "$R.yearly" "by Date requires date, by Day requires day, and the other one is not allowed" '
permit:
  recurrence:
    frequency: Yearly
    yearly: {by: Day, date: {datesOfMonth: [1], month: May}}'
refused duration-over-a-year "$P.duration" "duration must be at most 8760h" '
permit:
  recurrence: {frequency: Daily}
  duration: 8761h'
refused go-duration-over-a-year "$P.duration" "duration must be at most 8760h" '
permit:
  rrule: FREQ=DAILY
  duration: 8760h0m1s'
refused duration-zero "$P.duration" "should match '[1-9]'" '
permit:
  rrule: FREQ=DAILY
  duration: 0h0m0s'
refused exclusion-ends-before-it-starts "spec.maintenanceSchedule.exclude[0]" \
  "untilDate must be after fromDate (untilDate is exclusive)" '
permit:
  recurrence: {frequency: Daily}
exclude:
- {fromDate: "2026-12-20", untilDate: "2026-12-20"}'

# accepted NAME SCHEDULE-YAML JQ-CHECK: created as written; the stored object
# passes JQ-CHECK, and preview lists a window of it.
accepted() {
  local name=$1 out
  policy "$name" "$2" >"$tmp/$name.yaml"
  if ! out=$(k apply -f "$tmp/$name.yaml" 2>&1); then
    not_ok "accepted: $name" "$out"
    return
  fi
  if ! k get -n "$ns" hostedchangemanagementpolicy "$name" -o json | jq -e "$3" >/dev/null; then
    not_ok "accepted: $name" "stored object fails $3"
    return
  fi
  if ! out=$("$HCP_BIN" preview -f "$tmp/$name.yaml" --from 2026-01-01T00:00:00Z --count 1 -o json 2>&1) ||
    ! jq -e '.windows | length == 1' <<<"$out" >/dev/null; then
    not_ok "accepted: $name" "preview: $out"
    return
  fi
  ok "accepted: $name"
}

S=.spec.maintenanceSchedule
accepted daily '
timeZone: Europe/Zurich
permit:
  recurrence: {frequency: Daily, daily: {interval: 2}}
  startTime: "22:00"
  duration: 4h' "$S.permit.recurrence.daily.interval == 2 and $S.timeZone == \"Europe/Zurich\""
accepted weekly '
permit:
  recurrence: {frequency: Weekly, weekly: {daysOfWeek: [Saturday, Sunday], interval: 1}}
  startTime: "01:00"
  duration: 90m' "$S.permit.recurrence.weekly.daysOfWeek == [\"Saturday\",\"Sunday\"]"
accepted monthly-by-date '
permit:
  recurrence: {frequency: Monthly, monthly: {by: Date, date: {datesOfMonth: [1, 15]}}}
  duration: 1h30m' "$S.permit.recurrence.monthly.date.datesOfMonth == [1,15]"
accepted monthly-by-day '
permit:
  recurrence:
    frequency: Monthly
    monthly: {by: Day, day: {days: [{weekOfMonth: Last, dayOfWeek: Sunday}], interval: 2}}
  startTime: "03:00"
  duration: 6h' "$S.permit.recurrence.monthly.day.days[0].weekOfMonth == \"Last\""
accepted yearly-by-date '
permit:
  recurrence: {frequency: Yearly, yearly: {by: Date, date: {datesOfMonth: [29], month: February}}}
  duration: 8760h' "$S.permit.recurrence.yearly.date.month == \"February\""
accepted yearly-by-day '
permit:
  recurrence:
    frequency: Yearly
    yearly: {by: Day, day: {days: [{weekOfMonth: First, dayOfWeek: Monday}], month: September}}
exclude:
- {fromDate: "2026-09-07", reason: "a holiday"}' "$S.permit.recurrence.yearly.day.month == \"September\" and $S.exclude[0].reason == \"a holiday\""
accepted rrule '
timeZone: America/New_York
permit:
  rrule: FREQ=MONTHLY;BYDAY=TU;BYSETPOS=2
  startTime: "20:00"
  duration: 3h' "$S.permit.rrule == \"FREQ=MONTHLY;BYDAY=TU;BYSETPOS=2\""
# Go clients write a metav1.Duration as Go formats it.
accepted go-duration '
permit:
  recurrence: {frequency: Weekly, weekly: {daysOfWeek: [Saturday]}}
  startTime: "20:00"
  duration: 8h0m0s' "$S.permit.duration == \"8h0m0s\""
accepted go-duration-seconds '
permit:
  rrule: FREQ=DAILY
  duration: 1h30m45s' "$S.permit.duration == \"1h30m45s\""
# A permit without a recurrence selects every date.
accepted every-day '
permit:
  startTime: "22:00"
  duration: 2h
exclude:
- {fromDate: "2026-12-24", untilDate: "2027-01-02", reason: "year-end freeze"}' "($S.permit | has(\"recurrence\") | not) and $S.permit.startTime == \"22:00\""

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
