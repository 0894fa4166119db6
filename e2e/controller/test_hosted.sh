#!/usr/bin/env bash
# Controller scenario about the hosted cluster's own ClusterVersion: the
# controller reads the HostedCluster's service-network-admin-kubeconfig
# Secret, sets up a ServiceAccount of its own in the hosted cluster with it,
# writes ChangesPaused and ChangesPending into ClusterVersion "version" of
# the hosted API server as that ServiceAccount, removes it all when the
# HostedCluster opts out, follows the window boundaries there,
# re-asserts conditions another writer drops, and reports a missing or
# broken Secret as a condition on that HostedCluster only, without polling
# for it.
#
# Needs the "main" and "hosted" instances (e2e/cluster.sh up main hosted) and
# build/hcp-controller. Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"

TOL=2.5
CV=/apis/config.openshift.io/v1/clusterversions
PROJECTED=HostedClusterVersionProjected

load_hosted_env() {
  local k v
  while IFS='=' read -r k v; do
    printf -v "H_${k#HCP_E2E_}" '%s' "$v"
  done < <("$CTL_REPO/e2e/cluster.sh" env hosted 2>/dev/null)
  [ -f "${H_ADMIN_TOKEN_FILE:-/nonexistent}" ] || return 1
  H_AUDIT=${H_AUDIT_LOG:-}
  H_TOKEN=$(cat "$H_ADMIN_TOKEN_FILE")
}

