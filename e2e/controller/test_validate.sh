#!/usr/bin/env bash
# End-to-end: the validating webhooks (policies, HostedClusters, NodePools)
# served by the controller over TLS and called by the real kube-apiserver
# (a ValidatingWebhookConfiguration with clientConfig.url, scoped to this
# test's namespaces), with guard rails read from a --guard-config file.
#
#   1. Every invalid case of the policy unit tests (test_policy --list-bad)
#      is refused at `kubectl apply`: by the CRD's schema where it catches
#      it first, otherwise by the webhook with the controller's own field
#      path and message; a case the API server stores differently (1.0
#      becomes 1) must then be valid to the controller (Ready).
#   2. An invalid stanza is refused with the words of the controller's
#      status; a "HyperShift" write that leaves an invalid stanza alone
#      passes, and so does its status write.
#   3. Guard rails, each limit just inside and just outside:
#      minPermittedTime 48h per 32d (Saturdays of 12h / 11h59m),
#      minBlockLength 4h (daily 4h / 3h59m), maxExclusionLength 30d (30 /
#      31 days); a NodePool judged within its HostedCluster; an exempt
#      namespace, user and group pass (and are still validated).
#   4. The guard rail file is read again when it changes (the limits are
#      written before 3, minPermittedTime dropped after it); a misspelt
#      key stops a controller's start; maxRestrictiveUntil 30d, an hour
#      inside / outside.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"

TEST_POLICY=${HCP_TEST_POLICY_BIN:-$CTL_REPO/build/tests/test_policy}
SIM0=2026-03-03T12:00:00Z # a Tuesday
WH_NAME=hcp-e2e-validate-$$

webhook_scenario_begin
[ -x "$TEST_POLICY" ] || { not_ok "$TEST_POLICY is built (make build/tests/test_policy)"; summary; exit 1; }

# validating_config PORT NS...: the three validating webhooks, for the
# namespaces given only.
validating_config() {
  local port=$1
  shift
  webhook_config ValidatingWebhookConfiguration CREATE,UPDATE "$port" "$@" -- \
    policies:/validate/hostedchangemanagementpolicies:$CM:hostedchangemanagementpolicies \
    hostedclusters:/validate/hostedclusters:hypershift.openshift.io:hostedclusters \
    nodepools:/validate/nodepools:hypershift.openshift.io:nodepools
}

NS=$(new_ns valid)
SRE_NS=$(new_ns valid-sre)
GUARD=$CTL_TMP/guard-rails.yaml
echo '{}' >"$GUARD" # none until section 3 writes them (and the controller reads them again)
write_guard() {
  cat >"$GUARD.new" <<Y
minPermittedTime: 48h
rollingPeriod: 32d
minBlockLength: 4h
maxExclusionLength: 30d
maxRestrictiveUntil: 30d
exemptNamespaces: [$SRE_NS]
exemptUsers: [alice]
exemptGroups: [sre-admins]
Y
  mv "$GUARD.new" "$GUARD"
}

# Objects that exist before the webhooks: policies the guard rails would
# refuse and a HostedCluster whose stanza is invalid.
mk_policy "$NS" sat12 "$(weekly_policy Saturday 01:00 12h)" || not_ok "policy sat12"
mk_policy "$NS" weekdays "$(jq -nc '{strategy: "MaintenanceSchedule", maintenanceSchedule: {
  permit: {recurrence: {frequency: "Weekly", weekly: {daysOfWeek: ["Monday", "Tuesday",
  "Wednesday", "Thursday", "Friday"]}}, startTime: "01:00", duration: "12h"}}}')" || not_ok "policy weekdays"
mk_hc "$NS" a policy=sat12 || not_ok "HostedCluster a"
mk_hc "$NS" bad strategy=Sometimes || not_ok "HostedCluster bad (invalid stanza)"

WPORT=$(free_port)
SCENARIO=start
start_ctl c "$NS" "$SIM0" 1 --webhook-bind-address "127.0.0.1:$WPORT" \
  --webhook-cert-file "$CERT" --webhook-key-file "$KEY" --guard-config "$GUARD" ||
  { summary; exit 1; }
