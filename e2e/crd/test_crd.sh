#!/usr/bin/env bash
# The HostedChangeManagementPolicy CRD of crds/, installed as shipped, against
# the real API server, no webhook installed:
#
#   1. Every invalid policy of the policy unit tests (test_policy --list-bad)
#      is refused with the controller's own sentence on the controller's
#      field path (the refusal has an entry "<field>: ...: <sentence>", the
#      sentence taken from policy_parse(), not from this file), except the
#      kinds the API server words itself (a wrong JSON type, an unknown
#      field), which must still name the field, and the few the CRD cannot
#      see (listed below: they need the time zone database or the rrule
#      engine, which only the webhook and the controller have).
#   2. Each x-kubernetes-validations rule refuses one object that breaks only
#      that rule, with the controller's message and field path.
#   3. One valid object of every recurrence kind (and an rrule) is stored as
#      written and `hcp-controller preview` finds windows in it.
#
# Needs the "main" instance (make e2e brings it up), HCP_BIN and
# HCP_TEST_POLICY_BIN (build/tests/test_policy). Prints "N passed, N failed"
# last.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
e2e=$(cd "$here/.." && pwd)
repo=$(cd "$e2e/.." && pwd)
HCP_BIN=${HCP_BIN:-$repo/build/hcp-controller}
TEST_POLICY=${HCP_TEST_POLICY_BIN:-$repo/build/tests/test_policy}
CRD=$repo/crds/changemanagement.hypershift.openshift.io_hostedchangemanagementpolicies.yaml

# shellcheck source=e2e/lib.sh
. "$e2e/lib.sh"

eval "$("$e2e/cluster.sh" env main | sed 's/^/export /')" ||
  { echo "main instance not running"; echo "0 passed, 1 failed"; exit 1; }
KCFG=$HCP_E2E_KUBECONFIG

tmp=$(mktemp -d)
ns="hcp-crd-$$"
trap 'k delete namespace "$ns" --wait=false >/dev/null 2>&1; rm -rf "$tmp"' EXIT
k create namespace "$ns" >/dev/null

# The served CRD is the shipped file: same rules, none dropped (the file
# shares some rule lists through YAML anchors, so count them parsed).
rules='[.. | objects | select(has("x-kubernetes-validations")) | .["x-kubernetes-validations"][]] | length'
shipped=$(yq "$rules" "$CRD")
served=$(k get crd hostedchangemanagementpolicies.changemanagement.hypershift.openshift.io -o json |
  jq "$rules")
if [ "$shipped" -ge 40 ] && [ "$served" = "$shipped" ]; then
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

# policy_refused NAME FIELD MESSAGE SCHEDULE-YAML: applying is refused, and the API
# server's answer names FIELD and carries MESSAGE.
policy_refused() {
  local name=$1 field=$2 msg=$3 out
  if out=$(policy "$name" "$4" | k apply -f - 2>&1); then
    not_ok "refused: $name" "the API server accepted it: $out"
    k delete -n "$ns" hostedchangemanagementpolicy "$name" >/dev/null 2>&1
    return
  fi
  if carried "$field" "$msg" "$out"; then
    ok "refused: $name ($field: $msg)"
  else
    not_ok "refused: $name" "want '$field' and '$msg' in: $out"
  fi
}

# ---- 1. every invalid policy of the unit tests ---------------------------------

