# Helpers for the controller end-to-end scenarios (e2e/controller/test_*.sh).
# Sourced, not run. Needs the "main" instance of e2e/cluster.sh (or the one
# named by CTL_E2E_INSTANCE), kubectl, curl and jq.
# shellcheck shell=bash disable=SC2034

CTL_E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=e2e/lib.sh
. "$CTL_E2E_DIR/../lib.sh"
CTL_REPO=$(cd "$CTL_E2E_DIR/../.." && pwd)
HCP_BIN=${HCP_BIN:-$CTL_REPO/build/hcp-controller}

CM=changemanagement.hypershift.openshift.io
PAUSED_ANN=cluster.x-k8s.io/paused
MARKER_ANN=$CM/paused-by
LABEL=$CM/opted-in # the label the controller puts on what it guards
HS=/apis/hypershift.openshift.io/v1beta1
CAPI=/apis/cluster.x-k8s.io/v1beta1
HCMP_API=/apis/$CM/v1alpha1

# ---- environment ----------------------------------------------------------------

CTL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ctl-e2e.XXXXXX")
declare -A CTL_PID CTL_MPORT CTL_HPORT CTL_T0 CTL_TREADY CTL_SIM0 CTL_SCALE CTL_LOG
CTL_NSFILE=$CTL_TMP/namespaces # the namespaces to delete (written from subshells too)

load_cluster_env() {
  local k v
  while IFS='=' read -r k v; do
    printf -v "E_${k#HCP_E2E_}" '%s' "$v"
  done < <("$CTL_REPO/e2e/cluster.sh" env "${CTL_E2E_INSTANCE:-main}" 2>/dev/null)
  [ -n "${E_SERVER:-}" ] && [ -f "${E_ADMIN_TOKEN_FILE:-/nonexistent}" ] || return 1
  KCFG=$E_KUBECONFIG
  ADMIN_TOKEN=$(cat "$E_ADMIN_TOKEN_FILE")
  curl -sf --max-time 5 --cacert "$E_CA" -H "Authorization: Bearer $ADMIN_TOKEN" \
    "$E_SERVER/readyz" >/dev/null
}

# api METHOD PATH [BODY [CONTENT-TYPE]]: prints the response body; fails on a
# status >= 400 (the body is still printed).
api() {
  local args=(-s --max-time 10 --cacert "$E_CA" -X "$1" -H "Authorization: Bearer $ADMIN_TOKEN"
    -w '\n%{http_code}')
  [ $# -ge 3 ] && args+=(-H "Content-Type: ${4:-application/merge-patch+json}" --data-binary "$3")
  local out code
  out=$(curl "${args[@]}" "$E_SERVER$2") || return 1
  code=${out##*$'\n'}
  printf '%s\n' "${out%$'\n'*}"
  [ "$code" -lt 400 ]
}
# get PATH JQ: one value of an object (empty when the object is missing).
get() { api GET "$1" 2>/dev/null | jq -r "$2" 2>/dev/null; }

# ---- objects --------------------------------------------------------------------

# new_ns SUFFIX: creates the namespace ctl-e2e-<pid>-SUFFIX (ctl-e2e-<pid>-rN-SUFFIX
# when a scenario runs again for the Nth time, as an earlier run's may still
# be terminating), prints its name.
new_ns() {
  local ns="ctl-e2e-$$-${CTL_RERUN:+r$CTL_RERUN-}$1"
  k create namespace "$ns" >/dev/null || return 1
  echo "$ns" >>"$CTL_NSFILE"
  echo "$ns"
}

# annotations_json KEY=VALUE...: the stanza annotations (short keys: policy,
# strategy, permissive-until, restrictive-until), as a JSON object.
annotations_json() {
  local kv out="{}"
  for kv in "$@"; do
    out=$(jq -c --arg k "$CM/${kv%%=*}" --arg v "${kv#*=}" '. + {($k): $v}' <<<"$out")
  done
  echo "$out"
}

# mk_hc NS NAME [KEY=VALUE...]: a HostedCluster (infraID NAME-infra) with the
# stanza annotations, its hosted control plane namespace NS-NAME and the CAPI
# Cluster there (on an instance with Cluster API's managers, the model
# creates the Cluster, as HyperShift does). The release is the one already
# rolled out (nothing pending).
# Its control plane has also completed the releases of MK_HC_COMPLETED
# (set_hc_history), the ones the suites ask NodePools for: a NodePool is
# never started ahead of its control plane (DESIGN.md 3.6); a suite about
# that rule sets it to "".
mk_hc() {
  local ns=$1 name=$2
  shift 2
  local hcp="$ns-$name"
  k create namespace "$hcp" >/dev/null 2>&1 && echo "$hcp" >>"$CTL_NSFILE"
  api POST "$HS/namespaces/$ns/hostedclusters" "$(jq -nc --arg n "$name" \
    --argjson a "$(annotations_json "$@")" '{apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "HostedCluster", metadata: {name: $n, annotations: $a},
      spec: {release: {image: "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"},
             infraID: ($n + "-infra"), platform: {type: "None"}}}')" application/json >/dev/null ||
    return 1
  set_hc_history "$ns" "$name" Completed >/dev/null || return 1
  # Beside Cluster API's own controllers (instance "capi"), the model's
  # HyperShift creates the Cluster with its infrastructure and plays the
  # control plane (e2e/model/README.md, "With real Cluster API").
  [ "${E_CAPI:-}" = 1 ] && return 0
  # As HyperShift writes it for the None platform (hostedcluster_controller.go,
  # reconcileCAPICluster): the control plane is the HostedControlPlane, and
  # there is no infrastructure object. Cluster API's own webhook refuses a
  # Cluster with neither reference.
  api POST "$CAPI/namespaces/$hcp/clusters" "$(jq -nc --arg n "$name-infra" --arg hc "$name" --arg ns "$hcp" \
    '{apiVersion: "cluster.x-k8s.io/v1beta1", kind: "Cluster", metadata: {name: $n},
      spec: {controlPlaneRef: {apiVersion: "hypershift.openshift.io/v1beta1", kind: "HostedControlPlane",
                               name: $hc, namespace: $ns}}}')" \
    application/json >/dev/null
}