validating_config "$WPORT" "$NS" "$SRE_NS" | k apply -f - >/dev/null || not_ok "webhook configuration"
sleep 1

# apply_doc JSON [KUBECTL-ARGS...]: `kubectl apply` of one object; sets OUT
# (stdout and stderr) and RC.
apply_doc() {
  local doc=$1
  shift
  OUT=$(printf '%s' "$doc" | k apply "$@" -f - 2>&1)
  RC=$?
}
# denial: what the webhook said after "denied the request: ", or "".
denial() { [[ $OUT == *"denied the request: "* ]] && printf '%s' "${OUT#*denied the request: }"; }
# policy_doc NS NAME SPEC-JSON
policy_doc() {
  jq -nc --arg ns "$1" --arg n "$2" --argjson s "$3" '{apiVersion:
    "changemanagement.hypershift.openshift.io/v1alpha1", kind: "HostedChangeManagementPolicy",
    metadata: {name: $n, namespace: $ns}, spec: $s}'
}

# ---- 1. every invalid case of the policy unit tests ----------------------------

SCENARIO=invalid
by_webhook=0 by_schema=0 admitted=0 restricting=0 wrong=0 n=0
while IFS= read -r line; do
  n=$((n + 1))
  want=$(jq -r .message <<<"$line")
  apply_doc "$(jq -c --arg ns "$NS" --arg n "bad-$n" '.doc | .metadata = {name: $n, namespace: $ns}' <<<"$line")"
  if [ "$RC" -eq 0 ]; then
    # The API server stored something else than the case (1.0 becomes 1):
    # fine, as long as the controller calls what it stored valid.
    admitted=$((admitted + 1))
    policy_ready() { [ "$(cond "$(hcmp_path "$NS" "bad-$n")" Ready status)" = True ]; }
    wait_for 10 policy_ready || { restricting=$((restricting + 1)); echo "# admitted, not Ready: $want"; }
  elif got=$(denial); then
    by_webhook=$((by_webhook + 1))
    echo "# refused by the webhook: $got"
    [ "$got" = "$want" ] || { wrong=$((wrong + 1)); echo "# webhook said: $got"; echo "#  controller: $want"; }
  else
    by_schema=$((by_schema + 1))
  fi
done < <("$TEST_POLICY" --list-bad | jq -c 'select(.doc | type == "object" and .apiVersion ==
  "changemanagement.hypershift.openshift.io/v1alpha1" and .kind == "HostedChangeManagementPolicy")')
echo "# figure: $n invalid policies of the unit tests: $by_schema refused by the CRD's schema and CEL rules, $by_webhook by the webhook, $admitted admitted as the API server normalised them"
check_eq "no invalid policy of the unit tests is stored to restrict a fleet" "0" "$restricting"
check_eq "the webhook refuses with the controller's field path and message" "0" "$wrong"
check "the webhook is what refuses the cases the schema lets through (an unknown time zone, BYMONTH with BYMONTHDAY)" test "$by_webhook" -ge 2
apply_doc "$(policy_doc "$NS" feb30 '{"strategy": "MaintenanceSchedule", "maintenanceSchedule":
  {"permit": {"rrule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"}}}')"
echo "# kubectl apply said: $OUT"
check_eq "BYMONTH=2;BYMONTHDAY=30 is refused, named" \
  "spec.maintenanceSchedule.permit.rrule: BYMONTHDAY and BYMONTH together select no date" "$(denial)"
apply_doc "$(policy_doc "$NS" twice "$(jq -nc '{strategy: "MaintenanceSchedule",
  maintenanceSchedule: {permit: {recurrence: {frequency: "Weekly", weekly: {daysOfWeek:
  ["Saturday", "Sunday", "Saturday"]}}, startTime: "00:00", duration: "24h"}}}')")"
check_contains "a day listed twice is refused by the CRD itself (list-type set)" "Duplicate value" "$OUT"

# ---- 2. stanzas ------------------------------------------------------------------

