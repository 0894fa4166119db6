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

# ---- HostedChangeManagementStatus -------------------------------------------
# The companion CRD (crds/...hostedchangemanagementstatuses.yaml) as shipped:
# a whole companion as hcp-controller writes it is stored as written; the
# schema refuses a target of another kind, a sixth history entry and an
# unknown state, naming the field; `kubectl get hcms` shows its columns.
hcms() { # NAME TARGET-KIND EXTRA-STATUS-JSON
  jq -n --arg n "$1" --arg k "$2" --argjson x "${3:-{\}}" '{
    apiVersion: "changemanagement.hypershift.openshift.io/v1alpha1",
    kind: "HostedChangeManagementStatus", metadata: {name: $n},
    target: {kind: $k, name: "a"},
    status: ({strategy: "ByPolicy", strategyInForce: "MaintenanceSchedule", policy: "weekend",
      behavior: {current: {state: "ChangesPaused", startTime: "2026-03-07T06:00:00Z",
                           endTime: "2026-03-14T00:00:00Z", reason: "OutsideMaintenanceWindow"},
                 next: {state: "ChangesUnpaused", startTime: "2026-03-14T00:00:00Z",
                        endTime: "2026-03-14T06:00:00Z", reason: "InMaintenanceWindow"},
                 history: [{strategy: "MaintenanceSchedule", state: "ChangesPaused",
                            startTime: "2026-03-07T06:00:00Z"}]},
      heldChange: {summary: "release quay.io/x:4.17.1", release: "quay.io/x:4.17.1",
                   since: "2026-03-07T07:00:00Z"}} * $x)}'
}
if out=$(hcms hostedcluster.a HostedCluster | k apply -n "$ns" -f - 2>&1) &&
  [ "$(k get -n "$ns" hcms hostedcluster.a -o jsonpath='{.status.heldChange.since}')" = 2026-03-07T07:00:00Z ]; then
  ok "a companion as hcp-controller writes it is stored"
else
  not_ok "a companion as hcp-controller writes it is stored" "$out"
fi
hdr=$(k get -n "$ns" hcms 2>&1 | head -1 | tr -s ' ')
row=$(k get -n "$ns" hcms 2>&1 | sed -n 2p | tr -s ' ')
if [ "$hdr" = "NAME KIND TARGET STRATEGY STATE NEXT CHANGE HELD AGE" ] &&
  [[ "$row" == "hostedcluster.a HostedCluster a MaintenanceSchedule ChangesPaused 2026-03-14T00:00:00Z release quay.io/x:4.17.1 "* ]]; then
  ok "kubectl get hcms: kind, target, strategy, state, next change, held change"
else
  not_ok "kubectl get hcms columns" "$hdr | $row"
fi
# hcms_refused NAME FIELD MESSAGE JSON: the API server refuses it naming FIELD.
hcms_refused() {
  local out
  if out=$(echo "$4" | k apply -n "$ns" -f - 2>&1); then
    not_ok "refused: $1" "the API server accepted it"
  elif [[ "$out" == *"$2"*"$3"* ]]; then
    ok "refused: $1 ($2)"
  else
    not_ok "refused: $1" "want '$2' and '$3' in: $out"
  fi
}
hcms_refused target-kind target.kind 'Unsupported value: "MachineDeployment"' \
  "$(hcms bad-kind MachineDeployment)"
hcms_refused six-history status.behavior.history 'must have at most 5 items' \
  "$(hcms six NodePool "{\"behavior\": {\"history\": [$(printf '{"strategy":"Permissive","state":"ChangesUnpaused"},%.0s' 1 2 3 4 5)
    {\"strategy\": \"Permissive\", \"state\": \"ChangesUnpaused\"}]}}")"
hcms_refused state status.behavior.current.state 'Unsupported value: "Open"' \
  "$(hcms bad-state NodePool '{"behavior": {"current": {"state": "Open"}}}')"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