# set_hc_history NS NAME STATE [DESIRED-IMAGE]: writes status.version the way
# HyperShift does (history[0].state Completed or Partial), with earlier
# Completed entries for the images of MK_HC_COMPLETED.
set_hc_history() {
  local img=${4:-quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64}
  api PATCH "$HS/namespaces/$1/hostedclusters/$2/status" "$(jq -nc --arg s "$3" --arg i "$img" \
    --arg done "$MK_HC_COMPLETED" '[
    {op: "add", path: "/status", value: {version: {desired: {image: $i, version: "4.17.0"},
      observedGeneration: 1, availableUpdates: null,
      history: ([{state: $s, image: $i, version: "4.17.0", startedTime: "2026-01-01T00:00:00Z",
                 completionTime: (if $s == "Completed" then "2026-01-01T01:00:00Z" else null end),
                 verified: false}] + ($done | split(" ") | map(select(. != "")) | reverse |
                 map({state: "Completed", image: ., version: capture(":(?<v>[0-9]+[.][0-9]+[.][0-9]+)").v,
                      startedTime: "2025-12-01T00:00:00Z", completionTime: "2025-12-01T01:00:00Z",
                      verified: false})))}}}]')" application/json-patch+json
}

MK_HC_COMPLETED=${MK_HC_COMPLETED-quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64 quay.io/openshift-release-dev/ocp-release:4.17.2-x86_64 quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64}

# hc_completed NS NAME IMAGE...: HyperShift's record that the control plane
# has completed each IMAGE (a Completed entry prepended to
# status.version.history, oldest first; desired untouched, so nothing is
# pending). The fixture of suites whose NodePools are asked for a release
# their HostedCluster is not: a NodePool never runs a release its control
# plane has not completed (DESIGN.md 3.6; test_cp_first.sh tests that).
hc_completed() {
  local ns=$1 name=$2 img
  shift 2
  for img in "$@"; do
    api PATCH "$HS/namespaces/$ns/hostedclusters/$name/status" "$(jq -nc --arg i "$img" '[
      {op: "add", path: "/status/version/history/0", value: {state: "Completed", image: $i,
        version: ($i | capture(":(?<v>[0-9]+[.][0-9]+[.][0-9]+)").v),
        startedTime: "2026-01-01T02:00:00Z", completionTime: "2026-01-01T03:00:00Z",
        verified: false}}]')" application/json-patch+json >/dev/null || return 1
  done
}

# set_hc_health NS NAME AVAILABLE DEGRADED [SINCE]: HyperShift's Available and
# Degraded conditions on a HostedCluster (api/hypershift/v1beta1/
# hostedcluster_conditions.go), every other condition kept, their
# lastTransitionTime SINCE (default 2026-01-01T00:00:00Z); conditional on
# the resourceVersion read, again on a conflict (the controller and the
# model write the same status).
set_hc_health() {
  local p="$HS/namespaces/$1/hostedclusters/$2" obj body i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    obj=$(api GET "$p") || return 1
    body=$(jq -c --arg a "$3" --arg d "$4" --arg t "${5:-2026-01-01T00:00:00Z}" '{metadata: {resourceVersion: .metadata.resourceVersion},
      status: {conditions: ([.status.conditions // [] | .[] |
        select(.type != "Available" and .type != "Degraded")] + [
        {type: "Available", status: $a, message: "",
         reason: (if $a == "True" then "AsExpected" else "KASLoadBalancerNotReachable" end),
         lastTransitionTime: $t},
        {type: "Degraded", status: $d, message: "",
         reason: (if $d == "True" then "UnavailableReplicas" else "AsExpected" end),
         lastTransitionTime: $t}])}}' <<<"$obj")
    api PATCH "$p/status" "$body" >/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# mk_np NS NAME CLUSTER [KEY=VALUE...]: a NodePool with the stanza annotations
# and its MachineDeployment in NS-CLUSTER (rolled out: nothing pending).
mk_np() {
  local ns=$1 name=$2 cluster=$3
  shift 3
  api POST "$HS/namespaces/$ns/nodepools" "$(jq -nc --arg n "$name" --arg c "$cluster" \
    --argjson a "$(annotations_json "$@")" '{apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "NodePool", metadata: {name: $n, annotations: $a},
      spec: {clusterName: $c, replicas: 2, management: {upgradeType: "Replace"},
             release: {image: "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"}}}')" \
    application/json >/dev/null || return 1
  # As HyperShift writes it (nodepool/capi.go, reconcileMachineDeployment):
  # selected by <cluster>-<pool>, the machines booting from the pool's
  # user-data Secret, on the platform's machine template (not created here:
  # nothing provisions on these instances).
  api POST "$CAPI/namespaces/$ns-$cluster/machinedeployments" "$(jq -nc --arg n "$name" \
    --arg c "$cluster-infra" --arg np "$ns/$name" --arg rn "$cluster-$name" '{
      apiVersion: "cluster.x-k8s.io/v1beta1", kind: "MachineDeployment",
      metadata: {name: $n, annotations: {"hypershift.openshift.io/nodePool": $np}},
      spec: {clusterName: $c, replicas: 2, selector: {matchLabels: {($rn): $rn}},
             strategy: {type: "RollingUpdate", rollingUpdate: {maxSurge: 1, maxUnavailable: 0}},
             template: {metadata: {labels: {($rn): $rn, "cluster.x-k8s.io/cluster-name": $c}},
                        spec: {clusterName: $c, version: "4.17.0",
                               bootstrap: {dataSecretName: ("user-data-" + $n)},
                               infrastructureRef: {apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
                                                   kind: "AWSMachineTemplate", name: $n}}}}}')" \
    application/json >/dev/null || return 1
  api PATCH "$(md_status_path "$ns" "$cluster" "$name")" "$(md_rollout_status 2 2)" >/dev/null
}

# mk_webhook_cert: a self-signed certificate for the webhooks on 127.0.0.1,
# files $CERT and $KEY under $CTL_TMP.
mk_webhook_cert() {
  CERT=$CTL_TMP/webhook.crt KEY=$CTL_TMP/webhook.key
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -days 1 -nodes \
    -subj /CN=hcp-controller-webhook -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$KEY" -out "$CERT" 2>/dev/null
}

# webhook_scenario_cleanup: stops what a webhook scenario started (its
# controllers, the model when e2e/model/lib.sh is loaded, the mutating and
# validating webhook configurations named $WH_NAME) and deletes its
# namespaces and temporary files.
webhook_scenario_cleanup() {
  stop_all_ctls
  if declare -F model_stop >/dev/null; then model_stop >/dev/null 2>&1; fi
  if [ -n "${WH_NAME:-}" ]; then
    k delete mutatingwebhookconfiguration,validatingwebhookconfiguration "$WH_NAME" \
      --ignore-not-found >/dev/null 2>&1
  fi
  [ -f "$CTL_TMP/clusterrolebindings" ] && xargs -r kubectl --kubeconfig "$KCFG" delete \
    clusterrolebinding --ignore-not-found <"$CTL_TMP/clusterrolebindings" >/dev/null 2>&1
  [ -f "$CTL_NSFILE" ] && xargs -r kubectl --kubeconfig "$KCFG" delete namespace --wait=false \
    <"$CTL_NSFILE" >/dev/null 2>&1
  if [ "${CTL_KEEP_LOGS:-}" ]; then echo "# controller logs kept in $CTL_TMP"; else rm -rf "$CTL_TMP"; fi
}