# carried FIELD SENTENCE OUTPUT: one error of OUTPUT (kubectl's "is invalid: E"
# or its "* E" list) reads "FIELD: <reason>[: <value>]: SENTENCE".
carried() {
  local field=$1 sentence=$2 e
  while IFS= read -r e; do
    e=${e#"* "}
    e=${e#*" is invalid: "}
    [[ "$e" == "$field: "* && "$e" == *": $sentence" ]] && return 0
  done <<<"$3"
  return 1
}
# What the CRD cannot decide: the time zone database, the rrule engine, and
# a value the API server stores normalised (1.0 is stored as 1, valid).
crd_blind='is not a known IANA time zone$|: BYMONTHDAY and BYMONTH together select no date$|must be an integer, not 1$'
if [ -x "$TEST_POLICY" ]; then
  n=0 carried_n=0 raw=0 worded=0 blind=0 wrong=0
  while IFS= read -r line; do
    n=$((n + 1))
    want=$(jq -r .message <<<"$line")
    field=${want%%: *} sentence=${want#*: }
    if out=$(jq -c --arg ns "$ns" --arg n "bad-$n" '.doc | .metadata = {name: $n, namespace: $ns}' \
      <<<"$line" | k apply -f - 2>&1); then
      k delete -n "$ns" hostedchangemanagementpolicy "bad-$n" --wait=false >/dev/null 2>&1
      if [[ "$want" =~ $crd_blind ]]; then
        blind=$((blind + 1))
      else
        wrong=$((wrong + 1))
        echo "# stored, but the controller says: $want"
      fi
    elif carried "$field" "$sentence" "$out"; then
      carried_n=$((carried_n + 1))
    elif [[ "$sentence" == '"'*'\x'*'" '* && "$out" == *"$field: Invalid value: \"string\": \""*"\" ${sentence#*\" }"* ]]; then
      # A byte outside printable ASCII: CEL cannot write it as \xNN, so the
      # value is shown as the API server received it; the rest is ours.
      carried_n=$((carried_n + 1)) raw=$((raw + 1))
    elif [[ "$sentence" =~ ^must\ be\ an?\ [a-z]+,\ not\  && "$out" == *"$field in body must be of type "* ]] ||
      [[ "$sentence" == "unknown field" && "$out" == *"unknown field \"$field\""* ]]; then
      worded=$((worded + 1)) # a JSON type or an unknown field: the API server's words, same field
    else
      wrong=$((wrong + 1))
      echo "# controller: $want"
      echo "#   refusal: $(tr '\n' ' ' <<<"$out")"
    fi
  done < <("$TEST_POLICY" --list-bad | jq -c 'select(.doc | type == "object" and .apiVersion ==
    "changemanagement.hypershift.openshift.io/v1alpha1" and .kind == "HostedChangeManagementPolicy")')
  echo "# figure: $n invalid policies of the unit tests, no webhook: $carried_n refused with the controller's field and sentence ($raw of them showing a control character unescaped), $worded with the API server's words for a JSON type or an unknown field (field named), $blind stored (the webhook and the controller refuse them)"
  if [ "$wrong" -eq 0 ] && [ "$n" -ge 130 ]; then
    ok "every invalid policy of the unit tests is refused by the CRD with the controller's message ($carried_n of $n) or the API server's for its type or field"
  else
    not_ok "every invalid policy of the unit tests is refused by the CRD with the controller's message" "$wrong of $n not"
  fi
  # Only what the CRD cannot know reaches the webhook: a new rule the CRD
  # misses, or a message that drifts, fails the loop above.
  if [ "$blind" -le 3 ]; then ok "at most 3 cases (time zone database, rrule engine, 1.0) pass the CRD"; else not_ok "at most 3 cases pass the CRD" "$blind"; fi
else
  not_ok "$TEST_POLICY is built (make build/tests/test_policy)"
fi

# ---- 2. each rule on its own ----------------------------------------------------

P=spec.maintenanceSchedule.permit
R=$P.recurrence
policy_refused both-recurrence-and-rrule "$P" "recurrence and rrule are mutually exclusive" '
permit:
  recurrence: {frequency: Daily}
  rrule: FREQ=DAILY'
policy_refused daily-on-weekly "$R.daily" "not allowed when frequency is Weekly" '
permit:
  recurrence: {frequency: Weekly, daily: {interval: 2}, weekly: {daysOfWeek: [Monday]}}'
policy_refused weekly-missing "$R.weekly" "required when frequency is Weekly" '
permit:
  recurrence: {frequency: Weekly}'
policy_refused monthly-missing "$R.monthly" "required when frequency is Monthly" '
permit:
  recurrence: {frequency: Monthly}'
policy_refused yearly-on-daily "$R.yearly" "not allowed when frequency is Daily" '
permit:
  recurrence: {frequency: Daily, yearly: {by: Date, date: {datesOfMonth: [1], month: May}}}'
policy_refused monthly-by-date-with-day "$R.monthly.day" "not allowed when by is Date" '
permit:
  recurrence:
    frequency: Monthly
    monthly: {by: Date, day: {days: [{weekOfMonth: First, dayOfWeek: Monday}]}}'
policy_refused yearly-by-day-with-date "$R.yearly.date" "not allowed when by is Day" '
permit:
  recurrence:
    frequency: Yearly
    yearly: {by: Day, date: {datesOfMonth: [1], month: May}}'
policy_refused yearly-on-june-31 "$R.yearly.date.datesOfMonth" "June has at most 30 days, so none of these dates ever occurs" '
permit:
  recurrence:
    frequency: Yearly
    yearly: {by: Date, date: {datesOfMonth: [31], month: June}}'
policy_refused duration-over-a-year "$P.duration" '"8761h" is longer than the maximum of 8760h' '
permit:
  recurrence: {frequency: Daily}
  duration: 8761h'
policy_refused go-duration-over-a-year "$P.duration" '"8760h0m1s" is longer than the maximum of 8760h' '
permit:
  rrule: FREQ=DAILY
  duration: 8760h0m1s'
policy_refused minutes-over-a-year "$P.duration" '"525601m" is longer than the maximum of 8760h' '
permit:
  rrule: FREQ=DAILY
  duration: 525601m'
policy_refused duration-zero "$P.duration" '"0h0m0s" must be longer than zero' '
permit:
  rrule: FREQ=DAILY
  duration: 0h0m0s'
policy_refused exclusion-ends-before-it-starts "spec.maintenanceSchedule.exclude[0].untilDate" \
  '"2026-12-20" must be after fromDate "2026-12-20" (untilDate is exclusive)' '
permit:
  recurrence: {frequency: Daily}
exclude:
- {fromDate: "2026-12-20", untilDate: "2026-12-20"}'
policy_refused leap-day-of-a-common-year "spec.maintenanceSchedule.exclude[0].fromDate" \
  '"2027-02-29" is not a valid date (YYYY-MM-DD, years 1970..9999)' '
exclude:
- {fromDate: "2027-02-29"}'

# ---- 3. valid objects -------------------------------------------------------------

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
hcms_doc() { # NAME TARGET-KIND EXTRA-STATUS-JSON
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
if out=$(hcms_doc hostedcluster.a HostedCluster | k apply -n "$ns" -f - 2>&1) &&
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
  "$(hcms_doc bad-kind MachineDeployment)"
hcms_refused six-history status.behavior.history 'must have at most 5 items' \
  "$(hcms_doc six NodePool "{\"behavior\": {\"history\": [$(printf '{"strategy":"Permissive","state":"ChangesUnpaused"},%.0s' 1 2 3 4 5)
    {\"strategy\": \"Permissive\", \"state\": \"ChangesUnpaused\"}]}}")"
hcms_refused state status.behavior.current.state 'Unsupported value: "Open"' \
  "$(hcms_doc bad-state NodePool '{"behavior": {"current": {"state": "Open"}}}')"

summary