SCENARIO=stanza
hc_doc() { # NAME ANNOTATIONS-JSON
  jq -nc --arg ns "$NS" --arg n "$1" --argjson a "$2" '{apiVersion: "hypershift.openshift.io/v1beta1",
    kind: "HostedCluster", metadata: {name: $n, namespace: $ns, annotations: $a},
    spec: {release: {image: "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"},
           infraID: ($n + "-infra"), platform: {type: "None"}}}'
}
apply_doc "$(hc_doc c "$(annotations_json strategy=PermissiveUntil)")"
check_eq "a stanza missing its instant is refused, named" \
  "metadata.annotations[\"$CM/permissive-until\"]: required when strategy is PermissiveUntil" "$(denial)"
hc_status_written() { [ -n "$(cond "$(hc_path "$NS" bad)" ChangesPaused message)" ]; }
wait_for 10 hc_status_written
paused_msg=$(cond "$(hc_path "$NS" bad)" ChangesPaused message)
api PATCH "$(hc_path "$NS" bad)" '{"spec": {"release": {"image": "quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64"}}}' \
  >/dev/null
check_eq "HyperShift's spec write to a HostedCluster whose stanza is invalid passes" \
  "quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64" "$(get "$(hc_path "$NS" bad)" .spec.release.image)"
status_write() { set_hc_history "$NS" bad Partial >/dev/null; }
check "and its status write" status_write
OUT=$(api PATCH "$(hc_path "$NS" bad)" "{\"metadata\": {\"annotations\": {\"$CM/strategy\": \"Never\"}}}" 2>&1)
check_contains "changing it to another invalid stanza is refused, named" \
  "denied the request: metadata.annotations[\"$CM/strategy\"]: \"Never\" is not one of ByPolicy" \
  "$(jq -r .message <<<"$OUT" 2>/dev/null)"
check_contains "the controller's status says what the webhook says" \
  "metadata.annotations[\"$CM/strategy\"]: \"Sometimes\" is not one of ByPolicy" "$paused_msg"

# ---- 3. guard rails ----------------------------------------------------------------

SCENARIO=guard
weekly() { weekly_policy Saturday 01:00 "$1"; }
daily() { jq -nc --arg d "$1" '{strategy: "MaintenanceSchedule", maintenanceSchedule: {
  permit: {rrule: "FREQ=DAILY", startTime: "10:00", duration: $d}}}'; }
excluding() { jq -nc --arg u "$1" '{strategy: "MaintenanceSchedule", maintenanceSchedule: {
  permit: {rrule: "FREQ=DAILY", duration: "24h"},
  exclude: [{fromDate: "2026-04-01", untilDate: $u, reason: "quarter end"}]}}'; }

write_guard
enforced() {
  apply_doc "$(policy_doc "$NS" probe "$(weekly 11h59m)")"
  [ "$RC" -ne 0 ]
}
check "the guard rails written to the file are enforced without a restart" wait_for 25 enforced
check "the controller logged it" grep -q "guard rails read again" "${CTL_LOG[c]}"
apply_doc "$(policy_doc "$NS" sat-12h "$(weekly 12h)")"
check_eq "minPermittedTime: Saturdays of 12 h (48 h in any 32 days) are admitted" "0" "$RC"
apply_doc "$(policy_doc "$NS" sat-short "$(weekly 11h59m)")"
echo "# kubectl apply said: $OUT"
check_contains "minPermittedTime: 11h59m is refused, by 4m, with the first period short" \
  "minPermittedTime: the 32d from 2026-03-07T12:59:00Z to 2026-04-08T12:59:00Z permit 1d 23h 56m of changes in blocks of at least 4h (minBlockLength), 4m short of the 2d required" \
  "$(denial)"
apply_doc "$(policy_doc "$NS" daily-4h "$(daily 4h)")"
check_eq "minBlockLength: daily blocks of 4 h are admitted" "0" "$RC"
apply_doc "$(policy_doc "$NS" daily-short "$(daily 3h59m)")"
check_contains "minBlockLength: daily blocks of 3h59m do not count" "permit 0s of changes in blocks of at least 4h" "$(denial)"
apply_doc "$(policy_doc "$NS" excl-30 "$(excluding 2026-05-01)")"
check_eq "maxExclusionLength: 30 days are admitted" "0" "$RC"
apply_doc "$(policy_doc "$NS" excl-31 "$(excluding 2026-05-02)")"
check_contains "maxExclusionLength: 31 days are refused, by a day" \
  "spec.maintenanceSchedule.exclude[0] (2026-04-01T00:00:00Z to 2026-05-02T00:00:00Z, reason \"quarter end\") is 31d long, 1d more than the 30d allowed" \
  "$(denial)"