# webhook_scenario_begin: cleanup on exit, the cluster's environment and the
# webhooks' test certificate ($CERT, $KEY); ends the script when either is
# missing.
webhook_scenario_begin() {
  trap webhook_scenario_cleanup EXIT
  if ! load_cluster_env; then
    echo "# the e2e instance is not running (make cluster-up)"
    not_ok "cluster reachable"
    summary
    exit 1
  fi
  mk_webhook_cert || { not_ok "test certificate"; summary; exit 1; }
}

# webhook_config KIND OPERATIONS PORT NS... -- HOOK...: a KIND
# (MutatingWebhookConfiguration or ValidatingWebhookConfiguration) named
# $WH_NAME that sends the OPERATIONS (comma-separated) of the namespaces
# given only to the controller at https://127.0.0.1:PORT, trusting $CERT,
# with failurePolicy Fail. Each HOOK is NAME:PATH:GROUP:RESOURCE.
webhook_config() {
  local kind=$1 ops=$2 port=$3 ns=() hooks=()
  shift 3
  while [ $# -gt 0 ] && [ "$1" != -- ]; do ns+=("$1"); shift; done
  shift
  hooks=("$@")
  jq -nc --arg kind "$kind" --arg n "$WH_NAME" --arg ca "$(base64 -w0 "$CERT")" \
    --arg u "https://127.0.0.1:$port" --arg ops "$ops" \
    --argjson ns "$(printf '%s\n' "${ns[@]}" | jq -R . | jq -sc .)" \
    --argjson hooks "$(printf '%s\n' "${hooks[@]}" | jq -R 'split(":")' | jq -sc .)" '
    def hook($h): {
      name: ($h[0] + ".hcp-controller.e2e"), clientConfig: {url: ($u + $h[1]), caBundle: $ca},
      rules: [{apiGroups: [$h[2]], apiVersions: ["*"], operations: ($ops | split(",")),
               resources: [$h[3]], scope: "Namespaced"}],
      namespaceSelector: {matchExpressions: [{key: "kubernetes.io/metadata.name",
                                              operator: "In", values: $ns}]},
      failurePolicy: "Fail", sideEffects: "None", admissionReviewVersions: ["v1"],
      timeoutSeconds: 5}
      + (if $kind == "MutatingWebhookConfiguration" then {reinvocationPolicy: "Never"} else {} end);
    {apiVersion: "admissionregistration.k8s.io/v1", kind: $kind, metadata: {name: $n},
     webhooks: [$hooks[] | hook(.)]}'
}

# md_rollout_status TOTAL N: a MachineDeployment status with TOTAL machines,
# N of them up to date, as Cluster API v1beta2 keeps it (write it through
# md_status_path): v1beta2's counters, and v1beta1's under
# status.deprecated.v1beta1, which a v1beta1 read gets back as
# status.updatedReplicas (and the rest) through Cluster API's conversion.
md_rollout_status() {
  jq -nc --argjson t "$1" --argjson n "$2" '{status: {replicas: $t, readyReplicas: $t,
    availableReplicas: $t, upToDateReplicas: $n, deprecated: {v1beta1: {readyReplicas: $t,
      availableReplicas: $t, updatedReplicas: $n, unavailableReplicas: 0}}}}'
}
md_status_path() { echo "/apis/cluster.x-k8s.io/v1beta2/namespaces/$1-$2/machinedeployments/$3/status"; } # NS HC NP

# mk_pool NAME TYPE REPLICAS [POLICY [CLUSTER [AUTOREPAIR]]]: a NodePool in
# $NS of HostedCluster CLUSTER (a) at $REL0, upgradeType TYPE, with the policy
# annotation POLICY (weekend; "" for a pool without a stanza) and
# spec.management.autoRepair AUTOREPAIR (false; true: HyperShift gives the
# pool a MachineHealthCheck); not_ok when the API server refuses it.
mk_pool() {
  api POST "$HS/namespaces/$NS/nodepools" "$(jq -nc --arg img "$REL0" --arg n "$1" --arg t "$2" --argjson r "$3" \
    --arg p "${4-weekend}" --arg c "${5:-a}" --argjson ar "${6:-false}" '{
    apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
    metadata: {name: $n, annotations: (if $p == "" then {} else {"changemanagement.hypershift.openshift.io/policy": $p} end)},
    spec: {clusterName: $c, replicas: $r, management: {upgradeType: $t, autoRepair: $ar}, release: {image: $img}}}')" \
    application/json >/dev/null || not_ok "NodePool $1"
}

# machines_json POOL: the machines of pool POOL in namespace $HCP_NS not
# being deleted, as a JSON array: the model's (e2e/model, a ConfigMap each),
# or beside Cluster API's own controllers (E_CAPI=1) its Machines. Both
# carry Cluster API's deployment-name and set-name labels.
machines_json() {
  if [ "${E_CAPI:-}" = 1 ]; then
    api GET "/apis/cluster.x-k8s.io/v1beta2/namespaces/$HCP_NS/machines"
  else
    api GET "/api/v1/namespaces/$HCP_NS/configmaps?labelSelector=e2e-model.hcp-controller/role%3Dmachine"
  fi | jq -c --arg p "$1" '[.items[] | select(.metadata.deletionTimestamp == null and
      (.metadata.labels["cluster.x-k8s.io/deployment-name"] == $p or .metadata.labels["cluster.x-k8s.io/set-name"] == $p))]'
}
# running_json POOL: those of them that are Running (the model's data.state,
# a Machine's status.phase), as a JSON array; running_machines POOL: how many.
running_json() { machines_json "$1" | jq -c '[.[] | select((.data.state // .status.phase) == "Running")]'; }
running_machines() { running_json "$1" | jq length; }
# remediate_machine NAME: machine NAME of $HCP_NS fails its health check and
# is remediated: the model's machine is deleted (it records the replacement
# as a remediation); a Machine of Cluster API's gets the MachineHealthCheck's
# manual trigger (cluster.x-k8s.io/remediate-machine; its pool needs
# autoRepair, for HyperShift's MachineHealthCheck), which marks it unhealthy,
# and its MachineSet deletes and replaces it.
remediate_machine() {
  if [ "${E_CAPI:-}" = 1 ]; then
    api PATCH "/apis/cluster.x-k8s.io/v1beta2/namespaces/$HCP_NS/machines/$1" \
      '{"metadata": {"annotations": {"cluster.x-k8s.io/remediate-machine": ""}}}' >/dev/null
  else
    api DELETE "/api/v1/namespaces/$HCP_NS/configmaps/$1" >/dev/null
  fi
}