# hapi METHOD PATH [BODY [CONTENT-TYPE]]: api() against the hosted instance.
hapi() {
  local args=(-s --max-time 10 --cacert "$H_CA" -X "$1" -H "Authorization: Bearer $H_TOKEN"
    -w '\n%{http_code}')
  [ $# -ge 3 ] && args+=(-H "Content-Type: ${4:-application/merge-patch+json}" --data-binary "$3")
  local out code
  out=$(curl "${args[@]}" "$H_SERVER$2") || return 1
  code=${out##*$'\n'}
  printf '%s\n' "${out%$'\n'*}"
  [ "$code" -lt 400 ]
}
# cv_cond TYPE: "status/reason" of a condition of the hosted ClusterVersion.
cv_cond() {
  hapi GET "$CV/version" 2>/dev/null |
    jq -r --arg t "$1" '.status.conditions // [] | map(select(.type == $t)) | .[0] // {} |
      "\(.status // "")/\(.reason // "")"'
}
cv_is() { [ "$(cv_cond "$2")" = "$1" ]; } # cv_is STATUS/REASON TYPE
cv_message() {
  hapi GET "$CV/version" 2>/dev/null |
    jq -r --arg t "$1" '.status.conditions // [] | map(select(.type == $t)) | .[0].message // ""'
}
# The ClusterVersion exists on a hosted cluster from its installation on;
# create it when this instance has none, and drop any conditions of ours.
reset_cv() {
  if ! hapi GET "$CV/version" >/dev/null 2>&1; then
    hapi POST "$CV" '{"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
      "metadata": {"name": "version"},
      "spec": {"clusterID": "6f1e0c0e-7d1c-4e57-9d2b-4c1f8f6b2a10"}}' application/json >/dev/null ||
      return 1
  fi
  # The status the cluster-version operator keeps, with a condition of its own.
  if [ "$(hapi GET "$CV/version" | jq -r '.status.desired.version // ""')" = "" ]; then
    hapi PATCH "$CV/version/status" '{"status": {
      "desired": {"version": "4.17.0", "image": "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"},
      "observedGeneration": 1, "versionHash": "hcp-e2e", "availableUpdates": [],
      "conditions": [{"type": "Available", "status": "True", "reason": "AsExpected",
        "message": "Done applying 4.17.0", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}' \
      >/dev/null || return 1
  fi
  drop_our_conditions
}
# What another writer (the cluster-version operator) does when it rewrites
# the conditions it owns: ours disappear.
drop_our_conditions() {
  local conds
  conds=$(hapi GET "$CV/version" | jq -c '[.status.conditions // [] | .[] |
    select(.type != "ChangesPaused" and .type != "ChangesPending")]') || return 1
  hapi PATCH "$CV/version/status" "{\"status\": {\"conditions\": $conds}}" >/dev/null
}
# put_secret NS HC KUBECONFIG-BYTES: the Secret HyperShift keeps in the hosted
# control plane namespace.
put_secret() {
  local hcp="$1-$2" body
  body=$(jq -nc --arg d "$(printf '%s' "$3" | base64 -w0)" '{apiVersion: "v1", kind: "Secret",
    metadata: {name: "service-network-admin-kubeconfig"}, type: "Opaque", data: {kubeconfig: $d}}')
  api DELETE "/api/v1/namespaces/$hcp/secrets/service-network-admin-kubeconfig" >/dev/null 2>&1
  api POST "/api/v1/namespaces/$hcp/secrets" "$body" application/json >/dev/null
}
metric_at_least() { [ "$(metric "$1" "$2" 2>/dev/null | cut -d. -f1)" -ge "$3" ] 2>/dev/null; }

# One HostedCluster projects into the hosted instance; a second one has no
# Secret and a third a broken one. Neither holds up the first.
hosted_clusterversion_conditions() {
  local ns c2
  ns=$(new_ns hosted) || return
  must reset_cv || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must mk_np "$ns" np1 hc1 policy=weekly || return
  must mk_hc "$ns" hc2 policy=weekly || return
  must mk_hc "$ns" hc3 policy=weekly || return
  must put_secret "$ns" hc1 "$(cat "$H_KUBECONFIG")" || return
  must put_secret "$ns" hc3 "this is: [not a kubeconfig" || return
  c2=$(cluster_path "$ns" hc2)
  start_ctl a "$ns" 2026-03-06T23:57:00Z 10 --hosted-apiserver kubeconfig \
    --hosted-reassert-period 2 ||
    { not_ok "controller starts"; return; }

  EVENTUALLY=5 eventually "hosted ClusterVersion ChangesPaused=True (OutsideMaintenanceWindow)" \
    True/OutsideMaintenanceWindow cv_cond ChangesPaused
  now_is "hosted ClusterVersion ChangesPending=False" False/NoChangesPending cv_cond ChangesPending
  check_contains "the hosted admin sees when changes resume" "2026-03-07T00:00:00Z" \
    "$(cv_message ChangesPaused)"
  check_contains "the message speaks of the control plane" "Control plane: changes are paused until" \
    "$(cv_message ChangesPaused)"
  eventually "the message speaks of each NodePool" yes \
    eval '[[ "$(cv_message ChangesPaused)" == *"NodePool np1: changes are paused until 2026-03-07T00:00:00Z"* ]] && echo yes'
  check_contains "ChangesPending speaks of each NodePool" "NodePool np1: no changes are pending." \
    "$(cv_message ChangesPending)"
  eventually "HostedCluster $PROJECTED=True" True/Projected hc_cond_sr "$ns" hc1 "$PROJECTED"
  eventually "no Secret: $PROJECTED=False (KubeconfigSecretNotFound)" False/KubeconfigSecretNotFound \
    hc_cond_sr "$ns" hc2 "$PROJECTED"
  check_contains "the condition names the Secret" service-network-admin-kubeconfig \
    "$(cond "$(hc_path "$ns" hc2)" "$PROJECTED" message)"
  now_is "the HostedCluster without a Secret is still paused" paused+marker pause_state "$c2"
  eventually "broken Secret: $PROJECTED=False (KubeconfigInvalid)" False/KubeconfigInvalid \
    hc_cond_sr "$ns" hc3 "$PROJECTED"
  check_contains "the condition says what is wrong" "kubeconfig is not valid YAML" \
    "$(cond "$(hc_path "$ns" hc3)" "$PROJECTED" message)"
  check "ClusterVersion writes are counted" metric_at_least a hcp_controller_hosted_clusterversion_writes_total 1
  still_before a 2026-03-07T00:00:00Z "the paused state"

  must drop_our_conditions || return
  # Restored by the next periodic check: within one re-assertion period (2 s).
  eventually "conditions another writer dropped come back" True/OutsideMaintenanceWindow \
    cv_cond ChangesPaused
  check "the restoration is counted" metric_at_least a hcp_controller_hosted_condition_reassertions_total 1
  still_before a 2026-03-07T00:00:00Z "the re-assertion"

  expect_at a "hosted ClusterVersion ChangesPaused=False when the window opens" \
    2026-03-07T00:00:00Z "$TOL" cv_is False/ChangesPermitted ChangesPaused
  check_contains "the hosted admin sees until when" "2026-03-07T00:05:00Z" "$(cv_message ChangesPaused)"
  expect_at a "hosted ClusterVersion ChangesPaused=True when it closes" \
    2026-03-07T00:05:00Z "$TOL" cv_is True/OutsideMaintenanceWindow ChangesPaused

  now_is "the first HostedCluster still projects" True/Projected hc_cond_sr "$ns" hc1 "$PROJECTED"
  check "the controller is still running" kill -0 "${CTL_PID[a]}"
  now_is "the cluster-version operator's own condition is kept" True/AsExpected cv_cond Available
}

# get_requests NAME: the management API GETs the controller has made.
get_requests() {
  metrics "$1" | awk '/^hcp_controller_api_requests_total\{/ && /verb="get"/ { n += $2 } END { print n + 0 }'
}

# A missing Secret is a state that lasts (a cluster being created), not a
# failure that passes: it is read again after 7.5-15 s, then less and less
# often, rather than every second, and a Secret that appears is still found.
absent_secret_not_polled() {
  local ns g0 g1
  ns=$(new_ns absent) || return
  must reset_cv || return
  must mk_hc "$ns" hc1 strategy=Restrictive || return
  must mk_hc "$ns" hc2 strategy=Restrictive || return
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 --hosted-apiserver kubeconfig ||
    { not_ok "controller starts"; return; }
  eventually "hc1 without a Secret: KubeconfigSecretNotFound" False/KubeconfigSecretNotFound \
    hc_cond_sr "$ns" hc1 "$PROJECTED"
  eventually "hc2 without a Secret: KubeconfigSecretNotFound" False/KubeconfigSecretNotFound \
    hc_cond_sr "$ns" hc2 "$PROJECTED"
  g0=$(get_requests a)
  sleep 6
  g1=$(get_requests a)
  check "two missing Secrets are read at most once each in 6 s ($((g1 - g0)) GETs)" [ $((g1 - g0)) -le 2 ]
  must put_secret "$ns" hc1 "$(cat "$H_KUBECONFIG")" || return
  EVENTUALLY=40 eventually "a Secret created later is found" True/Projected \
    hc_cond_sr "$ns" hc1 "$PROJECTED"
  now_is "the other HostedCluster still has none" False/KubeconfigSecretNotFound \
    hc_cond_sr "$ns" hc2 "$PROJECTED"
}

SA_PATH=/api/v1/namespaces/kube-system/serviceaccounts/hcp-controller
ROLE_PATH=/apis/rbac.authorization.k8s.io/v1/clusterroles/hcp-controller:clusterversion-conditions
SA_USER=system:serviceaccount:kube-system:hcp-controller
# audit_count SINCE SELECT: the hosted API server's audit events since SINCE
# (RFC 3339) made by the controller (its user agent) that jq's SELECT keeps.
audit_count() {
  [ -f "$H_AUDIT" ] || { echo -1; return; }
  jq -c --arg t "$1" "select(.requestReceivedTimestamp >= \$t and
    (.userAgent | startswith(\"hcp-controller\"))) | select($2)" "$H_AUDIT" | wc -l
}
hapi_code() { hapi GET "$1" >/dev/null 2>&1 && echo 200 || echo gone; }

# The controller reaches the hosted cluster as a ServiceAccount of its own:
# the admin kubeconfig of the Secret made four requests (the set-up), every
# ClusterVersion request was made as the ServiceAccount. When the
# HostedCluster opts out, our conditions and the set-up leave the hosted
# cluster.
least_privilege_and_opt_out() {
  local ns since
  ns=$(new_ns ident) || return
  must reset_cv || return
  since=$(date -u +%Y-%m-%dT%H:%M:%S)
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must put_secret "$ns" hc1 "$(cat "$H_KUBECONFIG")" || return
  start_ctl a "$ns" 2026-03-06T23:57:00Z 10 --hosted-apiserver kubeconfig \
    --hosted-reassert-period 2 ||
    { not_ok "controller starts"; return; }
  EVENTUALLY=10 eventually "HostedCluster $PROJECTED=True" True/Projected hc_cond_sr "$ns" hc1 "$PROJECTED"
  now_is "the ServiceAccount exists in the hosted cluster" 200 hapi_code "$SA_PATH"
  now_is "one set-up: 4 requests with the admin kubeconfig" 4 metric a hcp_controller_hosted_admin_requests_total
  now_is "one token issued" 1 metric a hcp_controller_hosted_tokens_total
  if [ -f "$H_AUDIT" ]; then
    check "ClusterVersion requests were made as $SA_USER ($(audit_count "$since" ".user.username == \"$SA_USER\""))" \
      [ "$(audit_count "$since" ".user.username == \"$SA_USER\" and .objectRef.resource == \"clusterversions\"")" -ge 1 ]
    now_is "no ClusterVersion request with the admin kubeconfig" 0 \
      audit_count "$since" ".user.username != \"$SA_USER\" and .objectRef.resource == \"clusterversions\""
  fi
  must set_annotations "$(hc_path "$ns" hc1)" '{"changemanagement.hypershift.openshift.io/policy": null}' || return
  EVENTUALLY=15 eventually "opted out: the ServiceAccount is removed from the hosted cluster" gone \
    hapi_code "$SA_PATH"
  now_is "and its ClusterRole" gone hapi_code "$ROLE_PATH"
  now_is "our conditions left the ClusterVersion" / cv_cond ChangesPaused
  now_is "the cluster-version operator's own condition is kept" True/AsExpected cv_cond Available
  EVENTUALLY=5 eventually "the HostedCluster's $PROJECTED says it is no longer projected" \
    False/NotOptedIn hc_cond_sr "$ns" hc1 "$PROJECTED"
}

begin_suite
if ! load_hosted_env || ! hapi GET /readyz >/dev/null; then
  echo "instance hosted not running (e2e/cluster.sh up hosted)"
  echo "0 passed, 1 failed"
  exit 1
fi
run_scenario hosted_clusterversion_conditions
run_scenario absent_secret_not_polled
run_scenario least_privilege_and_opt_out
summary