np_doc() { # NAME POLICY CLUSTER
  jq -nc --arg ns "$NS" --arg n "$1" --arg p "$2" --arg c "$3" --arg k "$CM/policy" '{
    apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
    metadata: {name: $n, namespace: $ns, annotations: {($k): $p}},
    spec: {clusterName: $c, replicas: 2, management: {upgradeType: "Replace"},
           release: {image: "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"}}}'
}
apply_doc "$(np_doc np-sat sat12 a)"
check_eq "a NodePool within its HostedCluster's Saturdays is admitted" "0" "$RC"
apply_doc "$(np_doc np-weekdays weekdays a)"
check_contains "a NodePool of weekdays within Saturdays is refused, its HostedCluster named" \
  "the effective schedule of NodePool $NS/np-weekdays (its own within HostedCluster a's): minPermittedTime" "$(denial)"

apply_doc "$(policy_doc "$SRE_NS" sat-short "$(weekly 11h59m)")"
check_eq "an exempt namespace passes" "0" "$RC"
apply_doc "$(policy_doc "$NS" alice-short "$(weekly 11h59m)")" --as alice --as-group system:masters
check_eq "an exempt user passes" "0" "$RC"
apply_doc "$(policy_doc "$NS" sre-short "$(weekly 11h59m)")" --as bob --as-group system:masters --as-group sre-admins
check_eq "an exempt group passes" "0" "$RC"
apply_doc "$(policy_doc "$NS" bob-short "$(weekly 11h59m)")" --as bob --as-group system:masters
check_contains "anyone else is refused" "minPermittedTime" "$(denial)"
apply_doc "$(policy_doc "$SRE_NS" sre-bad "$(weekly '8 hours')")"
check_contains "an exempt namespace is still validated" "spec.maintenanceSchedule.permit.duration" "$OUT"

# ---- 4. the guard rail file read again ------------------------------------------

SCENARIO=reload
sed '/^minPermittedTime/d; /^rollingPeriod/d' "$GUARD" >"$GUARD.new" && mv "$GUARD.new" "$GUARD"
reloaded() {
  apply_doc "$(policy_doc "$NS" sat-short2 "$(weekly 11h59m)")"
  [ "$RC" -eq 0 ]
}
check "a limit dropped from the file is no longer enforced" wait_for 25 reloaded

printf 'minPermitedTime: 48h\n' >"$CTL_TMP/bad-guard.yaml"
OUT=$(timeout 30 "$HCP_BIN" run --kubeconfig "$KCFG" --namespace "$NS" --metrics-bind-address 0 \
  --health-probe-bind-address 0 --webhook-bind-address 127.0.0.1:0 --webhook-cert-file "$CERT" \
  --webhook-key-file "$KEY" --guard-config "$CTL_TMP/bad-guard.yaml" 2>&1)
RC=$?
check "a controller given a misspelt guard rail does not start" test "$RC" -ne 0 -a "$RC" -ne 124
check_contains "and says which key" "--guard-config $CTL_TMP/bad-guard.yaml: data.minPermitedTime: unknown field" "$OUT"

# maxRestrictiveUntil, now that minPermittedTime no longer counts the
# restricted month against the HostedCluster.
SCENARIO=restrictive-until
ru() { date -u -d "@$(($(sim_lo c | cut -d. -f1) + $1))" +%Y-%m-%dT%H:%M:%SZ; }
apply_doc "$(hc_doc ru-in "$(annotations_json strategy=RestrictiveUntil restrictive-until="$(ru $((30 * 86400 - 3600)))" policy=sat12)")"
check_eq "maxRestrictiveUntil: an hour inside 30 days is admitted" "0" "$RC"
apply_doc "$(hc_doc ru-out "$(annotations_json strategy=RestrictiveUntil restrictive-until="$(ru $((30 * 86400 + 3600)))" policy=sat12)")"
check_contains "maxRestrictiveUntil: an hour outside is refused" "later than the 30d from now allowed" "$(denial)"


summary