# committed_machines NS POOL: the machines Cluster API was told to make for
# pool POOL's newer templates: the replicas of its MachineSets after the
# first (the oldest). A MachineSet makes its machines whatever its
# MachineDeployment's spec.paused says, Cluster API's own a reconcile after
# the scale (instance "capi"), so a machine committed to before a pause
# may start after it.
committed_machines() {
  api GET "$CAPI/namespaces/$1/machinesets" | jq --arg p "$2" '[.items[]
    | select(.metadata.labels["cluster.x-k8s.io/deployment-name"] == $p)]
    | sort_by(.metadata.creationTimestamp) | .[1:] | map(.spec.replicas // 0) | add // 0'
}

# first_real EVENT OBJECT: the real time of the model's first record of
# EVENT about OBJECT (empty when none; needs e2e/model/lib.sh).
first_real() { model_records | jq -rs --arg e "$1" --arg o "$2" '[.[] | select(.event == $e and .object == $o) | .real] | sort | .[0] // ""'; }
# last_real EVENT OBJECT: the real time of the last such record.
last_real() { model_records | jq -rs --arg e "$1" --arg o "$2" '[.[] | select(.event == $e and .object == $o) | .real] | sort | .[-1] // ""'; }

# mk_policy NS NAME SPEC-JSON
mk_policy() {
  api POST "$HCMP_API/namespaces/$1/hostedchangemanagementpolicies" "$(jq -nc --arg n "$2" \
    --argjson s "$3" '{apiVersion: "changemanagement.hypershift.openshift.io/v1alpha1",
      kind: "HostedChangeManagementPolicy", metadata: {name: $n}, spec: $s}')" \
    application/json >/dev/null
}
# weekly_policy DAY HH:MM DURATION [EXCLUDE-JSON]: a MaintenanceSchedule spec.
weekly_policy() {
  jq -nc --arg d "$1" --arg t "$2" --arg du "$3" --argjson ex "${4:-null}" '{
    strategy: "MaintenanceSchedule", maintenanceSchedule: ({timeZone: "UTC",
      permit: {recurrence: {frequency: "Weekly", weekly: {daysOfWeek: [$d]}},
               startTime: $t, duration: $du}} + (if $ex then {exclude: $ex} else {} end))}'
}

# daily_policy HH:MM DURATION: a MaintenanceSchedule spec, every day.
daily_policy() {
  jq -nc --arg t "$1" --arg du "$2" '{strategy: "MaintenanceSchedule", maintenanceSchedule: {
    timeZone: "UTC", permit: {recurrence: {frequency: "Daily"}, startTime: $t, duration: $du}}}'
}

cluster_path() { echo "$CAPI/namespaces/$1-$2/clusters/$2-infra"; }          # NS HC
md_path() { echo "$CAPI/namespaces/$1-$2/machinedeployments/$3"; }           # NS HC NP
# md_version PATH: the version of a MachineDeployment's template (what
# HyperShift wrote from the NodePool's release and the webhooks let through),
# as HyperShift writes it ("4.17.0"): without the "v" that Cluster API's
# defaulting webhook puts in front.
md_version() { get "$1" '.spec.template.spec.version // "" | ltrimstr("v")'; }
hc_path() { echo "$HS/namespaces/$1/hostedclusters/$2"; }
# hcms_path NS KIND NAME: the HostedChangeManagementStatus of HostedCluster
# (KIND hostedcluster) or NodePool (nodepool) NAME.
hcms_path() { echo "/apis/$CM/v1alpha1/namespaces/$1/hostedchangemanagementstatuses/$2.$3"; }
# cm_status NS KIND NAME JQ: JQ of that companion's status, where .current
# and .next read behavior.current and behavior.next.
cm_status() {
  local f=$4
  case $f in .current* | .next* | .history*) f=.behavior$f ;; esac
  get "$(hcms_path "$1" "$2" "$3")" ".status | $f"
}
np_path() { echo "$HS/namespaces/$1/nodepools/$2"; }
hcmp_path() { echo "$HCMP_API/namespaces/$1/hostedchangemanagementpolicies/$2"; }
# hc_cm NS NAME JQ / np_cm NS NAME JQ: cm_status of HostedCluster or NodePool NAME.
hc_cm() { cm_status "$1" hostedcluster "$2" "$3"; }
np_cm() { cm_status "$1" nodepool "$2" "$3"; }
# np_get NAME JQ: one value of NodePool NAME in namespace $NS.
np_get() { get "$(np_path "$NS" "$1")" "$2"; }

# pause_state PATH: "paused+marker" (paused by the controller), "paused"
# (somebody else's pause), "unpaused", "unpaused+marker" (a stale marker),
# "missing".
pause_state() {
  api GET "$1" 2>/dev/null | jq -r --arg p "$PAUSED_ANN" --arg m "$MARKER_ANN" '
    if .kind == "Status" or .metadata == null then "missing" else
    (.metadata.annotations // {}) |
    (if .[$p] == "true" then "paused" else "unpaused" end) +
    (if .[$m] == "hcp-controller" then "+marker" elif .[$m] then "+" + .[$m] else "" end) end' \
    2>/dev/null || echo missing
}
is_state() { [ "$(pause_state "$1")" = "$2" ]; }

# cond PATH TYPE FIELD: a status condition's field.
cond() { get "$1" ".status.conditions // [] | map(select(.type == \"$2\")) | .[0].$3 // \"\""; }
# hc_cond_sr NS NAME TYPE / np_cond_sr NS NAME TYPE: "status/reason" of a
# condition of HostedCluster or NodePool NAME.
# cond_sr PATH TYPE: a condition's "status/reason".
cond_sr() { echo "$(cond "$1" "$2" status)/$(cond "$1" "$2" reason)"; }
hc_cond_sr() { echo "$(cond "$(hc_path "$1" "$2")" "$3" status)/$(cond "$(hc_path "$1" "$2")" "$3" reason)"; }
np_cond_sr() { echo "$(cond "$(np_path "$1" "$2")" "$3" status)/$(cond "$(np_path "$1" "$2")" "$3" reason)"; }

# label_of PATH: the opted-in label of the object at PATH ("none" without one).
label_of() { get "$1" ".metadata.labels[\"$LABEL\"] // \"none\""; }
# labelled PATH: the object at PATH carries the opted-in label "true".
labelled() { [ "$(label_of "$1")" = true ]; }
# np_labelled NAME: NodePool NAME in namespace $NS carries it.
np_labelled() { labelled "$(np_path "$NS" "$1")"; }
# initiated NAME: how many ChangesInitiated Events there are about NAME in $NS.
initiated() { count_events "$NS" "$1" ChangesInitiated; }
# set_annotations PATH JSON-OBJECT: merges the annotations into the object.
# set_annotations PATH JSON: merges JSON into the object's annotations. A
# person's kubectl tries again when the API server could not reach a webhook
# or a curl timed out (Cluster API's conversion and admission webhooks, served
# by its manager beside the suites, can take longer than 10 s on a loaded
# machine); any other answer (a refusal) is the answer. The merge is
# idempotent, so a second try changes nothing the first did.
set_annotations() {
  local out try
  for try in 1 2 3; do
    out=$(api PATCH "$1" "{\"metadata\": {\"annotations\": $2}}") && return 0
    [ -z "$out" ] || jq -e '.code >= 500' >/dev/null 2>&1 <<<"$out" || break
    echo "# set_annotations $1: try $try failed (${out:0:300}); again" >&2
    sleep 1
  done
  printf '%s\n' "$out"
  return 1
}

# events NS OBJECT: "reason" lines of the Events about OBJECT.
events() {
  api GET "/api/v1/namespaces/$1/events" 2>/dev/null |
    jq -r --arg o "$2" '.items[] | select(.involvedObject.name == $o) | .reason'
}
# count_events NS OBJECT REASON: how many Events about OBJECT have REASON.
count_events() { events "$1" "$2" | grep -c "^$3\$"; }

# ---- notifications and identities ---------------------------------------------

# recv_start DIR PORT: a notification receiver (python3 http.server); each
# POST's body goes to DIR/N.json, its Authorization header to DIR/N.auth,
# its Content-Type to DIR/N.ct; answers 200. Its pid is RECV_PID.
RECV_PID=
recv_start() {
  python3 - "$1" "$2" >"$1/recv.log" 2>&1 <<'PY' &
import http.server, os, sys
d, port = sys.argv[1], int(sys.argv[2])
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        n = len([f for f in os.listdir(d) if f.endswith(".json")])
        with open(os.path.join(d, "%d.auth" % n), "w") as f:
            f.write(self.headers.get("Authorization", ""))
        with open(os.path.join(d, "%d.ct" % n), "w") as f:
            f.write(self.headers.get("Content-Type", ""))
        with open(os.path.join(d, "%d.tmp" % n), "wb") as f:
            f.write(body)
        os.rename(os.path.join(d, "%d.tmp" % n), os.path.join(d, "%d.json" % n))
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
  RECV_PID=$!
  wait_for 10 bash -c "ss -Htln 'sport = :$2' | grep -q ."
}
# recv_stop: stops the receiver recv_start started.
recv_stop() { [ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null && wait "$RECV_PID" 2>/dev/null; RECV_PID=; }
# check_recv_start DIR PORT: a pre-start check of another system (python3
# http.server, DESIGN.md 3.15): each POST is answered with the status on
# the first line of DIR/answer (200 when there is none) and the rest of it
# as the body; its arrival and answer times (epoch seconds), status and
# body go to DIR/posts.jsonl. Its pid is RECV_PID.
check_recv_start() {
  python3 - "$1" "$2" >"$1/recv.log" 2>&1 <<'PY' &
import http.server, json, os, sys, time
d, port = sys.argv[1], int(sys.argv[2])
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        t = time.time()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            lines = open(os.path.join(d, "answer")).read().split("\n", 1)
        except OSError:
            lines = ["200", ""]
        status, text = int(lines[0]), (lines[1] if len(lines) > 1 else "").encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)
        with open(os.path.join(d, "posts.jsonl"), "a") as f:
            f.write(json.dumps({"t": t, "answered": time.time(), "status": status,
                                "auth": self.headers.get("Authorization", ""),
                                "body": json.loads(body or b"null")}) + "\n")
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
PY
  RECV_PID=$!
  wait_for 10 bash -c "ss -Htln 'sport = :$2' | grep -q ."
}
# step_doc DIR STEP: the first CloudEvent received whose data.step is STEP.
step_doc() { cat "$1"/*.json 2>/dev/null | jq -c --arg s "$2" 'select(.data.step == $s)' | head -1; }
# step_count DIR STEP: how many were received.
step_count() { cat "$1"/*.json 2>/dev/null | jq -r .data.step | grep -c "^$2\$"; }

# kubeconfig_as USER FILE: a copy of $KCFG whose requests act as USER in
# group system:masters (client-go's impersonation, `as` and `as-groups`),
# for a Go writer with an identity of its own (HyperShift's stand-in as
# HyperShift's ServiceAccount); kubectl takes --as and --as-group instead.
kubeconfig_as() {
  yq -y --arg u "$1" '.users[0].user.as = $u | .users[0].user["as-groups"] = ["system:masters"]' \
    "$KCFG" >"$2"
}

# kubeconfig_sa NS NAME FILE: ServiceAccount NS/NAME, bound to cluster-admin
# by a ClusterRoleBinding of the same name (deleted by
# webhook_scenario_cleanup), and a kubeconfig with a token of it
# (TokenRequest, 2 h): for a process that does not impersonate (the
# controller) to write as system:serviceaccount:NS:NAME.
kubeconfig_sa() {
  local token
  k create serviceaccount "$2" -n "$1" >/dev/null || return 1
  k create clusterrolebinding "$1-$2" --clusterrole cluster-admin --serviceaccount "$1:$2" \
    >/dev/null || return 1
  echo "$1-$2" >>"$CTL_TMP/clusterrolebindings"
  token=$(k create token "$2" -n "$1" --duration 2h) || return 1
  yq -y --arg t "$token" --arg n "$1:$2" '.users[0].user = {token: $t} | .users[0].name = $n
    | .contexts[0].context.user = $n' "$KCFG" >"$3"
}

# ---- time ---------------------------------------------------------------------

epoch() { date -u -d "$1" +%s; }
rfc3339() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

# sim_hi NAME / sim_lo NAME: bounds of the controller's simulated clock now,
# in epoch seconds (with decimals). The clock starts between the launch and
# the first successful /readyz.
sim_hi() {
  awk -v s="${CTL_SIM0[$1]}" -v t="$(now_us)" -v t0="${CTL_T0[$1]}" -v k="${CTL_SCALE[$1]}" \
    'BEGIN { printf "%.3f", s + (t - t0) / 1e6 * k }'
}
sim_lo() {
  awk -v s="${CTL_SIM0[$1]}" -v t="$(now_us)" -v t0="${CTL_TREADY[$1]}" -v k="${CTL_SCALE[$1]}" \
    'BEGIN { printf "%.3f", s + (t - t0) / 1e6 * k }'
}
# ctl_real_at NAME RFC3339: the real instant (epoch seconds, ms) at which
# controller NAME's clock reads RFC3339, on its launch anchor (CTL_T0).
ctl_real_at() {
  awk -v t0="${CTL_T0[$1]}" -v s="${CTL_SIM0[$1]}" -v x="$(epoch "$2")" -v k="${CTL_SCALE[$1]}" \
    'BEGIN { printf "%.3f", t0 / 1e6 + (x - s) / k }'
}
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# sleep_until_sim NAME RFC3339 [EXTRA-REAL-SECONDS]: sleeps until the
# controller's clock has certainly passed the instant (plus extra real time).
sleep_until_sim() {
  local name=$1 target
  target=$(epoch "$2")
  local d
  d=$(awk -v s="${CTL_SIM0[$name]}" -v t="$(now_us)" -v t0="${CTL_TREADY[$name]}" \
    -v k="${CTL_SCALE[$name]}" -v x="$target" -v e="${3:-0}" \
    'BEGIN { lo = s + (t - t0) / 1e6 * k; d = (x - lo) / k + e; printf "%.3f", (d > 0 ? d : 0) }')
  sleep "$d"
}

# before_sim NAME RFC3339: true while the controller's clock is certainly
# before the instant (so what was just observed is the state before it).
before_sim() { lt "$(sim_hi "$1")" "$(epoch "$2")"; }

# ---- waiting ------------------------------------------------------------------

# wait_for TIMEOUT COMMAND...: polls COMMAND every 0.1 s.
wait_for() {
  local timeout=$1 end
  shift
  end=$(($(now_us) + ${timeout%.*} * 1000000))
  while :; do
    "$@" && return 0
    [ "$(now_us)" -ge "$end" ] && return 1
    sleep 0.1
  done
}

# expect_at NAME DESC RFC3339 TOLERANCE COMMAND...: COMMAND is false until
# the controller's clock reaches the instant, and true within TOLERANCE real
# seconds after it (real_s: more on a loaded machine). Checks both sides of
# the boundary.
expect_at() {
  local name=$1 desc=$2 at=$3 tol
  tol=$(real_s "$4")
  shift 4
  local b
  b=$(epoch "$at")
  # Before: the state has not flipped yet (when there is still time to see it).
  if before_sim "$name" "$at"; then
    if "$@"; then
      if before_sim "$name" "$at"; then
        not_ok "$desc (not before $at)" "already true at simulated $(rfc3339 "$(sim_hi "$name" | cut -d. -f1)"), before the boundary"
        return 1
      fi
    fi
  fi
  local timeout
  timeout=$(awk -v s="$(sim_lo "$name")" -v b="$b" -v k="${CTL_SCALE[$name]}" -v tol="$tol" \
    'BEGIN { d = (b - s) / k; if (d < 0) d = 0; printf "%d", d + tol + 1 }')
  if ! wait_for "$timeout" "$@"; then
    not_ok "$desc at $at" "not true $tol s (real) after the boundary; now simulated $(rfc3339 "$(sim_lo "$name" | cut -d. -f1)")"
    return 1
  fi
  local hi lo
  hi=$(sim_hi "$name")
  lo=$(sim_lo "$name")
  if lt "$hi" "$b"; then
    not_ok "$desc at $at" "true early, at simulated <= $(rfc3339 "${hi%.*}")"
    return 1
  fi
  if ! lt "$lo" "$(awk -v b="$b" -v t="$tol" -v k="${CTL_SCALE[$name]}" 'BEGIN { printf "%.3f", b + t * k }')"; then
    not_ok "$desc at $at" "late: first seen at simulated >= $(rfc3339 "${lo%.*}")"
    return 1
  fi
  ok "$desc at $at"
}

# ---- the controller ---------------------------------------------------------------

# start_ctl NAME NS START SCALE [FLAGS...]: runs a controller in the
# background for namespace NS with a simulated clock starting at START, waits
# for /readyz. It uses the admin kubeconfig, or CTL_CONTROLLER_KUBECONFIG
# when set (e.g. a service account's identity). /metrics and the calendar
# are served over plain HTTP (--metrics-secure=false) for the suites that
# read them; test_secure.sh passes --metrics-secure=true after it. SIGTERM
# stops it at once (--shutdown-delay=0: the suites that stop a replica
# mean it gone); test_rolling.sh passes a delay after it.
start_ctl() {
  local name=$1 ns=$2 start=$3 scale=$4
  shift 4
  # A scenario run again on a slow machine runs its clocks CTL_SLOW times slower.
  scale=$(awk -v s="$scale" -v d="${CTL_SLOW:-1}" 'BEGIN { printf "%g", s / d }')
  local mp hp attempt c_s0="" c_t0="" c_k="" s t
  # START "@continue": the clock goes on along controller NAME's time line
  # (a restart: HyperShift's model and the bench keep reading that line).
  if [ "$start" = "@continue" ]; then
    c_s0=${CTL_SIM0[$name]} c_t0=${CTL_T0[$name]} c_k=${CTL_SCALE[$name]}
  fi
  CTL_LOG[$name]=$CTL_TMP/$name.log
  # A port found free can still be taken before the controller binds it:
  # then it exits at once saying so, and another pair is tried.
  for attempt in 1 2 3; do
    mp=$(free_port)
    hp=$(free_port)
    CTL_MPORT[$name]=$mp
    CTL_HPORT[$name]=$hp
    if [ -n "$c_s0" ]; then
      # The next whole simulated second on the old line, and the real
      # instant it falls on, as the new anchor.
      read -r s t < <(awk -v s0="$c_s0" -v t0="$c_t0" -v k="$c_k" -v n="$(now_us)" \
        'BEGIN { x = int(s0 + (n - t0) / 1e6 * k) + 1; printf "%d %.0f\n", x, t0 + (x - s0) / k * 1e6 }')
      start=$(rfc3339 "$s") scale=$c_k
      CTL_SIM0[$name]=$s
      CTL_T0[$name]=$t
    else
      CTL_SIM0[$name]=$(epoch "$start")
      CTL_T0[$name]=$(now_us)
    fi
    CTL_SCALE[$name]=$scale
    "$HCP_BIN" run --kubeconfig "${CTL_CONTROLLER_KUBECONFIG:-$KCFG}" --namespace "$ns" \
      --simulated-start-time "$start" --time-scale "$scale" --metrics-bind-address "127.0.0.1:$mp" \
      --health-probe-bind-address "127.0.0.1:$hp" --metrics-secure=false --shutdown-delay=0 "$@" \
      >"${CTL_LOG[$name]}" 2>&1 &
    CTL_PID[$name]=$!
    # Ready in well under a second here; a loaded machine has been seen to
    # take longer than 20 s once, so the wait is generous and a slow start
    # is printed rather than failed.
    wait_for 60 ctl_ready_or_gone "$name"
    ctl_alive "$name" && break
    wait "${CTL_PID[$name]}" 2>/dev/null
    grep -q "cannot listen" "${CTL_LOG[$name]}" || break
    echo "# controller $name: port taken (attempt $attempt), trying others" >&2
  done
  if ! ctl_ready "$name"; then
    echo "# controller $name did not become ready; log:" >&2
    tail -20 "${CTL_LOG[$name]}" | sed 's/^/#   /' >&2
    return 1
  fi
  CTL_TREADY[$name]=$(now_us)
  [ $((CTL_TREADY[$name] - CTL_T0[$name])) -lt 10000000 ] ||
    echo "# controller $name: ready only after $(((CTL_TREADY[$name] - CTL_T0[$name]) / 1000)) ms (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
}
# ctl_alive NAME: the controller runs (not exited, not a zombie).
ctl_alive() {
  kill -0 "${CTL_PID[$1]}" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/${CTL_PID[$1]}/status" 2>/dev/null
}
ctl_ready_or_gone() { ctl_ready "$1" || ! ctl_alive "$1"; }
ctl_ready() {
  [ -d "/proc/${CTL_PID[$1]}" ] || return 1
  curl -sf --max-time 2 "http://127.0.0.1:${CTL_HPORT[$1]}/readyz" >/dev/null 2>&1
}

# stop_ctl NAME [SIGNAL]: stops a controller this script started and waits
# for it; its exit status goes to CTL_RC, the real milliseconds it took to
# CTL_STOP_MS.
stop_ctl() {
  local name=$1 sig=${2:-TERM} pid=${CTL_PID[$1]:-} t0
  CTL_RC="" CTL_STOP_MS=""
  [ -n "$pid" ] || return 0
  t0=$(now_us)
  kill -"$sig" "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  CTL_RC=$?
  CTL_STOP_MS=$((($(now_us) - t0) / 1000))
  unset "CTL_PID[$name]"
}

# watch_start PATH FILE: records the watch events of a collection (from now)
# in FILE until watch_stop.
CTL_WATCHES=()
watch_start() {
  local rv
  rv=$(get "$1" .metadata.resourceVersion)
  curl -s -N --max-time 120 --cacert "$E_CA" -H "Authorization: Bearer $ADMIN_TOKEN" \
    "$E_SERVER$1?watch=1&resourceVersion=$rv" >"$2" 2>/dev/null &
  CTL_WATCHES+=($!)
}
watch_stop() {
  local p
  for p in "${CTL_WATCHES[@]}"; do
    kill "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  CTL_WATCHES=()
}

stop_all_ctls() {  # kills every controller this script started
  local n
  for n in "${!CTL_PID[@]}"; do
    kill -KILL "${CTL_PID[$n]}" 2>/dev/null
    wait "${CTL_PID[$n]}" 2>/dev/null
  done
}

# metrics NAME: the /metrics text of a controller.
# Over HTTPS with a bearer token when CTL_METRICS_TOKEN is set (the
# controller started with --metrics-secure=true and a certificate whose CA is
# CTL_METRICS_CA), else plain HTTP.
metrics() {
  if [ -n "${CTL_METRICS_TOKEN:-}" ]; then
    curl -sf --max-time 5 --cacert "$CTL_METRICS_CA" -H "Authorization: Bearer $CTL_METRICS_TOKEN" \
      "https://127.0.0.1:${CTL_MPORT[$1]}/metrics"
  else
    curl -sf --max-time 5 "http://127.0.0.1:${CTL_MPORT[$1]}/metrics"
  fi
}
# metric NAME SERIES-REGEX: the value of the first series matching (ERE,
# matched against the whole "name{labels}" part), or empty.
metric() {
  metrics "$1" | RE="^$2\$" awk '!/^#/ { if ($1 ~ ENVIRON["RE"]) { print $2; exit } }'
}
# obj_metric NAME METRIC KIND OBJECT [EXTRA-LABEL-REGEX]: a per-object gauge.
obj_metric() {
  metric "$1" "$2\\{kind=\"$3\",namespace=\"[^\"]*\",object=\"$4\",system=\"[^\"]*\"${5:-}\\}"
}
# leaders: the hcp_controller_leader gauges of replicas a and b, as "A/B";
# one_leader: exactly one of them leads.
leaders() { echo "$(metric a hcp_controller_leader)/$(metric b hcp_controller_leader)"; }
one_leader() { case "$(leaders)" in 1/0 | 0/1) return 0 ;; *) return 1 ;; esac; }
# near A B TOL: |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

delete_namespaces() {
  [ -s "$CTL_NSFILE" ] || return 0
  # shellcheck disable=SC2046
  k delete namespace $(sort -u "$CTL_NSFILE") --wait=false >/dev/null 2>&1
  : >"$CTL_NSFILE"
}

cleanup_all() {
  stop_all_ctls
  watch_stop
  delete_namespaces
  if [ "${CTL_KEEP_LOGS:-}" ]; then echo "# controller logs kept in $CTL_TMP"; else rm -rf "$CTL_TMP"; fi
}

# dump_log NAME: the end of a controller's log, for failure reports.
dump_log() { tail -"${2:-15}" "${CTL_LOG[$1]}" 2>/dev/null | sed 's/^/#   /'; }

# eventually DESC EXPECTED COMMAND...: COMMAND prints EXPECTED within
# $EVENTUALLY seconds (default 5), times CTL_SLOW in a scenario run again
# with its clocks that many times slower (what waits on a clock takes longer).
eventually() {
  local desc=$1 want=$2 got end
  shift 2
  end=$(($(now_us) + ${EVENTUALLY:-5} * ${CTL_SLOW:-1} * 1000000))
  while :; do
    got=$("$@" 2>/dev/null)
    [ "$got" = "$want" ] && { ok "$desc"; return 0; }
    [ "$(now_us)" -ge "$end" ] && break
    sleep 0.1
  done
  # EVENTUALLY_QUIET: the caller reports the failure (eventually_before).
  EVENTUALLY_GOT=$got
  [ -n "${EVENTUALLY_QUIET:-}" ] || not_ok "$desc" "expected '$want', got '$got'"
  return 1
}
# eventually_before NAME RFC3339 DESC EXPECTED COMMAND...: eventually, for a
# state that lasts only until about the instant on controller NAME's clock
# (an update in progress until it completes; give an instant early enough
# for the state to be seen before it ends): when COMMAND never printed
# EXPECTED and the check began after that instant, it ran too late to say
# (the scenario is run again with slower clocks), else it failed.
eventually_before() {
  local name=$1 until=$2 desc=$3 want=$4 in_time=1
  shift 4
  before_sim "$name" "$until" || in_time=0
  EVENTUALLY_QUIET=1 eventually "$desc" "$want" "$@" && return 0
  if [ "$in_time" = 1 ]; then
    not_ok "$desc" "expected '$want', got '$EVENTUALLY_GOT'"
  else
    not_ok "$desc" "expected '$want', got '$EVENTUALLY_GOT'; the check began after $until, too late (machine too slow?)"
  fi
  return 1
}
# now_is DESC EXPECTED COMMAND...: COMMAND prints EXPECTED right now.
now_is() {
  local desc=$1 want=$2 got
  shift 2
  got=$("$@" 2>/dev/null)
  check_eq "$desc" "$want" "$got"
}

# still_before NAME RFC3339 WHAT: what was just observed happened before the
# instant on the controller's clock (else the test ran too slowly to say).
still_before() {
  if before_sim "$1" "$2"; then
    ok "$3 observed before $2"
  else
    not_ok "$3 observed before $2" "the check ran at simulated $(rfc3339 "$(sim_lo "$1" | cut -d. -f1)"), too late (machine too slow?)"
  fi
}

# must COMMAND...: a setup step; reports a failure when it fails.
# must CMD...: runs a scenario's setup step; when it fails, the step and what
# it printed (the API server's answer, say) go to the log.
must() {
  "$@" >"$CTL_TMP/must.out" && return 0
  not_ok "setup: $*"
  [ -s "$CTL_TMP/must.out" ] && head -c 600 "$CTL_TMP/must.out" | sed 's/^/#   answer: /'
  return 1
}

# run_scenario FUNCTION: runs one scenario (unless CTL_E2E_ONLY lists others),
# then stops its controllers and deletes its namespaces.
run_scenario() {
  local fn=$1
  if [ -n "${CTL_E2E_ONLY:-}" ] && [[ " $CTL_E2E_ONLY " != *" $fn "* ]]; then return 0; fi
  local p0=$passed f0=$failed l0=$too_late rerun base=${CTL_SLOW_BASE:-1}
  CTL_SLOW=$base run_scenario_once "$fn"
  # A check that ran after the simulated instant it was about says nothing
  # either way (the machine stalled longer than the scenario's clock allows),
  # so the scenario is run again with every clock 4 times slower, up to twice
  # (a stall is an event, not a property of the machine); only the last run
  # counts. Any other failure counts as it is. CTL_SLOW_BASE (default 1): a
  # suite's clocks that many times slower from the first run on.
  for rerun in 1 2; do
    [ "$too_late" -gt "$l0" ] || break
    echo "# $fn: $((too_late - l0)) check(s) ran too late on this machine; again with clocks 4 times slower"
    passed=$p0 failed=$f0 too_late=$l0
    CTL_SLOW=$((base * 4)) CTL_RERUN=$rerun run_scenario_once "$fn"
  done
}

run_scenario_once() {
  local fn=$1 f0=$failed p0=$passed t0 n
  SCENARIO=$fn
  t0=$(now_us)
  echo "# ---- $fn"
  "$fn"
  # A scenario whose setup gave up before its first check must not pass
  # silently.
  [ "$passed" -gt "$p0" ] || [ "$failed" -gt "$f0" ] || not_ok "the scenario ran its checks" "it returned before the first one"
  for n in "${!CTL_PID[@]}"; do
    if ! kill -0 "${CTL_PID[$n]}" 2>/dev/null || grep -q '^State:.*Z' "/proc/${CTL_PID[$n]}/status" 2>/dev/null; then
      not_ok "controller $n ran until the end of the scenario" "it exited early (signal or crash, see its log)"
    fi
  done
  if [ "$failed" -gt "$f0" ]; then
    for n in "${!CTL_LOG[@]}"; do
      echo "# log of controller $n:"
      dump_log "$n" 25
    done
  fi
  stop_all_ctls
  # The behaviour model of a scenario beside it (e2e/model/lib.sh) goes too.
  if declare -F model_stop >/dev/null; then model_stop >/dev/null 2>&1; fi
  CTL_PID=() CTL_LOG=()
  delete_namespaces
  echo "# $fn took $((($(now_us) - t0) / 1000)) ms"
  SCENARIO=""
}

# begin_suite: loads the cluster's environment and installs the cleanup.
begin_suite() {
  trap cleanup_all EXIT
  trap 'exit 130' INT TERM
  if ! load_cluster_env; then
    echo "instance ${CTL_E2E_INSTANCE:-main} not running (e2e/cluster.sh up ${CTL_E2E_INSTANCE:-main})"
    echo "0 passed, 1 failed"
    exit 1
  fi
  if [ ! -x "$HCP_BIN" ]; then
    echo "no controller binary at $HCP_BIN (make build/hcp-controller)"
    echo "0 passed, 1 failed"
    exit 1
  fi
}

# xfail DESC COMMAND...: a check of behaviour the controller does not have yet
# yet. A failure prints "xfail" and is not counted; a pass counts as a pass
# and says so, so that it can become a plain check. CTL_E2E_STRICT=1 makes
# them plain checks.
xfail() {
  local desc=$1
  shift
  if [ -n "${CTL_E2E_STRICT:-}" ]; then
    check "$desc" "$@"
    return
  fi
  if "$@" >/dev/null 2>&1; then
    ok "$desc (XPASS: expected failure now passes)"
  else
    echo "xfail - ${SCENARIO:+$SCENARIO: }$desc"
  fi
}
# is_eq EXPECTED COMMAND...: COMMAND prints EXPECTED (polls for $EVENTUALLY s).
is_eq() {
  local want=$1 end
  shift
  end=$(($(now_us) + ${EVENTUALLY:-5} * 1000000))
  while :; do
    [ "$("$@" 2>/dev/null)" = "$want" ] && return 0
    [ "$(now_us)" -ge "$end" ] && return 1
    sleep 0.1
  done
}
# cond_has PATH TYPE TEXT: the condition's message contains TEXT.
cond_has() { [[ "$(cond "$1" "$2" message)" == *"$3"* ]]; }
